/**
 * The Facts view's filters: the "current file" toggle (two commands, one shown at a time by the
 * `lecode.factsOfFile` context key) that lists only the facts anchored in the active editor's
 * file, and follows the active editor (an editor that is not a local file, such as a transcript
 * the tree opened, leaves it on the last local file); and the search box (Search Facts…), which
 * lists the facts the server ranks for its words. Show All Facts ends either.
 */
import * as vscode from "vscode";
import * as api from "../common/vscodeapi";
import type { CurrentFile, FactsFilter } from "./factsTree";

/** The context key the view's toolbar reads. */
export const FILTER_CONTEXT = "lecode.factsOfFile";

/** The local file of `uri` as the filter names it; undefined for any other scheme. */
export function currentFile(uri: vscode.Uri | undefined): CurrentFile | undefined {
  if (uri === undefined || uri.scheme !== "file") {
    return undefined;
  }
  return {
    uri: uri.toString(),
    name: uri.path.split("/").pop() ?? uri.path,
    folderUri: api.getWorkspaceFolder(uri)?.uri.toString(),
  };
}

export class FactsFileFilter {
  constructor(
    private readonly tree: { readonly filter: FactsFilter; setFilter(filter: FactsFilter): void },
    /** The Facts view: its description names the filtered file. */
    private readonly view: { description?: string },
  ) {}

  /** Show only the facts of the active editor's file. */
  on(): void {
    this.show({ kind: "file", file: currentFile(api.activeDocumentUri()) });
    void api.setContext(FILTER_CONTEXT, true);
  }

  /** Show the facts that rank for `query` (the server ranks them); an empty one shows all. */
  search(query: string): void {
    if (query.trim() === "") {
      this.off();
      return;
    }
    this.show({ kind: "query", query });
    void api.setContext(FILTER_CONTEXT, true); // "Show All Facts" clears a search too
  }

  /** The query shown, if a search is on. */
  get query(): string | undefined {
    return this.tree.filter.kind === "query" ? this.tree.filter.query : undefined;
  }

  /** Show every fact again. */
  off(): void {
    this.show({ kind: "all" });
    void api.setContext(FILTER_CONTEXT, false);
  }

  /** The active editor changed: follow it while the filter is on, if it shows a local file. */
  editorChanged(uri: vscode.Uri | undefined): void {
    const file = currentFile(uri);
    if (this.tree.filter.kind === "file" && file !== undefined) {
      this.show({ kind: "file", file });
    }
  }

  private show(filter: FactsFilter): void {
    this.tree.setFilter(filter);
    this.view.description =
      filter.kind === "all" ? undefined : filter.kind === "query" ? `“${filter.query}”` : (filter.file?.name ?? "no file open");
  }
}
