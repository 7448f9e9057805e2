/**
 * The chat view's logic in the extension host: which project and session it shows, the entries
 * of that session, the running turn, and what the page asked for.
 *
 * The host holds the state and the page only draws it, so a page that is closed and opened again
 * gets everything back on "ready". The first deltas of a turn arrive before `lecode/chat/send`
 * answers with the turnId, so while a send runs, deltas are routed by its session ID and the first
 * one names the turn; deltas of any other session or turn are ignored.
 */
import { errorMessage } from "../common/errors";
import type { ChatDeltaParams, SessionInfoModel, UsageModel } from "../common/protocol";
import { Requests } from "../common/protocol";
import { type RequestSender, request } from "../common/requests";
import { workspaceParams } from "../notes/uri";
import { type HostMessage, type PageMessage, type ProjectChoice, parsePageMessage, webLink } from "./messages";
import { SeqOrder } from "./order";
import { type CommandEntry, type Entry, type Turn, applyDeltas, failTurn, finishTurn, newTurn, turnsFromHistory } from "./turn";
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
}

interface RunningTurn {
  sessionId: string;
  /** Known from the first delta (or the answer). */
  turnId?: string;
  turn: Turn;
  order: SeqOrder<ChatDeltaParams>;
  abort: AbortController;
}

/** A session's title from its first message: one line, at most 60 characters. */
export function sessionTitle(text: string): string {
  const line = text.trim().split("\n")[0].trim();
  return line.length <= 60 ? line : `${line.slice(0, 59)}…`;
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
  /** Whether a session was shown or chosen yet (the first "ready" shows the newest). */
  private chosen = false;

  constructor(private readonly deps: ChatDeps) {}

  /** The page that draws the state from now on (the view was resolved again); returns its detach. */
  attach(post: (message: HostMessage) => unknown): () => void {
    this.view = post;
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

  /** The server (re)started or the projects changed: list the sessions again. */
  async refresh(): Promise<void> {
    if (this.view === undefined) {
      return;
    }
    try {
      await this.showSessions();
    } catch (error) {
      this.post({ type: "notice", text: errorMessage(error) });
    }
  }

  private async handle(message: PageMessage): Promise<void> {
    switch (message.type) {
      case "ready":
        return this.ready();
      case "send":
        return MEMORY_COMMAND.test(message.text.trim()) ? this.runCommand(message.text.trim()) : this.send(message.text);
      case "cancel":
        this.running?.abort.abort();
        return;
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
        this.showSession(undefined);
        await this.loadSessions();
        return this.showNewest();
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
    this.post({ type: "busy", busy: this.running !== undefined });
    this.post({ type: "entries", entries: [...this.entries], truncated: this.truncated });
    this.postUsage();
    await this.showSessions();
  }

  /** List the sessions; the first time (or when the shown session is gone) show the newest. */
  private async showSessions(): Promise<void> {
    await this.loadSessions();
    this.post({ type: "notice" });
    const gone = this.sessionId !== undefined && !this.sessions.some((s) => s.sessionId === this.sessionId);
    if (this.running === undefined && (!this.chosen || gone)) {
      await this.showNewest();
    } else {
      this.postSessions();
    }
  }

  /** The project's newest session, or a new one when it has none. */
  private async showNewest(): Promise<void> {
    const newest = this.sessions.at(-1)?.sessionId;
    this.postSessions(newest);
    if (newest !== undefined) {
      await this.loadHistory(newest);
    } else {
      this.usage = NO_USAGE; // a new session, made by the first message
      this.postUsage();
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
    }
  }

  /** Show a session (or none: a new one), with nothing in it until its history is loaded. */
  private showSession(sessionId: string | undefined): void {
    this.chosen = true;
    this.loads++;
    this.sessionId = sessionId;
    this.entries = [];
    this.truncated = false;
    this.usage = sessionId === undefined ? NO_USAGE : undefined; // a new session has made no call
    this.post({ type: "entries", entries: [], truncated: false });
    this.post({ type: "notice" });
    this.postUsage();
  }

  private async send(text: string): Promise<void> {
    if (this.refuseWhileRunning()) return;
    this.post({ type: "notice" });
    const turn = newTurn(text);
    this.add(turn);
    const running: RunningTurn = { sessionId: "", turn, order: new SeqOrder(), abort: new AbortController() };
    this.running = running;
    this.post({ type: "busy", busy: true });
    try {
      running.sessionId = this.sessionId ?? (await this.startSession(text));
      const result = await request(
        this.deps.sender,
        Requests.chatSend,
        { ...workspaceParams(this.folderUri), sessionId: running.sessionId, text },
        running.abort.signal,
      );
      this.update(running.turn, finishTurn(this.drain(running), result), running);
      this.countUsage(running.sessionId, result.usage);
    } catch (error) {
      this.update(running.turn, failTurn(this.drain(running), errorMessage(error), running.abort.signal.aborted), running);
    } finally {
      this.running = undefined;
      this.post({ type: "busy", busy: false });
    }
  }

  /** A new session named after its first message; the list then shows it as current. */
  private async startSession(text: string): Promise<string> {
    const { sessionId } = await request(this.deps.sender, Requests.sessionNew, {
      ...workspaceParams(this.folderUri),
      title: sessionTitle(text),
    });
    this.sessionId = sessionId;
    this.chosen = true;
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
      sessions: [...this.sessions].reverse().map((session) => ({
        sessionId: session.sessionId,
        label: session.title.trim() === "" ? session.sessionId : session.title,
      })),
      sessionId,
    });
  }

  private post(message: HostMessage): void {
    this.view?.(message);
  }
}
