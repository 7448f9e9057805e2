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
    vi.mocked(api.createStatusBarItem).mockImplementation(() => ({ show() {}, dispose() {} }) as never);
    vi.mocked(api.registerWebviewViewProvider).mockImplementation(disposable);
    vi.mocked(api.onDidChangeConfiguration).mockImplementation(disposable);
    vi.mocked(api.workspaceFolders).mockReturnValue([]);
    vi.mocked(api.getConfiguration).mockReturnValue({
      get: (key: string) => (key === "server.command" ? ["lecode-ls"] : undefined),
      inspect: () => ({}),
    } as never);
    const secrets = { get: vi.fn(async () => undefined), store: vi.fn(), delete: vi.fn() };
    const context = {
      subscriptions: [] as { dispose(): unknown }[],
      secrets,
      extensionUri: vscode.Uri.file("/ext"),
      extension: { packageJSON: { version: "0.1.0" } },
    };

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

  it("hides the commands that need a fact or proposal node from the palette, and offers them on those nodes", () => {
    const hidden = manifest.contributes.menus.commandPalette
      .filter((entry: { when: string }) => entry.when === "false")
      .map((entry: { command: string; when: string }) => [entry.command, entry.when]);
    expect(hidden).toEqual(
      [
        "lecode.recallFact",
        "lecode.correctFact",
        "lecode.forgetFact",
        "lecode.pinFact",
        "lecode.unpinFact",
        "lecode.openFactSource",
        "lecode.showMoreFacts",
        "lecode.acceptProposal",
        "lecode.dismissProposal",
        "lecode.recallProposalSource",
        "lecode.retireProposed",
        "lecode.keepFact",
        "lecode.retireFact",
        "lecode.restoreFact",
        "lecode.shareFact",
        "lecode.stopSharing",
        "lecode.forgetTeamFact",
        "lecode.openTeamFact",
      ].map((id) => [id, "false"]),
    );
    type MenuEntry = { command: string; when: string; group: string };
    const onFacts = (manifest.contributes.menus["view/item/context"] as MenuEntry[]).filter((entry) => entry.when.startsWith("view == lecode.facts"));
    const on = (when: string) => onFacts.filter((entry) => entry.when.endsWith(when));
    expect(new Set(on("viewItem =~ /^lecode\\.fact\\./").map((entry) => entry.command))).toEqual(
      new Set(["lecode.recallFact", "lecode.correctFact", "lecode.forgetFact"]),
    );
    // A proposal (contextValue lecode.proposal, see learningItems.ts): Accept and Dismiss inline.
    const onProposals = on("viewItem == lecode.proposal");
    expect(onProposals.filter((entry) => entry.group.startsWith("inline")).map((entry) => entry.command)).toEqual([
      "lecode.acceptProposal",
      "lecode.dismissProposal",
    ]);
    expect(new Set(onProposals.map((entry) => entry.command))).toEqual(
      new Set(["lecode.acceptProposal", "lecode.dismissProposal", "lecode.recallProposalSource"]),
    );
    // The pin toggle: Pin on an unpinned fact (contextValue lecode.fact.<status>[.shared]), Unpin
    // on a pinned one (lecode.fact.<status>.pinned[.shared]; see factsTree.ts), both inline.
    const pin = on("viewItem =~ /^lecode\\.fact\\.[a-z]+(\\.shared)?$/");
    const unpin = on("viewItem =~ /^lecode\\.fact\\..*\\.pinned(\\.shared)?$/");
    expect([pin.map((e) => [e.command, e.group]), unpin.map((e) => [e.command, e.group])]).toEqual([
      [["lecode.pinFact", "inline@2"]],
      [["lecode.unpinFact", "inline@2"]],
    ]);
    const matches = (pattern: string, value: string) => new RegExp(pattern).test(value);
    const pinContexts = ["lecode.fact.valid", "lecode.fact.valid.pinned", "lecode.fact.valid.shared", "lecode.fact.valid.pinned.shared"];
    expect(pinContexts.map((v) => [matches("^lecode\\.fact\\.[a-z]+(\\.shared)?$", v), matches("^lecode\\.fact\\..*\\.pinned(\\.shared)?$", v)])).toEqual([
      [true, false],
      [false, true],
      [true, false],
      [false, true],
    ]);
    // A proposed retirement (contextValue lecode.retirement, see hygieneItems.ts): Retire… and
    // Keep inline and in the menu; Retire Fact… on a valid fact, Restore Fact on a retired one.
    const onRetirements = on("viewItem == lecode.retirement");
    expect(onRetirements.map((entry) => [entry.command, entry.group])).toEqual([
      ["lecode.retireProposed", "inline@1"],
      ["lecode.keepFact", "inline@2"],
      ["lecode.retireProposed", "1_retirement@1"],
      ["lecode.keepFact", "1_retirement@2"],
    ]);
    const retire = on("viewItem =~ /^lecode\\.fact\\.valid(\\.pinned)?(\\.shared)?$/");
    const restore = on("viewItem =~ /^lecode\\.fact\\.retired(\\.pinned)?(\\.shared)?$/");
    expect([retire.map((e) => e.command), restore.map((e) => e.command)]).toEqual([["lecode.retireFact"], ["lecode.restoreFact"]]);
    const contexts = ["lecode.fact.valid", "lecode.fact.valid.pinned", "lecode.fact.valid.shared", "lecode.fact.retired", "lecode.fact.retired.shared", "lecode.fact.stale", "lecode.fact.hidden"];
    const retireOrRestore = ["^lecode\\.fact\\.valid(\\.pinned)?(\\.shared)?$", "^lecode\\.fact\\.retired(\\.pinned)?(\\.shared)?$"];
    expect(contexts.map((v) => retireOrRestore.map((pattern) => matches(pattern, v)))).toEqual([
      [true, false],
      [true, false],
      [true, false],
      [false, true],
      [false, true],
      [false, false],
      [false, false],
    ]);
    // Team memory: Share with Team on a valid fact of yours that is not shared, Stop Sharing on
    // one that is (contextValue ending in .shared) and on a fact under Team (lecode.teamFact.
    // <status>, see teamItems.ts), Forget for Me on a team fact that is not hidden already.
    const share = on("viewItem =~ /^lecode\\.fact\\.valid(\\.pinned)?$/");
    const stopOwn = on("viewItem =~ /^lecode\\.fact\\..*\\.shared$/");
    const onTeam = onFacts.filter((entry) => entry.when.includes("lecode\\.teamFact"));
    expect([share.map((e) => e.command), stopOwn.map((e) => e.command)]).toEqual([["lecode.shareFact"], ["lecode.stopSharing"]]);
    expect(onTeam.map((e) => [e.command, e.when.slice(e.when.indexOf("viewItem"))])).toEqual([
      ["lecode.openTeamFact", "viewItem =~ /^lecode\\.teamFact\\./"],
      ["lecode.stopSharing", "viewItem =~ /^lecode\\.teamFact\\./"],
      ["lecode.forgetTeamFact", "viewItem =~ /^lecode\\.teamFact\\.(valid|unverified)$/"],
    ]);
    const shareContexts = ["lecode.fact.valid", "lecode.fact.valid.pinned", "lecode.fact.valid.shared", "lecode.fact.stale.shared", "lecode.fact.retired"];
    const shareOrStop = ["^lecode\\.fact\\.valid(\\.pinned)?$", "^lecode\\.fact\\..*\\.shared$"];
    expect(shareContexts.map((v) => shareOrStop.map((pattern) => matches(pattern, v)))).toEqual([
      [true, false],
      [true, false],
      [false, true],
      [false, true],
      [false, false],
    ]);
    expect(["lecode.teamFact.valid", "lecode.teamFact.unverified", "lecode.teamFact.hidden"].map((v) => matches("^lecode\\.teamFact\\.(valid|unverified)$", v))).toEqual([true, true, false]);
    expect(onFacts).toHaveLength(
      on("viewItem =~ /^lecode\\.fact\\./").length + onProposals.length + onRetirements.length + 4 + share.length + stopOwn.length + onTeam.length,
    );
  });

  it("offers Remember Selection as Fact… only with a selection in a local file, in the editor's menu and the palette", () => {
    // covers issue 14 (Remember Selection as Fact… in VS Code)
    const when = "editorHasSelection && resourceScheme == file";
    expect(manifest.contributes.menus["editor/context"]).toEqual([{ command: "lecode.rememberSelection", when, group: "lecode@1" }]);
    const palette = manifest.contributes.menus.commandPalette as { command: string; when: string }[];
    expect(palette.filter((entry) => entry.command === "lecode.rememberSelection")).toEqual([{ command: "lecode.rememberSelection", when }]);
  });

  it("shows one of the two filter toggles on the Facts view's toolbar, by the context key the filter sets", () => {
    type MenuEntry = { command: string; when: string; group: string };
    const toggles = (manifest.contributes.menus["view/title"] as MenuEntry[]).filter((entry) => /showFactsOfFile|showAllFacts/.test(entry.command));
    expect(toggles).toEqual([
      { command: "lecode.showFactsOfFile", when: "view == lecode.facts && !lecode.factsOfFile", group: "navigation@0" },
      { command: "lecode.showAllFacts", when: "view == lecode.facts && lecode.factsOfFile", group: "navigation@0" },
    ]);
  });

  it("declares an activation on the memory file system, so restored memory tabs open", () => {
    expect(manifest.activationEvents).toEqual(["onStartupFinished", "onFileSystem:lecode-memory", "onMcpCollection:lecode.memory"]);
  });
});
