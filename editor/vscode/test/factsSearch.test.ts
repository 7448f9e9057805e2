/**
 * The Facts view's search box and pin toggle (issue 25): Search Facts… lists the facts the server
 * ranks for the words (`query` of lecode/facts/list), best first, with the words each matched in
 * its tooltip; Show All Facts ends the search; Pin and Unpin send lecode/facts/pin and unpin, and
 * a pinned fact says so and offers Unpin (its contextValue ends in `.pinned`).
 */
// covers P7 (fact tree view), R8 (the listing's pages)
import { describe, expect, it, vi } from "vitest";
import type { FactEntry, FactsListParams } from "../src/common/protocol";
import { Requests } from "../src/common/protocol";
import * as api from "../src/common/vscodeapi";
import { type FactDeps, factCommands } from "../src/facts/commands";
import { FILTER_CONTEXT, FactsFileFilter } from "../src/views/factsFilter";
import { FactsTreeProvider, factTreeItem } from "../src/views/factsTree";
import type { FactNode } from "../src/views/nodes";
import { FakeServer, project } from "./fakes";

vi.mock("../src/common/vscodeapi");

const FOLDER = "file:///src/app";

function fact(factId: number, overrides: Partial<FactEntry> = {}): FactEntry {
  return { factId, revision: 1, status: "valid", text: `fact ${factId}`, factTextTruncated: false, ...overrides };
}

function server(): FakeServer {
  return new FakeServer()
    .on(Requests.factsList, (params: FactsListParams) => {
      const facts = params.query === undefined ? [fact(1), fact(2)] : [fact(2, { matched: ["vault"] })];
      return { facts, offset: 0, nextOffset: null };
    })
    .on(Requests.factsPin, (params: { factId: number }) => ({ factId: params.factId, pinned: true, changed: true }))
    .on(Requests.factsUnpin, (params: { factId: number }) => ({ factId: params.factId, pinned: false, changed: true }));
}

describe("the search box", () => {
  it("lists the facts ranked for the words, names the search in the view, and Show All ends it", async () => {
    const fake = server();
    const tree = new FactsTreeProvider(fake, { projects: [project("/src/app", [FOLDER])], problems: [] }, { notRunning: undefined });
    const view: { description?: string } = {};
    const filter = new FactsFileFilter(tree, view);
    filter.search("where is the signing key?");
    expect(view.description).toBe("“where is the signing key?”");
    expect(filter.query).toBe("where is the signing key?");
    const nodes = await tree.getChildren();
    expect(nodes.map((n) => (n.kind === "fact" ? n.fact.factId : n.kind))).toEqual([2]);
    expect(fake.calls.map((c) => c.params)).toEqual([{ workspaceUri: FOLDER, offset: 0, query: "where is the signing key?" }]);
    expect(factTreeItem(nodes[0]).tooltip).toContain("Matched: vault");
    filter.search("   "); // an empty search shows everything again
    expect([tree.filter, view.description]).toEqual([{ kind: "all" }, undefined]);
    expect(vi.mocked(api.setContext).mock.calls).toEqual([
      [FILTER_CONTEXT, true],
      [FILTER_CONTEXT, false],
    ]);
  });
});

describe("the pin toggle", () => {
  it("shows a pinned fact as pinned, with Unpin's contextValue", () => {
    const node: FactNode = { kind: "fact", fact: fact(3, { pinned: true }), folderUri: FOLDER };
    const item = factTreeItem(node);
    expect([item.description, item.contextValue]).toEqual(["#3 r1 valid · pinned", "lecode.fact.valid.pinned"]);
    expect(item.tooltip).toContain("Pinned: every chat request's memory shows it first.");
    expect(factTreeItem({ ...node, fact: fact(3) }).contextValue).toBe("lecode.fact.valid");
  });

  it("pins and unpins through the server and redraws the tree", async () => {
    const fake = server();
    let refreshed = 0;
    const deps: FactDeps = {
      sender: fake,
      projects: { projects: [], projectOfFolder: () => undefined },
      transcripts: { linesOf: () => undefined, problemOf: () => undefined },
      refresh: () => refreshed++,
      showMore: () => undefined,
    };
    const commands = factCommands(deps);
    const node: FactNode = { kind: "fact", fact: fact(3), folderUri: FOLDER };
    await commands["lecode.pinFact"](node);
    await commands["lecode.unpinFact"]({ ...node, fact: fact(3, { pinned: true }) });
    expect(fake.calls.map((c) => [c.method, c.params])).toEqual([
      [Requests.factsPin, { workspaceUri: FOLDER, factId: 3 }],
      [Requests.factsUnpin, { workspaceUri: FOLDER, factId: 3 }],
    ]);
    expect(refreshed).toBe(2);
  });
});
