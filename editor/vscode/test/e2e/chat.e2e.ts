/**
 * The chat view end to end: the built extension in the fake VS Code host, the real
 * vscode-languageclient, a real lecode-ls, and a loopback HTTP server speaking the OpenAI Chat
 * Completions API as the model. The API key goes from SecretStorage into the server's environment
 * and from there only into the provider's Authorization header; a turn streams into the page's
 * entries; the stop button cancels it; `/memory` lines answer in place; history shows the turn
 * again. Run `npm run test:e2e` (it builds first).
 */
// covers P7 (chat panel, API key in SecretStorage), P3 (chat streaming), K2, T5
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { URI } from "vscode-uri";
import type { HostMessage } from "../../src/chat/messages";
import type { Entry, Turn } from "../../src/chat/turn";
import { FakeOpenAI } from "./fakeOpenAI";
import { FakeHost, type ResolvedWebview } from "./host";
import { serverCommand } from "./serverCommand";

const KEY = "sk-e2e-0123456789abcdef";
const OTHER_KEY = "sk-e2e-fedcba9876543210";
const VARIABLE = "LECODE_E2E_API_KEY";
const root = new URL("../../", import.meta.url);

let tmp: string;
let host: FakeHost;
let model: FakeOpenAI;
let extension: ReturnType<FakeHost["load"]>;
let view: ResolvedWebview;
let savedConfigDir: string | undefined;

const isMessage = <T extends HostMessage["type"]>(type: T) => (m: unknown): m is Extract<HostMessage, { type: T }> =>
  (m as HostMessage).type === type;

/** The last turn the page was sent once it satisfies `ready`. */
async function turnWhen(ready: (turn: Turn) => boolean): Promise<Turn> {
  const found = await view.postedWhen((m) => isMessage("entry")(m) && m.entry.kind === "turn" && ready(m.entry));
  return (found as { entry: Turn }).entry;
}

const text = (entry: Entry): string => (entry.kind === "turn" ? entry.parts.map((p) => (p.kind === "text" ? p.text : "")).join("") : "");

beforeAll(async () => {
  tmp = realpathSync(mkdtempSync(join(tmpdir(), "lecode-vscode-chat-")));
  mkdirSync(join(tmp, "project"));
  mkdirSync(join(tmp, "config"));
  savedConfigDir = process.env.LECODE_CONFIG_DIR;
  process.env.LECODE_CONFIG_DIR = join(tmp, "config");
  model = new FakeOpenAI();
  await model.start();
  host = new FakeHost([{ uri: URI.file(join(tmp, "project")), name: "project", index: 0 }]);
  host.settings["lecode.server.command"] = serverCommand();
  host.settings["lecode.provider.base_url"] = model.baseUrl;
  host.settings["lecode.provider.api_key_env"] = VARIABLE;
  host.secrets.set("lecode.provider.apiKey", KEY);
  extension = host.load(new URL("dist/extension.js", root));
  extension.activate(host.context(root));
  view = host.resolveWebview("lecode.chat");
  view.receive({ type: "ready" });
  // The page first hears that the server is starting; once it runs, the sessions are listed.
  await view.postedWhen(isMessage("sessions"));
});

afterAll(async () => {
  await extension?.deactivate();
  await model?.stop();
  if (savedConfigDir === undefined) delete process.env.LECODE_CONFIG_DIR;
  else process.env.LECODE_CONFIG_DIR = savedConfigDir;
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe("the chat view in a host", () => {
  it("loads the page with a strict CSP, scripts on, command links off, and only dist and media readable", () => {
    expect(view.options.enableScripts).toBe(true);
    expect(view.options.enableCommandUris).toBe(false);
    expect(view.options.localResourceRoots?.map((uri) => uri.fsPath)).toEqual([
      join(root.pathname, "dist"),
      join(root.pathname, "media"),
    ]);
    expect(view.html).toMatch(/content="default-src 'none'; script-src 'nonce-[^']+'; style-src https:\/\/webview\.fake 'nonce-/);
    expect(view.html).toContain('src="https://webview.fake' + join(root.pathname, "dist", "webview.js") + '"');
  });

  it("streams a turn from the model through the real server, with the memory it used", async () => {
    const files = host.fileSystems.get("lecode-memory");
    if (!files) throw new Error("the lecode-memory file system was not registered");
    const memory = URI.parse(`lecode-memory:/MEMORY.md?${encodeURIComponent(host.folders[0].uri.toString())}`);
    await files.writeFile(memory, new TextEncoder().encode("# Memory\n- build with make\n"), { create: true, overwrite: true });
    model.replies.push({ text: ["Run ", "`make`", " in the project root."] });
    view.receive({ type: "send", text: "How do I build?" });
    const turn = await turnWhen((t) => t.state !== "running");
    expect(turn).toMatchObject({
      state: "done",
      stopReason: "stop",
      user: "How do I build?",
      parts: [{ kind: "text", text: "Run `make` in the project root." }],
      memory: { notes: ["MEMORY.md"] },
      usage: { calls: 1 },
    });
    expect(turn.turnId).toEqual(expect.any(String));
    // The model got the person's message and the memory; the key only in its header.
    const [request] = model.requests;
    expect(request.authorization).toBe(`Bearer ${KEY}`);
    expect(request.body.stream).toBe(true);
    expect(JSON.stringify(request.body.messages)).toContain("How do I build?");
    expect(JSON.stringify(request.body.messages)).toContain("build with make");
    // The session made for the first message is listed as the current one.
    const sessions = view.posted.filter(isMessage("sessions")).at(-1);
    expect(sessions?.sessions).toEqual([{ sessionId: sessions?.sessionId, label: expect.stringMatching(/^How do I build\? · \w{3} \d+, \d\d:\d\d$/), group: "chat" }]);
    expect(view.posted.filter(isMessage("busy")).at(-1)).toEqual({ type: "busy", busy: false });
  });

  it("never writes the key into the log", () => {
    expect(host.log.join("\n")).not.toContain(KEY);
  });

  it("stops a running turn with the stop button", async () => {
    model.replies.push({ hang: ["Once ", "upon"] });
    view.receive({ type: "send", text: "Tell me a long story" });
    await turnWhen((t) => t.user === "Tell me a long story" && text(t) === "Once upon");
    view.receive({ type: "cancel" });
    const turn = await turnWhen((t) => t.user === "Tell me a long story" && t.state !== "running");
    expect(turn).toMatchObject({ state: "cancelled", stopReason: "cancelled", parts: [{ kind: "text", text: "Once upon" }] });
    await model.disconnected;
    expect(view.posted.filter(isMessage("busy")).at(-1)).toEqual({ type: "busy", busy: false });
  });

  it("answers a /memory line in place, without the model", async () => {
    const asked = model.requests.length;
    view.receive({ type: "send", text: "/memory show" });
    const answer = await view.postedWhen((m) => isMessage("entry")(m) && m.entry.kind === "command" && m.entry.state !== "running");
    expect(answer).toMatchObject({ entry: { kind: "command", line: "/memory show", state: "done", output: "# Memory\n- build with make\n" } });
    expect(model.requests).toHaveLength(asked);
  });

  it("shows the session's history again when it is selected", async () => {
    const sessionId = view.posted.filter(isMessage("sessions")).at(-1)?.sessionId;
    const since = view.posted.length;
    view.receive({ type: "newSession" });
    view.receive({ type: "selectSession", sessionId });
    const shown = (await view.postedWhen((m) => isMessage("entries")(m) && m.entries.length > 0, since)) as Extract<
      HostMessage,
      { type: "entries" }
    >;
    expect(shown.entries.map((entry) => [entry.kind === "turn" ? entry.user : undefined, text(entry), entry.kind === "turn" && entry.state])).toEqual([
      ["How do I build?", "Run `make` in the project root.", "done"],
      ["Tell me a long story", "Once upon", "cancelled"],
    ]);
    expect((shown.entries[0] as Turn).memory.notes).toEqual(["MEMORY.md"]);
    // C10: the session's total from the server; the stopped turn's call counts, its usage unknown.
    const usage = (await view.postedWhen((m) => isMessage("usage")(m) && (m.text ?? "").includes(" in "), since)) as Extract<
      HostMessage,
      { type: "usage" }
    >;
    expect(usage.text).toMatch(/^Session usage: \d+ tokens \(12 prompt, \d+ completion\) in 2 calls; usage unknown for 1 of them$/);
  });

  it("hands a key set with Set API Key to the restarted server", async () => {
    host.typed.push(OTHER_KEY);
    await host.commands.get("lecode.setApiKey")?.();
    expect(host.secrets.get("lecode.provider.apiKey")).toBe(OTHER_KEY);
    expect(host.messages.at(-1)).toBe(`info: The API key is stored; lecode-ls restarted with it in ${VARIABLE}.`);
    view.receive({ type: "send", text: "Still there?" });
    await turnWhen((t) => t.user === "Still there?" && t.state === "done");
    expect(model.requests.at(-1)?.authorization).toBe(`Bearer ${OTHER_KEY}`);
    expect(host.log.join("\n")).not.toContain(OTHER_KEY);
  });
});
