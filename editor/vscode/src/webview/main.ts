/**
 * The chat page (runs inside the webview, bundled to dist/webview.js). It draws what the host
 * sends and posts what the person does; it decides nothing itself. Entries are redrawn at most
 * once per animation frame, however fast deltas arrive.
 */
import { type Completion, completions } from "../chat/completion";
import type { FactView, HostMessage, PageMessage, ProjectChoice, SessionChoice } from "../chat/messages";
import type { SetupView } from "../chat/setup";
import type { Entry } from "../chat/turn";
import { type MemoryLink, type RenderContext, renderEntry } from "./render";
import { renderSetup } from "./setup";

interface VsCodeApi {
  postMessage(message: PageMessage): void;
  getState(): { draft?: string } | undefined;
  setState(state: { draft?: string }): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
const post = (message: PageMessage): void => vscode.postMessage(message);

const byId = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T;
const log = byId<HTMLElement>("log");
const notice = byId<HTMLParagraphElement>("notice");
const usage = byId<HTMLParagraphElement>("usage");
const projectSelect = byId<HTMLSelectElement>("project");
const sessionSelect = byId<HTMLSelectElement>("session");
const newButton = byId<HTMLButtonElement>("new");
const renameButton = byId<HTMLButtonElement>("rename");
const deleteButton = byId<HTMLButtonElement>("delete");
const providerButton = byId<HTMLButtonElement>("provider");
const setupSection = byId<HTMLElement>("setup");
const form = byId<HTMLFormElement>("composer");
const input = byId<HTMLTextAreaElement>("input");
const list = byId<HTMLUListElement>("completions");
const sendButton = byId<HTMLButtonElement>("send");
const stopButton = byId<HTMLButtonElement>("stop");

let entries: Entry[] = [];
let truncated = false;
let busy = false;
let shownSession: string | undefined;
let setup: SetupView | undefined;
const facts = new Map<number, FactView>();

// -- the transcript ----------------------------------------------------------------------------

const context: RenderContext = {
  open: (link: MemoryLink) =>
    post(link.kind === "fact" ? { type: "openFact", factId: link.factId, revision: link.revision } : { type: "openNote", file: link.file }),
  copy: (text) => post({ type: "copy", text }),
  insert: (text) => post({ type: "insert", text }),
  facts,
};

const dirty = new Set<number>();
let redrawAll = false;
let frame: number | undefined;

function schedule(): void {
  frame ??= requestAnimationFrame(draw);
}

/**
 * Whether the log follows the newest text: true until the person scrolls up, and again once they
 * scroll back down or send a message. Kept across redraws and when the view gets smaller (another view opening
 * above it), where the browser would keep the top in sight instead.
 */
let following = true;
const nearBottom = (): boolean => log.scrollHeight - log.scrollTop - log.clientHeight < 40;
const followNewest = (): void => {
  if (following) {
    log.scrollTop = log.scrollHeight;
  }
};
log.addEventListener("scroll", () => (following = nearBottom()));
new ResizeObserver(followNewest).observe(log);

function draw(): void {
  frame = undefined;
  if (redrawAll) {
    redrawAll = false;
    dirty.clear();
    log.replaceChildren(...entries.map((entry) => renderEntry(entry, context, log.children[entries.indexOf(entry) + (truncated ? 1 : 0)])));
    if (truncated) {
      log.prepend(Object.assign(document.createElement("p"), { className: "truncated", textContent: "Earlier messages are not shown." }));
    }
  }
  const offset = truncated ? 1 : 0;
  for (const index of [...dirty].sort((a, b) => a - b)) {
    const previous = log.children[index + offset];
    const block = renderEntry(entries[index], context, previous);
    if (previous === undefined) {
      log.append(block);
    } else {
      previous.replaceWith(block);
    }
  }
  dirty.clear();
  followNewest();
}

// -- links in model text: only the host opens them, and only http(s) ----------------------------

function onLink(event: MouseEvent): void {
  const anchor = (event.target as Element | null)?.closest?.("a");
  if (!anchor) {
    return;
  }
  // The webview's own handler would open the link itself: this one is the only one that acts.
  event.preventDefault();
  event.stopPropagation();
  const href = anchor.getAttribute("href");
  if (href !== null && /^https?:\/\//i.test(href) && (event.type === "click" || event.button === 1)) {
    post({ type: "openLink", href });
  }
}
log.addEventListener("click", onLink);
log.addEventListener("auxclick", onLink);

// -- the header ----------------------------------------------------------------------------------

function fillSelect(select: HTMLSelectElement, options: { value: string; label: string }[], value: string | undefined): void {
  select.replaceChildren(
    ...options.map((option) => Object.assign(document.createElement("option"), { value: option.value, textContent: option.label })),
  );
  select.value = value ?? "";
}

const option = (value: string, label: string): HTMLOptionElement => Object.assign(document.createElement("option"), { value, textContent: label });

/** Chats first, then the sessions lecode keeps for itself, each group newest first. */
function showSessions(projects: ProjectChoice[], folderUri: string | undefined, sessions: SessionChoice[], sessionId?: string): void {
  projectSelect.hidden = projects.length < 2;
  fillSelect(projectSelect, projects.map((p) => ({ value: p.folderUri, label: p.label })), folderUri);
  const groups: [SessionChoice["group"], string][] = [
    ["chat", "Chats"],
    ["other", "Remembered, MCP and imported"],
  ];
  sessionSelect.replaceChildren(
    ...(sessionId === undefined ? [option("", "New session")] : []),
    ...groups
      .map(([group, label]) => {
        const members = sessions.filter((s) => s.group === group);
        const node = Object.assign(document.createElement("optgroup"), { label });
        node.append(...members.map((s) => option(s.sessionId, s.label)));
        return members.length > 0 ? node : undefined;
      })
      .filter((node): node is HTMLOptGroupElement => node !== undefined),
  );
  sessionSelect.value = sessionId ?? "";
  shownSession = sessionId;
  renameButton.disabled = busy || sessionId === undefined;
  deleteButton.disabled = busy || sessionId === undefined;
}

projectSelect.addEventListener("change", () => post({ type: "selectProject", folderUri: projectSelect.value }));
sessionSelect.addEventListener("change", () => {
  if (sessionSelect.value !== "") {
    post({ type: "selectSession", sessionId: sessionSelect.value });
  }
});
newButton.addEventListener("click", () => post({ type: "newSession" }));
renameButton.addEventListener("click", () => shownSession && post({ type: "renameSession", sessionId: shownSession }));
deleteButton.addEventListener("click", () => shownSession && post({ type: "deleteSession", sessionId: shownSession }));
providerButton.addEventListener("click", () => post({ type: "openSetup" }));

// -- the set-up step ---------------------------------------------------------------------------

function showSetup(view: SetupView | undefined): void {
  const typed = setupSection.querySelector<HTMLInputElement>("#setup-url");
  // What the person is typing stays while the host redraws (a probe ends, a key is stored).
  const keep = typed !== null && document.activeElement === typed ? typed.value : undefined;
  const opening = setup === undefined && view !== undefined;
  const hadFocus = document.activeElement === input || setupSection.contains(document.activeElement);
  setup = view;
  setupSection.hidden = view === undefined;
  for (const part of [log, form, usage.parentElement, document.querySelector("header.bar")]) {
    part?.classList.toggle("behind-setup", view !== undefined);
  }
  setupSection.replaceChildren(...(view === undefined ? [] : [renderSetup(view, post, keep, input.value.trim() !== "")]));
  if (keep !== undefined) {
    setupSection.querySelector<HTMLInputElement>("#setup-url")?.focus();
  } else if (hadFocus && (opening || view === undefined)) {
    focusInput();
  }
}

/** The cursor in the text box, unless the set-up is shown (then in its first field). */
function focusInput(): void {
  if (setup !== undefined) {
    setupSection.querySelector<HTMLElement>("button.choice, #setup-url")?.focus();
    return;
  }
  input.focus();
}

function setBusy(value: boolean): void {
  busy = value;
  sendButton.hidden = busy;
  stopButton.hidden = !busy;
  stopButton.disabled = false;
  stopButton.textContent = "Stop";
  for (const control of [projectSelect, sessionSelect, newButton]) {
    control.disabled = busy;
  }
  renameButton.disabled = busy || shownSession === undefined;
  deleteButton.disabled = busy || shownSession === undefined;
  document.body.classList.toggle("busy", busy);
}

function stop(): void {
  stopButton.disabled = true;
  stopButton.textContent = "Stopping…";
  post({ type: "cancel" });
}
stopButton.addEventListener("click", stop);

// Escape stops a streaming answer, wherever the focus is in the view (the completion list,
// when open, takes it first).
document.addEventListener("keydown", (event) => {
  if (event.key === "Escape" && busy && !event.defaultPrevented && !stopButton.disabled) {
    event.preventDefault();
    stop();
  }
});
// Tab goes round the page's controls: past the last one (Send) to the first, and Shift+Tab back.
// Left to itself the focus would leave the last control for the page's body, where a webview
// keeps it and the next Tab finds nothing (the completion list, when open, takes Tab first).
document.addEventListener("keydown", (event) => {
  if (event.key !== "Tab" || event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) {
    return;
  }
  const stops = tabStops();
  const active = document.activeElement;
  const edge = event.shiftKey ? stops[0] : stops.at(-1);
  if (stops.length > 0 && (active === null || active === document.body || active === edge)) {
    event.preventDefault();
    (event.shiftKey ? stops.at(-1) : stops[0])?.focus();
  }
});

/** The controls Tab reaches, in the page's order: the ones shown and enabled. */
function tabStops(): HTMLElement[] {
  return [...document.querySelectorAll<HTMLElement>("a[href], button, input, select, textarea, [tabindex]")].filter(
    (node) => node.tabIndex >= 0 && !node.matches(":disabled") && node.getClientRects().length > 0,
  );
}

// The view got the focus (opened, or clicked into): the cursor goes to the text box.
window.addEventListener("focus", () => {
  if (document.activeElement === null || document.activeElement === document.body) {
    focusInput();
  }
});

// -- the text box and /memory completion ---------------------------------------------------------

let shown: Completion[] = [];
let active = 0;

function showCompletions(): void {
  shown = completions(input.value);
  active = Math.min(active, Math.max(shown.length - 1, 0));
  list.hidden = shown.length === 0;
  list.replaceChildren(
    ...shown.map((completion, index) => {
      const item = document.createElement("li");
      item.setAttribute("role", "option");
      item.setAttribute("aria-selected", String(index === active));
      item.append(
        Object.assign(document.createElement("span"), { className: "label", textContent: completion.label }),
        Object.assign(document.createElement("span"), { className: "detail", textContent: completion.detail }),
      );
      // mousedown, not click: the text box keeps the focus.
      item.addEventListener("mousedown", (event) => {
        event.preventDefault();
        choose(completion);
      });
      return item;
    }),
  );
}

function choose(completion: Completion): void {
  input.value = completion.insert;
  input.setSelectionRange(input.value.length, input.value.length);
  active = 0;
  saveDraft();
  showCompletions();
}

function submit(): void {
  const text = input.value;
  if (text.trim() === "" || (busy && !text.trim().startsWith("/memory"))) {
    return;
  }
  following = true; // a message sent is followed by its answer, wherever the log was
  post({ type: "send", text });
  input.value = "";
  saveDraft();
  showCompletions();
}

function saveDraft(): void {
  vscode.setState({ draft: input.value });
}

input.addEventListener("input", () => {
  active = 0;
  saveDraft();
  showCompletions();
});

input.addEventListener("keydown", (event) => {
  if (shown.length > 0) {
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      active = (active + (event.key === "ArrowDown" ? 1 : shown.length - 1)) % shown.length;
      showCompletions();
      return;
    }
    if (event.key === "Tab" || (event.key === "Enter" && !event.shiftKey)) {
      event.preventDefault();
      choose(shown[active]);
      return;
    }
    if (event.key === "Escape") {
      event.preventDefault();
      shown = [];
      list.hidden = true;
      return;
    }
  }
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    submit();
  }
});

form.addEventListener("submit", (event) => {
  event.preventDefault();
  submit();
});

// -- messages from the host ----------------------------------------------------------------------

window.addEventListener("message", (event: MessageEvent<HostMessage>) => {
  const message = event.data;
  switch (message?.type) {
    case "sessions":
      showSessions(message.projects, message.folderUri, message.sessions, message.sessionId);
      break;
    case "entries":
      entries = message.entries;
      truncated = message.truncated;
      redrawAll = true;
      schedule();
      break;
    case "entry":
      entries[message.index] = message.entry;
      dirty.add(message.index);
      schedule();
      break;
    case "busy":
      setBusy(message.busy);
      break;
    case "notice":
      notice.textContent = message.text ?? "";
      notice.hidden = message.text === undefined;
      break;
    case "usage":
      usage.textContent = message.text ?? "";
      usage.hidden = message.text === undefined;
      break;
    case "setup":
      showSetup(message.view);
      break;
    case "provider":
      providerButton.textContent = message.label ?? "";
      providerButton.hidden = message.label === undefined;
      break;
    case "facts":
      facts.clear();
      for (const fact of message.facts) {
        facts.set(fact.factId, fact);
      }
      redrawAll = true;
      schedule();
      break;
    case "focus":
      focusInput();
      break;
    case "draft":
      // Before whatever was typed since: the words come back in the order they were written.
      // Never innerHTML: the text is the person's, shown as text.
      input.value = input.value.trim() === "" ? message.text : `${message.text}\n\n${input.value}`;
      saveDraft();
      showCompletions();
      if (setup !== undefined) {
        showSetup(setup); // it says that the message waits there
      }
      break;
  }
});

input.value = vscode.getState()?.draft ?? "";
setBusy(false);
showCompletions();
post({ type: "ready" });
