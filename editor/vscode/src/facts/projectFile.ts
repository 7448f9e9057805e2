/**
 * Verified project facts: a fact whose text is exactly `<relative path> contains "<line>"`, the
 * line JSON-escaped. Navigating one opens that file of the project's workspace folder and selects
 * the first line equal to the claimed one.
 *
 * The text is untrusted data, so the path is checked before anything is opened: only a relative
 * path that stays inside the folder is accepted (no absolute path, drive letter, URI or `..` that
 * climbs out).
 */
import * as vscode from "vscode";

const CLAIM = /^(\S+) contains (".*")$/;

export type ProjectFileClaim =
  | { ok: true; path: string; segments: string[]; line: string }
  | { ok: false; path: string; problem: string };

/** The normalized segments of a relative path, or why it is refused. */
export function relativeSegments(path: string): string[] | { problem: string } {
  if (/^[\\/]/.test(path) || /^[A-Za-z]:/.test(path) || /^[A-Za-z][\w+.-]*:\/\//.test(path)) {
    return { problem: `${path} is not a relative path; only files of the workspace folder can be opened` };
  }
  const segments: string[] = [];
  for (const segment of path.split(/[\\/]+/)) {
    if (segment === "" || segment === ".") {
      continue;
    }
    if (segment === "..") {
      if (segments.length === 0) {
        return { problem: `${path} leads out of the workspace folder; only files inside it can be opened` };
      }
      segments.pop();
      continue;
    }
    segments.push(segment);
  }
  if (segments.length === 0) {
    return { problem: `${path} does not name a file` };
  }
  return segments;
}

/**
 * The claim a fact's text makes about a project file; undefined when the text is not of the
 * form `<relative path> contains "<JSON-escaped line>"`.
 */
export function parseProjectFileFact(text: string): ProjectFileClaim | undefined {
  const match = CLAIM.exec(text);
  if (match === null) {
    return undefined;
  }
  let line: unknown;
  try {
    line = JSON.parse(match[2]);
  } catch {
    return undefined;
  }
  if (typeof line !== "string") {
    return undefined;
  }
  const path = match[1];
  const segments = relativeSegments(path);
  if (!Array.isArray(segments)) {
    return { ok: false, path, problem: segments.problem };
  }
  return { ok: true, path, segments, line };
}

/** The file a claim names, inside `folderUri`. */
export function claimUri(folderUri: string, claim: Extract<ProjectFileClaim, { ok: true }>): vscode.Uri {
  const folder = vscode.Uri.parse(folderUri);
  return folder.with({ path: `${folder.path.replace(/\/+$/, "")}/${claim.segments.join("/")}` });
}

/** The 0-based index of the first line of `text` equal to `line`; undefined when none is. */
export function findLine(text: string, line: string): number | undefined {
  const index = text.split(/\r\n|\r|\n/).indexOf(line);
  return index < 0 ? undefined : index;
}
