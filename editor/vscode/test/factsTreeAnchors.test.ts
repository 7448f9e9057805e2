/**
 * Code anchors in the Facts tree: a fact's drift in its description, icon and tooltip, one child
 * per anchor that opens its file, and the "current file" filter that lists only the facts
 * anchored in the active editor's file, follows the active editor and names the file.
 */
// covers issue 14 (the Facts tree shows drift and filters to the facts of the current file)
import { describe, expect, it, vi } from "vitest";
import * as vscode from "vscode";
import type { FactEntry, FactsListParams } from "../src/common/protocol";
import { Requests } from "../src/common/protocol";
import * as api from "../src/common/vscodeapi";
import { FILTER_CONTEXT, FactsFileFilter } from "../src/views/factsFilter";
import { FactsTreeProvider, factChildren, factTreeItem } from "../src/views/factsTree";
import type { FactNode } from "../src/views/nodes";
import { FakeServer, anchor, project } from "./fakes";

vi.mock("../src/common/vscodeapi");

const FOLDER = "file:///src/app";
const SESSION = "20261201T100000Z-3f2a9c41";

function fact(factId: number, overrides: Partial<FactEntry> = {}): FactEntry {
  return {
    factId,
    revision: 2,
    status: "valid",
    source: { sessionId: SESSION, seqs: [3], digest: `sha256:${"0".repeat(64)}` },
    text: `fact number ${factId}`,
    factTextTruncated: false,
    ...overrides,
  };
}

describe("a fact with anchors", () => {
  it("shows its worst drift in its description and tooltip, and a drifted fact's icon is a warning", () => {
    const anchors = [anchor(), anchor({ index: 1, path: "src/db.py", status: "changed", currentStartLine: null, currentEndLine: null })];
    const item = factTreeItem({ kind: "fact", fact: fact(3, { anchors }), folderUri: FOLDER });
    expect(item.description).toBe("#3 r2 valid · changed");
    expect((item.iconPath as vscode.ThemeIcon).id).toBe("warning");
    expect(String(item.tooltip).split("\n").slice(-2)).toEqual([
      "Anchored at src/app.py:3-4: current (the remembered lines are where they were)",
      "Anchored at src/db.py:3-4: changed (the remembered lines changed: the fact may be out of date)",
    ]);
  });

  it("keeps its evidence status icon while its anchors are current or moved", () => {
    const item = factTreeItem({ kind: "fact", fact: fact(3, { anchors: [anchor({ status: "moved", currentStartLine: 8, currentEndLine: 9 })] }), folderUri: FOLDER });
    expect(item.description).toBe("#3 r2 valid · moved");
    expect((item.iconPath as vscode.ThemeIcon).id).toBe("pass");
  });

  it("has its source and one child per anchor, without the project file node an anchor already leads to", () => {
    const anchored = fact(3, { text: 'src/app.py contains "x = 1"', anchors: [anchor()] });
    expect(factChildren({ kind: "fact", fact: anchored, folderUri: FOLDER }).map((node) => node.kind)).toEqual(["source", "anchor"]);
    const elsewhere = fact(4, { text: 'README.md contains "# app"', anchors: [anchor()] });
    expect(factChildren({ kind: "fact", fact: elsewhere, folderUri: FOLDER }).map((node) => node.kind)).toEqual(["source", "anchor", "file"]);
  });

  it("shows each anchor as its file and lines, its status, and a click that opens it", () => {
    const moved = anchor({ status: "moved", currentStartLine: 9, currentEndLine: 10, checkedAgainst: "buffer" });
    const node: FactNode = { kind: "anchor", fact: fact(3), anchor: moved, folderUri: FOLDER };
    const item = factTreeItem(node);
    expect({ label: item.label, description: item.description, icon: (item.iconPath as vscode.ThemeIcon).id, context: item.contextValue }).toEqual({
      label: "src/app.py:9-10",
      description: "moved",
      icon: "arrow-swap",
      context: "lecode.factAnchor.moved",
    });
    expect(item.command).toEqual({ command: "lecode.openFactSource", title: "Go to Source", arguments: [node] });
    expect(String(item.tooltip).split("\n")).toEqual([
      "src/app.py, lines 9-10: moved (checked against the open editor)",
      "the remembered lines moved; the anchor follows them",
      "Remembered from src/app.py lines 3-4 at commit 0123456789ab on 2026-12-01T10:00:00Z",
    ]);
  });
});

/** A server whose facts 1..count are anchored in src/app.py when odd; `path` filters them. */
function serverWith(count: number): FakeServer {
  const all = Array.from({ length: count }, (_, index) => fact(index + 1, index % 2 === 0 ? { anchors: [anchor()] } : {}));
  return new FakeServer().on(Requests.factsList, (params: FactsListParams) => {
    const facts = params.path ? all.filter((f) => f.anchors) : all;
    const offset = params.offset ?? 0;
    return { facts: facts.slice(offset, offset + 20), offset, nextOffset: offset + 20 < facts.length ? offset + 20 : null };
  });
}

const APP = "file:///src/app/src/app.py";

describe("the current file filter", () => {
  const projects = [project("/src/app", [FOLDER])];
  const provider = (server: FakeServer) => new FactsTreeProvider(server, { projects, problems: [] }, { notRunning: undefined });

  it("lists only the facts anchored in the file, sending its URI as path through every page", async () => {
    const server = serverWith(50);
    const tree = provider(server);
    tree.setFilter({ kind: "file", file: { uri: APP, name: "app.py", folderUri: FOLDER } });
    const roots = await tree.getChildren();
    expect(roots.map((node) => (node.kind === "fact" ? node.fact.factId : node.kind))).toEqual(
      Array.from({ length: 25 }, (_, index) => 2 * index + 1),
    );
    expect(server.calls.map((call) => call.params)).toEqual([
      { workspaceUri: FOLDER, offset: 0, path: APP },
      { workspaceUri: FOLDER, offset: 20, path: APP },
    ]);
  });

  it("says so when no fact is anchored in the file, and how to anchor one", async () => {
    const server = new FakeServer().on(Requests.factsList, () => ({ facts: [], offset: 0, nextOffset: null }));
    const tree = provider(server);
    tree.setFilter({ kind: "file", file: { uri: APP, name: "app.py", folderUri: FOLDER } });
    expect(await tree.getChildren()).toEqual([
      { kind: "message", text: 'No facts are anchored in app.py. Select lines and run "lecode: Remember Selection as Fact…".', folderUri: FOLDER },
    ]);
  });

  it("asks for a file when none is open, and lists nothing for a file outside the workspace", async () => {
    const server = serverWith(3);
    const tree = provider(server);
    tree.setFilter({ kind: "file" });
    expect(await tree.getChildren()).toEqual([{ kind: "message", text: "Open a file to see the facts anchored in it." }]);
    tree.setFilter({ kind: "file", file: { uri: "file:///tmp/x.py", name: "x.py" } });
    expect(await tree.getChildren()).toEqual([{ kind: "message", text: "x.py is not in a workspace folder, so no facts are anchored in it." }]);
    expect(server.calls).toEqual([]);
  });

  it("redraws the tree only when what it lists changes", () => {
    const tree = provider(serverWith(1));
    let redrawn = 0;
    tree.onDidChangeTreeData(() => redrawn++);
    const file = { uri: APP, name: "app.py", folderUri: FOLDER };
    tree.setFilter({ kind: "file", file });
    tree.setFilter({ kind: "file", file: { ...file } });
    tree.setFilter({ kind: "all" });
    tree.setFilter({ kind: "all" });
    expect(redrawn).toBe(2);
  });

  it("follows the active editor while it is on, keeps the last local file, and names it in the view", () => {
    const tree = provider(serverWith(1));
    const view: { description?: string } = {};
    const filter = new FactsFileFilter(tree, view);
    const app = vscode.Uri.parse(APP);
    const other = vscode.Uri.parse("file:///src/app/src/db.py");
    vi.mocked(api.getWorkspaceFolder).mockReturnValue({ uri: vscode.Uri.parse(FOLDER), name: "app", index: 0 });
    vi.mocked(api.activeDocumentUri).mockReturnValue(app);

    filter.editorChanged(other);
    expect(tree.filter).toEqual({ kind: "all" });
    filter.on();
    expect(tree.filter).toEqual({ kind: "file", file: { uri: APP, name: "app.py", folderUri: FOLDER } });
    expect(view.description).toBe("app.py");
    filter.editorChanged(other);
    expect(tree.filter).toMatchObject({ file: { uri: other.toString(), name: "db.py" } });
    // A transcript or a memory file the person opened: the filter stays on db.py.
    filter.editorChanged(vscode.Uri.parse("lecode-transcript:/x.transcript"));
    filter.editorChanged(undefined);
    expect(tree.filter).toMatchObject({ file: { name: "db.py" } });
    filter.off();
    expect(tree.filter).toEqual({ kind: "all" });
    expect(view.description).toBeUndefined();
    expect(vi.mocked(api.setContext).mock.calls).toEqual([
      [FILTER_CONTEXT, true],
      [FILTER_CONTEXT, false],
    ]);
  });

  it("is on with no file when the active editor is not a local file", () => {
    const tree = provider(serverWith(1));
    const view: { description?: string } = {};
    vi.mocked(api.activeDocumentUri).mockReturnValue(undefined);
    new FactsFileFilter(tree, view).on();
    expect(tree.filter).toEqual({ kind: "file", file: undefined });
    expect(view.description).toBe("no file open");
  });
});
