/**
 * The commands on automatic learning's proposals: Accept asks in a modal dialog (the text, and
 * for a conflict which fact at which revision is corrected), then remembers the proposal with its
 * source, or corrects the conflicting fact against the revision the proposal was made against,
 * and dismisses it; cancelling sends nothing; Dismiss dismisses by session, seq and index; the
 * server's refusals are shown as its sentences; Recall Source opens the cited records.
 */
// covers P7 (fact tree actions, recall-to-source navigation), A6 (proposals leave incumbents unchanged until accepted)
import { beforeEach, describe, expect, it, vi } from "vitest";
import * as api from "../src/common/vscodeapi";
import type { LearningModel, ProposalModel } from "../src/common/protocol";
import { Requests } from "../src/common/protocol";
import type { FactDeps } from "../src/facts/commands";
import { ACCEPT, type ProposalNode, acceptConfirmation, proposalCommands } from "../src/facts/proposals";
import { parseTranscriptUri } from "../src/sessions/uri";
import { FakeServer, project, serverError } from "./fakes";

vi.mock("../src/common/vscodeapi");

const APP = "file:///src/app";
const SESSION = "20261129T100000Z-3f2a9c41";
const SOURCE = { sessionId: SESSION, seqs: [5], digest: `sha256:${"1".repeat(64)}` };
const TEXT = "We use tabs for indentation.";

function proposal(overrides: Partial<ProposalModel> = {}): ProposalModel {
  return { index: 1, text: TEXT, kind: "explicit_user_preference", source: SOURCE, conflicts: [], why: "the model was not sure", ...overrides };
}

const LEARNING: LearningModel = { sessionId: SESSION, seq: 42, status: "proposed", reasonCounts: {}, learned: [], proposals: [] };

function node(overrides: Partial<ProposalModel> = {}): ProposalNode {
  const shown = proposal(overrides);
  return { kind: "proposal", learning: { ...LEARNING, proposals: [shown] }, proposal: shown, folderUri: APP };
}

interface Harness {
  server: FakeServer;
  deps: FactDeps;
  refreshed: number;
}

function harness(): Harness {
  const projects = [project("/src/app", [APP])];
  const server = new FakeServer()
    .on(Requests.factsAcceptProposal, () => ({ factId: 9, revision: 1 }))
    .on(Requests.factsCorrect, () => ({ factId: 3, revision: 3 }))
    .on(Requests.factsDismissProposal, () => ({}))
    .on(Requests.factsRecall, () => ({ factId: 3, revision: 2, status: "valid", text: "We use spaces for indentation." }));
  const state: Harness = {
    server,
    refreshed: 0,
    deps: {
      sender: server,
      projects: { projects, projectOfFolder: () => projects[0] },
      transcripts: { linesOf: () => ({ start: 4, end: 6 }), problemOf: () => undefined },
      refresh: () => state.refreshed++,
      showMore: () => undefined,
    },
  };
  return state;
}

const run = (h: Harness, id: string, arg?: unknown) => proposalCommands(h.deps)[id](arg);
const writes = (h: Harness) => h.server.calls.filter((call) => call.method !== Requests.factsRecall);
const errors = () => vi.mocked(api.showErrorMessage).mock.calls.map(([message]) => message);
const infos = () => vi.mocked(api.showInformationMessage).mock.calls.map(([message]) => message);
const dismissed = { method: "lecode/facts/dismissProposal", params: { workspaceUri: APP, sessionId: SESSION, seq: 42, index: 1 } };

beforeEach(() => {
  vi.mocked(api.showWarningMessage).mockResolvedValue(ACCEPT);
});

describe("acceptConfirmation", () => {
  it("shows the text and its evidence", () => {
    expect(acceptConfirmation(proposal())).toEqual({
      message: "Remember this proposed fact?",
      detail: `${TEXT}\n\nKind: explicit_user_preference. Evidence: session ${SESSION}, seq 5.\nThe server checks the evidence again before storing anything.`,
    });
  });

  it("names the fact and the revision a conflict corrects, what it says now, and the other conflicts left alone", () => {
    const conflicting = proposal({ conflicts: [{ factId: 3, revision: 2 }, { factId: 8, revision: 1 }] });
    const { message, detail } = acceptConfirmation(conflicting, conflicting.conflicts[0], "We use spaces.");
    expect(message).toBe("Correct fact #3 (revision 2) with this proposal?");
    expect(detail.split("\n")).toEqual([
      "Fact #3 revision 2 will be corrected to:",
      "",
      TEXT,
      "",
      "It says now: We use spaces.",
      "",
      `Kind: explicit_user_preference. Evidence: session ${SESSION}, seq 5.`,
      "The other conflicting facts stay as they are: #8.",
      "The server checks the evidence again before storing anything.",
    ]);
  });
});

describe("Accept Proposal", () => {
  it("asks in a modal dialog, then accepts the proposal in one request (remembered with its source, dismissed)", async () => {
    const h = harness();
    await run(h, "lecode.acceptProposal", node());
    const [message, options, ...items] = vi.mocked(api.showWarningMessage).mock.calls[0];
    expect([message, options, items]).toEqual(["Remember this proposed fact?", { modal: true, detail: acceptConfirmation(proposal()).detail }, [ACCEPT]]);
    expect(writes(h)).toEqual([{ method: "lecode/facts/acceptProposal", params: dismissed.params }]);
    expect(h.refreshed).toBe(1);
    expect(infos()).toEqual([`Remembered fact #9 from the proposal, with session ${SESSION}, seq 5 as its evidence.`]);
    expect(errors()).toEqual([]);
  });

  it("corrects the conflicting fact against the revision the proposal names", async () => {
    const h = harness();
    await run(h, "lecode.acceptProposal", node({ conflicts: [{ factId: 3, revision: 2 }] }));
    expect(vi.mocked(api.showWarningMessage).mock.calls[0][0]).toBe("Correct fact #3 (revision 2) with this proposal?");
    expect(vi.mocked(api.showWarningMessage).mock.calls[0][1]).toMatchObject({
      modal: true,
      detail: expect.stringContaining("It says now: We use spaces for indentation."),
    });
    expect(writes(h)).toEqual([
      { method: "lecode/facts/correct", params: { workspaceUri: APP, factId: 3, expectedRevision: 2, text: TEXT, source: SOURCE } },
      dismissed,
    ]);
    expect(infos()).toEqual(["Fact #3 is now at revision 3, corrected by the proposal."]);
  });

  it("still asks when the conflicting fact's current text cannot be recalled", async () => {
    const h = harness();
    h.server.on(Requests.factsRecall, () => {
      throw serverError("fact_not_found", "fact_id: there is no fact 3");
    });
    await run(h, "lecode.acceptProposal", node({ conflicts: [{ factId: 3, revision: 2 }] }));
    expect(vi.mocked(api.showWarningMessage).mock.calls[0][1].detail).not.toContain("It says now");
    expect(writes(h).map((call) => call.method)).toEqual(["lecode/facts/correct", "lecode/facts/dismissProposal"]);
  });

  it("lets the person pick which of several conflicting facts is corrected", async () => {
    const h = harness();
    vi.mocked(api.showQuickPick).mockImplementation(async (items) => items[1]);
    await run(h, "lecode.acceptProposal", node({ conflicts: [{ factId: 3, revision: 2 }, { factId: 8, revision: 4 }] }));
    expect(vi.mocked(api.showQuickPick).mock.calls[0][0].map((item) => [item.label, item.description])).toEqual([
      ["Fact #3", "revision 2"],
      ["Fact #8", "revision 4"],
    ]);
    expect(writes(h)[0].params).toMatchObject({ factId: 8, expectedRevision: 4 });
  });

  it("sends nothing when the confirmation is cancelled", async () => {
    const h = harness();
    vi.mocked(api.showWarningMessage).mockResolvedValue(undefined);
    await run(h, "lecode.acceptProposal", node());
    await run(h, "lecode.acceptProposal", node({ conflicts: [{ factId: 3, revision: 2 }] }));
    expect(writes(h)).toEqual([]);
    expect(h.refreshed).toBe(0);
  });

  it("sends nothing when the choice between conflicting facts is dismissed", async () => {
    const h = harness();
    vi.mocked(api.showQuickPick).mockResolvedValue(undefined);
    await run(h, "lecode.acceptProposal", node({ conflicts: [{ factId: 3, revision: 2 }, { factId: 8, revision: 4 }] }));
    expect(h.server.calls).toEqual([]);
    expect(vi.mocked(api.showWarningMessage)).not.toHaveBeenCalled();
  });

  it.each([
    ["source_not_valid", "source: the evidence changed since it was captured"],
    ["excluded_evidence", "source: seq 5 was excluded by a forget"],
    ["stale_revision", "expected_revision: fact 3 is at revision 3"],
  ])("shows the server's %s refusal as its sentence, keeps the proposal, and redraws the tree", async (code, sentence) => {
    const h = harness();
    const refuse = () => {
      throw serverError(code, sentence);
    };
    h.server.on(Requests.factsAcceptProposal, refuse).on(Requests.factsCorrect, refuse);
    await run(h, "lecode.acceptProposal", node(code === "stale_revision" ? { conflicts: [{ factId: 3, revision: 2 }] } : {}));
    expect(errors()).toEqual([`The proposal was not accepted: ${sentence}`]);
    expect(writes(h).map((call) => call.method)).not.toContain("lecode/facts/dismissProposal");
    expect(h.refreshed).toBe(1);
    expect(infos()).toEqual([]);
  });

  it("says so when the correcting proposal could not be dismissed", async () => {
    const h = harness();
    h.server.on(Requests.factsDismissProposal, () => {
      throw serverError("session_not_found", "session_id: there is no session " + SESSION);
    });
    await run(h, "lecode.acceptProposal", node({ conflicts: [{ factId: 3, revision: 2 }] }));
    expect(infos()).toEqual([
      `Fact #3 is now at revision 3, corrected by the proposal. The proposal is still listed: session_id: there is no session ${SESSION}`,
    ]);
    expect(errors()).toEqual([]);
  });

  it("is refused in a sentence when run without a proposal", async () => {
    const h = harness();
    await run(h, "lecode.acceptProposal");
    await run(h, "lecode.acceptProposal", { kind: "fact" });
    expect(errors()).toEqual([
      'Run this command on a proposal under "Learning" in the "Facts" view.',
      'Run this command on a proposal under "Learning" in the "Facts" view.',
    ]);
    expect(h.server.calls).toEqual([]);
  });
});

describe("Dismiss Proposal", () => {
  it("dismisses the proposal by its learning event's session and seq and its index, then redraws", async () => {
    const h = harness();
    await run(h, "lecode.dismissProposal", node());
    expect(h.server.calls).toEqual([dismissed]);
    expect(h.refreshed).toBe(1);
    expect(vi.mocked(api.showWarningMessage)).not.toHaveBeenCalled();
  });

  it("shows the server's refusal as its sentence", async () => {
    const h = harness();
    h.server.on(Requests.factsDismissProposal, () => {
      throw serverError("invalid_params", "index: the learning event has no proposal 1", -32602);
    });
    await run(h, "lecode.dismissProposal", node());
    expect(errors()).toEqual(["The proposal was not dismissed: index: the learning event has no proposal 1"]);
    expect(h.refreshed).toBe(1);
  });
});

describe("Recall Source", () => {
  it("opens the cited records with context and selects them", async () => {
    const h = harness();
    h.server.on(Requests.sessionList, () => ({ sessions: [{ sessionId: SESSION, title: "", created: "2026-11-29T10:00:00Z", records: 12 }] }));
    const linesOf = vi.fn(() => ({ start: 4, end: 6 }));
    h.deps.transcripts.linesOf = linesOf;
    vi.mocked(api.openTextDocument).mockResolvedValue({ getText: () => "" } as never);
    await run(h, "lecode.recallProposalSource", node());
    const uri = vi.mocked(api.openTextDocument).mock.calls[0][0];
    expect(parseTranscriptUri(uri)).toEqual({ sessionId: SESSION, startSeq: 2, endSeq: 8, workspaceUri: APP });
    expect(linesOf).toHaveBeenCalledWith(uri, [5]);
    expect(vi.mocked(api.showLines).mock.calls[0][1]).toEqual({ start: 4, end: 6 });
    expect(errors()).toEqual([]);
  });
});
