;; lecode-ls in Emacs with eglot (built into Emacs 29 and later; on Emacs 28, the eglot
;; package: Debian's elpa-eglot, or M-x package-install RET eglot). eglot gives a buffer one
;; server: list the modes where lecode-ls is the one (here plain text, Markdown and Python).
(with-eval-after-load 'eglot
  (add-to-list 'eglot-server-programs
               '((text-mode markdown-mode python-mode) . ("lecode-ls"))))

;; M-x lecode-memory RET notes RET: the /memory command; its output opens in a buffer.
(defun lecode-memory (line)
  "Run `/memory LINE' in lecode-ls and show what it says."
  (interactive "s/memory ")
  (let* ((server (or (eglot-current-server)
                     (user-error "lecode-ls is not running for this buffer: M-x eglot")))
         (output (jsonrpc-request server :workspace/executeCommand
                                  (list :command "lecode.memory"
                                        :arguments (vector line)))))
    (with-current-buffer (get-buffer-create "*lecode memory*")
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert output))
      (special-mode)
      (display-buffer (current-buffer)))))
