/**
 * The Facts tree: one node per fact of lecode/facts/list (every page, up to a cap), an icon per
 * status, the source (and a verified project fact's file) as children, one project per checkout.
 */
// covers P7 (fact tree view), R7 (statuses), R8 (20 facts a page)
import { describe, expect, it } from "vitest";
import * as vscode from "vscode";
import { type Project, ProjectIndex } from "../src/common/projects";
import type { FactEntry, FactsListParams } from "../src/common/protocol";
import { Requests } from "../src/common/protocol";
import {
  FACTS_CAP,
  type FactNode,
  FactsTreeProvider,
  factChildren,
  factLabel,
  factNodes,
  factTreeItem,
  listFacts,
} from "../src/views/factsTree";
import { FakeServer, project, serverError } from "./fakes";

const FOLDER = "file:///src/app";
const SESSION = "20261129T100000Z-3f2a9c41";

function fact(factId: number, overrides: Partial<FactEntry> = {}): FactEntry {
  return {
    factId,
    revision: 1,
    status: "valid",
    source: { sessionId: SESSION, seqs: [1, 2], digest: `sha256:${"0".repeat(64)}` },
    text: `fact number ${factId}`,
    factTextTruncated: false,
    ...overrides,
  };
}

/** A server holding `count` facts, answering 20 a page as lecode-ls does. */
function serverWith(count: number, page = 20): FakeServer {
  const all = Array.from({ length: count }, (_, index) => fact(index + 1));
  return new FakeServer().on(Requests.factsList, (params: FactsListParams) => {
    const offset = params.offset ?? 0;
    const next = offset + page;
    return { facts: all.slice(offset, next), offset, nextOffset: next < count ? next : null };
  });
}

function tree(server: FakeServer, projects: Project[], notRunning?: string) {
  return new FactsTreeProvider(server, { projects, problems: [] }, { notRunning });
}

describe("listFacts", () => {
  it("follows nextOffset until the last page", async () => {
    const server = serverWith(45);
    const page = await listFacts(server, FOLDER, FACTS_CAP);
    expect(page.facts.map((f) => f.factId)).toEqual(Array.from({ length: 45 }, (_, i) => i + 1));
    expect(page.more).toBe(false);
    expect(server.calls.map((call) => call.params)).toEqual([
      { workspaceUri: FOLDER, offset: 0 },
      { workspaceUri: FOLDER, offset: 20 },
      { workspaceUri: FOLDER, offset: 40 },
    ]);
  });

  it("stops at the cap and says there are more", async () => {
    const server = serverWith(1000);
    const page = await listFacts(server, FOLDER, 500);
    expect(page.facts).toHaveLength(500);
    expect(page.more).toBe(true);
    expect(server.calls).toHaveLength(25);
  });

  it("refuses pages that do not advance instead of looping", async () => {
    const server = new FakeServer().on(Requests.factsList, () => ({ facts: [fact(1)], offset: 0, nextOffset: 0 }));
    await expect(listFacts(server, FOLDER, 500)).rejects.toThrow(/does not advance/);
  });
});

describe("factNodes", () => {
  it("makes one node per fact and a more… node past the cap", () => {
    const nodes = factNodes(FOLDER, { facts: [fact(1), fact(2)], more: true });
    expect(nodes).toEqual([
      { kind: "fact", fact: fact(1), folderUri: FOLDER },
      { kind: "fact", fact: fact(2), folderUri: FOLDER },
      { kind: "more", folderUri: FOLDER, shown: 2 },
    ]);
    expect(factTreeItem(nodes[2]).command).toMatchObject({ command: "lecode.showMoreFacts", arguments: [nodes[2]] });
  });

  it("says how to add a fact when there is none", () => {
    expect(factNodes(FOLDER, { facts: [], more: false })).toEqual([
      { kind: "message", text: expect.stringContaining("Remember From Session"), folderUri: FOLDER },
    ]);
  });
});

describe("factTreeItem", () => {
  it.each([
    ["valid", "pass"],
    ["unverified", "question"],
    ["hidden", "eye-closed"],
    ["stale", "warning"],
    ["missing", "error"],
  ] as const)("draws a %s fact with the %s codicon", (status, icon) => {
    const item = factTreeItem({ kind: "fact", fact: fact(7, { status, revision: 3 }), folderUri: FOLDER });
    expect((item.iconPath as vscode.ThemeIcon).id).toBe(icon);
    expect(item.description).toBe(`#7 r3 ${status}`);
    expect(item.contextValue).toBe(`lecode.fact.${status}`);
  });

  it("labels a fact by its text on one line, or by id and status when the server sent no text", () => {
    expect(factLabel(fact(1, { text: "We use tabs\nfor indentation." }))).toBe("We use tabs for indentation.");
    expect(factLabel({ factId: 4, revision: 2, status: "hidden" })).toBe("(#4, hidden)");
  });

  it("makes a valid fact expandable and a click on it go to its source", () => {
    const node: FactNode = { kind: "fact", fact: fact(1), folderUri: FOLDER };
    const item = factTreeItem(node);
    expect(item.collapsibleState).toBe(vscode.TreeItemCollapsibleState.Collapsed);
    expect(item.command).toEqual({ command: "lecode.openFactSource", title: "Go to Source", arguments: [node] });
    expect(item.tooltip).toContain(`Evidence: session ${SESSION}, seqs 1–2`);
  });

  it("shows a fact without a source as a leaf without a click action", () => {
    const item = factTreeItem({ kind: "fact", fact: { factId: 2, revision: 1, status: "stale" }, folderUri: FOLDER });
    expect(item.collapsibleState).toBe(vscode.TreeItemCollapsibleState.None);
    expect(item.command).toBeUndefined();
    expect(item.tooltip).toContain("the source is stale");
  });

  it("shows the source as session and seq range", () => {
    const item = factTreeItem({ kind: "source", fact: fact(1), source: fact(1).source!, folderUri: FOLDER });
    expect({ label: item.label, description: item.description, command: item.command?.command }).toEqual({
      label: `session ${SESSION}`,
      description: "seqs 1–2",
      command: "lecode.openFactSource",
    });
  });
});

describe("factChildren", () => {
  it("gives a fact its source, and a verified project fact also its file", () => {
    const plain = factChildren({ kind: "fact", fact: fact(1), folderUri: FOLDER });
    expect(plain.map((n) => n.kind)).toEqual(["source"]);
    const verified = fact(2, { text: 'src/main.py contains "import os"' });
    const children = factChildren({ kind: "fact", fact: verified, folderUri: FOLDER });
    expect(children.map((n) => n.kind)).toEqual(["source", "file"]);
    const item = factTreeItem(children[1]);
    expect({ label: item.label, description: item.description }).toEqual({ label: "src/main.py", description: '"import os"' });
  });

  it("shows a refused project file path without a way to open it", () => {
    const node = factChildren({ kind: "fact", fact: fact(3, { text: '../secret contains "x"' }), folderUri: FOLDER })[1];
    const item = factTreeItem(node);
    expect(item.description).toBe("refused");
    expect(item.command).toBeUndefined();
  });
});

describe("FactsTreeProvider", () => {
  it("shows one project's facts at the top level, listed through its first folder", async () => {
    const server = serverWith(2);
    const roots = await tree(server, [project("/src/app", [FOLDER, "file:///src/app/web"])]).getChildren();
    expect(roots.map((node) => (node.kind === "fact" ? node.fact.factId : node.kind))).toEqual([1, 2]);
    expect(server.calls).toEqual([{ method: "lecode/facts/list", params: { workspaceUri: FOLDER, offset: 0 } }]);
  });

  it("lists two folders of one checkout once", async () => {
    const server = serverWith(1).on(Requests.projectInfo, () => ({
      projectRoot: "/src/app",
      slug: "app-1",
      storePath: "/cfg/memory/app-1",
      memoryEnabled: true,
    }));
    const index = new ProjectIndex(server, () => [
      { uri: FOLDER, name: "app" },
      { uri: "file:///src/app-worktree", name: "app-worktree" },
    ]);
    await index.refresh();
    const roots = await new FactsTreeProvider(server, index, { notRunning: undefined }).getChildren();
    expect(roots.map((n) => n.kind)).toEqual(["fact"]);
    expect(server.calls.filter((call) => call.method === Requests.factsList)).toEqual([
      { method: "lecode/facts/list", params: { workspaceUri: FOLDER, offset: 0 } },
    ]);
  });

  it("gives each of several projects a root with its own facts", async () => {
    const server = new FakeServer().on(Requests.factsList, (params: FactsListParams) => ({
      facts: [fact(params.workspaceUri === FOLDER ? 1 : 9)],
      offset: 0,
      nextOffset: null,
    }));
    const provider = tree(server, [project("/src/app", [FOLDER]), project("/src/lib", ["file:///src/lib"])]);
    const roots = await provider.getChildren();
    expect(roots.map((n) => (n.kind === "project" ? n.project.projectRoot : n.kind))).toEqual(["/src/app", "/src/lib"]);
    const lib = await provider.getChildren(roots[1]);
    expect(lib).toEqual([{ kind: "fact", fact: fact(9), folderUri: "file:///src/lib" }]);
  });

  it("shows more facts of a project after its more… node was used", async () => {
    const server = serverWith(FACTS_CAP + 30);
    const provider = tree(server, [project("/src/app", [FOLDER])]);
    const fired: unknown[] = [];
    provider.onDidChangeTreeData((node) => fired.push(node));
    expect((await provider.getChildren()).at(-1)).toEqual({ kind: "more", folderUri: FOLDER, shown: FACTS_CAP });
    provider.showMore(FOLDER);
    const roots = await provider.getChildren();
    expect(roots).toHaveLength(FACTS_CAP + 30);
    expect(roots.every((n) => n.kind === "fact")).toBe(true);
    expect(fired).toEqual([undefined]);
  });

  it("shows a failed listing as the server's sentence", async () => {
    const server = new FakeServer().on(Requests.factsList, () => {
      throw serverError("memory_disabled", "memory is disabled ([memory] enabled = false)");
    });
    const roots = await tree(server, [project("/src/app", [FOLDER])]).getChildren();
    expect(roots).toEqual([{ kind: "message", text: "memory is disabled ([memory] enabled = false)", folderUri: FOLDER }]);
  });

  it("says memory is off without listing, and explains a stopped server", async () => {
    const server = new FakeServer();
    const off = await tree(server, [project("/src/app", [FOLDER], { memoryEnabled: false })]).getChildren();
    expect(off).toEqual([{ kind: "message", text: expect.stringContaining("Memory is turned off"), folderUri: FOLDER }]);
    expect(await tree(server, [], "lecode-ls is not running").getChildren()).toEqual([
      { kind: "message", text: "lecode-ls is not running" },
    ]);
    expect(server.calls).toEqual([]);
  });

  it("expands a fact into its children and nothing else", async () => {
    const provider = tree(new FakeServer(), []);
    expect((await provider.getChildren({ kind: "fact", fact: fact(1), folderUri: FOLDER })).map((n) => n.kind)).toEqual(["source"]);
    expect(await provider.getChildren({ kind: "source", fact: fact(1), source: fact(1).source!, folderUri: FOLDER })).toEqual([]);
  });
});
