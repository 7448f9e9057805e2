;;; drive.el --- drive lecode-ls from headless Emacs with eglot, as a person would  -*- lexical-binding: t -*-
;; Usage: HOME=<home with docs/editors/emacs.md's init.el> emacs --batch -l <init.el> -l drive.el
;;        <out.json> <file.py>
;; Debian 12's Emacs 28 with eglot 1.9, which does not advertise window.showMessage: a forget is
;; asked in the echo area and confirmed with a second code action, which the person picks late:
;; after a pause longer than jsonrpc's request timeout, shortened here to 1 s (10 s by default)
;; so the test need not wait 10 s.
;; Writes what Emacs saw to <out.json>, asserted by tests/e2e/test_emacs.py.

(require 'eglot)
(require 'json)
(require 'cl-lib)
(require 'subr-x)

(defvar drive-out (nth 0 command-line-args-left))
(defvar drive-file (nth 1 command-line-args-left))
(setq command-line-args-left nil)

(defvar drive-result nil "An alist of what was seen, written as JSON at the end.")
(defvar drive-choice nil "What the person picks in the next completing-read.")
(defvar drive-prompts nil "Every minibuffer question eglot asked.")
(defvar drive-events nil "What happened, in order: commands returned, questions asked.")

(defvar drive-notifications nil "The methods of every notification the server sent.")
(advice-add 'eglot-handle-notification :before
            (lambda (_server method &rest _)
              (cl-pushnew (format "%s" method) drive-notifications :test #'equal)))

(defun drive-event (&rest event)
  (push event drive-events))

(advice-add 'eglot-execute-command :around
            (lambda (orig server command arguments)
              (let ((result (funcall orig server command arguments)))
                (drive-event "returned" (symbol-name command)
                             (let ((question (plist-get result :question)))
                               (if question (plist-get question :inEditor) :null)))
                result)))
(defconst drive-timeout 20 "Seconds any wait is bounded by.")

(setq jsonrpc-default-request-timeout 1)
(setq eglot-send-changes-idle-time 0)

(defun drive-put (key value)
  (push (cons key value) drive-result))

(defun drive-fail (what)
  (drive-put 'failed what)
  (drive-put 'events (vconcat (reverse drive-events)))
  (drive-put 'messages (drive-messages))
  (when (eglot-current-server)
    (drive-put 'log (with-current-buffer (jsonrpc-events-buffer (eglot-current-server))
                      (buffer-substring (max (point-min) (- (point-max) 6000)) (point-max)))))
  (drive-write)
  (kill-emacs 1))

(defun drive-write ()
  (with-temp-file drive-out
    (insert (json-encode (reverse drive-result)))))

(defun drive-wait (what predicate)
  "Process events until PREDICATE holds, for at most `drive-timeout' seconds."
  (let ((deadline (+ (float-time) drive-timeout)))
    (while (not (funcall predicate))
      (when (> (float-time) deadline)
        (drive-fail (format "timed out waiting for %s" what)))
      (accept-process-output nil 0.05))))

;; The person at the minibuffer: pick `drive-choice' (a code action or an answer).
(advice-add 'completing-read :around
            (lambda (_orig prompt collection &rest _)
              (push prompt drive-prompts)
              (let ((names (mapcar (lambda (c) (if (consp c) (car c) c)) collection)))
                (or (cl-find-if (lambda (name) (string-prefix-p drive-choice name)) names)
                    (drive-fail (format "no %S among %S" drive-choice names))))))

(defun drive-messages ()
  "What eglot echoed (window/showMessage), from *Messages*."
  (with-current-buffer "*Messages*" (buffer-string)))

(defun drive-request (method params)
  (jsonrpc-request (eglot-current-server) method params))

(defun drive-facts ()
  (mapcar (lambda (fact) (plist-get fact :factId))
          (plist-get (drive-request :lecode/facts/list (make-hash-table)) :facts)))

(defun drive-lecode-diagnostics ()
  (cl-loop for d in (flymake-diagnostics)
           when (string-match-p "fact #" (flymake-diagnostic-text d))
           collect (flymake-diagnostic-text d)))

(defun drive-code-action (choice beg end)
  "Run the code action whose title starts with CHOICE between BEG and END, as the person
picking it from M-x eglot-code-actions would."
  (setq drive-choice choice)
  ;; As from the keyboard (a mouse click would pop up a menu instead of the minibuffer).
  (let ((last-nonmenu-event ?\r))
    (eglot-code-actions beg end nil t)))

(find-file drive-file)
(python-mode)
(call-interactively #'eglot)
(drive-wait "eglot to connect" (lambda () (and (eglot-current-server) eglot--managed-mode)))
(drive-put 'server (plist-get (eglot--server-info (eglot-current-server)) :name))

;; docs/editors/emacs.md's M-x lecode-memory.
(lecode-memory "notes")
(drive-put 'memory (with-current-buffer "*lecode memory*" (buffer-string)))

;; Remember line 3 (`PORT = 8080`) with the code action on a region.
(goto-char (point-min))
(forward-line 2)
(let ((beg (point)))
  (forward-line 1)
  (drive-code-action "Remember selection as fact" beg (point)))
(drive-put 'remembered (drive-facts))

;; Hover on the line: eglot asks for plain text.
(goto-char (point-min))
(forward-line 2)
(let ((hover (drive-request :textDocument/hover (eglot--TextDocumentPositionParams))))
  (drive-put 'hover_kind (plist-get (plist-get hover :contents) :kind))
  (drive-put 'hover (plist-get (plist-get hover :contents) :value)))

;; The person edits the line (unsaved): eglot sends didChange; flymake shows the drift.
(goto-char (point-min))
(forward-line 2)
(search-forward "8080")
(replace-match "9090")
;; What eglot's idle timer does (batch Emacs is never idle): send the change now.
(eglot--signal-textDocument/didChange)
(drive-wait "the drift diagnostic"
            (lambda () (flymake-start) (drive-lecode-diagnostics)))
(drive-put 'diagnostics (drive-lecode-diagnostics))

;; Forget, from the diagnostic's code actions.
(goto-char (point-min))
(forward-line 2)
(let ((beg (line-beginning-position)) (end (line-end-position)))
  (drive-code-action "Forget fact #1" beg end)
  (drive-put 'after_command (drive-facts))
  ;; The question is echoed and offered as code actions; the person waits, then confirms.
  (drive-wait "the question in the echo area"
              (lambda () (string-match-p "Forget fact #1 (confirm)" (drive-messages))))
  (drive-put 'offered (mapcar (lambda (a) (plist-get a :title))
                              (eglot-code-actions beg end)))
  (sleep-for 1.5)  ; longer than jsonrpc-default-request-timeout
  (drive-code-action "Forget fact #1 (confirm)" beg end))
(drive-wait "the forgotten fact" (lambda () (null (drive-facts))))
(drive-put 'after_answer (drive-facts))
(drive-wait "the diagnostic to go" (lambda () (flymake-start) (null (drive-lecode-diagnostics))))
(drive-wait "the forget's message" (lambda () (string-match-p "forgot fact #1" (drive-messages))))
(drive-put 'timed_out (string-match-p "[Tt]imed out" (drive-messages)))
(drive-put 'prompts (length drive-prompts))
(drive-put 'notifications (vconcat (sort drive-notifications #'string<)))
(drive-put 'echoed (cl-remove-if-not (lambda (line) (string-prefix-p "[eglot] Server reports" line))
                                     (split-string (drive-messages) "\n")))
(drive-put 'events (vconcat (mapcar #'vconcat (reverse drive-events))))

(setq jsonrpc-default-request-timeout 10)  ; shutdown as usual
(eglot-shutdown (eglot-current-server))
(drive-write)
(kill-emacs 0)
