/**
 * The built extension (dist/extension.js) in a small fake VS Code host, with the real
 * vscode-languageclient talking to a real lecode-ls: settings reach the server, the tree fills,
 * the palette commands open and search memory, saves report changes, and a restart re-registers
 * the server's commands without a clash. Run `npm run build` first (`npm run test:e2e` does).
 */
// covers P7 (the extension end to end: memory, facts, recall-to-source), P2 (one client per window), F7
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { URI } from "vscode-uri";
import { FakeHost } from "./host";
import { serverCommand } from "./serverCommand";

type Node = { kind: string; text?: string; file?: string };
let tmp: string;
let host: FakeHost;
let extension: ReturnType<FakeHost["load"]>;
let savedConfigDir: string | undefined;

function tree(view = "lecode.memory") {
  const provider = host.trees.get(view);
  if (!provider) throw new Error(`the ${view} view was not created`);
  return provider;
}

/** The tree's top level once it satisfies `ready`, waiting on the tree's change events. */
async function rootsWhen(ready: (roots: Node[]) => boolean, view = "lecode.memory"): Promise<Node[]> {
  for (;;) {
    const changed = new Promise<void>((resolve) => {
      const subscription = tree(view).onDidChangeTreeData(() => {
        (subscription as { dispose(): void }).dispose();
        resolve();
      });
    });
    // The Facts view's Memory health item (issue 26) comes first; these tests read what follows.
    const roots = (await tree(view).getChildren()).filter((node: Node) => node.kind !== "health");
    if (ready(roots)) return roots;
    await changed;
  }
}

const filesShown = (roots: Node[]) => roots.length === 4 && roots[0].file === "MEMORY.md";

async function run(command: string, ...args: unknown[]): Promise<void> {
  const handler = host.commands.get(command);
  if (!handler) throw new Error(`${command} is not registered`);
  await handler(...args);
}

beforeAll(() => {
  tmp = realpathSync(mkdtempSync(join(tmpdir(), "lecode-vscode-host-")));
  mkdirSync(join(tmp, "project"));
  mkdirSync(join(tmp, "config"));
  // The LanguageClient starts the server with this process's environment.
  savedConfigDir = process.env.LECODE_CONFIG_DIR;
  process.env.LECODE_CONFIG_DIR = join(tmp, "config");
  host = new FakeHost([{ uri: URI.file(join(tmp, "project")), name: "project", index: 0 }]);
  host.settings["lecode.server.command"] = serverCommand();
  host.settings["lecode.memory.enabled"] = false;
  extension = host.load(new URL("../../dist/extension.js", import.meta.url));
  extension.activate(host.context(new URL("../../", import.meta.url)));
});

afterAll(async () => {
  await extension?.deactivate();
  if (savedConfigDir === undefined) delete process.env.LECODE_CONFIG_DIR;
  else process.env.LECODE_CONFIG_DIR = savedConfigDir;
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe("the extension in a host", () => {
  it("starts the server with the memory settings as initializationOptions", async () => {
    const roots = await rootsWhen((r) => r[0]?.kind === "message" && r[0].text?.startsWith("Memory is turned off") === true);
    expect(roots).toHaveLength(1);
  });

  it("sends changed settings to the server and refreshes the view", async () => {
    host.changeSettings({ "lecode.memory.enabled": true });
    expect((await rootsWhen(filesShown)).map((n) => n.kind)).toEqual(["file", "file", "group", "group"]);
  });

  it("forwards every section of the settings model to the server, compaction included", async () => {
    // covers K2: an out-of-range value (VS Code's schema would refuse it; the server checks too)
    // comes back as the server's warning naming the key, so the key reached the server.
    const warned = host.messageWhen((message) => message.includes("compaction.buffer_tokens"));
    host.changeSettings({ "lecode.compaction.buffer_tokens": 10 });
    expect(await warned).toMatch(/^warning: lecode-ls settings: compaction\.buffer_tokens: .*256/);
    host.changeSettings({ "lecode.compaction.buffer_tokens": 4096 });
  });

  it("opens a missing MEMORY.md as an empty document from the palette", async () => {
    await run("lecode.openMemory");
    expect(host.opened.at(-1)).toEqual({
      uri: `lecode-memory:/MEMORY.md?${encodeURIComponent(host.folders[0].uri.toString())}`,
      text: "",
      line: undefined,
    });
  });

  it("saves through the server and reports the change to the open document", async () => {
    const files = host.fileSystems.get("lecode-memory");
    if (!files) throw new Error("the lecode-memory file system was not registered");
    const uri = URI.parse(host.opened.at(-1)!.uri);
    const changed = new Promise<string[]>((resolve) => files.onDidChangeFile((events) => resolve(events.map((e) => e.uri.toString()))));
    await files.writeFile(uri, new TextEncoder().encode("# Memory\n- build with make\n"), { create: true, overwrite: true });
    expect(await changed).toEqual([uri.toString()]);
    const roots = await rootsWhen((r) => filesShown(r) && (r[0] as { info?: unknown }).info !== undefined);
    expect(roots[0]).toMatchObject({ file: "MEMORY.md", info: { bytes: 27 } });
  });

  it("searches memory and opens the hit at its line", async () => {
    host.typed.push("make");
    await run("lecode.searchMemory");
    expect(host.opened.at(-1)).toMatchObject({ text: "# Memory\n- build with make\n", line: 1 });
  });

  it("shows an invalid pattern as the server's sentence", async () => {
    host.typed.push("[");
    await run("lecode.searchMemory");
    expect(host.messages.at(-1)).toMatch(/^error: pattern: /);
    expect(host.messages.at(-1)).not.toMatch(/Traceback|\.py|at .*\.js/);
  });

  it("restarts the server without a command clash and lists memory again", async () => {
    expect(host.commands.has("lecode.memory")).toBe(true); // registered by the LanguageClient
    host.messages.length = 0;
    await run("lecode.restartServer");
    expect((await rootsWhen(filesShown)).length).toBe(4);
    expect(host.messages).toEqual([]);
    expect(host.commands.has("lecode.memory")).toBe(true);
  });
});

describe("facts in the host", () => {
  const said = "We use tabs for indentation in this repo.";
  type FactNode = Node & { fact?: { factId: number; text?: string } };
  const facts = (roots: Node[]) => roots.filter((n): n is FactNode => n.kind === "fact");
  const factsWhen = async (ready: (roots: FactNode[]) => boolean) =>
    facts(await rootsWhen((roots) => ready(facts(roots)), "lecode.facts"));

  /** Run what a click on a tree node runs. */
  async function click(node: Node): Promise<void> {
    const command = tree("lecode.facts").getTreeItem(node).command;
    if (!command) throw new Error("the node has no command");
    await run(command.command, ...(command.arguments ?? []));
  }

  it("imports a JSONL transcript picked in the open dialog", async () => {
    const project = host.folders[0].uri.fsPath;
    mkdirSync(join(project, "chats"));
    mkdirSync(join(project, "src"));
    writeFileSync(join(project, "src", "main.py"), "#!/usr/bin/env python\nimport os\n");
    const lines = [
      { role: "user", content: "Which indentation do we use?" },
      { role: "assistant", content: said },
      { role: "user", content: "And main.py?" },
      { role: "assistant", content: "It imports os." },
    ];
    writeFileSync(join(project, "chats", "indent.jsonl"), lines.map((line) => JSON.stringify(line)).join("\n"));
    host.messages.length = 0;
    host.picked.push([URI.file(join(project, "chats", "indent.jsonl"))]);
    await run("lecode.importSession");
    expect(host.messages).toEqual([expect.stringMatching(/^info: Imported indent\.jsonl as session \d{8}T\d{6}Z-[0-9a-f]{8}\.$/)]);
  });

  it("remembers facts from the session and shows them in the Facts view after the server's notice", async () => {
    host.typed.push("2", said);
    await run("lecode.rememberFromSession");
    host.typed.push("4", 'src/main.py contains "import os"');
    await run("lecode.rememberFromSession");
    expect(host.messages.slice(-2)).toEqual([
      expect.stringMatching(/^info: Remembered fact #1, with \S+ seq 2 as its evidence\.$/),
      expect.stringMatching(/^info: Remembered fact #2, with \S+ seq 4 as its evidence\.$/),
    ]);
    const shown = await factsWhen((roots) => roots.length === 2);
    expect(shown.map((n) => [n.fact?.factId, n.fact?.text])).toEqual([
      [1, said],
      [2, 'src/main.py contains "import os"'],
    ]);
    expect(tree("lecode.facts").getTreeItem(shown[0]).description).toBe("#1 r1 valid");
  });

  it("opens a fact's evidence as a transcript document with the cited message selected", async () => {
    const [fact] = await factsWhen((roots) => roots.length === 2);
    await click(fact);
    const opened = host.opened.at(-1)!;
    expect(opened.uri).toMatch(/^lecode-transcript:\/\d{8}T\d{6}Z-[0-9a-f]{8}\.transcript\?/);
    const lines = opened.text.split("\n");
    expect(lines[0]).toMatch(/^Untrusted evidence/);
    expect(opened.text).toContain("Which indentation do we use?");
    expect(lines.slice(opened.line, (opened.endLine ?? opened.line!) + 1)).toEqual(["── seq 2 · assistant · cited ──", said]);
  });

  it("opens a verified project fact's file at the claimed line", async () => {
    const [, verified] = await factsWhen((roots) => roots.length === 2);
    await click(verified);
    expect(host.opened.at(-1)).toMatchObject({ uri: URI.file(join(host.folders[0].uri.fsPath, "src", "main.py")).toString(), line: 1 });
  });

  it("forgets after a modal confirmation that names the excluded positions, and the view empties", async () => {
    host.messages.length = 0;
    for (const node of await factsWhen((roots) => roots.length === 2)) {
      host.answers.push("Forget");
      await run("lecode.forgetFact", node);
    }
    expect(host.messages.filter((m) => m.startsWith("warning: "))).toEqual([
      expect.stringMatching(/^warning: Forget fact #1\? Its 1 revision is deleted and transcript positions \S+ seq 2 can never be used as evidence again\.$/),
      expect.stringMatching(/^warning: Forget fact #2\? .* seq 4 can never/),
    ]);
    const roots = await rootsWhen((r) => r[0]?.text?.startsWith("No facts yet") === true, "lecode.facts");
    expect(roots).toHaveLength(1);
  });

  it("deletes the session after a modal confirmation that names the facts citing it", async () => {
    // covers S6: the fact citing the session stays, missing from then on.
    host.typed.push("3", "The user asked about main.py.");
    await run("lecode.rememberFromSession");
    const [cited] = await factsWhen((roots) => roots.length === 1);
    expect(tree("lecode.facts").getTreeItem(cited).description).toBe("#3 r1 valid");
    host.messages.length = 0;
    host.answers.push("Delete");
    await run("lecode.deleteSession");
    expect(host.messages).toEqual([
      expect.stringMatching(/^warning: Delete session "indent" \(\S+\)\? Its transcript \(4 records\) is deleted for good\. 1 fact cites it: it becomes missing/),
      expect.stringMatching(/^info: Deleted session \S+\. 1 fact is missing now\.$/),
    ]);
    const missing = (roots: FactNode[]) => roots.length === 1 && tree("lecode.facts").getTreeItem(roots[0]).description === "#3 r1 missing";
    await factsWhen(missing);
  });
});
