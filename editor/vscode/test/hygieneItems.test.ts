/**
 * The memory-hygiene part of the Facts tree and its commands: a "Memory health" node with the
 * doctor's numbers (a short summary, every number with its fact IDs), a "Proposed retirements"
 * node only when the listing proposed some, each proposal by its fact's text (plain) with why;
 * Retire… asks in a modal dialog and retires, Keep restores (dismisses the proposal), Retire
 * Fact… and Restore Fact on fact nodes; each redraws the tree.
 */
// covers issue 26 (the Facts view's "Proposed retirements" group and the doctor item)
import { beforeEach, describe, expect, it, vi } from "vitest";
import * as vscode from "vscode";
import * as api from "../src/common/vscodeapi";
import type { FactEntry, FactsListResult, RetirementModel } from "../src/common/protocol";
import { Requests } from "../src/common/protocol";
import type { FactDeps } from "../src/facts/commands";
import { RETIRE, retireConfirmation, retirementCommands } from "../src/facts/retirements";
import { FactsTreeProvider, factNodes, factTreeItem } from "../src/views/factsTree";
import { ALL_CLEAR, doctorRows, doctorSummary, idsPhrase } from "../src/views/hygieneItems";
import type { FactNode, FactNodeOf } from "../src/views/nodes";
import { FakeServer, doctor, project, serverError } from "./fakes";

vi.mock("../src/common/vscodeapi");

const APP = "file:///src/app";
const SESSION = "20261129T100000Z-3f2a9c41";

function fact(factId: number, overrides: Partial<FactEntry> = {}): FactEntry {
  return {
    factId,
    revision: 1,
    status: "valid",
    source: { sessionId: SESSION, seqs: [2], digest: `sha256:${"0".repeat(64)}` },
    text: `fact number ${factId}`,
    ...overrides,
  };
}

const RETIREMENT: RetirementModel = { factId: 2, why: "never used since 2026-11-01", since: "2026-11-01T09:00:00Z" };

describe("the doctor's numbers", () => {
  const sick = doctor({
    facts: 12,
    byStatus: { ...doctor().byStatus, valid: { count: 10, ids: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] }, retired: { count: 2, ids: [11, 12] } },
    duplicates: { count: 1, groups: [[3, 7]] },
    proposedRetirements: { count: 2, ids: [4, 5] },
    neverUsed: { count: 60, ids: Array.from({ length: 50 }, (_, i) => i + 1) },
    notes: [{ file: "MEMORY.md", bytes: 9000, shown: 8000, cut: 1000 }, { file: "scratchpad.md", bytes: 10, shown: 10, cut: 0 }],
  });

  it("sums up only what asks for something", () => {
    expect(doctorSummary(sick)).toBe("12 facts · 1 duplicate · 2 to retire · 2 retired · MEMORY.md cut by 1000 bytes");
    expect(doctorSummary(doctor({ facts: 1 }))).toBe("1 fact");
  });

  // covers issue 43, item 5: only the rows with something to say
  it("lists each number above zero with the fact IDs behind it, and says how many more it did not name", () => {
    const rows = doctorRows(sick).map((row) => [row.label, row.count, row.detail]);
    expect(rows).toEqual([
      ["Facts", 12, ""],
      ["Valid", 10, "#1, #2, #3, #4, #5, #6, #7, #8, #9, #10"],
      ["Retired", 2, "#11, #12"],
      ["Duplicates", 1, "#3 = #7"],
      ["Not used yet", 60, `${Array.from({ length: 50 }, (_, i) => `#${i + 1}`).join(", ")} and 10 more`],
      ["Proposed retirements", 2, "#4, #5"],
      ["MEMORY.md", 1000, "9000 bytes, 8000 shown, 1000 cut"],
    ]);
    expect(idsPhrase({ count: 3, ids: [1] })).toBe("#1 and 2 more");
  });

  // covers issue 43, item 5: facts remembered a minute ago are not "never used"
  it("says all clear for a new memory, and calls its facts not used yet, never \"never used\"", () => {
    const fresh = doctor({
      facts: 2,
      byStatus: { ...doctor().byStatus, valid: { count: 2, ids: [1, 2] } },
      neverUsed: { count: 2, ids: [1, 2] },
      notes: [{ file: "MEMORY.md", bytes: 10, shown: 10, cut: 0 }],
    });
    expect(doctorRows(fresh)).toEqual([
      { label: "Facts", count: 2, meaning: "How many facts are stored.", detail: "" },
      expect.objectContaining({ label: "Valid", count: 2 }),
      expect.objectContaining({ label: "Not used yet", count: 2, detail: "#1, #2" }),
      { label: "All clear", meaning: ALL_CLEAR, detail: "" },
    ]);
    expect(doctorSummary(fresh)).toBe("2 facts");
    const item = factTreeItem({ kind: "health", doctor: fresh, folderUri: APP });
    expect(item.tooltip).not.toMatch(/never used/i);
    expect(item.tooltip).toContain("\nAll clear");
    expect(factTreeItem({ kind: "healthRow", row: doctorRows(fresh)[3], folderUri: APP }).label).toBe("All clear");
  });

  it("shows the health node with its summary, every number in its tooltip, and a row per number", async () => {
    const node: FactNode = { kind: "health", doctor: sick, folderUri: APP };
    const item = factTreeItem(node);
    expect([item.label, item.description, item.contextValue]).toEqual(["Memory health", doctorSummary(sick), "lecode.health"]);
    expect(item.tooltip).toContain("Duplicates: 1 (#3 = #7)");
    expect(item.tooltip).toContain("Proposed retirements: 2 (#4, #5)");
    const rows = await new FactsTreeProvider(new FakeServer(), { projects: [], problems: [] }, { notRunning: undefined }).getChildren(node);
    expect(rows).toHaveLength(7);
    const retire = factTreeItem(rows[5]);
    expect([retire.label, retire.description, retire.tooltip]).toEqual([
      "Proposed retirements: 2",
      "#4, #5",
      "Facts unused for lecode.memory.retire_after_days: retire or keep each under Proposed retirements.\n#4, #5",
    ]);
  });

  it("shows a doctor that failed as its sentence, with no rows", () => {
    const item = factTreeItem({ kind: "health", doctor: { problem: "store_error: facts.sqlite3 is damaged" }, folderUri: APP });
    expect([item.description, item.tooltip, item.collapsibleState]).toEqual([
      "not available",
      "lecode/memory/doctor answered: store_error: facts.sqlite3 is damaged",
      vscode.TreeItemCollapsibleState.None,
    ]);
  });
});

describe("the proposed retirements", () => {
  it("come after the health node, and only when there are any", () => {
    const page = { facts: [fact(1), fact(2)], more: false };
    expect(factNodes(APP, page).map((n) => n.kind)).toEqual(["fact", "fact"]);
    expect(factNodes(APP, { ...page, retirements: [] }, undefined, doctor()).map((n) => n.kind)).toEqual(["health", "fact", "fact"]);
    expect(factNodes(APP, { ...page, retirements: [RETIREMENT] }, undefined, doctor()).map((n) => n.kind)).toEqual([
      "health",
      "retirements",
      "fact",
      "fact",
    ]);
  });

  it("are read from the first page of the listing and named by their fact's text", async () => {
    const listed: FactsListResult = { facts: [fact(1), fact(2, { text: "We  use\ntabs." })], offset: 0, nextOffset: null, retirements: [RETIREMENT, { ...RETIREMENT, factId: 40 }] };
    const server = new FakeServer().on(Requests.factsList, () => listed).on(Requests.memoryDoctor, () => doctor());
    const provider = new FactsTreeProvider(server, { projects: [project("/src/app", [APP])], problems: [] }, { notRunning: undefined });
    const group = (await provider.getChildren()).find((n) => n.kind === "retirements");
    expect(group).toBeDefined();
    const item = factTreeItem(group as FactNode);
    expect([item.label, item.description, item.contextValue]).toEqual(["Proposed retirements", "2", "lecode.retirements"]);
    const children = await provider.getChildren(group);
    const items = children.map(factTreeItem);
    // Fact 40 is past what the listing read: it is named by its ID.
    expect(items.map((i) => [i.label, i.description, i.contextValue])).toEqual([
      ["We use tabs.", "#2 · never used since 2026-11-01", "lecode.retirement"],
      ["Fact #40", "#40 · never used since 2026-11-01", "lecode.retirement"],
    ]);
    expect(items[0].tooltip).toBe(
      "Fact #2 is proposed for retirement: never used since 2026-11-01.\n\nWe  use\ntabs.\n\nUntrusted data, not instructions.\n\n" +
        "Retire: it leaves chat's memory but stays listed, recallable and restorable. Keep: its unused clock starts again.",
    );
  });

  it("show markup in a fact's text as the characters it is", () => {
    const text = "**bold** <img src=x onerror=alert(1)> [link](command:lecode.forgetFact)";
    const item = factTreeItem({ kind: "retirement", retirement: RETIREMENT, fact: fact(2, { text }), folderUri: APP });
    expect(typeof item.label).toBe("string");
    expect(typeof item.tooltip).toBe("string");
    expect(item.label).toBe(text);
  });
});

interface Harness {
  server: FakeServer;
  deps: FactDeps;
  refreshed: number;
}

function harness(): Harness {
  const projects = [project("/src/app", [APP])];
  const server = new FakeServer()
    .on(Requests.factsRetire, (params: { factId: number }) => ({ factId: params.factId, retired: true, changed: true }))
    .on(Requests.factsRestore, (params: { factId: number }) => ({ factId: params.factId, retired: false, changed: true }));
  const state: Harness = {
    server,
    refreshed: 0,
    deps: {
      sender: server,
      projects: { projects, projectOfFolder: () => projects[0] },
      transcripts: { linesOf: () => undefined, problemOf: () => undefined },
      refresh: () => state.refreshed++,
      showMore: () => undefined,
    },
  };
  return state;
}

const proposal: FactNodeOf<"retirement"> = { kind: "retirement", retirement: RETIREMENT, fact: fact(2, { text: "We use tabs." }), folderUri: APP };
const run = (h: Harness, id: string, arg?: unknown) => retirementCommands(h.deps)[id](arg);
const infos = () => vi.mocked(api.showInformationMessage).mock.calls.map(([message]) => message);
const errors = () => vi.mocked(api.showErrorMessage).mock.calls.map(([message]) => message);

describe("the retirement commands", () => {
  beforeEach(() => {
    vi.mocked(api.showWarningMessage).mockResolvedValue(RETIRE);
  });

  it("Retire… asks in a modal dialog that says the fact stays listed and restorable, then retires it", async () => {
    const h = harness();
    await run(h, "lecode.retireProposed", proposal);
    const { message, detail } = retireConfirmation(2, "We use tabs.", RETIREMENT.why);
    expect(vi.mocked(api.showWarningMessage).mock.calls).toEqual([[message, { modal: true, detail }, RETIRE]]);
    expect(message).toBe("Retire fact #2?");
    expect(detail).toContain("We use tabs.\n\nProposed because: never used since 2026-11-01.");
    expect(detail).toContain("It stays listed (status retired), recallable with its evidence, and Restore Fact brings it back.");
    expect(h.server.calls).toEqual([{ method: "lecode/facts/retire", params: { workspaceUri: APP, factId: 2 } }]);
    expect([h.refreshed, infos()]).toEqual([1, ["Fact #2 is retired: Restore Fact brings it back."]]);
  });

  it("Retire… sends nothing when the dialog is cancelled", async () => {
    vi.mocked(api.showWarningMessage).mockResolvedValue(undefined);
    const h = harness();
    await run(h, "lecode.retireProposed", proposal);
    expect([h.server.calls, h.refreshed]).toEqual([[], 0]);
  });

  it("Keep restores the proposed fact, which dismisses the proposal, without asking", async () => {
    const h = harness();
    await run(h, "lecode.keepFact", proposal);
    expect(api.showWarningMessage).not.toHaveBeenCalled();
    expect(h.server.calls).toEqual([{ method: "lecode/facts/restore", params: { workspaceUri: APP, factId: 2 } }]);
    expect([h.refreshed, infos()]).toEqual([1, ["Fact #2 is kept: its unused clock starts again."]]);
  });

  it("Retire Fact… and Restore Fact act on a fact node", async () => {
    const h = harness();
    await run(h, "lecode.retireFact", { kind: "fact", fact: fact(5), folderUri: APP });
    await run(h, "lecode.restoreFact", { kind: "fact", fact: fact(5, { status: "retired" }), folderUri: APP });
    expect(vi.mocked(api.showWarningMessage).mock.calls[0][1]).toEqual({ modal: true, detail: retireConfirmation(5, "fact number 5").detail });
    expect(h.server.calls.map((call) => call.method)).toEqual(["lecode/facts/retire", "lecode/facts/restore"]);
    expect(infos()).toEqual(["Fact #5 is retired: Restore Fact brings it back.", "Fact #5 is restored: chat's memory has it again."]);
  });

  it("shows a refusal as the server's sentence and redraws", async () => {
    const h = harness();
    h.server.on(Requests.factsRestore, () => {
      throw serverError("fact_not_found", "factId: fact 2 does not exist");
    });
    await run(h, "lecode.keepFact", proposal);
    expect([errors(), h.refreshed]).toEqual([["factId: fact 2 does not exist"], 1]);
  });

  it("refuse a node of the wrong kind", async () => {
    const h = harness();
    await run(h, "lecode.keepFact", { kind: "fact", fact: fact(2), folderUri: APP });
    expect(errors()).toEqual(['Run this command on a proposal under "Proposed retirements" in the "Facts" view.']);
    expect(h.server.calls).toEqual([]);
  });
});
