/**
 * The chat view's logic in the extension host: which project and session it shows, the entries
 * of that session, the running turn, and what the page asked for.
 *
 * The host holds the state and the page only draws it, so a page that is closed and opened again
 * gets everything back on "ready". The first deltas of a turn arrive before `lecode/chat/send`
 * answers with the turnId, so while a send runs, deltas are routed by its session ID and the first
 * one names the turn; deltas of any other session or turn are ignored.
 */
import { errorMessage, serverErrorCode } from "../common/errors";
import type { ChatDeltaParams, SessionInfoModel, UsageModel } from "../common/protocol";
import { Requests } from "../common/protocol";
import { type RequestSender, request } from "../common/requests";
import { workspaceParams } from "../notes/uri";
import type { FactIndex } from "./factIndex";
import { type FactView, type HostMessage, type PageMessage, type ProjectChoice, parsePageMessage, webLink } from "./messages";
import { SeqOrder } from "./order";
import { sessionChoices } from "./sessionList";
import { ProviderGate } from "./providerGate";
import type { SetupDeps } from "./setup";
import {
  type CommandEntry,
  type Entry,
  type Turn,
  applyDeltas,
  errorMessage as keyHint,
  failTurn,
  finishTurn,
  newTurn,
  turnsFromHistory,
} from "./turn";
import { NO_USAGE, addUsage, usagePhrase } from "./usage";

/** How many history items a session shows (the most recent ones). */
export const HISTORY_LIMIT = 400;

/** A `/memory` line goes to `lecode/command`, not to the model. */
const MEMORY_COMMAND = /^\/memory(\s|$)/;

export interface ChatDeps {
  sender: RequestSender;
  /** The projects of the open folders, each reached through its first folder. */
  projects(): readonly ProjectChoice[];
  /** Recall a fact and show its evidence (the Facts view's Recall command). */
  openFact(factId: number, revision: number, folderUri: string | undefined): Promise<void>;
  /** Open a memory file (`lecode-memory:`). */
  openNote(file: string, folderUri: string | undefined): Promise<void>;
  /** Open an http(s) URL outside VS Code. */
  openExternal(url: string): Promise<void>;
  /** A code block's Copy and Insert buttons: the clipboard, the last active editor's cursor. */
  copy(text: string): Promise<void>;
  insert(text: string): Promise<void>;
  /** Rename a session (asks for the title); whether it was renamed. */
  renameSession(folderUri: string | undefined, session: SessionInfoModel): Promise<boolean>;
  /** Delete a session after the modal confirmation; whether it was deleted. */
  deleteSession(folderUri: string | undefined, session: SessionInfoModel): Promise<boolean>;
  /** The facts of "memory used" lines, as the Facts view knows them. */
  facts: Pick<FactIndex, "lookup">;
  /** The session in use, kept across window reloads (the workspace's state). */
  lastSession: {
    get(): { folderUri?: string; sessionId: string } | undefined;
    set(value: { folderUri?: string; sessionId: string } | undefined): void;
  };
  /** The set-up step's network, key and settings (setup.ts). */
  setup: Omit<SetupDeps, "show">;
}

/** The server's set-up errors: answered before the message was recorded or sent (protocol.md). */
export const SET_UP_CODES: ReadonlySet<string> = new Set(["provider_not_configured", "provider_key_missing", "provider_key_invalid"]);

interface RunningTurn {
  sessionId: string;
  /** Known from the first delta (or the answer). */
  turnId?: string;
  turn: Turn;
  order: SeqOrder<ChatDeltaParams>;
  abort: AbortController;
}

/** The longest title made from a first message, cut at a word where there is one. */
export const TITLE_CHARS = 48;

/** A session's title from its first message: its first words, on one line. */
export function sessionTitle(text: string): string {
  const line = text.trim().split("\n")[0].replace(/\s+/g, " ").trim();
  if (line.length <= TITLE_CHARS) {
    return line;
  }
  const cut = line.slice(0, TITLE_CHARS - 1);
  const space = cut.lastIndexOf(" ");
  return `${space > TITLE_CHARS / 2 ? cut.slice(0, space) : cut}…`;
}

export class ChatController {
  private view: ((message: HostMessage) => unknown) | undefined;
  private folderUri: string | undefined;
  private sessions: SessionInfoModel[] = [];
  private sessionId: string | undefined;
  private entries: Entry[] = [];
  private truncated = false;
  /** The shown session's usage total (C10); undefined until its history is loaded. */
  private usage: UsageModel | undefined;
  private running: RunningTurn | undefined;
  /** Counts session loads, so that only the latest one shows. */
  private loads = 0;
  /** Whether a session was shown or chosen yet (the first "ready" shows the one in use last). */
  private chosen = false;
  private readonly gate: ProviderGate;
  private facts: FactView[] = [];
  /** Whether the page said "ready" since it was attached, and whether it is to get the focus then. */
  private pageReady = false;
  private focusWhenReady = false;

  constructor(private readonly deps: ChatDeps) {
    this.gate = new ProviderGate(deps.sender, deps.setup, (message) => this.post(message), () => this.focus());
  }

  /** The page that draws the state from now on (the view was resolved again); returns its detach. */
  attach(post: (message: HostMessage) => unknown): () => void {
    this.view = post;
    this.pageReady = false;
    return () => {
      if (this.view === post) {
        this.view = undefined;
      }
    };
  }

  /** A message from the page: checked first, ignored unless it is one of PageMessage. */
  async receive(raw: unknown): Promise<void> {
    const message = parsePageMessage(raw);
    if (message === undefined) {
      return;
    }
    try {
      await this.handle(message);
    } catch (error) {
      this.post({ type: "notice", text: errorMessage(error) });
    }
  }

  /** A `lecode/chat/delta` notification. */
  handleDelta(delta: ChatDeltaParams): void {
    const running = this.running;
    if (running === undefined || delta.sessionId !== running.sessionId || !Number.isInteger(delta.seq)) {
      return;
    }
    running.turnId ??= delta.turnId;
    if (delta.turnId !== running.turnId) {
      return;
    }
    const ready = running.order.push(delta);
    if (ready.length > 0) {
      this.update(running.turn, applyDeltas(running.turn, ready), running);
    }
  }

  /** The server (re)started, its settings or the projects changed: ask again what to show. */
  async refresh(): Promise<void> {
    if (this.view === undefined) {
      return;
    }
    try {
      await this.gate.check();
      await this.showSessions();
    } catch (error) {
      this.post({ type: "notice", text: errorMessage(error) });
    }
  }

  /** Facts or their anchors changed: the "memory used" lines ask again. */
  async factsChanged(): Promise<void> {
    this.facts = [];
    await this.lookUpFacts(this.entries);
  }

  /**
   * The view was opened or focused ("lecode: Open Chat"): the cursor goes to the text box, once
   * the page is ready for it if it is still loading.
   */
  focus(): void {
    if (this.pageReady) {
      this.post({ type: "focus" });
    } else {
      this.focusWhenReady = true;
    }
  }

  /** Show the set-up step (the status bar item, "lecode: Set Up Chat Model…"). */
  openSetup(): Promise<void> {
    return this.gate.open();
  }

  /** Stop the running answer (the Stop button, Escape, "lecode: Stop Answer"). */
  stop(): void {
    this.running?.abort.abort();
  }

  private async handle(message: PageMessage): Promise<void> {
    switch (message.type) {
      case "ready":
        return this.ready();
      case "send":
        return MEMORY_COMMAND.test(message.text.trim()) ? this.runCommand(message.text.trim()) : this.send(message.text);
      case "cancel":
        this.stop();
        return;
      case "openSetup":
        return this.gate.open();
      case "closeSetup":
        return this.gate.close();
      case "setupProbe":
      case "setupServer":
      case "setupKey":
      case "setupModel":
      case "setupUse":
        return this.gate.handle(message);
      case "copy":
        return this.deps.copy(message.text);
      case "insert":
        return this.deps.insert(message.text);
      case "renameSession":
      case "deleteSession":
        return this.manageSession(message.type, message.sessionId);
      case "newSession":
        if (this.refuseWhileRunning()) return;
        this.showSession(undefined);
        this.postSessions();
        return;
      case "selectSession":
        if (this.refuseWhileRunning() || !this.sessions.some((s) => s.sessionId === message.sessionId)) return;
        this.postSessions(message.sessionId);
        return this.loadHistory(message.sessionId);
      case "selectProject":
        if (this.refuseWhileRunning() || !this.deps.projects().some((p) => p.folderUri === message.folderUri)) return;
        this.folderUri = message.folderUri;
        this.facts = []; // fact IDs are the project's own
        this.post({ type: "facts", facts: [] });
        this.showSession(undefined);
        await this.loadSessions();
        return this.showLast();
      case "openFact":
        return this.deps.openFact(message.factId, message.revision, this.folderUri);
      case "openNote":
        return this.deps.openNote(message.file, this.folderUri);
      case "openLink":
        // parsePageMessage let only http(s) through; checked again where the link is opened.
        if (webLink(message.href) !== undefined) {
          await this.deps.openExternal(message.href);
        }
        return;
    }
  }

  private async ready(): Promise<void> {
    this.pageReady = true;
    if (this.focusWhenReady) {
      this.focusWhenReady = false;
      this.post({ type: "focus" });
    }
    this.post({ type: "busy", busy: this.running !== undefined });
    this.post({ type: "entries", entries: [...this.entries], truncated: this.truncated });
    this.post({ type: "facts", facts: this.facts });
    this.postUsage();
    this.gate.redraw();
    await this.gate.check();
    await this.showSessions();
  }

  /** List the sessions; the first time (or when the shown session is gone) show the one in use last. */
  private async showSessions(): Promise<void> {
    await this.loadSessions();
    this.post({ type: "notice" });
    const gone = this.sessionId !== undefined && !this.sessions.some((s) => s.sessionId === this.sessionId);
    if (this.running === undefined && (!this.chosen || gone)) {
      await this.showLast();
    } else {
      this.postSessions();
    }
  }

  /**
   * After a reload, the session that was in use (kept in the workspace's state); else the
   * project's newest chat (never an imported or internal session), or a new one.
   */
  private async showLast(): Promise<void> {
    const last = this.deps.lastSession.get();
    const kept = last?.folderUri === this.folderUri ? this.sessions.find((s) => s.sessionId === last?.sessionId) : undefined;
    const chats = this.sessions.filter((s) => (s.origin ?? "chat") === "chat");
    const shown = (kept ?? chats.at(-1))?.sessionId;
    this.postSessions(shown);
    if (shown !== undefined) {
      await this.loadHistory(shown);
    } else {
      this.showSession(undefined); // a new session, made by the first message
    }
  }

  /** Rename or delete a session of the list (the header's buttons). */
  private async manageSession(what: "renameSession" | "deleteSession", sessionId: string): Promise<void> {
    const session = this.sessions.find((s) => s.sessionId === sessionId);
    if (session === undefined || (what === "deleteSession" && this.refuseWhileRunning())) {
      return;
    }
    const done =
      what === "renameSession"
        ? await this.deps.renameSession(this.folderUri, session)
        : await this.deps.deleteSession(this.folderUri, session);
    if (done) {
      await this.showSessions();
    }
  }

  private refuseWhileRunning(): boolean {
    if (this.running !== undefined) {
      this.post({ type: "notice", text: "An answer is still running: stop it first." });
    }
    return this.running !== undefined;
  }

  private async loadSessions(): Promise<void> {
    const projects = this.deps.projects();
    if (!projects.some((p) => p.folderUri === this.folderUri)) {
      this.folderUri = projects[0]?.folderUri;
    }
    const { sessions } = await request(this.deps.sender, Requests.sessionList, workspaceParams(this.folderUri));
    this.sessions = sessions;
  }

  private async loadHistory(sessionId: string): Promise<void> {
    this.showSession(sessionId);
    const load = this.loads;
    const history = await request(this.deps.sender, Requests.chatHistory, {
      ...workspaceParams(this.folderUri),
      sessionId,
      limit: HISTORY_LIMIT,
    });
    if (load === this.loads && this.sessionId === sessionId) {
      this.entries = turnsFromHistory(history.items);
      this.truncated = history.truncated;
      this.usage = history.usage;
      this.post({ type: "entries", entries: [...this.entries], truncated: this.truncated });
      this.postUsage();
      await this.lookUpFacts(this.entries);
    }
  }

  /** Tell the page what is known of the facts the entries' "memory used" lines name. */
  private async lookUpFacts(entries: readonly Entry[]): Promise<void> {
    const ids = [...new Set(entries.flatMap((entry) => (entry.kind === "turn" ? entry.memory.facts.map((f) => f.factId) : [])))];
    const missing = ids.filter((id) => !this.facts.some((fact) => fact.factId === id));
    if (missing.length === 0) {
      return;
    }
    try {
      const found = await this.deps.facts.lookup(this.folderUri, missing);
      this.facts = [...this.facts.filter((fact) => !found.some((f) => f.factId === fact.factId)), ...found];
      this.post({ type: "facts", facts: this.facts });
    } catch {
      // the lines name the facts by ID, as before; the Facts view shows why the list failed
    }
  }

  /** Show a session (or none: a new one), with nothing in it until its history is loaded. */
  private showSession(sessionId: string | undefined): void {
    this.chosen = true;
    this.loads++;
    this.sessionId = sessionId;
    this.deps.lastSession.set(sessionId === undefined ? undefined : { folderUri: this.folderUri, sessionId });
    this.entries = [];
    this.truncated = false;
    this.usage = sessionId === undefined ? NO_USAGE : undefined; // a new session has made no call
    this.post({ type: "entries", entries: [], truncated: false });
    this.post({ type: "notice" });
    this.postUsage();
  }

  private async send(text: string): Promise<void> {
    if (this.refuseWhileRunning()) return;
    if (this.gate.unset) {
      // Nothing is sent, not even a session made, until the person chose where chat goes.
      return this.giveBack(text);
    }
    this.post({ type: "notice" });
    const turn = newTurn(text);
    this.add(turn);
    const running: RunningTurn = { sessionId: "", turn, order: new SeqOrder(), abort: new AbortController() };
    this.running = running;
    this.post({ type: "busy", busy: true });
    let refused = false;
    try {
      // A first start: the page may have sent before the server (still starting) said whether
      // chat has a provider. Asked first, so that no session is made for a message that cannot go.
      refused = await this.gate.refuses();
      if (!refused) {
        running.sessionId = this.sessionId ?? (await this.startSession(text));
        const result = await request(
          this.deps.sender,
          Requests.chatSend,
          { ...workspaceParams(this.folderUri), sessionId: running.sessionId, text },
          running.abort.signal,
        );
        this.update(running.turn, finishTurn(this.drain(running), result), running);
        this.countUsage(running.sessionId, result.usage);
      }
    } catch (error) {
      const code = serverErrorCode(error);
      refused = code === "provider_not_configured";
      if (!refused) {
        const message = keyHint(errorMessage(error), code);
        this.update(running.turn, failTurn(this.drain(running), message, running.abort.signal.aborted), running);
        if (code !== undefined && SET_UP_CODES.has(code)) {
          // A key problem answered before anything was recorded: the message was not sent, so
          // it goes back to the text box, to send again once the key is set.
          this.post({ type: "draft", text });
        }
      }
    } finally {
      this.running = undefined;
      this.post({ type: "busy", busy: false });
    }
    if (refused) {
      return this.giveBack(text, running.turn);
    }
    await this.lookUpFacts([running.turn]);
  }

  /**
   * A message no provider could take: its turn goes from the log, its words go back into the
   * text box (a person's words never vanish, and nothing typed before a server was chosen is
   * sent there unseen), and the set-up shows where chat can go.
   */
  private async giveBack(text: string, turn?: Turn): Promise<void> {
    const index = turn === undefined ? -1 : this.entries.indexOf(turn);
    if (index >= 0) {
      this.entries.splice(index, 1);
      this.post({ type: "entries", entries: [...this.entries], truncated: this.truncated });
    }
    this.post({ type: "draft", text });
    await this.gate.refused();
  }

  /** A new session named after its first message; the list then shows it as current. */
  private async startSession(text: string): Promise<string> {
    const { sessionId } = await request(this.deps.sender, Requests.sessionNew, {
      ...workspaceParams(this.folderUri),
      title: sessionTitle(text),
    });
    this.sessionId = sessionId;
    this.chosen = true;
    this.deps.lastSession.set({ folderUri: this.folderUri, sessionId });
    await this.loadSessions();
    this.postSessions();
    return sessionId;
  }

  /** The running turn with every delta still waiting applied (the send answered last). */
  private drain(running: RunningTurn): Turn {
    return applyDeltas(running.turn, running.order.drain());
  }

  private async runCommand(line: string): Promise<void> {
    const entry: CommandEntry = { kind: "command", line, state: "running", output: "" };
    this.add(entry);
    try {
      const { output } = await request(this.deps.sender, Requests.command, {
        ...workspaceParams(this.folderUri),
        ...(this.sessionId === undefined ? {} : { sessionId: this.sessionId }),
        line,
      });
      this.update(entry, { ...entry, state: "done", output });
    } catch (error) {
      this.update(entry, { ...entry, state: "failed", output: errorMessage(error) });
    }
  }

  private add(entry: Entry): void {
    this.entries.push(entry);
    this.post({ type: "entry", index: this.entries.length - 1, entry });
  }

  /** Replace an entry that is still shown (the session may have changed meanwhile). */
  private update(old: Entry, next: Entry, running?: RunningTurn): void {
    if (running !== undefined && next.kind === "turn") {
      running.turn = next;
    }
    const index = this.entries.indexOf(old);
    if (index >= 0) {
      this.entries[index] = next;
      this.post({ type: "entry", index, entry: next });
    }
  }

  /** Add a turn's usage to the total of its session, if that is still the one shown. */
  private countUsage(sessionId: string, usage: UsageModel): void {
    if (sessionId === this.sessionId && this.usage !== undefined) {
      this.usage = addUsage(this.usage, usage);
      this.postUsage();
    }
  }

  private postUsage(): void {
    this.post({ type: "usage", text: this.usage === undefined ? undefined : usagePhrase(this.usage) });
  }

  private postSessions(sessionId = this.sessionId): void {
    this.post({
      type: "sessions",
      projects: [...this.deps.projects()],
      folderUri: this.folderUri,
      sessions: sessionChoices(this.sessions),
      sessionId,
    });
  }

  private post(message: HostMessage): void {
    this.view?.(message);
  }
}
