/**
 * The chat view's host logic against a fake server: what the page posts is checked before
 * anything runs, deltas are routed by session while a send runs and applied in seq order, the stop
 * button cancels the send, `/memory` lines go to `lecode/command`, and every failure is shown in
 * place.
 */
// covers P7 (chat panel), P3 (chat streaming)
import { describe, expect, it, vi } from "vitest";
import { type ChatDeps, ChatController, sessionTitle } from "../src/chat/controller";
import { SET_API_KEY_HINT } from "../src/chat/turn";
import { startedAt } from "../src/chat/sessionList";
import type { HostMessage } from "../src/chat/messages";
import type { Turn } from "../src/chat/turn";
import type { ChatDeltaParams, SessionInfoModel } from "../src/common/protocol";
import { Requests } from "../src/common/protocol";
import { CONFIGURED, FakeServer, type PendingSend, chatDeps, serverError } from "./fakes";

const APP = "file:///src/app";
const S1 = "20261129T100000Z-3f2a9c41";
const S2 = "20261129T110000Z-0badcafe";

const CREATED = "2026-11-29T10:00:00Z";
const session = (sessionId: string, title: string, origin: SessionInfoModel["origin"] = "chat"): SessionInfoModel => ({
  sessionId,
  title,
  created: CREATED,
  records: 3,
  origin,
});

function harness(sessions: SessionInfoModel[] = [session(S1, "build"), session(S2, "")]) {
  const server = new FakeServer()
    .on(Requests.sessionList, () => ({ sessions }))
    .on(Requests.chatHistory, () => ({ items: [], truncated: false }))
    .holdSends();
  const sends = server.sends ?? [];
  const deps: ChatDeps = chatDeps(server, APP);
  const chat = new ChatController(deps);
  const posted: HostMessage[] = [];
  chat.attach((message) => posted.push(message));
  /** The turn the page shows last at `index`. */
  const shown = (index: number): Turn | undefined => {
    const last = posted.filter((m) => m.type === "entry" && m.index === index).at(-1);
    return last?.type === "entry" && last.entry.kind === "turn" ? last.entry : undefined;
  };
  const busy = () => posted.filter((m) => m.type === "busy").at(-1);
  return { server, sends, deps, chat, posted, shown, busy };
}

const delta = (seq: number, rest: Partial<ChatDeltaParams>, sessionId = S2, turnId = "t-1"): ChatDeltaParams =>
  ({ sessionId, turnId, seq, kind: "text", ...rest }) as ChatDeltaParams;

const DONE = { turnId: "t-1", stopReason: "stop", usage: { calls: 1, promptTokens: 5, completionTokens: 2, totalTokens: 7, unknownUsageCalls: 0 } };

/** Wait until the controller has sent chat/send (it first awaits other requests). */
async function sent(h: ReturnType<typeof harness>, count = 1): Promise<PendingSend> {
  await vi.waitFor(() => expect(h.sends).toHaveLength(count));
  return h.sends[count - 1];
}

describe("opening the view", () => {
  it("lists the sessions newest first and shows the newest one's history", async () => {
    const h = harness();
    h.server.on(Requests.chatHistory, () => ({
      items: [
        { seq: 1, turnId: "t0", kind: "user", text: "hi" },
        { seq: 2, turnId: "t0", kind: "text", text: "hello" },
      ],
      truncated: true,
    }));
    await h.chat.receive({ type: "ready" });
    expect(h.posted.filter((m) => m.type === "sessions").at(-1)).toEqual({
      type: "sessions",
      projects: [{ folderUri: APP, label: "app" }],
      folderUri: APP,
      sessions: [
        { sessionId: S2, label: `${S2} · ${startedAt(CREATED)}`, group: "chat" },
        { sessionId: S1, label: `build · ${startedAt(CREATED)}`, group: "chat" },
      ],
      sessionId: S2,
    });
    expect(h.server.calls.at(-1)).toEqual({ method: Requests.chatHistory, params: { workspaceUri: APP, sessionId: S2, limit: 400 } });
    expect(h.posted.filter((m) => m.type === "entries").at(-1)).toMatchObject({
      type: "entries",
      truncated: true,
      entries: [{ user: "hi", parts: [{ text: "hello" }] }],
    });
  });

  it("shows the newest session once the server runs, when it was not running at first", async () => {
    const h = harness();
    let running = false;
    h.server.on(Requests.sessionList, () => {
      if (!running) throw new Error("Starting lecode-ls…");
      return { sessions: [session(S1, "build")] };
    });
    await h.chat.receive({ type: "ready" });
    expect(h.posted.at(-1)).toEqual({ type: "notice", text: "Starting lecode-ls…" });
    running = true;
    await h.chat.refresh();
    expect(h.posted).toContainEqual({ type: "notice" });
    expect(h.posted.filter((m) => m.type === "sessions").at(-1)).toMatchObject({ sessionId: S1 });
    expect(h.server.calls.at(-1)).toMatchObject({ method: Requests.chatHistory, params: { sessionId: S1 } });
  });

  it("shows only the history of the session chosen last", async () => {
    const h = harness();
    const answers: ((items: unknown) => void)[] = [];
    h.server.on(Requests.chatHistory, () => new Promise((resolve) => answers.push(resolve)));
    const first = h.chat.receive({ type: "ready" });
    await vi.waitFor(() => expect(answers).toHaveLength(1));
    const second = h.chat.receive({ type: "selectSession", sessionId: S1 });
    await vi.waitFor(() => expect(answers).toHaveLength(2));
    answers[1]({ items: [{ seq: 1, turnId: "a", kind: "user", text: "from S1" }], truncated: false });
    answers[0]({ items: [{ seq: 1, turnId: "b", kind: "user", text: "from S2" }], truncated: false });
    await Promise.all([first, second]);
    const shown = h.posted.filter((m) => m.type === "entries").at(-1);
    expect(shown).toMatchObject({ entries: [{ user: "from S1" }] });
  });

  it("shows a failed request as a notice, not as a crash", async () => {
    const h = harness();
    h.server.on(Requests.sessionList, () => {
      throw serverError("memory_disabled", "memory is turned off ([memory] enabled = false)");
    });
    await h.chat.receive({ type: "ready" });
    expect(h.posted.at(-1)).toEqual({ type: "notice", text: "memory is turned off ([memory] enabled = false)" });
  });
});

describe("what the page posts", () => {
  it.each([
    [undefined],
    ["ready"],
    [{ type: "runCommand", command: "lecode.forgetFact" }],
    [{ type: "send", text: "hi", sessionId: S1 }],
    [{ type: "send", text: 42 }],
    [{ type: "selectSession", sessionId: "../../etc/passwd" }],
    [{ type: "openFact", factId: "12", revision: 1 }],
  ])("is ignored when it is not one of the known messages: %j", async (message) => {
    const h = harness();
    await h.chat.receive(message);
    expect(h.server.calls).toEqual([]);
    expect(h.posted).toEqual([]);
  });

  it("cannot select a session the list does not have", async () => {
    const h = harness();
    await h.chat.receive({ type: "ready" });
    const calls = h.server.calls.length;
    await h.chat.receive({ type: "selectSession", sessionId: "20261129T120000Z-00000000" });
    expect(h.server.calls).toHaveLength(calls);
  });

  it("opens only http(s) links, and the facts and notes of the memory line in the view's project", async () => {
    const h = harness();
    await h.chat.receive({ type: "ready" });
    await h.chat.receive({ type: "openLink", href: "command:lecode.forgetFact" });
    await h.chat.receive({ type: "openLink", href: "https://example.com/docs" });
    await h.chat.receive({ type: "openFact", factId: 12, revision: 2 });
    await h.chat.receive({ type: "openNote", file: "MEMORY.md" });
    expect(vi.mocked(h.deps.openExternal).mock.calls).toEqual([["https://example.com/docs"]]);
    expect(vi.mocked(h.deps.openFact).mock.calls).toEqual([[12, 2, APP]]);
    expect(vi.mocked(h.deps.openNote).mock.calls).toEqual([["MEMORY.md", APP]]);
  });
});

describe("the session's usage total", () => {
  // covers C10 (issue 11, item 7): the history's total, then every turn's usage added to it.
  const USAGE = { calls: 3, promptTokens: 2410, completionTokens: 96, totalTokens: 2506, unknownUsageCalls: 1 };
  const usageShown = (h: ReturnType<typeof harness>) => h.posted.filter((m) => m.type === "usage").at(-1);

  it("shows the total the history reports, and adds each turn's usage", async () => {
    const h = harness();
    h.server.on(Requests.chatHistory, () => ({ items: [], truncated: false, usage: USAGE }));
    await h.chat.receive({ type: "ready" });
    expect(usageShown(h)).toEqual({
      type: "usage",
      text: "Session usage: 2,506 tokens (2,410 prompt, 96 completion) in 3 calls; usage unknown for 1 of them",
    });
    const receiving = h.chat.receive({ type: "send", text: "q" });
    (await sent(h)).resolve(DONE);
    await receiving;
    expect(usageShown(h)).toEqual({
      type: "usage",
      text: "Session usage: 2,513 tokens (2,415 prompt, 98 completion) in 4 calls; usage unknown for 1 of them",
    });
  });

  it("starts a new session at no calls", async () => {
    const h = harness([]);
    await h.chat.receive({ type: "ready" });
    expect(usageShown(h)).toEqual({ type: "usage", text: "Session usage: no model calls yet" });
  });
});

describe("a turn", () => {
  it("routes deltas by session before the turnId is known, in seq order, and ends with the answer", async () => {
    const h = harness();
    await h.chat.receive({ type: "ready" });
    const receiving = h.chat.receive({ type: "send", text: "How do I build?" });
    const send = await sent(h);
    expect(send.params).toEqual({ workspaceUri: APP, sessionId: S2, text: "How do I build?" });
    expect(h.busy()).toEqual({ type: "busy", busy: true });
    h.chat.handleDelta(delta(1, { text: "`make`" }));
    h.chat.handleDelta(delta(0, { text: "Run " }));
    h.chat.handleDelta(delta(0, { text: "other session" }, S1, "t-9"));
    h.chat.handleDelta(delta(2, { text: "another turn" }, S2, "t-2"));
    h.chat.handleDelta(delta(2, { kind: "memory", facts: [{ factId: 12, revision: 2 }], notes: ["MEMORY.md"] }));
    expect(h.shown(0)).toMatchObject({ state: "running", user: "How do I build?", parts: [{ kind: "text", text: "Run `make`" }] });
    send.resolve(DONE);
    await receiving;
    expect(h.shown(0)).toMatchObject({
      state: "done",
      turnId: "t-1",
      parts: [{ kind: "text", text: "Run `make`" }],
      memory: { facts: [{ factId: 12, revision: 2 }], notes: ["MEMORY.md"] },
    });
    expect(h.busy()).toEqual({ type: "busy", busy: false });
  });

  it("applies deltas still held back by a missing seq when the answer comes", async () => {
    const h = harness();
    await h.chat.receive({ type: "ready" });
    const receiving = h.chat.receive({ type: "send", text: "q" });
    const send = await sent(h);
    h.chat.handleDelta(delta(1, { text: "late" }));
    expect(h.shown(0)?.parts).toEqual([]);
    send.resolve(DONE);
    await receiving;
    expect(h.shown(0)?.parts).toEqual([{ kind: "text", text: "late" }]);
  });

  it("ignores deltas when no send is running", () => {
    const h = harness();
    h.chat.handleDelta(delta(0, { text: "stray" }));
    expect(h.posted).toEqual([]);
  });

  it("is cancelled by the stop button: the send's signal aborts and the view leaves the busy state", async () => {
    const h = harness();
    await h.chat.receive({ type: "ready" });
    const receiving = h.chat.receive({ type: "send", text: "q" });
    const send = await sent(h);
    h.chat.handleDelta(delta(0, { text: "partial" }));
    await h.chat.receive({ type: "cancel" });
    expect(send.signal?.aborted).toBe(true);
    send.resolve({ ...DONE, stopReason: "cancelled" });
    await receiving;
    expect(h.shown(0)).toMatchObject({ state: "cancelled", parts: [{ kind: "text", text: "partial" }] });
    expect(h.busy()).toEqual({ type: "busy", busy: false });
  });

  it("counts a send rejected after the stop button (-32800) as cancelled, not as an error", async () => {
    const h = harness();
    await h.chat.receive({ type: "ready" });
    const receiving = h.chat.receive({ type: "send", text: "q" });
    const send = await sent(h);
    await h.chat.receive({ type: "cancel" });
    send.reject(Object.assign(new Error("Request cancelled"), { code: -32800 }));
    await receiving;
    expect(h.shown(0)).toMatchObject({ state: "cancelled", parts: [] });
  });

  it("shows a rejected send as an error in place", async () => {
    const h = harness();
    await h.chat.receive({ type: "ready" });
    const receiving = h.chat.receive({ type: "send", text: "q" });
    (await sent(h)).reject(serverError("session_busy", "sessionId: a chat turn is already running in this session"));
    await receiving;
    expect(h.shown(0)).toMatchObject({
      state: "failed",
      parts: [{ kind: "error", message: "sessionId: a chat turn is already running in this session" }],
    });
    expect(h.busy()).toEqual({ type: "busy", busy: false });
  });

  it("refuses a second message while one runs, and switching sessions", async () => {
    const h = harness();
    await h.chat.receive({ type: "ready" });
    const receiving = h.chat.receive({ type: "send", text: "q" });
    const send = await sent(h);
    await h.chat.receive({ type: "send", text: "again" });
    await h.chat.receive({ type: "selectSession", sessionId: S1 });
    expect(h.sends).toHaveLength(1);
    expect(h.posted.at(-1)).toEqual({ type: "notice", text: "An answer is still running: stop it first." });
    send.resolve(DONE);
    await receiving;
  });

  it("starts a session named after the first message when none is shown", async () => {
    const h = harness([]);
    h.server.on(Requests.sessionNew, () => ({ sessionId: S1 }));
    await h.chat.receive({ type: "ready" });
    const receiving = h.chat.receive({ type: "send", text: "  Why does the build fail on CI?\nlogs below" });
    const send = await sent(h);
    expect(h.server.calls.find((c) => c.method === Requests.sessionNew)?.params).toEqual({
      workspaceUri: APP,
      title: "Why does the build fail on CI?",
    });
    expect(send.params.sessionId).toBe(S1);
    send.resolve(DONE);
    await receiving;
  });
});

describe("/memory lines", () => {
  it("go to lecode/command with the session, and their output is shown in place", async () => {
    const h = harness();
    h.server.on(Requests.command, () => ({ output: "notes/build.md:1: Run `make`." }));
    await h.chat.receive({ type: "ready" });
    await h.chat.receive({ type: "send", text: "/memory search make\n" });
    expect(h.server.calls.at(-1)).toEqual({
      method: Requests.command,
      params: { workspaceUri: APP, sessionId: S2, line: "/memory search make" },
    });
    expect(h.sends).toEqual([]);
    expect(h.posted.at(-1)).toEqual({
      type: "entry",
      index: 0,
      entry: { kind: "command", line: "/memory search make", state: "done", output: "notes/build.md:1: Run `make`." },
    });
  });

  it("show a refused line's error in place", async () => {
    const h = harness();
    h.server.on(Requests.command, () => {
      throw serverError("invalid_params", "text: unknown /memory subcommand 'nope'; /memory help lists them", -32602);
    });
    await h.chat.receive({ type: "ready" });
    await h.chat.receive({ type: "send", text: "/memory nope" });
    expect(h.posted.at(-1)).toMatchObject({ type: "entry", entry: { state: "failed", output: expect.stringContaining("unknown /memory subcommand") } });
  });

  it("are not confused with text that only starts like one", async () => {
    const h = harness();
    await h.chat.receive({ type: "ready" });
    const receiving = h.chat.receive({ type: "send", text: "/memoryless question" });
    (await sent(h)).resolve(DONE);
    await receiving;
    expect(h.server.calls.some((c) => c.method === Requests.command)).toBe(false);
  });
});

describe("sessionTitle", () => {
  it("is the first words of the first line, cut at a word", () => {
    expect(sessionTitle("\n  first\nsecond")).toBe("first");
    expect(sessionTitle("Why does the build fail on CI when the cache is cold and the runner is new?")).toBe(
      "Why does the build fail on CI when the cache…",
    );
    expect(sessionTitle("a".repeat(80))).toBe(`${"a".repeat(47)}…`);
  });
});

describe("the set-up step", () => {
  // covers K2, P7 (issue 30, item 2): no provider configured means no request leaves
  it("is shown instead of the chat while the server reports no provider, and a message sends nothing", async () => {
    const h = harness();
    h.server.on(Requests.providerInfo, () => ({ configured: false, baseUrl: null, model: "gpt-4o-mini", apiKeyEnv: "OPENAI_API_KEY", apiKeySet: false }));
    await h.chat.receive({ type: "ready" });
    expect(h.posted.filter((m) => m.type === "setup").at(-1)).toMatchObject({ type: "setup", view: { probed: true, local: [] } });
    expect(h.posted.filter((m) => m.type === "provider").at(-1)).toEqual({ type: "provider", label: undefined });
    await h.chat.receive({ type: "newSession" });
    await h.chat.receive({ type: "send", text: "How do I build?" });
    expect(h.server.calls.map((c) => c.method).filter((m) => m === Requests.chatSend || m === Requests.sessionNew)).toEqual([]);
    expect(h.posted.filter((m) => m.type === "draft")).toEqual([{ type: "draft", text: "How do I build?" }]);
  });

  // covers P7 (issue 43, item 5): a person's words never vanish behind the set-up
  it("gives a message sent before the starting server said it has no provider back to the text box, and makes no session", async () => {
    const h = harness();
    h.server.on(Requests.providerInfo, () => ({ ...CONFIGURED, configured: false, baseUrl: null }));
    // The page sent before "ready" was answered: the controller has not asked the server yet.
    await h.chat.receive({ type: "send", text: "How do I build?" });
    expect(h.server.calls.map((c) => c.method).filter((m) => m === Requests.chatSend || m === Requests.sessionNew)).toEqual([]);
    expect(h.posted.filter((m) => m.type === "draft")).toEqual([{ type: "draft", text: "How do I build?" }]);
    expect(h.posted.filter((m) => m.type === "entries").at(-1)).toEqual({ type: "entries", entries: [], truncated: false });
    expect(h.posted.filter((m) => m.type === "setup").at(-1)).toMatchObject({ type: "setup", view: { probed: true } });
    expect(h.busy()).toEqual({ type: "busy", busy: false });
  });

  it("gives way to the chat, with the cursor in the text box, once a choice is saved", async () => {
    const h = harness();
    let configured = false;
    h.server.on(Requests.providerInfo, () => (configured ? CONFIGURED : { ...CONFIGURED, configured: false, baseUrl: null }));
    vi.mocked(h.deps.setup.save).mockImplementation(async () => {
      configured = true;
    });
    await h.chat.receive({ type: "ready" });
    // A server the person typed: listed and tested through the set-up's fetch.
    h.deps.setup.fetch = async (url) =>
      new Response(String(url).endsWith("/models") ? JSON.stringify({ data: [{ id: "gpt-4o" }] }) : JSON.stringify({ choices: [] }), { status: 200 });
    await h.chat.receive({ type: "setupServer", baseUrl: "http://127.0.0.1:8080/v1", local: false });
    await h.chat.receive({ type: "setupUse" });
    expect(h.deps.setup.save).toHaveBeenCalledWith({ baseUrl: "http://127.0.0.1:8080/v1", model: "gpt-4o", keyed: true });
    expect(h.posted.slice(-3)).toEqual([{ type: "provider", label: "gpt-4o · 127.0.0.1:8080" }, { type: "setup" }, { type: "focus" }]);
  });

  it("shows a missing key as a set-up problem with the command that stores one, and keeps the message", async () => {
    // covers I3, P7 (issue 42): the server refused before anything was sent or recorded
    const h = harness();
    await h.chat.receive({ type: "ready" });
    const receiving = h.chat.receive({ type: "send", text: "Summarise MEMORY.md" });
    const sentence = "[provider] api_key_env names GROQ_API_KEY, which is not set (or is empty) in lecode-ls's environment, so nothing was sent";
    (await sent(h)).reject(serverError("provider_key_missing", sentence));
    await receiving;
    expect(h.shown(0)?.parts.at(-1)).toEqual({ kind: "error", message: `${sentence}. ${SET_API_KEY_HINT}` });
    expect(h.posted).toContainEqual({ type: "draft", text: "Summarise MEMORY.md" });
  });

  it("keeps the text box as it was after a provider's own failure (the message was recorded)", async () => {
    const h = harness();
    await h.chat.receive({ type: "ready" });
    const receiving = h.chat.receive({ type: "send", text: "hi" });
    (await sent(h)).reject(serverError("session_busy", "sessionId: busy"));
    await receiving;
    expect(h.posted.some((m) => m.type === "draft")).toBe(false);
  });

  it("is not shown by a lecode-ls too old to say which provider it has (lecode.server.command)", async () => {
    const h = harness();
    h.server.on(Requests.providerInfo, () => {
      throw Object.assign(new Error("Unhandled method lecode/provider/info"), { code: -32601 });
    });
    await h.chat.receive({ type: "ready" });
    expect(h.posted.some((m) => m.type === "setup")).toBe(false);
    expect(h.posted.filter((m) => m.type === "sessions")).toHaveLength(1);
  });

  it("opens when the server answers provider_not_configured, and gives the message back to the text box", async () => {
    const h = harness();
    await h.chat.receive({ type: "ready" });
    h.server.on(Requests.providerInfo, () => ({ ...CONFIGURED, configured: false, baseUrl: null }));
    const receiving = h.chat.receive({ type: "send", text: "hi" });
    (await sent(h)).reject(serverError("provider_not_configured", "no chat provider is configured, so nothing was sent"));
    await receiving;
    // No failed turn talking about config.toml behind the set-up: the words are back in the box.
    expect(h.posted.filter((m) => m.type === "entries").at(-1)).toEqual({ type: "entries", entries: [], truncated: false });
    expect(h.posted.filter((m) => m.type === "draft")).toEqual([{ type: "draft", text: "hi" }]);
    expect(h.posted.some((m) => m.type === "setup" && m.view !== undefined)).toBe(true);
  });
});

describe("sessions a person can find", () => {
  // covers P7 (issue 30, item 5)
  const S3 = "20261130T090000Z-12345678";

  it("lists chats apart from the sessions lecode keeps, and shows the newest chat, not a newer import", async () => {
    const h = harness([session(S1, "build"), session(S2, "Remembered in the editor", "editor"), session(S3, "old.jsonl", "import")]);
    await h.chat.receive({ type: "ready" });
    const shown = h.posted.filter((m) => m.type === "sessions").at(-1);
    expect(shown).toMatchObject({ sessionId: S1 });
    expect(shown?.type === "sessions" && shown.sessions.map((s) => [s.sessionId, s.group])).toEqual([
      [S3, "other"],
      [S2, "other"],
      [S1, "chat"],
    ]);
  });

  it("reopens the session that was in use before the window reloaded", async () => {
    const h = harness();
    h.deps.lastSession.set({ folderUri: APP, sessionId: S1 });
    await h.chat.receive({ type: "ready" });
    expect(h.server.calls.find((c) => c.method === Requests.chatHistory)?.params).toMatchObject({ sessionId: S1 });
    await h.chat.receive({ type: "selectSession", sessionId: S2 });
    expect(h.deps.lastSession.get()).toEqual({ folderUri: APP, sessionId: S2 });
  });

  it("keeps the session a first message made as the one in use", async () => {
    const h = harness([]);
    h.server.on(Requests.sessionNew, () => ({ sessionId: S3 }));
    await h.chat.receive({ type: "ready" });
    const receiving = h.chat.receive({ type: "send", text: "first words" });
    (await sent(h)).resolve(DONE);
    await receiving;
    expect(h.deps.lastSession.get()).toEqual({ folderUri: APP, sessionId: S3 });
  });

  it("renames and deletes the shown session from the picker, then lists again", async () => {
    const h = harness();
    vi.mocked(h.deps.renameSession).mockResolvedValue(true);
    vi.mocked(h.deps.deleteSession).mockResolvedValue(true);
    await h.chat.receive({ type: "ready" });
    const lists = () => h.server.calls.filter((c) => c.method === Requests.sessionList).length;
    const before = lists();
    await h.chat.receive({ type: "renameSession", sessionId: S1 });
    await h.chat.receive({ type: "deleteSession", sessionId: S2 });
    await h.chat.receive({ type: "deleteSession", sessionId: "20261129T120000Z-00000000" });
    expect(vi.mocked(h.deps.renameSession).mock.calls).toEqual([[APP, session(S1, "build")]]);
    expect(vi.mocked(h.deps.deleteSession).mock.calls).toEqual([[APP, session(S2, "")]]);
    expect(lists()).toBe(before + 2);
  });
});

describe("the rest of a chat beside Copilot's", () => {
  it("names the facts of the memory used line once the Facts view's list says what they are", async () => {
    const h = harness();
    const view = { factId: 3, revision: 2, status: "valid", text: "We indent with tabs.", drift: "changed: app.py:2" };
    vi.mocked(h.deps.facts.lookup).mockResolvedValue([view]);
    h.server.on(Requests.chatHistory, () => ({
      items: [
        { seq: 1, turnId: "t0", kind: "user", text: "indent?" },
        { seq: 2, turnId: "t0", kind: "memory", facts: [{ factId: 3, revision: 2 }], notes: [] },
      ],
      truncated: false,
    }));
    await h.chat.receive({ type: "ready" });
    expect(vi.mocked(h.deps.facts.lookup).mock.calls).toEqual([[APP, [3]]]);
    expect(h.posted.filter((m) => m.type === "facts").at(-1)).toEqual({ type: "facts", facts: [view] });
  });

  it("puts the cursor in the text box once the page is ready, when it was asked before", async () => {
    const h = harness();
    h.chat.focus();
    expect(h.posted.some((m) => m.type === "focus")).toBe(false);
    await h.chat.receive({ type: "ready" });
    expect(h.posted[0]).toEqual({ type: "focus" });
  });

  it("copies and inserts code blocks through the host", async () => {
    const h = harness();
    await h.chat.receive({ type: "copy", text: "make test" });
    await h.chat.receive({ type: "insert", text: "make test" });
    expect(vi.mocked(h.deps.copy).mock.calls).toEqual([["make test"]]);
    expect(vi.mocked(h.deps.insert).mock.calls).toEqual([["make test"]]);
  });
});
