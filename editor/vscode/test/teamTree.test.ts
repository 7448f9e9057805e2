/**
 * Team memory in the Facts tree: a "Team" group beside the other groups, listing every page of
 * lecode/facts/team (bounded) with each fact's status, who shared it and an icon per status, a
 * click that opens a valid fact's recall or an unverified fact's file; no group where nothing is
 * shared or outside a checkout; and a fact of yours that is shared marked as such, with the
 * contextValue that offers Stop Sharing instead of Share with Team.
 */
// covers P7 (fact tree view), issue 29 (team memory in VS Code)
import { describe, expect, it } from "vitest";
import * as vscode from "vscode";
import type { FactEntry, TeamFactEntry, TeamListParams } from "../src/common/protocol";
import { Requests } from "../src/common/protocol";
import { FactsTreeProvider, factTreeItem } from "../src/views/factsTree";
import type { FactNode, FactNodeOf } from "../src/views/nodes";
import { TEAM_CAP, listTeam, loadTeam, teamFactTreeItem, teamTreeItem } from "../src/views/teamItems";
import { FakeServer, anchor, doctor, project, serverError } from "./fakes";

const FOLDER = "file:///src/app";
const SESSION = "20261129T100000Z-3f2a9c41";
const DIGEST = `sha256:${"0".repeat(64)}`;
const TEAM_ID = "3f9a0c1d2e4b5a6978c0";
const BAD_ID = "00000000000000000bad";
const HIDDEN_ID = "aaaaaaaaaaaaaaaaaaaa";

const fileOf = (teamId: string) => `.lecode/facts/${teamId}.json`;

function entry(teamId: string, overrides: Partial<TeamFactEntry> = {}): TeamFactEntry {
  return {
    teamId,
    file: fileOf(teamId),
    uri: `file:///src/app/${fileOf(teamId)}`,
    status: "valid",
    sharedBy: "Ada",
    sharedAt: "2026-12-02T17:00:00Z",
    revision: 1,
    text: "Integration tests need `make stack-up` first.",
    factTextTruncated: false,
    source: { sessionId: SESSION, seqs: [3], digest: DIGEST },
    ...overrides,
  };
}

const VALID = entry(TEAM_ID);
const UNVERIFIED: TeamFactEntry = {
  teamId: BAD_ID,
  file: fileOf(BAD_ID),
  uri: `file:///src/app/${fileOf(BAD_ID)}`,
  status: "unverified",
  reason: "evidence: the records do not hash to its digest (tampered)",
};
const HIDDEN = entry(HIDDEN_ID, { status: "hidden", reason: "you forgot it here", sharedBy: "Grace", localFactId: 4 });

function fact(factId: number, overrides: Partial<FactEntry> = {}): FactEntry {
  return { factId, revision: 1, status: "valid", source: { sessionId: SESSION, seqs: [1], digest: DIGEST }, text: `fact number ${factId}`, ...overrides };
}

/** A server whose checkout shares `shared` (20 a page, as lecode-ls answers) beside one own fact. */
function serverSharing(shared: TeamFactEntry[], page = 20): FakeServer {
  return new FakeServer()
    .on(Requests.factsList, () => ({ facts: [fact(1)], offset: 0, nextOffset: null }))
    .on(Requests.memoryDoctor, () => doctor({ facts: 1 }))
    .on(Requests.factsTeam, (params: TeamListParams) => {
      const offset = params.offset ?? 0;
      const next = offset + page;
      return { facts: shared.slice(offset, next), offset, nextOffset: next < shared.length ? next : null, total: shared.length, skipped: {}, pending: 0 };
    });
}

const tree = (server: FakeServer) => new FactsTreeProvider(server, { projects: [project("/src/app", [FOLDER])], problems: [] }, { notRunning: undefined });
const icon = (item: vscode.TreeItem) => item.iconPath as vscode.ThemeIcon;

describe("listTeam", () => {
  it("follows nextOffset until the last page", async () => {
    const shared = Array.from({ length: 45 }, (_, i) => entry(i.toString(16).padStart(20, "0")));
    const server = serverSharing(shared);
    const page = await listTeam(server, FOLDER);
    expect(page.facts.map((e) => e.teamId)).toEqual(shared.map((e) => e.teamId));
    expect(page.more).toBe(false);
    expect(server.calls.map((call) => call.params)).toEqual([
      { workspaceUri: FOLDER, offset: 0 },
      { workspaceUri: FOLDER, offset: 20 },
      { workspaceUri: FOLDER, offset: 40 },
    ]);
  });

  it("stops at its cap and says there are more", async () => {
    const shared = Array.from({ length: TEAM_CAP + 40 }, (_, i) => entry(i.toString(16).padStart(20, "0")));
    const server = serverSharing(shared);
    const page = await listTeam(server, FOLDER);
    expect([page.facts.length, page.more, page.total]).toEqual([TEAM_CAP, true, TEAM_CAP + 40]);
    expect(server.calls).toHaveLength(TEAM_CAP / 20);
  });

  it("refuses pages that do not advance instead of looping", async () => {
    const server = new FakeServer().on(Requests.factsTeam, () => ({ facts: [VALID], offset: 0, nextOffset: 0, total: 2, skipped: {}, pending: 0 }));
    await expect(listTeam(server, FOLDER)).rejects.toThrow(/does not advance/);
  });
});

describe("the Team group", () => {
  it("sits beside the other groups, above the facts, and lists each shared fact with its status", async () => {
    const provider = tree(serverSharing([VALID, UNVERIFIED, HIDDEN]));
    const roots = await provider.getChildren();
    expect(roots.map((node) => node.kind)).toEqual(["health", "team", "fact"]);
    const group = teamTreeItem(roots[1] as FactNodeOf<"team">);
    expect([group.label, group.description, group.contextValue, icon(group).id]).toEqual([
      "Team",
      "3 shared · 1 unverified · 1 forgotten by you",
      "lecode.team",
      "organization",
    ]);
    const children = await provider.getChildren(roots[1]);
    expect(children).toEqual([
      { kind: "teamFact", entry: VALID, folderUri: FOLDER },
      { kind: "teamFact", entry: UNVERIFIED, folderUri: FOLDER },
      { kind: "teamFact", entry: HIDDEN, folderUri: FOLDER },
    ]);
    const items = children.map((node) => factTreeItem(node));
    expect(items.map((item) => [item.label, item.description, icon(item).id, item.contextValue])).toEqual([
      ["Integration tests need `make stack-up` first.", "valid · Ada", "pass", "lecode.teamFact.valid"],
      [`${BAD_ID}.json`, "unverified", "warning", "lecode.teamFact.unverified"],
      ["Integration tests need `make stack-up` first.", "hidden · Grace · also yours (#4)", "eye-closed", "lecode.teamFact.hidden"],
    ]);
    expect(items.map((item) => item.command)).toEqual(
      children.map((node) => ({ command: "lecode.openTeamFact", title: "Open Shared Fact", arguments: [node] })),
    );
  });

  it("says in an unverified fact's tooltip why it is never shown to the model", () => {
    const item = teamFactTreeItem({ kind: "teamFact", entry: UNVERIFIED, folderUri: FOLDER });
    expect(item.tooltip).toBe(
      [
        `Shared in ${fileOf(BAD_ID)}: unverified (it is never shown to the model)`,
        "Why: evidence: the records do not hash to its digest (tampered)",
        "",
        "Click to open its file.",
      ].join("\n"),
    );
    expect(icon(item).color).toEqual(new vscode.ThemeColor("list.warningForeground"));
  });

  it("shows a valid fact's text as untrusted data and its anchors' drift", () => {
    const drifted = entry(TEAM_ID, { anchors: [anchor({ status: "changed" })] });
    const item = teamFactTreeItem({ kind: "teamFact", entry: drifted, folderUri: FOLDER });
    expect(item.description).toBe("valid · Ada · changed");
    expect(item.tooltip).toContain("Integration tests need `make stack-up` first.\n\nUntrusted data, not instructions.");
    expect(item.tooltip).toContain("Anchored at src/app.py:3-4: changed");
  });

  it("says whether a valid fact's text is verified or the sharer's claim", () => {
    // covers I3: a shared fact's text need not follow from its bundle (issue 41, item 6)
    const claim = teamFactTreeItem({ kind: "teamFact", entry: entry(TEAM_ID, { support: "claim" }), folderUri: FOLDER });
    expect(claim.description).toBe("valid · Ada · sharer's claim");
    expect(claim.tooltip).toContain("The sharer's claim: the evidence does not contain this text");
    const quote = teamFactTreeItem({ kind: "teamFact", entry: entry(TEAM_ID, { support: "quote" }), folderUri: FOLDER });
    expect(quote.description).toBe("valid · Ada · verified quote");
    expect(quote.tooltip).toContain("Verified: the text is an exact quote of a cited user message.");
  });

  it("is not shown where nothing is shared", async () => {
    const roots = await tree(serverSharing([])).getChildren();
    expect(roots.map((node) => node.kind)).toEqual(["health", "fact"]);
  });

  it("is not shown outside a Git checkout, nor by a server without team memory", async () => {
    const outside = new FakeServer().on(Requests.factsTeam, () => {
      throw serverError("not_a_checkout", "workspaceUri: the folder is not in a checkout");
    });
    expect(await loadTeam(outside, FOLDER)).toBeUndefined();
    const older = new FakeServer().on(Requests.factsTeam, () => {
      throw Object.assign(new Error("Unhandled method lecode/facts/team"), { code: -32601 });
    });
    expect(await loadTeam(older, FOLDER)).toBeUndefined();
  });

  it("shows another failure as the server's sentence, the own facts listed all the same", async () => {
    const server = serverSharing([]).on(Requests.factsTeam, () => {
      throw serverError("store_error", "facts: could not read .lecode/facts (Permission denied)");
    });
    const roots = await tree(server).getChildren();
    expect(roots.map((node) => node.kind)).toEqual(["health", "team", "fact"]);
    const item = factTreeItem(roots[1]);
    expect([item.description, item.tooltip, item.collapsibleState]).toEqual([
      "not available",
      "lecode/facts/team answered: facts: could not read .lecode/facts (Permission denied)",
      vscode.TreeItemCollapsibleState.None,
    ]);
  });

  it("says how many are shown when the checkout shares more than its cap", async () => {
    const shared = Array.from({ length: TEAM_CAP + 1 }, (_, i) => entry(i.toString(16).padStart(20, "0")));
    const provider = tree(serverSharing(shared));
    const group = (await provider.getChildren()).find((node) => node.kind === "team") as FactNode;
    const children = await provider.getChildren(group);
    expect(children).toHaveLength(TEAM_CAP + 1);
    expect(children.at(-1)).toEqual({ kind: "message", text: `The first ${TEAM_CAP} of ${TEAM_CAP + 1} shared facts are shown.`, folderUri: FOLDER });
  });
});

describe("a fact of yours that is shared", () => {
  const shared = { teamId: TEAM_ID, file: fileOf(TEAM_ID), sharedBy: "Ada", sharedAt: "2026-12-02T17:00:00Z" };

  it("says so in its description and tooltip, naming the file to commit", () => {
    const item = factTreeItem({ kind: "fact", fact: fact(4, { shared }), folderUri: FOLDER });
    expect(item.description).toBe("#4 r1 valid · shared");
    expect(item.tooltip).toContain(`Shared by Ada in ${fileOf(TEAM_ID)} (commit it)`);
  });

  it("ends its contextValue in .shared, after .pinned, so Stop Sharing is offered instead of Share with Team", () => {
    const contexts = [fact(4, { shared }), fact(4, { shared, pinned: true }), fact(4), fact(4, { pinned: true })].map(
      (f) => factTreeItem({ kind: "fact", fact: f, folderUri: FOLDER }).contextValue,
    );
    expect(contexts).toEqual(["lecode.fact.valid.shared", "lecode.fact.valid.pinned.shared", "lecode.fact.valid", "lecode.fact.valid.pinned"]);
  });

  it("is not marked when it is not shared", () => {
    const item = factTreeItem({ kind: "fact", fact: fact(4), folderUri: FOLDER });
    expect(item.description).toBe("#4 r1 valid");
    expect(item.tooltip).not.toContain("Shared");
  });
});
