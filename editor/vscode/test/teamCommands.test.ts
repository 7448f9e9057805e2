/**
 * The team-memory commands: Share with Team sends the fact's ID and says which file to commit
 * (Open File opens it); Stop Sharing asks in a modal dialog first and sends the own fact's ID or
 * the team fact's teamId; Forget for Me asks first (Keep is the default) and forgets for this
 * person only; Forget… on a shared fact offers Stop Sharing Too; a click on a shared fact opens
 * its recall (a lecode-team: document of the bundled records) or an unverified fact's file; and
 * refusals are the server's sentences.
 */
// covers P7 (fact tree actions, recall-to-source navigation), F7 (Forget for Me), issue 29
import { beforeEach, describe, expect, it, vi } from "vitest";
import * as vscode from "vscode";
import * as api from "../src/common/vscodeapi";
import { KEEP } from "../src/common/confirm";
import type { FactEntry, TeamFactEntry, TeamRecallParams } from "../src/common/protocol";
import { Requests } from "../src/common/protocol";
import { FORGET, type FactDeps, factCommands } from "../src/facts/commands";
import { FORGET_FOR_ME, OPEN_FILE, STOP_SHARING, STOP_SHARING_TOO, teamCommands } from "../src/facts/team";
import { TEAM_SCHEME, TeamDocumentProvider, loadTeamFact, parseTeamUri, teamUri } from "../src/facts/teamDocument";
import { UNTRUSTED_NOTICE } from "../src/sessions/transcript";
import type { FactNode } from "../src/views/nodes";
import { FakeServer, project, serverError } from "./fakes";

vi.mock("../src/common/vscodeapi");

const APP = "file:///src/app";
const SESSION = "20261129T100000Z-3f2a9c41";
const DIGEST = `sha256:${"0".repeat(64)}`;
const TEAM_ID = "3f9a0c1d2e4b5a6978c0";
const FILE = `.lecode/facts/${TEAM_ID}.json`;
const FILE_URI = `file:///src/app/${FILE}`;
const SHARED = { teamId: TEAM_ID, file: FILE, sharedBy: "Ada", sharedAt: "2026-12-02T17:00:00Z" };

function fact(overrides: Partial<FactEntry> = {}): FactEntry {
  return {
    factId: 4,
    revision: 1,
    status: "valid",
    source: { sessionId: SESSION, seqs: [3], digest: DIGEST },
    text: "Integration tests need `make stack-up` first.",
    ...overrides,
  };
}

function teamEntry(overrides: Partial<TeamFactEntry> = {}): TeamFactEntry {
  return { teamId: TEAM_ID, file: FILE, uri: FILE_URI, status: "valid", sharedBy: "Grace", text: "Deploys go through `make ship`.", ...overrides };
}

const own = (entry: FactEntry = fact()): FactNode => ({ kind: "fact", fact: entry, folderUri: APP });
const team = (entry: TeamFactEntry = teamEntry()): FactNode => ({ kind: "teamFact", entry, folderUri: APP });

interface Harness {
  server: FakeServer;
  refreshed: number;
  deps: FactDeps;
}

function harness(server = new FakeServer()): Harness {
  const state: Harness = {
    server,
    refreshed: 0,
    deps: {
      sender: server,
      projects: { projects: [project("/src/app", [APP])], projectOfFolder: () => undefined },
      transcripts: { linesOf: () => undefined, problemOf: () => undefined },
      refresh: () => state.refreshed++,
      showMore: () => undefined,
    },
  };
  return state;
}

const calls = (server: FakeServer) => server.calls.map(({ method, params }) => [method, params]);
const infos = () => vi.mocked(api.showInformationMessage).mock.calls;
const errors = () => vi.mocked(api.showErrorMessage).mock.calls.map(([message]) => message);

beforeEach(() => {
  vi.mocked(api.openDocument).mockResolvedValue(undefined);
  vi.mocked(api.openTextDocument).mockResolvedValue({ getText: () => "" } as unknown as vscode.TextDocument);
  vi.mocked(api.showLines).mockResolvedValue(undefined);
});

describe("Share with Team", () => {
  it("shares the fact by its ID, redraws the tree and says which file to commit", async () => {
    const h = harness(new FakeServer().on(Requests.factsShare, () => ({ teamId: TEAM_ID, file: FILE, uri: FILE_URI, created: true })));
    vi.mocked(api.showInformationMessage).mockResolvedValue(undefined);
    await teamCommands(h.deps)["lecode.shareFact"](own());
    expect(calls(h.server)).toEqual([["lecode/facts/share", { workspaceUri: APP, factId: 4 }]]);
    expect(h.refreshed).toBe(1);
    expect(infos()).toEqual([[`Shared as ${FILE}: commit it with your change.`, OPEN_FILE]]);
    expect(api.openDocument).not.toHaveBeenCalled();
  });

  it("opens the file when Open File is clicked", async () => {
    const h = harness(new FakeServer().on(Requests.factsShare, () => ({ teamId: TEAM_ID, file: FILE, uri: FILE_URI, created: false })));
    vi.mocked(api.showInformationMessage).mockResolvedValue(OPEN_FILE);
    await teamCommands(h.deps)["lecode.shareFact"](own());
    expect(infos()[0][0]).toBe(`Shared again: ${FILE} is rewritten: commit it with your change.`);
    expect(vi.mocked(api.openDocument).mock.calls.map(([uri]) => uri.toString())).toEqual([FILE_URI]);
  });

  it("shows a refusal as the server's sentence and redraws the tree", async () => {
    const h = harness(
      new FakeServer().on(Requests.factsShare, () => {
        throw serverError("secret_in_fact", "source: record 3 holds a github-token; scrub it before sharing");
      }),
    );
    await teamCommands(h.deps)["lecode.shareFact"](own());
    expect(errors()).toEqual(["source: record 3 holds a github-token; scrub it before sharing"]);
    expect(infos()).toEqual([]);
    expect(h.refreshed).toBe(1);
  });

  it("is refused in a sentence on anything but a fact of yours", async () => {
    const h = harness();
    await teamCommands(h.deps)["lecode.shareFact"](team());
    expect(errors()).toEqual(['Run this command on a fact in the "Facts" view.']);
    expect(h.server.calls).toEqual([]);
  });
});

describe("Stop Sharing", () => {
  const unshared = () => new FakeServer().on(Requests.factsUnshare, () => ({ teamId: TEAM_ID, file: FILE, uri: FILE_URI }));

  it("asks in a modal dialog that the file goes for everyone once committed, and sends nothing when dismissed", async () => {
    const h = harness(unshared());
    vi.mocked(api.showWarningMessage).mockResolvedValue(undefined);
    await teamCommands(h.deps)["lecode.stopSharing"](own(fact({ shared: SHARED })));
    const [message, options, ...items] = vi.mocked(api.showWarningMessage).mock.calls[0];
    expect(message).toBe('Stop sharing "Integration tests need `make stack-up` first."?');
    expect(options).toMatchObject({ modal: true });
    expect((options as { detail: string }).detail).toContain(`${FILE} is removed from this checkout. Once you commit the removal, the fact is gone for everyone on the team`);
    expect((options as { detail: string }).detail).toContain("Your own fact stays.");
    expect(items).toEqual([STOP_SHARING]);
    expect(h.server.calls).toEqual([]);
    expect(h.refreshed).toBe(0);
  });

  it("unshares a fact of yours by its ID once confirmed", async () => {
    const h = harness(unshared());
    vi.mocked(api.showWarningMessage).mockResolvedValue(STOP_SHARING);
    await teamCommands(h.deps)["lecode.stopSharing"](own(fact({ shared: SHARED })));
    expect(calls(h.server)).toEqual([["lecode/facts/unshare", { workspaceUri: APP, factId: 4 }]]);
    expect(h.refreshed).toBe(1);
    expect(infos()).toEqual([[`Stopped sharing: ${FILE} is removed; commit its removal.`]]);
  });

  it("unshares a fact under Team by its teamId once confirmed", async () => {
    const h = harness(unshared());
    vi.mocked(api.showWarningMessage).mockResolvedValue(STOP_SHARING);
    await teamCommands(h.deps)["lecode.stopSharing"](team());
    expect(vi.mocked(api.showWarningMessage).mock.calls[0][0]).toBe('Stop sharing "Deploys go through `make ship`."?');
    expect((vi.mocked(api.showWarningMessage).mock.calls[0][1] as { detail: string }).detail).not.toContain("Your own fact stays.");
    expect(calls(h.server)).toEqual([["lecode/facts/unshare", { workspaceUri: APP, teamId: TEAM_ID }]]);
  });

  it("says a fact of yours that is not shared cannot be unshared, without asking", async () => {
    const h = harness(unshared());
    await teamCommands(h.deps)["lecode.stopSharing"](own());
    expect(errors()).toEqual(["Fact #4 is not shared with the team."]);
    expect(api.showWarningMessage).not.toHaveBeenCalled();
    expect(h.server.calls).toEqual([]);
  });
});

describe("Forget for Me", () => {
  // covers F7: a teammate's fact is forgotten here only (its evidence excluded in this person's store)
  const forgetting = (forgotten: boolean) => new FakeServer().on(Requests.factsTeamForget, () => ({ teamId: TEAM_ID, forgotten, file: FILE }));

  it("asks in a modal dialog whose default button keeps the fact, and sends nothing on Keep", async () => {
    const h = harness(forgetting(true));
    vi.mocked(api.showWarningMessage).mockResolvedValue(KEEP);
    await teamCommands(h.deps)["lecode.forgetTeamFact"](team());
    const [message, options, ...items] = vi.mocked(api.showWarningMessage).mock.calls[0];
    expect(message).toBe('Forget "Deploys go through `make ship`." for you?');
    expect(options).toMatchObject({ modal: true });
    expect((options as { detail: string }).detail).toContain(`${FILE} stays for the team; Stop Sharing removes it for everyone.`);
    expect(items).toEqual([KEEP, FORGET_FOR_ME]);
    expect(h.server.calls).toEqual([]);
  });

  it("forgets it for this person by its teamId once confirmed, and says the file stays", async () => {
    const h = harness(forgetting(true));
    vi.mocked(api.showWarningMessage).mockResolvedValue(FORGET_FOR_ME);
    await teamCommands(h.deps)["lecode.forgetTeamFact"](team());
    expect(calls(h.server)).toEqual([["lecode/facts/teamForget", { workspaceUri: APP, teamId: TEAM_ID }]]);
    expect(h.refreshed).toBe(1);
    expect(infos()).toEqual([[`Forgotten for you: ${FILE} stays for the team.`]]);
  });

  it("says when it had been forgotten already", async () => {
    const h = harness(forgetting(false));
    vi.mocked(api.showWarningMessage).mockResolvedValue(FORGET_FOR_ME);
    await teamCommands(h.deps)["lecode.forgetTeamFact"](team());
    expect(infos()).toEqual([[`It had already been forgotten for you; ${FILE} stays for the team.`]]);
  });

  it("is refused in a sentence on a fact of yours", async () => {
    const h = harness(forgetting(true));
    await teamCommands(h.deps)["lecode.forgetTeamFact"](own());
    expect(errors()).toEqual(['Run this command on a fact under "Team" in the "Facts" view.']);
  });
});

describe("Forget… on a fact of yours that is shared", () => {
  function forgetServer() {
    return new FakeServer()
      .on(Requests.factsRecall, () => ({ factId: 4, revision: 1, status: "valid", source: fact().source }))
      .on(Requests.factsForget, (params) => ((params as { dryRun?: boolean }).dryRun ? { forgotten: false, hides: [] } : { forgotten: true, hides: [] }))
      .on(Requests.factsUnshare, () => ({ teamId: TEAM_ID, file: FILE, uri: FILE_URI }));
  }

  it("offers Stop Sharing Too after the forget, which unshares by teamId", async () => {
    const h = harness(forgetServer());
    vi.mocked(api.showWarningMessage).mockResolvedValue(FORGET);
    vi.mocked(api.showInformationMessage).mockResolvedValueOnce(STOP_SHARING_TOO);
    await factCommands(h.deps)["lecode.forgetFact"](own(fact({ shared: SHARED })));
    expect(infos()[0]).toEqual([
      `Fact #4 was forgotten. It is still shared in ${FILE}: Stop Sharing Too removes the file for everyone once you commit the removal.`,
      STOP_SHARING_TOO,
    ]);
    expect(calls(h.server).at(-1)).toEqual(["lecode/facts/unshare", { workspaceUri: APP, teamId: TEAM_ID }]);
    expect(infos()[1]).toEqual([`Stopped sharing: ${FILE} is removed; commit its removal.`]);
    expect(h.refreshed).toBe(2);
  });

  it("leaves the file when the offer is not taken", async () => {
    const h = harness(forgetServer());
    vi.mocked(api.showWarningMessage).mockResolvedValue(FORGET);
    vi.mocked(api.showInformationMessage).mockResolvedValue(undefined);
    await factCommands(h.deps)["lecode.forgetFact"](own(fact({ shared: SHARED })));
    expect(h.server.calls.map((call) => call.method)).not.toContain("lecode/facts/unshare");
  });

  it("offers nothing for a fact that is not shared", async () => {
    const h = harness(forgetServer());
    vi.mocked(api.showWarningMessage).mockResolvedValue(FORGET);
    await factCommands(h.deps)["lecode.forgetFact"](own());
    expect(infos()).toEqual([["Fact #4 was forgotten."]]);
  });
});

describe("a click on a shared fact", () => {
  it("opens a valid fact's recall as a lecode-team: document", async () => {
    await teamCommands(harness().deps)["lecode.openTeamFact"](team());
    const uri = vi.mocked(api.openTextDocument).mock.calls[0][0];
    expect(uri.scheme).toBe(TEAM_SCHEME);
    expect(parseTeamUri(uri)).toEqual({ teamId: TEAM_ID, workspaceUri: APP });
    expect(api.showLines).toHaveBeenCalledTimes(1);
    expect(api.openDocument).not.toHaveBeenCalled();
  });

  it("opens an unverified fact's file", async () => {
    await teamCommands(harness().deps)["lecode.openTeamFact"](team(teamEntry({ status: "unverified", text: undefined, reason: "merge-conflict markers" })));
    expect(vi.mocked(api.openDocument).mock.calls.map(([uri]) => uri.toString())).toEqual([FILE_URI]);
    expect(api.openTextDocument).not.toHaveBeenCalled();
  });

  it("opens nothing but a local file", async () => {
    await teamCommands(harness().deps)["lecode.openTeamFact"](team(teamEntry({ status: "unverified", uri: "https://example.com/x.json" })));
    expect(api.openDocument).not.toHaveBeenCalled();
    expect(errors()).toEqual(["https://example.com/x.json is not a local file, so it cannot be opened"]);
  });
});

describe("the lecode-team: document", () => {
  const records = [{ kind: "message", seq: 3, role: "user", content: "Deploys go through `make ship`." }];
  const text = JSON.stringify(records);

  function recallServer(answer: (params: TeamRecallParams) => object) {
    return new FakeServer().on(Requests.factsTeamRecall, answer);
  }

  it("joins every page of the bundled records and shows who shared the fact, where", async () => {
    const server = recallServer((params) => {
      const offset = params.offset ?? 0;
      const end = Math.min(offset + 20, text.length);
      return {
        teamId: TEAM_ID,
        file: FILE,
        sharedBy: "Grace",
        sharedAt: "2026-12-02T17:00:00Z",
        status: "valid",
        revision: 2,
        text: "Deploys go through `make ship`.",
        source: { sessionId: SESSION, seqs: [3], digest: DIGEST },
        sourceText: text.slice(offset, end),
        offset,
        nextOffset: end < text.length ? end : null,
      };
    });
    const shown = await loadTeamFact(server, { teamId: TEAM_ID, workspaceUri: APP });
    expect(shown.split("\n")).toEqual([
      UNTRUSTED_NOTICE,
      `Shared by Grace on 2026-12-02T17:00:00Z in ${FILE} (team fact ${TEAM_ID}, revision 2)`,
      "Fact: Deploys go through `make ship`.",
      `Evidence bundled in the file: session ${SESSION} (the sharer's), seq 3`,
      "",
      "── seq 3 · user · cited ──",
      "Deploys go through `make ship`.",
      "",
    ]);
    expect(server.calls.map((call) => (call.params as TeamRecallParams).offset)).toEqual(
      Array.from({ length: Math.ceil(text.length / 20) }, (_, page) => page * 20),
    );
    expect(server.calls[0].params).toEqual({ workspaceUri: APP, teamId: TEAM_ID, offset: 0, limit: 8192 });
  });

  it("shows a fact that is not valid as its status and the server's reason, with no records", async () => {
    const server = recallServer(() => ({ teamId: TEAM_ID, file: FILE, status: "unverified", reason: "merge-conflict markers" }));
    const shown = await loadTeamFact(server, { teamId: TEAM_ID });
    expect(shown).toContain(`Shared in ${FILE} (team fact ${TEAM_ID})`);
    expect(shown).toContain("It is unverified: merge-conflict markers. No evidence is shown.");
    expect(shown).not.toContain("── seq");
  });

  it("shows a failed recall as the server's sentence", async () => {
    const server = recallServer(() => {
      throw serverError("shared_fact_not_found", `teamId: no readable shared fact ${TEAM_ID} in this checkout`);
    });
    expect(await loadTeamFact(server, { teamId: TEAM_ID })).toBe(
      `${UNTRUSTED_NOTICE}\n\nShared fact ${TEAM_ID} could not be recalled: teamId: no readable shared fact ${TEAM_ID} in this checkout.\n`,
    );
  });

  it("names only a shared fact's ID in its URI, and refuses anything else", async () => {
    expect(parseTeamUri(teamUri({ teamId: TEAM_ID }))).toEqual({ teamId: TEAM_ID });
    const bad = vscode.Uri.from({ scheme: TEAM_SCHEME, path: "/../../etc/passwd.team" });
    expect(parseTeamUri(bad)).toEqual({ problem: `${bad.toString()} does not name a fact shared with the team` });
    const provider = new TeamDocumentProvider(new FakeServer());
    expect(await provider.provideTextDocumentContent(bad)).toBe(`${bad.toString()} does not name a fact shared with the team.\n`);
  });

  it("reads its open documents again when team facts change", async () => {
    const provider = new TeamDocumentProvider(recallServer(() => ({ teamId: TEAM_ID, file: FILE, status: "hidden" })));
    const fired: string[] = [];
    provider.onDidChange((uri) => fired.push(uri.toString()));
    const uri = teamUri({ teamId: TEAM_ID, workspaceUri: APP });
    await provider.provideTextDocumentContent(uri);
    provider.refresh();
    expect(fired).toEqual([uri.toString()]);
  });
});
