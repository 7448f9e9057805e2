/**
 * Anchors in VS Code: "Remember Selection as Fact…" asks for the wording (prefilled with the
 * server's default) and remembers the selected lines; the middleware asks for the wording of a
 * "Correct fact #N…" code action, opens a CodeLens's fact as its evidence, hides the server's own
 * remember action, asks before Forget in the Facts view's modal and before a Re-anchor whether
 * the fact still holds of the lines as they are now; an anchor node opens its file at the
 * anchored lines.
 */
// covers issue 14 (Remember Selection as Fact…, Correct/Forget/Re-anchor, CodeLens, recall-to-code)
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import * as vscode from "vscode";
import { CORRECT, STILL_TRUE, anchorCommands, anchorMiddleware, isRememberAction, reanchorDetail } from "../src/anchors/commands";
import { KEEP } from "../src/common/confirm";
import * as api from "../src/common/vscodeapi";
import { Requests } from "../src/common/protocol";
import type { FactEntry, RecallFactResult } from "../src/common/protocol";
import { FORGET, type FactDeps, factCommands } from "../src/facts/commands";
import { parseTranscriptUri } from "../src/sessions/uri";
import { FakeServer, anchor, project, serverError } from "./fakes";

vi.mock("../src/common/vscodeapi");

const SESSION = "20261201T100000Z-3f2a9c41";
const DIGEST = `sha256:${"0".repeat(64)}`;
const LINES = ["import os", "", 'print("hello")', "x = 1", "y = 2"];

let tmp: string;
let repo: vscode.Uri;
let file: vscode.Uri;

beforeAll(() => {
  tmp = realpathSync(mkdtempSync(join(tmpdir(), "lecode-anchor-commands-")));
  mkdirSync(join(tmp, "repo", ".git"), { recursive: true });
  mkdirSync(join(tmp, "repo", "src"));
  writeFileSync(join(tmp, "repo", "src", "app.py"), `${LINES.join("\n")}\n`);
  repo = vscode.Uri.file(join(tmp, "repo"));
  file = vscode.Uri.file(join(tmp, "repo", "src", "app.py"));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

interface Harness {
  server: FakeServer;
  deps: FactDeps;
  refreshed: number;
}

function harness(): Harness {
  const server = new FakeServer().on(Requests.sessionList, () => ({ sessions: [] }));
  const projects = [project(repo.fsPath, [repo.toString()])];
  const state: Harness = {
    server,
    refreshed: 0,
    deps: {
      sender: server,
      projects: { projects, projectOfFolder: () => projects[0] },
      transcripts: { linesOf: () => ({ start: 7, end: 12 }), problemOf: () => undefined },
      refresh: () => state.refreshed++,
      showMore: () => {},
    },
  };
  return state;
}

function document(uri: vscode.Uri, lines = LINES) {
  return {
    uri,
    lineCount: lines.length,
    getText: () => lines.join("\n"),
    lineAt: (line: number) => ({ text: lines[line] }),
  } as unknown as vscode.TextDocument;
}

function select(uri: vscode.Uri, start: [number, number], end: [number, number]): void {
  vi.mocked(api.activeTextEditor).mockReturnValue({
    document: document(uri),
    selection: new vscode.Selection(new vscode.Position(...start), new vscode.Position(...end)),
  } as unknown as vscode.TextEditor);
  vi.mocked(api.getWorkspaceFolder).mockReturnValue(
    uri.path.startsWith(repo.path) ? ({ uri: repo, name: "repo", index: 0 } as vscode.WorkspaceFolder) : undefined,
  );
}

const errors = () => vi.mocked(api.showErrorMessage).mock.calls.map(([message]) => message);
const infos = () => vi.mocked(api.showInformationMessage).mock.calls.map(([message]) => message);
const inputs = () => vi.mocked(api.showInputBox).mock.calls.map(([options]) => options);
const selectionResult = (overrides = {}) => ({
  factId: 7,
  revision: 1,
  sessionId: SESSION,
  seqs: [3],
  anchor: anchor({ startLine: 3, endLine: 3, currentStartLine: 3, currentEndLine: 3 }),
  ...overrides,
});

beforeEach(() => {
  vi.mocked(api.openTextDocument).mockImplementation(async (uri) => document(uri));
});

describe("Remember Selection as Fact…", () => {
  const run = (h: Harness) => anchorCommands(h.deps)["lecode.rememberSelection"]();

  it("offers the server's wording, and leaves the wording to the server when it is kept", async () => {
    const h = harness();
    h.server.on(Requests.factsRememberSelection, () => selectionResult());
    select(file, [2, 3], [2, 9]);
    vi.mocked(api.showInputBox).mockImplementation(async (options) => options.value);
    await run(h);
    expect(inputs()[0]).toMatchObject({ value: 'src/app.py contains "print(\\"hello\\")"', prompt: expect.stringContaining("src/app.py:3") });
    expect(h.server.calls).toEqual([
      {
        method: Requests.factsRememberSelection,
        params: { workspaceUri: repo.toString(), uri: file.toString(), range: { start: { line: 2, character: 3 }, end: { line: 2, character: 9 } } },
      },
    ]);
    expect(h.refreshed).toBe(1);
    expect(infos()).toEqual([`Remembered fact #7, anchored at src/app.py:3, with session ${SESSION} seq 3 as its evidence.`]);
    expect(errors()).toEqual([]);
  });

  it("sends the person's own wording, trimmed, for whole selected lines", async () => {
    const h = harness();
    h.server.on(Requests.factsRememberSelection, () => selectionResult({ anchor: anchor({ startLine: 4, endLine: 5, currentStartLine: 4, currentEndLine: 5 }) }));
    // Lines 4-5 selected whole: the selection ends at the start of line 6.
    select(file, [3, 0], [5, 0]);
    vi.mocked(api.showInputBox).mockResolvedValue("  x and y are set at start-up ");
    await run(h);
    expect(inputs()[0]?.value).toBe('src/app.py lines 4-5: "x = 1" ...');
    expect(h.server.calls[0].params).toMatchObject({ text: "x and y are set at start-up", range: { start: { line: 3, character: 0 }, end: { line: 5, character: 0 } } });
    expect(infos()[0]).toMatch(/^Remembered fact #7, anchored at src\/app\.py:4-5/);
  });

  it("refuses an empty or too long wording in the input box", async () => {
    const h = harness();
    select(file, [2, 0], [2, 5]);
    vi.mocked(api.showInputBox).mockResolvedValue(undefined);
    await run(h);
    const validate = inputs()[0]?.validateInput;
    expect(validate?.("  ")).toBe("Type the fact");
    expect(validate?.("x".repeat(4097))).toMatch(/At most 4096 characters/);
    expect(validate?.("fine")).toBeUndefined();
  });

  it("does nothing when the person dismisses the input box", async () => {
    const h = harness();
    select(file, [2, 0], [2, 5]);
    vi.mocked(api.showInputBox).mockResolvedValue(undefined);
    await run(h);
    expect(h.server.calls).toEqual([]);
    expect(h.refreshed).toBe(0);
  });

  it("says what is wrong, in a sentence, without a selection, outside a local file or outside the workspace", async () => {
    const h = harness();
    select(file, [2, 4], [2, 4]);
    await run(h);
    select(vscode.Uri.parse("lecode-memory:/MEMORY.md"), [0, 0], [0, 3]);
    await run(h);
    select(vscode.Uri.file("/elsewhere/x.py"), [0, 0], [0, 3]);
    await run(h);
    select(file, [0, 0], [250, 0]);
    await run(h);
    expect(errors()).toEqual([
      "Select the lines to remember first.",
      "Select the lines to remember in a file's editor first.",
      "/elsewhere/x.py is not inside a workspace folder, so its lines cannot be remembered.",
      "A fact anchors at most 200 lines; 250 are selected.",
    ]);
    expect(h.server.calls).toEqual([]);
  });

  it("shows the server's sentence when it refuses", async () => {
    const h = harness();
    h.server.on(Requests.factsRememberSelection, () => {
      throw serverError("file_too_large", "uri: the file is larger than 1 MiB");
    });
    select(file, [2, 0], [2, 5]);
    vi.mocked(api.showInputBox).mockResolvedValue("a fact");
    await run(h);
    expect(errors()).toEqual(["uri: the file is larger than 1 MiB"]);
    expect(h.refreshed).toBe(0);
  });
});

describe("the anchor middleware", () => {
  const range = { start: { line: 2, character: 0 }, end: { line: 2, character: 14 } };
  const correctArgs = { workspaceUri: repo?.toString(), factId: 3, expectedRevision: 2, uri: "", range };
  const recallAnswer = (overrides: Partial<RecallFactResult> = {}): RecallFactResult => ({
    factId: 3,
    revision: 2,
    status: "valid",
    text: "We greet with hello.",
    source: { sessionId: SESSION, seqs: [4, 5], digest: DIGEST },
    ...overrides,
  });
  type Next = (command: string, args: unknown[]) => Promise<unknown>;
  const execute = (h: Harness, command: string, args: unknown[], next: Next = vi.fn(async () => "from the server")) =>
    (anchorMiddleware(h.deps).executeCommand as (c: string, a: unknown[], n: Next) => Promise<unknown>)(command, args, next);

  it("asks for the corrected wording, prefilled with the fact's text, then corrects the fact at the lines", async () => {
    const h = harness();
    h.server
      .on(Requests.factsRecall, () => recallAnswer())
      .on(Requests.factsCorrectSelection, () => selectionResult({ factId: 3, revision: 3 }));
    vi.mocked(api.showInputBox).mockResolvedValue("We greet with hello, world.");
    const next = vi.fn();
    const args = { ...correctArgs, workspaceUri: repo.toString(), uri: file.toString() };
    await execute(h, "lecode.anchor.correctSelection", [args], next);
    expect(next).not.toHaveBeenCalled();
    expect(inputs()[0]).toMatchObject({ value: "We greet with hello.", prompt: expect.stringContaining("revision 3") });
    expect(h.server.calls.map((call) => call.method)).toEqual([Requests.factsRecall, Requests.factsCorrectSelection]);
    expect(h.server.calls[1].params).toEqual({ ...args, text: "We greet with hello, world." });
    expect(h.refreshed).toBe(1);
    expect(infos()).toEqual(["Fact #3 is now at revision 3, anchored at src/app.py:3."]);
  });

  it("corrects nothing when the person dismisses the input box", async () => {
    const h = harness();
    h.server.on(Requests.factsRecall, () => recallAnswer());
    vi.mocked(api.showInputBox).mockResolvedValue(undefined);
    await execute(h, "lecode.anchor.correctSelection", [{ ...correctArgs, uri: file.toString() }]);
    expect(h.server.calls.map((call) => call.method)).toEqual([Requests.factsRecall]);
  });

  it("will not store a text that was cut at 512 characters as it was shown", async () => {
    const h = harness();
    const cut = "y".repeat(512);
    h.server.on(Requests.factsRecall, () => recallAnswer({ text: cut, factTextTruncated: true }));
    vi.mocked(api.showInputBox).mockResolvedValue(cut);
    await execute(h, "lecode.anchor.correctSelection", [{ ...correctArgs, uri: file.toString() }]);
    expect(inputs()[0]?.validateInput?.(cut)).toMatch(/cut at 512 characters/);
    expect(h.server.calls.map((call) => call.method)).toEqual([Requests.factsRecall]);
  });

  it("tells a stale correction in a sentence and redraws the tree", async () => {
    const h = harness();
    h.server.on(Requests.factsRecall, () => recallAnswer()).on(Requests.factsCorrectSelection, () => {
      throw serverError("stale_revision", "expected_revision: fact 3 is at revision 4");
    });
    vi.mocked(api.showInputBox).mockResolvedValue("new words");
    await execute(h, "lecode.anchor.correctSelection", [{ ...correctArgs, uri: file.toString() }]);
    expect(errors()).toEqual([expect.stringContaining("expected_revision: fact 3 is at revision 4")]);
    expect(h.refreshed).toBe(1);
  });

  it("opens a CodeLens's fact as its evidence, with the cited records selected", async () => {
    const h = harness();
    h.server.on(Requests.factsRecall, () => recallAnswer());
    const opened: vscode.Uri[] = [];
    vi.mocked(api.openTextDocument).mockImplementation(async (uri) => {
      opened.push(uri);
      return document(uri);
    });
    const next = vi.fn();
    await execute(h, "lecode.anchor.show", [{ workspaceUri: repo.toString(), factId: 3 }], next);
    expect(next).not.toHaveBeenCalled();
    expect(opened.map((uri) => parseTranscriptUri(uri))).toEqual([
      expect.objectContaining({ sessionId: SESSION, factId: 3, workspaceUri: repo.toString() }),
    ]);
    expect(vi.mocked(api.showLines).mock.calls[0][1]).toEqual({ start: 7, end: 12 });
  });

  it("says why a CodeLens's fact has no evidence to open", async () => {
    const h = harness();
    h.server.on(Requests.factsRecall, () => recallAnswer({ status: "hidden", text: null, source: null }));
    await execute(h, "lecode.anchor.show", [{ workspaceUri: repo.toString(), factId: 3 }]);
    expect(infos()).toEqual([expect.stringMatching(/^Fact #3 \(revision 2\): the source is hidden/)]);
    expect(api.openTextDocument).not.toHaveBeenCalled();
  });

  it("asks before a light bulb's Forget in the Facts view's modal, whose default keeps the fact", async () => {
    // covers issue 30, item 4: one destructive confirmation, from anywhere
    const h = harness();
    h.server.on(Requests.factsRecall, () => recallAnswer({ revision: 1 })).on(Requests.factsForget, () => ({ forgotten: true, hides: [7] }));
    const next = vi.fn();
    vi.mocked(api.showWarningMessage).mockResolvedValue(KEEP as never);
    await execute(h, "lecode.anchor.forget", [{ workspaceUri: repo.toString(), factId: 3 }], next);
    const [message, options, ...items] = vi.mocked(api.showWarningMessage).mock.calls[0];
    expect(message).toMatch(/^Forget fact #3\? .* This also hides fact #7 from recall and chat/);
    expect(options).toEqual({ modal: true, detail: 'The fact: "We greet with hello.". This cannot be undone.' });
    expect(items).toEqual([KEEP, FORGET]);
    expect(h.server.calls.map((c) => c.params)).toEqual([
      { workspaceUri: repo.toString(), factId: 3, limit: 1 },
      { workspaceUri: repo.toString(), factId: 3, dryRun: true },
    ]);
    vi.mocked(api.showWarningMessage).mockResolvedValue(FORGET as never);
    await execute(h, "lecode.anchor.forget", [{ workspaceUri: repo.toString(), factId: 3 }], next);
    expect(h.server.calls.at(-1)?.params).toEqual({ workspaceUri: repo.toString(), factId: 3 });
    expect(next).not.toHaveBeenCalled(); // the server's own question never shows
  });

  describe("Re-anchor of a drifted anchor", () => {
    // covers issue 30, item 4: the fact said hello, the line says hello, world: ask first
    const args = () => ({ ...correctArgs, workspaceUri: repo.toString(), uri: file.toString(), index: 0 });

    it("shows the fact beside the lines as they are now and asks whether it still holds", async () => {
      const h = harness();
      h.server.on(Requests.factsRecall, () => recallAnswer());
      vi.mocked(api.openTextDocument).mockImplementation(async (uri) => document(uri));
      vi.mocked(api.showWarningMessage).mockResolvedValue(undefined);
      const next = vi.fn();
      await execute(h, "lecode.anchor.reanchor", [args()], next);
      const [message, options, ...items] = vi.mocked(api.showWarningMessage).mock.calls[0];
      expect(message).toBe("Is fact #3 still true of app.py line 3 as it is now?");
      expect(options).toEqual({ modal: true, detail: reanchorDetail(recallAnswer(), ['print("hello")']) });
      expect((options as { detail: string }).detail).toContain('The fact says: "We greet with hello."\n\nThe lines now:\nprint("hello")');
      // Correct… first: Enter takes the way that can still be dismissed.
      expect(items).toEqual([CORRECT, STILL_TRUE]);
      expect(h.server.calls.map((c) => c.method)).toEqual([Requests.factsRecall]);
      expect(next).not.toHaveBeenCalled();
    });

    it("re-anchors on Still true", async () => {
      const h = harness();
      h.server
        .on(Requests.factsRecall, () => recallAnswer())
        .on(Requests.factsReanchor, () => ({ factId: 3, revision: 2, anchor: anchor({ startLine: 3, endLine: 3, currentStartLine: 3, currentEndLine: 3 }) }));
      vi.mocked(api.openTextDocument).mockImplementation(async (uri) => document(uri));
      vi.mocked(api.showWarningMessage).mockResolvedValue(STILL_TRUE as never);
      await execute(h, "lecode.anchor.reanchor", [args()]);
      expect(h.server.calls.at(-1)).toEqual({ method: Requests.factsReanchor, params: args() });
      expect(h.refreshed).toBe(1);
      expect(infos()).toEqual(["Fact #3 (revision 2) is anchored at src/app.py:3 now."]);
    });

    it("corrects the fact from the lines on Correct…", async () => {
      const h = harness();
      h.server
        .on(Requests.factsRecall, () => recallAnswer())
        .on(Requests.factsCorrectSelection, () => selectionResult({ factId: 3, revision: 3 }));
      vi.mocked(api.openTextDocument).mockImplementation(async (uri) => document(uri));
      vi.mocked(api.showWarningMessage).mockResolvedValue(CORRECT as never);
      vi.mocked(api.showInputBox).mockResolvedValue("We greet with hello, world.");
      await execute(h, "lecode.anchor.reanchor", [args()]);
      const { index: _index, ...selection } = args();
      expect(h.server.calls.at(-1)).toEqual({ method: Requests.factsCorrectSelection, params: { ...selection, text: "We greet with hello, world." } });
      expect(h.server.calls.some((c) => c.method === Requests.factsReanchor)).toBe(false);
    });
  });

  it("hides the server's Remember selection action and keeps its quick fixes", async () => {
    const h = harness();
    const remember = { title: "Remember selection as fact", kind: { value: "refactor.lecode.remember" }, command: { title: "", command: "lecode.anchor.rememberSelection" } };
    const correct = { title: "Correct fact #3…", kind: { value: "quickfix" }, command: { title: "", command: "lecode.anchor.correctSelection" } };
    const bare = { title: "Remember", command: "lecode.anchor.rememberSelection" };
    const provide = anchorMiddleware(h.deps).provideCodeActions as (...args: unknown[]) => Promise<unknown[]>;
    const next = vi.fn(async () => [remember, correct, bare]);
    expect(await provide({}, {}, {}, {}, next)).toEqual([correct]);
    expect(isRememberAction(correct as unknown as vscode.CodeAction)).toBe(false);
  });
});

describe("an anchor node of the Facts tree", () => {
  const fact: FactEntry = { factId: 3, revision: 1, status: "valid", text: "x is set first", anchors: [] };
  const click = (h: Harness, node: unknown) => factCommands(h.deps)["lecode.openFactSource"](node);

  it("opens the anchored file at the lines where they are now", async () => {
    const h = harness();
    await click(h, { kind: "anchor", fact, anchor: anchor({ status: "moved", currentStartLine: 4, currentEndLine: 5 }), folderUri: repo.toString() });
    expect(vi.mocked(api.openTextDocument).mock.calls.map(([uri]) => (uri as vscode.Uri).fsPath)).toEqual([file.fsPath]);
    expect(vi.mocked(api.showLines).mock.calls[0][1]).toEqual({ start: 3, end: 4 });
    expect(errors()).toEqual([]);
  });

  it("opens a changed anchor where its lines were and says they changed", async () => {
    const h = harness();
    await click(h, { kind: "anchor", fact, anchor: anchor({ status: "changed", currentStartLine: null, currentEndLine: null }), folderUri: repo.toString() });
    expect(vi.mocked(api.showLines).mock.calls[0][1]).toEqual({ start: 2, end: 3 });
    expect(infos()).toEqual(["src/app.py:3-4: the remembered lines changed: the fact may be out of date."]);
  });

  it("says a deleted anchor's file is gone, and refuses a path that leaves the checkout", async () => {
    const h = harness();
    vi.mocked(api.openTextDocument).mockRejectedValue(new Error("ENOENT"));
    await click(h, { kind: "anchor", fact, anchor: anchor({ status: "deleted", path: "src/gone.py" }), folderUri: repo.toString() });
    await click(h, { kind: "anchor", fact, anchor: anchor({ path: "../../etc/passwd" }), folderUri: repo.toString() });
    expect(errors()).toEqual([expect.stringMatching(/^src\/gone\.py is gone/), expect.stringMatching(/leads out of the workspace folder/)]);
    expect(vi.mocked(api.openTextDocument).mock.calls).toHaveLength(1);
  });
});
