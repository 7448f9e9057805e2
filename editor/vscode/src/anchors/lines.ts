/**
 * Code anchors in the editor: which lines a selection anchors, the server's default wording of a
 * fact made from them, where an anchor's file is, and an anchor's drift in words.
 *
 * Lines cross a boundary here: LSP ranges (and VS Code's) are 0-based, an anchor's
 * `startLine`..`endLine` are 1-based and inclusive (see protocol.md, AnchorModel).
 *
 * An anchor's path is relative to its checkout root: the nearest folder at or above the
 * workspace folder that holds a `.git` entry (a directory, or a linked worktree's file), or the
 * workspace folder itself outside Git, as the server resolves it. The path is untrusted data (it
 * comes from the fact database), so it is checked before anything is opened.
 */
import { promises as fs } from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import type { AnchorModel, RangeModel } from "../common/protocol";
import { relativeSegments } from "../facts/projectFile";

/** The server anchors at most this many lines of a selection. */
export const MAX_ANCHOR_LINES = 200;
/** The server's default wording quotes at most this many characters of the first line. */
const QUOTED_CHARS = 200;

/**
 * The whole lines (0-based, inclusive) a selection anchors, as the server reads the range: from
 * the start's line to the end's, except that an end at character 0 of a later line leaves that
 * line out (a selection of whole lines, as editors make it).
 */
export function selectedLines(range: RangeModel): { start: number; end: number } {
  const start = range.start.line;
  const end = range.end.character === 0 && range.end.line > start ? range.end.line - 1 : range.end.line;
  return { start, end };
}

/** A VS Code range as the plain LSP range the server takes. */
export function lspRange(range: { start: vscode.Position; end: vscode.Position }): RangeModel {
  return {
    start: { line: range.start.line, character: range.start.character },
    end: { line: range.end.line, character: range.end.character },
  };
}

/**
 * The wording the server gives a fact made from `lines` (starting at 1-based `startLine` of the
 * checkout-relative file `rel`) when the person gives none: one line is a verified-project-fact
 * claim (`rel contains "<line>"`), several name the lines and quote the first. Mirrors
 * `default_wording` in lecode_ls/server/anchors/handlers.py (json.dumps with ensure_ascii=False).
 */
export function defaultWording(rel: string, startLine: number, lines: readonly string[]): string {
  const first = JSON.stringify((lines[0] ?? "").slice(0, QUOTED_CHARS));
  if (lines.length === 1) {
    return `${rel} contains ${first}`;
  }
  return `${rel} lines ${startLine}-${startLine + lines.length - 1}: ${first} ...`;
}

async function exists(file: string): Promise<boolean> {
  try {
    await fs.lstat(file);
    return true;
  } catch {
    return false;
  }
}

/**
 * The checkout root of a workspace folder (a `file:` URI): the nearest folder at or above it
 * that holds `.git`, else the folder itself. Undefined for a folder that is not a local file.
 */
export async function checkoutRoot(folderUri: string): Promise<vscode.Uri | undefined> {
  const folder = vscode.Uri.parse(folderUri);
  if (folder.scheme !== "file") {
    return undefined;
  }
  for (let dir = folder.fsPath; ; ) {
    if (await exists(path.join(dir, ".git"))) {
      return vscode.Uri.file(dir);
    }
    const parent = path.dirname(dir);
    if (parent === dir) {
      return folder;
    }
    dir = parent;
  }
}

/** The checkout-relative path of a file under `root`, "/"-separated; undefined outside it. */
export function relativeTo(root: vscode.Uri, file: vscode.Uri): string | undefined {
  const base = root.path.replace(/\/+$/, "");
  if (file.scheme !== root.scheme || !file.path.startsWith(`${base}/`)) {
    return undefined;
  }
  return file.path.slice(base.length + 1);
}

/** The file an anchor is shown in: the one Git says its file was renamed to, else its own. */
export function shownPath(anchor: Pick<AnchorModel, "path" | "currentPath">): string {
  return anchor.currentPath ?? anchor.path;
}

/** The file an anchor is shown in under `root`, or why it is refused (an absolute path, `..` out). */
export function anchorFile(root: vscode.Uri, anchor: Pick<AnchorModel, "path" | "currentPath">): vscode.Uri | { problem: string } {
  const segments = relativeSegments(shownPath(anchor));
  if (!Array.isArray(segments)) {
    return { problem: segments.problem };
  }
  return root.with({ path: `${root.path.replace(/\/+$/, "")}/${segments.join("/")}` });
}

/** The 1-based lines where an anchor is shown: where the lines are now, else where they were. */
export function shownLines(anchor: AnchorModel): { start: number; end: number } {
  if (anchor.currentStartLine == null) {
    return { start: anchor.startLine, end: anchor.endLine };
  }
  const start = anchor.currentStartLine;
  return { start, end: Math.max(anchor.currentEndLine ?? start + anchor.endLine - anchor.startLine, start) };
}

/** `src/app.py:3` or `src/app.py:3-5`, at the lines where the anchor is shown. */
export function anchorPlace(anchor: AnchorModel): string {
  const { start, end } = shownLines(anchor);
  return `${shownPath(anchor)}:${start === end ? start : `${start}-${end}`}`;
}

export type AnchorStatus = AnchorModel["status"];

const DRIFT: Record<AnchorStatus, string> = {
  current: "the remembered lines are where they were",
  moved: "the remembered lines moved; the anchor follows them",
  changed: "the remembered lines changed: the fact may be out of date",
  deleted: "the file is gone, or now ends before the remembered lines: the fact may be out of date",
  unchecked: "not checked (a large or non-text file, or outside the workspace)",
};

/** What a status means, in words. */
export function driftMeaning(status: AnchorStatus): string {
  return DRIFT[status] ?? "an unknown status";
}

/** Codicons per drift status, with their theme colors. */
export const DRIFT_ICONS: Record<AnchorStatus, { id: string; color?: string }> = {
  current: { id: "pass", color: "testing.iconPassed" },
  moved: { id: "arrow-swap", color: "testing.iconPassed" },
  changed: { id: "warning", color: "list.warningForeground" },
  deleted: { id: "error", color: "list.errorForeground" },
  unchecked: { id: "circle-outline" },
};

/** Worst first: the status a fact with several anchors is summed up by. */
const SEVERITY: AnchorStatus[] = ["deleted", "changed", "moved", "unchecked", "current"];

/** The worst drift among a fact's anchors; undefined when it has none. */
export function worstDrift(anchors: readonly AnchorModel[] | null | undefined): AnchorStatus | undefined {
  if (!anchors || anchors.length === 0) {
    return undefined;
  }
  return SEVERITY.find((status) => anchors.some((anchor) => anchor.status === status)) ?? anchors[0].status;
}

/** Whether a drift status means the fact may no longer be true. */
export function drifted(status: AnchorStatus | undefined): boolean {
  return status === "changed" || status === "deleted";
}
