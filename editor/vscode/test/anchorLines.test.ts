/**
 * Code anchors' lines in the extension: which lines a selection anchors (as the server reads a
 * range), the server's default wording, where an anchor's file is (its checkout root, found on a
 * real disk), which paths are refused, and a fact's drift summed up by its worst anchor.
 */
// covers issue 14 (anchors: whole lines, checkout-relative paths, drift statuses)
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as vscode from "vscode";
import {
  anchorFile,
  anchorPlace,
  checkoutRoot,
  defaultWording,
  relativeTo,
  selectedLines,
  shownLines,
  worstDrift,
} from "../src/anchors/lines";
import { anchor } from "./fakes";

const pos = (line: number, character: number) => ({ line, character });

describe("selectedLines", () => {
  it("anchors every line the selection touches", () => {
    expect(selectedLines({ start: pos(2, 4), end: pos(5, 1) })).toEqual({ start: 2, end: 5 });
  });

  it("leaves out a last line the selection ends at the start of (whole lines, as editors select them)", () => {
    expect(selectedLines({ start: pos(2, 0), end: pos(4, 0) })).toEqual({ start: 2, end: 3 });
  });

  it("keeps the one line of a selection inside it", () => {
    expect(selectedLines({ start: pos(7, 2), end: pos(7, 9) })).toEqual({ start: 7, end: 7 });
  });
});

describe("defaultWording", () => {
  it("makes one line a verified-project-fact claim, JSON-escaped", () => {
    expect(defaultWording("src/app.py", 3, ['print("hé")\t'])).toBe('src/app.py contains "print(\\"hé\\")\\t"');
  });

  it("names several lines and quotes the first, cut at 200 characters", () => {
    const long = "x".repeat(250);
    expect(defaultWording("a.ts", 10, [long, "b", "c"])).toBe(`a.ts lines 10-12: "${"x".repeat(200)}" ...`);
  });
});

describe("checkoutRoot", () => {
  let tmp: string;
  beforeAll(() => {
    tmp = realpathSync(mkdtempSync(join(tmpdir(), "lecode-anchors-")));
    mkdirSync(join(tmp, "repo", ".git"), { recursive: true });
    mkdirSync(join(tmp, "repo", "sub", "deeper"), { recursive: true });
    mkdirSync(join(tmp, "worktree"));
    writeFileSync(join(tmp, "worktree", ".git"), "gitdir: /elsewhere/.git/worktrees/w\n");
    mkdirSync(join(tmp, "plain"));
  });
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it("is the folder holding .git when a workspace folder lies inside a repository", async () => {
    const root = await checkoutRoot(vscode.Uri.file(join(tmp, "repo", "sub", "deeper")).toString());
    expect(root?.fsPath).toBe(join(tmp, "repo"));
  });

  it("is the folder itself when it holds .git, a linked worktree's file included", async () => {
    expect((await checkoutRoot(vscode.Uri.file(join(tmp, "repo")).toString()))?.fsPath).toBe(join(tmp, "repo"));
    expect((await checkoutRoot(vscode.Uri.file(join(tmp, "worktree")).toString()))?.fsPath).toBe(join(tmp, "worktree"));
  });

  it("is the workspace folder outside Git", async () => {
    const root = await checkoutRoot(vscode.Uri.file(join(tmp, "plain")).toString());
    // tmpdir() itself may lie in a repository on some machines; here it does not.
    expect(root?.fsPath).toBe(join(tmp, "plain"));
  });

  it("is undefined for a folder that is not on the local disk", async () => {
    expect(await checkoutRoot("vscode-remote://ssh-remote+box/home/me/p")).toBeUndefined();
  });
});

describe("anchor files", () => {
  const root = vscode.Uri.file("/home/me/repo");

  it("are the anchor's path under the checkout root", () => {
    expect((anchorFile(root, anchor()) as vscode.Uri).fsPath).toBe("/home/me/repo/src/app.py");
  });

  it("are the file Git says the anchor's file was renamed to, when the server followed it", () => {
    const renamed = anchor({ status: "moved", currentPath: "lib/main.py", currentStartLine: 3, currentEndLine: 3 });
    expect((anchorFile(root, renamed) as vscode.Uri).fsPath).toBe("/home/me/repo/lib/main.py");
    expect(anchorPlace(renamed)).toBe("lib/main.py:3");
    expect(anchorFile(root, anchor({ currentPath: "../out.py" }))).toEqual({ problem: expect.stringMatching(/leads out/) });
  });

  it("refuse a path that is absolute or climbs out of the checkout (the path is untrusted data)", () => {
    expect(anchorFile(root, anchor({ path: "/etc/passwd" }))).toEqual({ problem: expect.stringMatching(/not a relative path/) });
    expect(anchorFile(root, anchor({ path: "../other/x.py" }))).toEqual({ problem: expect.stringMatching(/leads out/) });
  });

  it("are named relative to the checkout, and files outside it have no such name", () => {
    expect(relativeTo(root, vscode.Uri.file("/home/me/repo/src/app.py"))).toBe("src/app.py");
    expect(relativeTo(root, vscode.Uri.file("/home/me/repository/x.py"))).toBeUndefined();
  });
});

describe("where an anchor is shown", () => {
  it("is where the lines are now when they moved, and where they were when they changed", () => {
    expect(shownLines(anchor({ status: "moved", currentStartLine: 9, currentEndLine: 10 }))).toEqual({ start: 9, end: 10 });
    expect(shownLines(anchor({ status: "changed", currentStartLine: undefined, currentEndLine: undefined }))).toEqual({ start: 3, end: 4 });
    expect(anchorPlace(anchor({ status: "moved", currentStartLine: 9, currentEndLine: 9, startLine: 3, endLine: 3 }))).toBe("src/app.py:9");
  });
});

describe("worstDrift", () => {
  it("sums up a fact by its worst anchor, and is undefined without anchors", () => {
    expect(worstDrift([anchor(), anchor({ status: "moved" })])).toBe("moved");
    expect(worstDrift([anchor({ status: "changed" }), anchor({ status: "deleted" }), anchor()])).toBe("deleted");
    expect(worstDrift([anchor({ status: "unchecked" }), anchor()])).toBe("unchecked");
    expect(worstDrift(undefined)).toBeUndefined();
    expect(worstDrift([])).toBeUndefined();
  });
});
