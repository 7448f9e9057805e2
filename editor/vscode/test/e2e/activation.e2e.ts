/**
 * The built extension (dist/extension.js) in a small fake VS Code host, with the real
 * vscode-languageclient talking to a real lecode-ls: settings reach the server, the tree fills,
 * the palette commands open and search memory, saves report changes, and a restart re-registers
 * the server's commands without a clash. Run `npm run build` first (`npm run test:e2e` does).
 */
// covers P7 (the extension end to end), P2 (one client per window)
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
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

function tree() {
  const provider = host.trees.get("lecode.memory");
  if (!provider) throw new Error("the lecode.memory view was not created");
  return provider;
}

/** The tree's top level once it satisfies `ready`, waiting on the tree's change events. */
async function rootsWhen(ready: (roots: Node[]) => boolean): Promise<Node[]> {
  for (;;) {
    const changed = new Promise<void>((resolve) => {
      const subscription = tree().onDidChangeTreeData(() => {
        (subscription as { dispose(): void }).dispose();
        resolve();
      });
    });
    const roots = await tree().getChildren();
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
  extension.activate({ subscriptions: [] });
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
