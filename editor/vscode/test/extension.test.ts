/**
 * Activation wires what package.json declares: every contributed command is registered (and no
 * VS Code command is named like the server's own `lecode.memory`), the view and the file system
 * exist, and the server is started once.
 */
// covers P7 (palette commands, tree view)
import { readFileSync } from "node:fs";
import { describe, expect, it, vi } from "vitest";
import * as vscode from "vscode";
import * as api from "../src/common/vscodeapi";
import { Commands } from "../src/common/protocol";
import { activate, deactivate } from "../src/extension";

vi.mock("../src/common/vscodeapi");

const started: unknown[] = [];
vi.mock("vscode-languageclient/node", () => ({
  LanguageClient: class {
    constructor(...args: unknown[]) {
      started.push(args);
    }
    error(): void {}
    async start(): Promise<void> {}
    async dispose(): Promise<void> {}
    onNotification() {
      return { dispose() {} };
    }
  },
  CloseAction: { DoNotRestart: 1, Restart: 2 },
  ErrorAction: { Continue: 1, Shutdown: 2 },
  RevealOutputChannelOn: { Never: 4 },
  DidChangeConfigurationNotification: { method: "workspace/didChangeConfiguration" },
}));

const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));

describe("activate", () => {
  it("registers exactly the contributed commands, the view and the file system, and starts one client", async () => {
    const disposable = () => new vscode.Disposable(() => undefined);
    const channel = { debug() {}, info() {}, warn() {}, error() {}, dispose() {} };
    vi.mocked(api.createLogOutputChannel).mockReturnValue(channel as never);
    vi.mocked(api.registerCommand).mockImplementation(disposable);
    vi.mocked(api.registerFileSystemProvider).mockImplementation(disposable);
    vi.mocked(api.createTreeView).mockImplementation(disposable as never);
    vi.mocked(api.onDidChangeConfiguration).mockImplementation(disposable);
    vi.mocked(api.workspaceFolders).mockReturnValue([]);
    vi.mocked(api.getConfiguration).mockReturnValue({
      get: (key: string) => (key === "server.command" ? ["lecode-ls"] : undefined),
      inspect: () => ({}),
    } as never);
    const context = { subscriptions: [] as { dispose(): unknown }[] };

    activate(context as unknown as vscode.ExtensionContext);
    await deactivate();

    const registered = vi.mocked(api.registerCommand).mock.calls.map(([id]) => id).sort();
    const declared = manifest.contributes.commands.map((c: { command: string }) => c.command).sort();
    expect(registered).toEqual(declared);
    expect(declared).not.toContain(Commands.memory);
    expect(vi.mocked(api.registerFileSystemProvider).mock.calls[0][0]).toBe("lecode-memory");
    expect(vi.mocked(api.createTreeView).mock.calls[0][0]).toBe(manifest.contributes.views.lecode[0].id);
    expect(started).toHaveLength(1);
  });

  it("declares an activation on the memory file system, so restored memory tabs open", () => {
    expect(manifest.activationEvents).toEqual(["onStartupFinished", "onFileSystem:lecode-memory"]);
  });
});
