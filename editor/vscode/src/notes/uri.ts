/**
 * URIs of memory files in the editor.
 *
 * `lecode-memory:/<store-relative file>?<workspace folder URI>`, for example
 * `lecode-memory:/notes/build.md?file%3A%2F%2F%2Fhome%2Fme%2Fproject`.
 *
 * The path is the file's store-relative name with a leading slash (so the editor shows
 * `build.md` and picks Markdown from the extension). The query is the `workspaceUri` sent with
 * each request (`Uri.query` is the decoded string); an empty query sends none, and the server
 * then uses the first workspace folder. Commands and the tree always use a project's first
 * folder, so each file of a project has one URI and the editor opens it once.
 */
import * as vscode from "vscode";

export const SCHEME = "lecode-memory";

export interface MemoryLocation {
  /** Store-relative name, e.g. `notes/build.md`; "" for the store itself. */
  file: string;
  /** The workspace folder URI the file is reached through, if any. */
  workspaceUri?: string;
}

export function memoryUri(file: string, workspaceUri?: string): vscode.Uri {
  return vscode.Uri.from({ scheme: SCHEME, path: `/${file}`, query: workspaceUri ?? "" });
}

export function parseMemoryUri(uri: vscode.Uri): MemoryLocation {
  const file = uri.path.replace(/^\/+/, "").replace(/\/+$/, "");
  return uri.query === "" ? { file } : { file, workspaceUri: uri.query };
}

/** Request params naming the workspace, or none: the server's default is the first folder. */
export function workspaceParams(workspaceUri: string | undefined): { workspaceUri?: string } {
  return workspaceUri === undefined ? {} : { workspaceUri };
}
