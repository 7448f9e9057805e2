/**
 * The fact commands: Recall opens the evidence with the cited records selected (or says why it
 * cannot), Correct snapshots the named range and corrects against the revision the tree showed,
 * Forget asks first and says exactly what is excluded for good, a verified project fact opens its
 * file at the claimed line, and the palette commands remember and import through the server.
 */
// covers P7 (fact tree actions, recall-to-source navigation, palette commands), F6, F7
import { beforeEach, describe, expect, it, vi } from "vitest";
import * as vscode from "vscode";
import * as api from "../src/common/vscodeapi";
import type { Project } from "../src/common/projects";
import type { FactEntry, SessionInfoModel } from "../src/common/protocol";
import { Requests } from "../src/common/protocol";
import { KEEP } from "../src/common/confirm";
import {
  FORGET,
  type FactDeps,
  factCommands,
  forgetConfirmation,
  parseSeqRange,
  sessionPicks,
} from "../src/facts/commands";
import { parseTranscriptUri } from "../src/sessions/uri";
import type { FactNode } from "../src/views/nodes";
import { FakeServer, project, serverError } from "./fakes";

vi.mock("../src/common/vscodeapi");

const APP = "file:///src/app";
const SESSION = "20261129T100000Z-3f2a9c41";
const OTHER = "20261130T080000Z-0badc0de";
const DIGEST = `sha256:${"0".repeat(64)}`;

function fact(overrides: Partial<FactEntry> = {}): FactEntry {
  return {
    factId: 3,
    revision: 1,
    status: "valid",
    source: { sessionId: SESSION, seqs: [4, 5], digest: DIGEST },
    text: "We use tabs for indentation.",
    factTextTruncated: false,
    ...overrides,
  };
}

const node = (entry: FactEntry = fact()): FactNode => ({ kind: "fact", fact: entry, folderUri: APP });

const sessions: SessionInfoModel[] = [
  { sessionId: SESSION, title: "build fixes", created: "2026-11-29T10:00:00Z", records: 12 },
  { sessionId: OTHER, title: "", created: "2026-11-30T08:00:00Z", records: 30 },
];

interface Harness {
  server: FakeServer;
  deps: FactDeps;
  refreshed: number;
  shownMore: string[];
}

function harness(projects: Project[] = [project("/src/app", [APP])]): Harness {
  const server = new FakeServer().on(Requests.sessionList, () => ({ sessions }));
  const state: Harness = {
    server,
    refreshed: 0,
    shownMore: [],
    deps: {
      sender: server,
      projects: { projects, projectOfFolder: (uri) => projects.find((p) => p.folders.some((f) => f.uri === uri)) },
      transcripts: { linesOf: () => ({ start: 7, end: 12 }), problemOf: () => undefined },
      refresh: () => state.refreshed++,
      showMore: (folder) => state.shownMore.push(folder),
    },
  };
  return state;
}

const document = (text = "") => ({ getText: () => text }) as unknown as vscode.TextDocument;
const errors = () => vi.mocked(api.showErrorMessage).mock.calls.map(([message]) => message);
const infos = () => vi.mocked(api.showInformationMessage).mock.calls.map(([message]) => message);
const methods = (server: FakeServer) => server.calls.map((call) => call.method);

beforeEach(() => {
  vi.mocked(api.openTextDocument).mockResolvedValue(document());
  vi.mocked(api.showLines).mockResolvedValue(undefined);
  vi.mocked(api.showQuickPick).mockImplementation(async (items) => items[0]);
});

describe("forgetConfirmation", () => {
  it("names the revisions and the transcript positions excluded for good", () => {
    expect(forgetConfirmation(fact())).toBe(
      `Forget fact #3? Its 1 revision is deleted and transcript positions ${SESSION} seqs 4–5 can never be used as evidence again.`,
    );
  });

  it("includes what earlier revisions cite", () => {
    expect(forgetConfirmation(fact({ revision: 3, source: { sessionId: SESSION, seqs: [9], digest: DIGEST } }))).toBe(
      `Forget fact #3? Its 3 revisions are deleted and transcript positions ${SESSION} seq 9, with every position its 2 earlier revisions cite, can never be used as evidence again.`,
    );
  });

  it("names every other fact the forget hides", () => {
    expect(forgetConfirmation(fact(), [2])).toBe(
      `Forget fact #3? Its 1 revision is deleted and transcript positions ${SESSION} seqs 4–5 can never be used as evidence again. This also hides fact #2 from recall and chat: it cites the same evidence.`,
    );
    expect(forgetConfirmation(fact(), [2, 5, 9])).toMatch(/ This also hides facts #2, #5 and #9 from recall and chat: they cite the same evidence\.$/);
  });

  it("speaks of every cited position when the source is not known", () => {
    expect(forgetConfirmation({ factId: 8, revision: 2, status: "hidden" })).toBe(
      "Forget fact #8? Its 2 revisions are deleted and every transcript position they cite can never be used as evidence again.",
    );
  });
});

describe("Forget…", () => {
  const recalled = (answer: object) => () => ({ factId: 3, ...answer });

  it("asks in a modal dialog whose default button keeps the fact, and does nothing when it is dismissed", async () => {
    const h = harness();
    h.server
      .on(Requests.factsRecall, recalled({ revision: 1, status: "valid", source: fact().source }))
      .on(Requests.factsForget, () => ({ forgotten: false, hides: [] }));
    vi.mocked(api.showWarningMessage).mockResolvedValue(undefined);
    await factCommands(h.deps)["lecode.forgetFact"](node());
    const [message, options, ...items] = vi.mocked(api.showWarningMessage).mock.calls[0];
    expect(message).toBe(forgetConfirmation(fact()));
    expect(options).toMatchObject({ modal: true });
    // VS Code makes the first item the primary button, which Enter presses.
    expect(items).toEqual([KEEP, FORGET]);
    expect(h.server.calls.map((call) => call.params)).toEqual([
      { workspaceUri: APP, factId: 3, limit: 1 },
      { workspaceUri: APP, factId: 3, dryRun: true },
    ]);
  });

  it("names the facts the forget will hide, asked of the server first, and keeps the fact on Keep", async () => {
    const h = harness();
    h.server
      .on(Requests.factsRecall, recalled({ revision: 1, status: "valid", source: fact().source }))
      .on(Requests.factsForget, () => ({ forgotten: false, hides: [2, 7] }));
    vi.mocked(api.showWarningMessage).mockResolvedValue(KEEP);
    await factCommands(h.deps)["lecode.forgetFact"](node());
    expect(vi.mocked(api.showWarningMessage).mock.calls[0][0]).toBe(forgetConfirmation(fact(), [2, 7]));
    expect(methods(h.server)).toEqual(["lecode/facts/recall", "lecode/facts/forget"]);
  });

  it("asks about the fact as it is now, not as the tree last showed it", async () => {
    const h = harness();
    const newer = { sessionId: SESSION, seqs: [8], digest: DIGEST };
    h.server.on(Requests.factsRecall, recalled({ revision: 2, status: "valid", source: newer })).on(Requests.factsForget, () => ({ forgotten: false }));
    await factCommands(h.deps)["lecode.forgetFact"](node());
    expect(vi.mocked(api.showWarningMessage).mock.calls[0][0]).toBe(
      `Forget fact #3? Its 2 revisions are deleted and transcript positions ${SESSION} seq 8, with every position its earlier revision cites, can never be used as evidence again.`,
    );
  });

  it("still names the positions of a fact whose evidence stopped validating", async () => {
    const h = harness();
    h.server.on(Requests.factsRecall, recalled({ revision: 1, status: "stale" })).on(Requests.factsForget, () => ({ forgotten: false }));
    await factCommands(h.deps)["lecode.forgetFact"](node());
    expect(vi.mocked(api.showWarningMessage).mock.calls[0][0]).toBe(forgetConfirmation(fact()));
  });

  it("forgets the fact once confirmed, then redraws the tree", async () => {
    const h = harness();
    h.server
      .on(Requests.factsRecall, recalled({ revision: 1, status: "valid", source: fact().source }))
      .on(Requests.factsForget, (params) => ((params as { dryRun?: boolean }).dryRun ? { forgotten: false, hides: [2] } : { forgotten: true, hides: [2] }));
    vi.mocked(api.showWarningMessage).mockResolvedValue(FORGET);
    await factCommands(h.deps)["lecode.forgetFact"](node());
    expect(h.server.calls.slice(2)).toEqual([{ method: "lecode/facts/forget", params: { workspaceUri: APP, factId: 3 } }]);
    expect(h.refreshed).toBe(1);
    expect(infos()).toEqual(["Fact #3 was forgotten. Fact #2 is now hidden."]);
  });

  it("shows a fact forgotten elsewhere as the server's sentence, and redraws the tree", async () => {
    const h = harness();
    h.server.on(Requests.factsRecall, () => {
      throw serverError("fact_not_found", "fact_id: there is no fact 3");
    });
    await factCommands(h.deps)["lecode.forgetFact"](node());
    expect(errors()).toEqual(["fact_id: there is no fact 3"]);
    expect(vi.mocked(api.showWarningMessage)).not.toHaveBeenCalled();
    expect(h.refreshed).toBe(1);
  });
});

describe("Correct…", () => {
  function answers(text: string | undefined, range: string | undefined) {
    vi.mocked(api.showInputBox).mockResolvedValueOnce(text).mockResolvedValueOnce(range);
  }

  it("snapshots the range, then corrects against the revision the tree showed", async () => {
    const h = harness();
    const snapshot = { sessionId: SESSION, seqs: [6, 7], digest: DIGEST };
    h.server
      .on(Requests.sessionSnapshot, () => snapshot)
      .on(Requests.factsCorrect, () => ({ factId: 3, revision: 3 }));
    answers("  We use spaces for indentation. ", "6-7");
    await factCommands(h.deps)["lecode.correctFact"](node(fact({ revision: 2 })));

    expect(methods(h.server)).toEqual(["lecode/session/list", "lecode/session/snapshot", "lecode/facts/correct"]);
    expect(h.server.calls[1].params).toEqual({ workspaceUri: APP, sessionId: SESSION, startSeq: 6, endSeq: 7 });
    expect(h.server.calls[2].params).toEqual({
      workspaceUri: APP,
      factId: 3,
      expectedRevision: 2,
      text: "We use spaces for indentation.",
      source: snapshot,
    });
    expect(infos()).toEqual(["Fact #3 is now at revision 3."]);
    expect(h.refreshed).toBe(1);
  });

  it("prefills the text and the current evidence, with its session first", async () => {
    const h = harness();
    answers("x", undefined);
    await factCommands(h.deps)["lecode.correctFact"](node());
    expect(vi.mocked(api.showInputBox).mock.calls[0][0]).toMatchObject({ value: "We use tabs for indentation." });
    const picks = vi.mocked(api.showQuickPick).mock.calls[0][0] as unknown as ReturnType<typeof sessionPicks>;
    expect(picks[0].session.sessionId).toBe(SESSION);
    expect(picks[0].description).toContain("current evidence");
    expect(vi.mocked(api.showInputBox).mock.calls[1][0]).toMatchObject({ value: "4-5" });
    expect(methods(h.server)).toEqual(["lecode/session/list"]);
  });

  it("sends nothing when the text prompt is dismissed", async () => {
    const h = harness();
    vi.mocked(api.showInputBox).mockResolvedValueOnce(undefined);
    await factCommands(h.deps)["lecode.correctFact"](node());
    expect(h.server.calls).toEqual([]);
  });

  it("shows a stale revision as a sentence suggesting a refresh, and refreshes", async () => {
    const h = harness();
    h.server
      .on(Requests.sessionSnapshot, () => ({ sessionId: SESSION, seqs: [6], digest: DIGEST }))
      .on(Requests.factsCorrect, () => {
        throw serverError("stale_revision", "expected_revision: fact 3 is at revision 2");
      });
    answers("We use spaces.", "6");
    await factCommands(h.deps)["lecode.correctFact"](node());
    expect(errors()).toEqual([
      "Fact #3 was changed since the Facts view showed revision 1 (expected_revision: fact 3 is at revision 2). Refresh the Facts view, then correct the fact again.",
    ]);
    expect(h.refreshed).toBe(1);
  });

  it("shows the server's refusal of the evidence as its sentence", async () => {
    const h = harness();
    h.server.on(Requests.sessionSnapshot, () => {
      throw serverError("invalid_params", "start_seq: 6..6 is hidden (undone, cleared or forgotten)", -32602);
    });
    answers("We use spaces.", "6");
    await factCommands(h.deps)["lecode.correctFact"](node());
    expect(errors()).toEqual(["start_seq: 6..6 is hidden (undone, cleared or forgotten)"]);
    expect(methods(h.server)).not.toContain("lecode/facts/correct");
  });
});

describe("Recall", () => {
  it("says why a fact that is not valid cannot be recalled, and redraws a changed status", async () => {
    const h = harness();
    h.server.on(Requests.factsRecall, () => ({ factId: 3, revision: 1, status: "hidden" }));
    await factCommands(h.deps)["lecode.recallFact"](node());
    expect(infos()).toEqual([
      "Fact #3 (revision 1): the source is hidden (the evidence was undone, cleared or excluded by a forget).",
    ]);
    expect(h.refreshed).toBe(1);
    expect(vi.mocked(api.openTextDocument)).not.toHaveBeenCalled();
  });

  it("opens the evidence with context and selects the cited records", async () => {
    const h = harness();
    h.server.on(Requests.factsRecall, () => ({
      factId: 3,
      revision: 1,
      status: "valid",
      source: fact().source,
      sourceText: "[",
      nextOffset: 1,
    }));
    const linesOf = vi.fn(() => ({ start: 7, end: 12 }));
    h.deps.transcripts.linesOf = linesOf;
    await factCommands(h.deps)["lecode.recallFact"](node());

    expect(h.server.calls[0]).toEqual({ method: "lecode/facts/recall", params: { workspaceUri: APP, factId: 3, limit: 1 } });
    const uri = vi.mocked(api.openTextDocument).mock.calls[0][0];
    expect(parseTranscriptUri(uri)).toEqual({ sessionId: SESSION, startSeq: 1, endSeq: 8, workspaceUri: APP, factId: 3 });
    expect(linesOf).toHaveBeenCalledWith(uri, undefined); // the document selects what the fact cites now
    expect(vi.mocked(api.showLines).mock.calls[0][1]).toEqual({ start: 7, end: 12 });
    expect(h.refreshed).toBe(0);
    expect(errors()).toEqual([]);
  });

  it("tells what the opened document could not show", async () => {
    const h = harness();
    h.deps.transcripts = { linesOf: () => undefined, problemOf: () => "the source is stale (the source transcript changed or is damaged)" };
    await factCommands(h.deps)["lecode.openFactSource"]({ kind: "source", fact: fact(), source: fact().source!, folderUri: APP });
    expect(infos()).toEqual(["the source is stale (the source transcript changed or is damaged)."]);
  });

  it("is refused in a sentence when run without a fact", async () => {
    await factCommands(harness().deps)["lecode.recallFact"]();
    expect(errors()).toEqual(['Run this command on a fact in the "Facts" view.']);
  });
});

describe("Go to Source on a verified project fact", () => {
  const verified = fact({ text: 'src/main.py contains "import os"' });

  it("opens the file and selects the first line equal to the claim", async () => {
    vi.mocked(api.openTextDocument).mockResolvedValue(document("#!/usr/bin/env python\nimport os\nimport os\n"));
    await factCommands(harness().deps)["lecode.openFactSource"](node(verified));
    expect(vi.mocked(api.openTextDocument).mock.calls[0][0].toString()).toBe("file:///src/app/src/main.py");
    expect(vi.mocked(api.showLines).mock.calls[0][1]).toEqual({ start: 1, end: 1 });
    expect(infos()).toEqual([]);
  });

  it("says so when the line is no longer there", async () => {
    vi.mocked(api.openTextDocument).mockResolvedValue(document("import sys\n"));
    await factCommands(harness().deps)["lecode.openFactSource"](node(verified));
    expect(vi.mocked(api.showLines).mock.calls[0][1]).toBeUndefined();
    expect(infos()).toEqual(["the line is no longer in src/main.py"]);
  });

  it("refuses a path outside the folder without opening anything", async () => {
    await factCommands(harness().deps)["lecode.openFactSource"](node(fact({ text: '/etc/passwd contains "root"' })));
    expect(vi.mocked(api.openTextDocument)).not.toHaveBeenCalled();
    expect(errors()).toEqual(["/etc/passwd is not a relative path; only files of the workspace folder can be opened"]);
  });

  it("opens the transcript from the fact's source node all the same", async () => {
    await factCommands(harness().deps)["lecode.openFactSource"]({ kind: "source", fact: verified, source: verified.source!, folderUri: APP });
    expect(vi.mocked(api.openTextDocument).mock.calls[0][0].scheme).toBe("lecode-transcript");
  });
});

describe("Remember From Session…", () => {
  it("picks a session and a range, asks for the text, then snapshots and remembers", async () => {
    const h = harness();
    const snapshot = { sessionId: OTHER, seqs: [2, 3], digest: DIGEST };
    h.server.on(Requests.sessionSnapshot, () => snapshot).on(Requests.factsRemember, () => ({ factId: 11, revision: 1 }));
    vi.mocked(api.showInputBox).mockResolvedValueOnce("2-3").mockResolvedValueOnce("Builds use make.");
    await factCommands(h.deps)["lecode.rememberFromSession"]();
    expect(h.server.calls.slice(1)).toEqual([
      { method: "lecode/session/snapshot", params: { workspaceUri: APP, sessionId: OTHER, startSeq: 2, endSeq: 3 } },
      { method: "lecode/facts/remember", params: { workspaceUri: APP, text: "Builds use make.", source: snapshot } },
    ]);
    expect(infos()).toEqual([`Remembered fact #11, with ${OTHER} seqs 2–3 as its evidence.`]);
    expect(h.refreshed).toBe(1);
  });

  it("says how to get a session when the project has none", async () => {
    const h = harness();
    h.server.on(Requests.sessionList, () => ({ sessions: [] }));
    await factCommands(h.deps)["lecode.rememberFromSession"]();
    expect(errors()).toEqual(['This project has no sessions yet; import one with "lecode: Import Session…".']);
  });
});

describe("Import Session…", () => {
  it("imports the picked JSONL file by path, titled by its name", async () => {
    const h = harness();
    h.server.on(Requests.sessionImport, () => ({ sessionId: SESSION, renamedFrom: null }));
    vi.mocked(api.showOpenDialog).mockResolvedValue([vscode.Uri.file("/src/app/chats/build.jsonl")]);
    await factCommands(h.deps)["lecode.importSession"]();
    expect(vi.mocked(api.showOpenDialog).mock.calls[0][0]).toMatchObject({ canSelectMany: false, filters: { "JSONL transcripts": ["jsonl"] } });
    expect(h.server.calls).toEqual([
      { method: "lecode/session/import", params: { workspaceUri: APP, path: "/src/app/chats/build.jsonl", title: "build" } },
    ]);
    expect(infos()).toEqual([`Imported build.jsonl as session ${SESSION}.`]);
  });

  it("does nothing when no file is picked", async () => {
    const h = harness();
    vi.mocked(api.showOpenDialog).mockResolvedValue(undefined);
    await factCommands(h.deps)["lecode.importSession"]();
    expect(h.server.calls).toEqual([]);
  });

  it("shows the server's refusal of a file outside the workspace as its sentence", async () => {
    const h = harness();
    h.server.on(Requests.sessionImport, () => {
      throw serverError("outside_workspace", "path: the file is outside every workspace folder", -32602);
    });
    vi.mocked(api.showOpenDialog).mockResolvedValue([vscode.Uri.file("/tmp/chat.jsonl")]);
    await factCommands(h.deps)["lecode.importSession"]();
    expect(errors()).toEqual(["path: the file is outside every workspace folder"]);
  });
});

describe("the more… node", () => {
  it("shows more facts of its project", async () => {
    const h = harness();
    await factCommands(h.deps)["lecode.showMoreFacts"]({ kind: "more", folderUri: APP, shown: 500 });
    expect(h.shownMore).toEqual([APP]);
  });
});

describe("parseSeqRange", () => {
  it.each([
    ["3", { startSeq: 3, endSeq: 3 }],
    ["3-5", { startSeq: 3, endSeq: 5 }],
    [" 3 .. 5 ", { startSeq: 3, endSeq: 5 }],
    ["3–5", { startSeq: 3, endSeq: 5 }],
  ])("reads %j", (text, range) => {
    expect(parseSeqRange(text, 12)).toEqual(range);
  });

  it.each([
    ["abc", "Type a seq or a range"],
    ["0-2", "Seq 0 is the session's header"],
    ["5-3", "ends (3) before it starts (5)"],
    ["3-12", "last seq is 11"],
    ["1-201", "at most 200 positions"],
  ])("refuses %j", (text, problem) => {
    expect(parseSeqRange(text, text === "1-201" ? undefined : 12)).toContain(problem);
  });
});

describe("sessionPicks", () => {
  it("lists the newest first, labelled by title or ID", () => {
    expect(sessionPicks(sessions).map((p) => [p.label, p.description])).toEqual([
      [OTHER, ""],
      ["build fixes", SESSION],
    ]);
  });
});
