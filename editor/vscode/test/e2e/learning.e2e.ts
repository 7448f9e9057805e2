/**
 * Automatic learning reviewed in the Facts view, end to end: the built extension in the fake VS
 * Code host, a real lecode-ls opted in to learning (`memory.auto_learn`, `memory_write` allowed, a
 * small window that makes it compact early), and a loopback OpenAI-compatible model that answers
 * chat turns, the summariser and the extraction call. After enough turns for a compaction the
 * extraction's candidates are left as proposals; Accept Proposal remembers one after a modal
 * confirmation, Dismiss Proposal drops the other. Run `npm run test:e2e` (it builds first).
 */
// covers P7 (fact tree view, palette-free tree actions), A1 (opt-in, after a persisted summary), A6 (proposals), A9
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { URI } from "vscode-uri";
import type { HostMessage } from "../../src/chat/messages";
import type { Turn } from "../../src/chat/turn";
import { FakeOpenAI, type SeenRequest } from "./fakeOpenAI";
import { FakeHost, type ResolvedWebview } from "./host";
import { serverCommand } from "./serverCommand";

const VARIABLE = "LECODE_E2E_API_KEY";
const root = new URL("../../", import.meta.url);
/** Two lasting preferences in the first message: each an exact substring the extraction quotes. */
const TABS = "we indent with tabs in this repository";
const ENGLISH = "commit messages are written in English";
const FIRST = `Please keep in mind: ${TABS}, and ${ENGLISH}.`;

type Node = { kind: string; text?: string; proposal?: { text: string; index: number }; fact?: { factId: number; text?: string } };

let tmp: string;
let host: FakeHost;
let model: FakeOpenAI;
let extension: ReturnType<FakeHost["load"]>;
let view: ResolvedWebview;
let savedConfigDir: string | undefined;

const system = (body: SeenRequest["body"]): string => {
  const first = body.messages[0];
  return first?.role === "system" && typeof first.content === "string" ? first.content : "";
};

/** The model: chat turns get "OK" (the queue's default), the summariser a summary, the extraction two proposals. */
function route(body: SeenRequest["body"]) {
  if (system(body).startsWith("You maintain the working summary")) {
    return { text: ["The person stated two conventions, tabs and English commit messages; the assistant acknowledged them."] };
  }
  if (system(body).startsWith("You extract durable project facts")) {
    // The payload names each message by its seq: `[seq N] user: ...`.
    const payload = String(body.messages.at(-1)?.content ?? "");
    const line = payload.split("\n").find((l) => /^\[seq \d+\] user: /.test(l) && l.includes(TABS));
    const seq = Number(/^\[seq (\d+)\]/.exec(line ?? "")?.[1]);
    const candidate = (quote: string) => ({
      text: quote,
      source_seqs: [seq],
      kind: "explicit_user_preference",
      quote,
      supersedes: [],
      proposal: true,
    });
    return { text: [JSON.stringify({ candidates: [candidate(TABS), candidate(ENGLISH)] })] };
  }
  return undefined;
}

function tree() {
  const provider = host.trees.get("lecode.facts");
  if (!provider) throw new Error("the lecode.facts view was not created");
  return provider;
}

/** The Facts view's top level once it satisfies `ready`, waiting on the tree's change events. */
async function rootsWhen(ready: (roots: Node[]) => boolean): Promise<Node[]> {
  for (;;) {
    const changed = new Promise<void>((resolve) => {
      const subscription = tree().onDidChangeTreeData(() => {
        (subscription as { dispose(): void }).dispose();
        resolve();
      });
    });
    const roots = ((await tree().getChildren()) as Node[]).filter((node) => node.kind !== "health");
    if (ready(roots)) return roots;
    await changed;
  }
}

async function proposals(): Promise<Node[]> {
  const roots = await tree().getChildren();
  const learning = roots.find((node) => node.kind === "learning");
  return learning ? ((await tree().getChildren(learning)) as Node[]) : [];
}

async function run(command: string, ...args: unknown[]): Promise<void> {
  const handler = host.commands.get(command);
  if (!handler) throw new Error(`${command} is not registered`);
  await handler(...args);
}

const isMessage = <T extends HostMessage["type"]>(type: T) => (m: unknown): m is Extract<HostMessage, { type: T }> =>
  (m as HostMessage).type === type;

async function turn(text: string): Promise<Turn> {
  view.receive({ type: "send", text });
  const found = await view.postedWhen(
    (m) => isMessage("entry")(m) && m.entry.kind === "turn" && m.entry.user === text && m.entry.state !== "running",
  );
  return (found as { entry: Turn }).entry;
}

beforeAll(async () => {
  tmp = realpathSync(mkdtempSync(join(tmpdir(), "lecode-vscode-learning-")));
  mkdirSync(join(tmp, "project"));
  mkdirSync(join(tmp, "config"));
  // The extension sends only its own sections (memory, provider, agent) as initializationOptions;
  // the compaction settings that make a tiny window compact early come from config.toml.
  writeFileSync(join(tmp, "config", "config.toml"), "[compaction]\nbuffer_tokens = 256\nmid_turn_threshold = 0.1\n");
  savedConfigDir = process.env.LECODE_CONFIG_DIR;
  process.env.LECODE_CONFIG_DIR = join(tmp, "config");
  model = new FakeOpenAI();
  model.route = route;
  await model.start();
  host = new FakeHost([{ uri: URI.file(join(tmp, "project")), name: "project", index: 0 }]);
  Object.assign(host.settings, {
    "lecode.server.command": serverCommand(),
    "lecode.provider.base_url": model.baseUrl,
    // A model the catalog does not know, so that `agent.context_window` is its window.
    "lecode.provider.model": "e2e-small-model",
    "lecode.provider.api_key_env": VARIABLE,
    "lecode.memory.auto_learn": true,
    "lecode.memory.learning": "model", // the extraction's proposals are under test, not the rules
    "lecode.agent.permissions": { memory_write: "allow" },
    "lecode.agent.context_window": 4096,
  });
  host.secrets.set("lecode.provider.apiKey", "sk-e2e-learning");
  extension = host.load(new URL("dist/extension.js", root));
  extension.activate(host.context(root));
  view = host.resolveWebview("lecode.chat");
  view.receive({ type: "ready" });
  await view.postedWhen(isMessage("sessions"));
});

afterAll(async () => {
  await extension?.deactivate();
  await model?.stop();
  if (savedConfigDir === undefined) delete process.env.LECODE_CONFIG_DIR;
  else process.env.LECODE_CONFIG_DIR = savedConfigDir;
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe("automatic learning reviewed in the Facts view", () => {
  it("leaves the extraction's candidates as proposals after the compaction a long enough chat needs", async () => {
    let last: Turn | undefined;
    for (const text of [FIRST, "What is the layout of the project?", "How do I run the tests?", "And the linter?"]) {
      last = await turn(text);
      expect(last.state).toBe("done");
    }
    const notices = last?.parts.flatMap((part) => (part.kind === "notice" ? [[part.topic, part.message]] : []));
    expect(notices).toEqual([
      ["compaction", "Compacted the earlier conversation into a working summary."],
      ["learning", "Automatic learning left proposals to review in the Facts view."],
    ]);
    expect(model.requests.filter((r) => system(r.body).startsWith("You extract durable project facts"))).toHaveLength(1);

    // The learning delta redraws the Facts view.
    const roots = await rootsWhen((r) => r[0]?.kind === "learning");
    const item = tree().getTreeItem(roots[0]) as { label?: unknown; description?: unknown; contextValue?: unknown };
    expect([item.label, item.description, item.contextValue]).toEqual(["Learning: proposed", "", "lecode.learning"]);
    const shown = await proposals();
    expect(shown.map((node) => node.proposal?.text)).toEqual([TABS, ENGLISH]);
    const first = tree().getTreeItem(shown[0]) as { label?: unknown; description?: unknown; contextValue?: unknown };
    expect([first.label, first.description, first.contextValue]).toEqual([TABS, "explicit_user_preference", "lecode.proposal"]);
  });

  it("opens the transcript at a proposal's evidence", async () => {
    const [tabs] = await proposals();
    await run("lecode.recallProposalSource", tabs);
    const opened = host.opened.at(-1)!;
    expect(opened.uri).toMatch(/^lecode-transcript:\/\d{8}T\d{6}Z-[0-9a-f]{8}\.transcript\?/);
    expect(opened.text.split("\n").slice(opened.line, (opened.endLine ?? opened.line!) + 1).join("\n")).toContain(FIRST);
  });

  it("remembers an accepted proposal after a modal confirmation, and lists it no more", async () => {
    const [tabs] = await proposals();
    host.messages.length = 0;
    host.answers.push("Accept");
    await run("lecode.acceptProposal", tabs);
    expect(host.messages).toEqual([
      "warning: Remember this proposed fact?",
      expect.stringMatching(/^info: Remembered fact #1 from the proposal, with session \S+, seq \d+ as its evidence\.$/),
    ]);
    const roots = await rootsWhen((r) => r.some((node) => node.kind === "fact"));
    expect(roots.filter((node) => node.kind === "fact").map((node) => [node.fact?.factId, node.fact?.text])).toEqual([[1, TABS]]);
    expect((await proposals()).map((node) => node.proposal?.text)).toEqual([ENGLISH]);
  });

  it("dismisses a proposal, which is then gone", async () => {
    const [english] = await proposals();
    host.messages.length = 0;
    await run("lecode.dismissProposal", english);
    expect(host.messages).toEqual([]);
    const roots = await rootsWhen((r) => r[0]?.kind === "learning");
    expect(await tree().getChildren(roots[0])).toEqual([]);
    expect(roots.filter((node) => node.kind === "fact")).toHaveLength(1);
  });
});
