/**
 * Activation wires what package.json declares: every contributed command is registered (and no
 * VS Code command is named like the server's own `lecode.memory`), the view and the file system
 * exist, and the server is started once.
 */
// covers P7 (palette commands, tree view, chat panel)
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
  it("registers exactly the contributed commands, the views, the file system and the transcript documents, and starts one client", async () => {
    const disposable = () => new vscode.Disposable(() => undefined);
    const channel = { debug() {}, info() {}, warn() {}, error() {}, dispose() {} };
    vi.mocked(api.createLogOutputChannel).mockReturnValue(channel as never);
    vi.mocked(api.registerCommand).mockImplementation(disposable);
    vi.mocked(api.registerFileSystemProvider).mockImplementation(disposable);
    vi.mocked(api.registerTextDocumentContentProvider).mockImplementation(disposable);
    vi.mocked(api.createTreeView).mockImplementation(disposable as never);
    vi.mocked(api.registerWebviewViewProvider).mockImplementation(disposable);
    vi.mocked(api.onDidChangeConfiguration).mockImplementation(disposable);
    vi.mocked(api.workspaceFolders).mockReturnValue([]);
    vi.mocked(api.getConfiguration).mockReturnValue({
      get: (key: string) => (key === "server.command" ? ["lecode-ls"] : undefined),
      inspect: () => ({}),
    } as never);
    const secrets = { get: vi.fn(async () => undefined), store: vi.fn(), delete: vi.fn() };
    const context = { subscriptions: [] as { dispose(): unknown }[], secrets, extensionUri: vscode.Uri.file("/ext") };

    activate(context as unknown as vscode.ExtensionContext);
    await deactivate();

    const registered = vi.mocked(api.registerCommand).mock.calls.map(([id]) => id).sort();
    const declared = manifest.contributes.commands.map((c: { command: string }) => c.command).sort();
    expect(registered).toEqual(declared);
    expect(declared).not.toContain(Commands.memory);
    expect(vi.mocked(api.registerFileSystemProvider).mock.calls[0][0]).toBe("lecode-memory");
    expect(vi.mocked(api.registerTextDocumentContentProvider).mock.calls[0][0]).toBe("lecode-transcript");
    const views = manifest.contributes.views.lecode.map((view: { id: string; type?: string }) => [view.id, view.type ?? "tree"]);
    expect(views).toEqual([
      ["lecode.memory", "tree"],
      ["lecode.facts", "tree"],
      ["lecode.chat", "webview"],
    ]);
    expect(vi.mocked(api.createTreeView).mock.calls.map(([id]) => id)).toEqual(["lecode.memory", "lecode.facts"]);
    expect(vi.mocked(api.registerWebviewViewProvider).mock.calls.map(([id]) => id)).toEqual(["lecode.chat"]);
    expect(started).toHaveLength(1);
    // The client started with the stored key read from SecretStorage, by its one name.
    expect(secrets.get.mock.calls).toEqual([["lecode.provider.apiKey"]]);
  });

  it("hides the commands that need a fact node from the palette, and offers them on fact nodes", () => {
    const hidden = manifest.contributes.menus.commandPalette.map((entry: { command: string; when: string }) => [entry.command, entry.when]);
    expect(hidden).toEqual(
      ["lecode.recallFact", "lecode.correctFact", "lecode.forgetFact", "lecode.openFactSource", "lecode.showMoreFacts"].map((id) => [id, "false"]),
    );
    const onFacts = manifest.contributes.menus["view/item/context"]
      .filter((entry: { when: string }) => entry.when.startsWith("view == lecode.facts"))
      .map((entry: { command: string }) => entry.command);
    expect(new Set(onFacts)).toEqual(new Set(["lecode.recallFact", "lecode.correctFact", "lecode.forgetFact"]));
  });

  it("declares an activation on the memory file system, so restored memory tabs open", () => {
    expect(manifest.activationEvents).toEqual(["onStartupFinished", "onFileSystem:lecode-memory"]);
  });
});
