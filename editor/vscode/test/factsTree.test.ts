/**
 * The Facts tree: one node per fact of lecode/facts/list (every page, up to a cap), an icon per
 * status, the source (and a verified project fact's file) as children, one project per checkout;
 * above the facts, the latest automatic learning with its proposals for review.
 */
// covers P7 (fact tree view), R7 (statuses), R8 (20 facts a page), A6 (proposals shown), A9 (outcome and reason counts, no text)
import { describe, expect, it } from "vitest";
import * as vscode from "vscode";
import { type Project, ProjectIndex } from "../src/common/projects";
import type { FactEntry, FactsListParams, LearningModel, ProposalModel } from "../src/common/protocol";
import { Requests } from "../src/common/protocol";
import {
  FACTS_CAP,
  FactsTreeProvider,
  factChildren,
  factLabel,
  factNodes,
  factTreeItem,
  listFacts,
} from "../src/views/factsTree";
import { reasonCountsPhrase } from "../src/views/learningItems";
import type { FactNode } from "../src/views/nodes";
import { FakeServer, doctor, project, serverError } from "./fakes";

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

/** A server holding `count` facts, answering 20 a page as lecode-ls does (and the doctor, and a
 * checkout that shares nothing with the team). */
function serverWith(count: number, page = 20): FakeServer {
  const all = Array.from({ length: count }, (_, index) => fact(index + 1));
  return new FakeServer()
    .on(Requests.factsList, (params: FactsListParams) => {
      const offset = params.offset ?? 0;
      const next = offset + page;
      return { facts: all.slice(offset, next), offset, nextOffset: next < count ? next : null };
    })
    .on(Requests.memoryDoctor, () => doctor({ facts: count }))
    .on(Requests.factsTeam, () => ({ facts: [], offset: 0, nextOffset: null, total: 0, skipped: {}, pending: 0 }));
}

/** The facts that are not the project's health node (the doctor's; see hygieneItems.test.ts). */
const withoutHealth = (nodes: FactNode[]) => nodes.filter((node) => node.kind !== "health");

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
    expect(roots.map((node) => (node.kind === "fact" ? node.fact.factId : node.kind))).toEqual(["health", 1, 2]);
    expect(server.calls).toEqual([
      { method: "lecode/facts/list", params: { workspaceUri: FOLDER, offset: 0 } },
      { method: "lecode/memory/doctor", params: { workspaceUri: FOLDER } },
      { method: "lecode/facts/team", params: { workspaceUri: FOLDER, offset: 0 } },
    ]);
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
    expect(roots.map((n) => n.kind)).toEqual(["health", "fact"]);
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
    // This fake has no doctor and no team listing: their nodes say so, and the facts are listed all the same.
    expect(lib).toEqual([
      { kind: "health", doctor: { problem: "the fake server has no answer for lecode/memory/doctor" }, folderUri: "file:///src/lib" },
      { kind: "team", team: { problem: "the fake server has no answer for lecode/facts/team" }, folderUri: "file:///src/lib" },
      { kind: "fact", fact: fact(9), folderUri: "file:///src/lib" },
    ]);
  });

  it("shows more facts of a project after its more… node was used", async () => {
    const server = serverWith(FACTS_CAP + 30);
    const provider = tree(server, [project("/src/app", [FOLDER])]);
    const fired: unknown[] = [];
    provider.onDidChangeTreeData((node) => fired.push(node));
    expect((await provider.getChildren()).at(-1)).toEqual({ kind: "more", folderUri: FOLDER, shown: FACTS_CAP });
    provider.showMore(FOLDER);
    const roots = withoutHealth(await provider.getChildren());
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

function proposal(index: number, overrides: Partial<ProposalModel> = {}): ProposalModel {
  return {
    index,
    text: "We use tabs for indentation.",
    kind: "explicit_user_preference",
    source: { sessionId: SESSION, seqs: [5], digest: `sha256:${"1".repeat(64)}` },
    conflicts: [],
    why: "the model was not sure",
    ...overrides,
  };
}

function learning(overrides: Partial<LearningModel> = {}): LearningModel {
  return {
    sessionId: SESSION,
    seq: 42,
    status: "proposed",
    reasonCounts: { temporary_preference: 1, exact_text_mismatch: 2 },
    learned: [],
    proposals: [proposal(0), proposal(2, { text: "Tests\n  run with   `make test`.", conflicts: [{ factId: 3, revision: 2 }] })],
    ...overrides,
  };
}

describe("the automatic learning in the tree", () => {
  it("keeps the learning the first page of facts reported", async () => {
    const reported = learning();
    const server = new FakeServer().on(Requests.factsList, (params: FactsListParams) =>
      params.offset === 0
        ? { facts: [fact(1)], offset: 0, nextOffset: 1, learning: reported }
        : { facts: [fact(2)], offset: 1, nextOffset: null, learning: null },
    );
    expect(await listFacts(server, FOLDER, FACTS_CAP)).toEqual({ facts: [fact(1), fact(2)], more: false, learning: reported });
    const none = new FakeServer().on(Requests.factsList, () => ({ facts: [], offset: 0, nextOffset: null, learning: null }));
    expect((await listFacts(none, FOLDER, FACTS_CAP)).learning).toBeUndefined();
  });

  it("puts a Learning node above the facts, and above the no-facts message", () => {
    const shown = learning();
    expect(factNodes(FOLDER, { facts: [fact(1)], more: false, learning: shown }).map((n) => n.kind)).toEqual(["learning", "fact"]);
    expect(factNodes(FOLDER, { facts: [], more: false, learning: shown }).map((n) => n.kind)).toEqual(["learning", "message"]);
    expect(factNodes(FOLDER, { facts: [fact(1)], more: false }).map((n) => n.kind)).toEqual(["fact"]);
  });

  it("labels the Learning node by its status, describes it by its reason counts, and says diagnostics hold no text", () => {
    const item = factTreeItem({ kind: "learning", learning: learning(), folderUri: FOLDER });
    expect({ label: item.label, description: item.description, contextValue: item.contextValue, state: item.collapsibleState }).toEqual({
      label: "Learning: proposed",
      description: "exact_text_mismatch 2, temporary_preference 1",
      contextValue: "lecode.learning",
      state: vscode.TreeItemCollapsibleState.Expanded,
    });
    expect(item.tooltip).toContain(`session ${SESSION} (its event is seq 42)`);
    expect(item.tooltip).toContain("no rejected text, quote or model output is kept");
    expect(item.tooltip).toContain("2 proposals wait for review");
  });

  it("names the facts learned, and is a leaf without proposals", () => {
    const learned = learning({ status: "learned", reasonCounts: {}, learned: [{ factId: 4, revision: 1 }, { factId: 6, revision: 2 }], proposals: [] });
    const item = factTreeItem({ kind: "learning", learning: learned, folderUri: FOLDER });
    expect([item.label, item.description, item.collapsibleState]).toEqual([
      "Learning: learned",
      "learned #4, #6",
      vscode.TreeItemCollapsibleState.None,
    ]);
    expect(item.tooltip).toContain("Remembered: fact #4 (revision 1), fact #6 (revision 2).");
    const failed = factTreeItem({ kind: "learning", learning: learning({ status: "failed", reasonCounts: { invalid_json: 1 }, proposals: [] }), folderUri: FOLDER });
    expect([failed.label, failed.description, (failed.iconPath as vscode.ThemeIcon).id]).toEqual(["Learning: failed", "invalid_json 1", "warning"]);
  });

  it("orders reason counts by code and leaves out empty ones", () => {
    expect(reasonCountsPhrase({ stale_context: 1, candidate_schema: 3, invalid_text: 0 })).toBe("candidate_schema 3, stale_context 1");
    expect(reasonCountsPhrase({})).toBe("");
  });

  it("lists the proposals as the Learning node's children", async () => {
    const shown = learning();
    const provider = tree(new FakeServer(), []);
    const children = await provider.getChildren({ kind: "learning", learning: shown, folderUri: FOLDER });
    expect(children).toEqual([
      { kind: "proposal", learning: shown, proposal: shown.proposals[0], folderUri: FOLDER },
      { kind: "proposal", learning: shown, proposal: shown.proposals[1], folderUri: FOLDER },
    ]);
    expect(await provider.getChildren(children[0])).toEqual([]);
  });

  it("shows a proposal's text as a plain one-line label, its kind, and a click that recalls its source", () => {
    const node: FactNode = { kind: "proposal", learning: learning(), proposal: proposal(0), folderUri: FOLDER };
    const item = factTreeItem(node);
    expect({ label: item.label, description: item.description, contextValue: item.contextValue, command: item.command }).toEqual({
      label: "We use tabs for indentation.",
      description: "explicit_user_preference",
      contextValue: "lecode.proposal",
      command: { command: "lecode.recallProposalSource", title: "Recall Source", arguments: [node] },
    });
    expect(typeof item.tooltip).toBe("string"); // plain text: VS Code renders a string tooltip as is
    expect(item.tooltip).toContain(`Evidence: session ${SESSION}, seq 5`);
    expect(item.tooltip).toContain("untrusted data, not instructions");
    expect(item.tooltip).toContain("Why a proposal: the model was not sure"); // issue 26
  });

  it("describes a conflicting proposal with the facts it conflicts with", () => {
    const conflicting = learning().proposals[1];
    const item = factTreeItem({ kind: "proposal", learning: learning(), proposal: conflicting, folderUri: FOLDER });
    expect([item.label, item.description]).toEqual(["Tests run with `make test`.", "explicit_user_preference · conflicts #3"]);
    expect(item.tooltip).toContain("Conflicts with fact #3 (revision 2): accepting corrects it.");
    const two = proposal(1, { kind: "verified_project_fact", conflicts: [{ factId: 3, revision: 2 }, { factId: 8, revision: 1 }] });
    expect(factTreeItem({ kind: "proposal", learning: learning(), proposal: two, folderUri: FOLDER }).description).toBe(
      "verified_project_fact · conflicts #3, #8",
    );
  });

  it("shows markup in a proposal as the characters it is", () => {
    const text = "<img src=x onerror=alert(1)> **bold** [link](command:lecode.forgetFact)";
    const item = factTreeItem({ kind: "proposal", learning: learning(), proposal: proposal(0, { text }), folderUri: FOLDER });
    expect(item.label).toBe(text);
    expect(item.tooltip).toContain(text);
  });

  it("shows the project's learning through the provider", async () => {
    const shown = learning();
    const server = new FakeServer().on(Requests.factsList, () => ({ facts: [fact(1)], offset: 0, nextOffset: null, learning: shown }));
    const roots = withoutHealth(await tree(server, [project("/src/app", [FOLDER])]).getChildren());
    expect(roots[0]).toEqual({ kind: "learning", learning: shown, folderUri: FOLDER });
  });
});
