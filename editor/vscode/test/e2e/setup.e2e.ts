/**
 * The chat's set-up step end to end: the built extension in the fake VS Code host, a real
 * lecode-ls with no provider configured, and a loopback server speaking the OpenAI API. Until the
 * person chooses, the page shows the set-up, a message sends nothing, the status bar asks for a
 * model and no request reaches the model's server; once they type its URL, pick a model and the
 * test answers, the choice is saved as their settings and the next message is answered by it.
 */
// covers K2 (the provider is the person's choice), P7 (issue 30, item 2)
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { URI } from "vscode-uri";
import type { HostMessage } from "../../src/chat/messages";
import type { SetupView } from "../../src/chat/setup";
import type { Turn } from "../../src/chat/turn";
import { FakeOpenAI } from "./fakeOpenAI";
import { FakeHost, type ResolvedWebview } from "./host";
import { serverCommand } from "./serverCommand";

const root = new URL("../../", import.meta.url);

let tmp: string;
let host: FakeHost;
let model: FakeOpenAI;
let extension: ReturnType<FakeHost["load"]>;
let view: ResolvedWebview;
let savedConfigDir: string | undefined;

const isMessage = <T extends HostMessage["type"]>(type: T) => (m: unknown): m is Extract<HostMessage, { type: T }> =>
  (m as HostMessage).type === type;

/** The set-up view the page is sent next that satisfies `ready`. */
async function setupWhen(ready: (view: SetupView) => boolean, since = 0): Promise<SetupView> {
  const found = await view.postedWhen((m) => isMessage("setup")(m) && m.view !== undefined && ready(m.view), since);
  return (found as { view: SetupView }).view;
}

beforeAll(async () => {
  tmp = realpathSync(mkdtempSync(join(tmpdir(), "lecode-vscode-setup-")));
  mkdirSync(join(tmp, "project"));
  mkdirSync(join(tmp, "config"));
  savedConfigDir = process.env.LECODE_CONFIG_DIR;
  process.env.LECODE_CONFIG_DIR = join(tmp, "config");
  model = new FakeOpenAI();
  await model.start();
  host = new FakeHost([{ uri: URI.file(join(tmp, "project")), name: "project", index: 0 }]);
  host.settings["lecode.server.command"] = serverCommand();
  extension = host.load(new URL("dist/extension.js", root));
  extension.activate(host.context(root));
  view = host.resolveWebview("lecode.chat");
  view.receive({ type: "ready" });
});

afterAll(async () => {
  await extension?.deactivate();
  await model?.stop();
  if (savedConfigDir === undefined) delete process.env.LECODE_CONFIG_DIR;
  else process.env.LECODE_CONFIG_DIR = savedConfigDir;
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe("the chat with no provider configured", () => {
  it("shows the set-up, sends nothing for a message, and asks for a model in the status bar", async () => {
    await setupWhen((v) => v.probed);
    const sent = view.posted.length;
    view.receive({ type: "send", text: "How do I build?" });
    // The message goes back to the text box (issue 43: a person's words never vanish), and the
    // set-up, shown already, stays.
    await view.postedWhen((m) => isMessage("draft")(m) && m.text === "How do I build?", sent);
    expect(view.posted.filter((m) => isMessage("setup")(m)).at(-1)).toMatchObject({ view: { probed: true } });
    expect(view.posted.slice(sent).filter((m) => isMessage("entry")(m))).toEqual([]);
    expect(host.statusBar[0]).toMatchObject({ text: "$(comment-discussion) lecode: choose a model", command: "lecode.setUpChat" });
    expect(model.seen).toEqual([]);
  });

  it("lists the models of a server the person types, tests the one picked, saves it and chats with it", async () => {
    const since = view.posted.length;
    view.receive({ type: "setupServer", baseUrl: model.baseUrl, local: false });
    await setupWhen((v) => v.models.length > 0, since);
    // The first request that reached it was the person's own choice: its list of models.
    expect(model.seen.map((s) => `${s.method} ${s.path}`)).toEqual(["GET /v1/models"]);
    view.receive({ type: "setupModel", model: "gpt-4.1-mini" });
    view.receive({ type: "setupUse" });
    await view.postedWhen((m) => isMessage("setup")(m) && m.view === undefined, since);
    expect(host.updates).toEqual([
      ["lecode.provider.base_url", model.baseUrl],
      ["lecode.provider.model", "gpt-4.1-mini"],
    ]);
    expect(model.requests.map((r) => [r.body.model, r.body.stream, r.body.messages])).toEqual([
      ["gpt-4.1-mini", false, [{ role: "user", content: "Reply with the word OK." }]],
    ]);
    model.replies.push({ text: ["Run ", "`make`", "."] });
    view.receive({ type: "send", text: "How do I build?" });
    const found = await view.postedWhen((m) => isMessage("entry")(m) && m.entry.kind === "turn" && m.entry.state !== "running");
    expect((found as { entry: Turn }).entry).toMatchObject({ state: "done", parts: [{ kind: "text", text: "Run `make`." }] });
    expect(model.requests.at(-1)?.body).toMatchObject({ model: "gpt-4.1-mini", stream: true });
    await vi.waitFor(() => expect(host.statusBar[0].text).toBe(`$(comment-discussion) gpt-4.1-mini · ${new URL(model.baseUrl).host}`));
  });
});
