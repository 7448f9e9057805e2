/**
 * The `lecode-memory` file system: memory files opened in ordinary editors, read and written
 * only through the server, so every save is the server's atomic replace with its `.bak` copy.
 *
 * readFile uses `lecode/memory/read`; stat uses `lecode/memory/list` (size and modification time,
 * which VS Code compares to notice changes); writeFile uses `lecode/memory/write` in `replace`
 * mode. A valid name whose file does not exist yet stats as an empty file and reads as "", so it
 * opens as an empty document and is created by the first save. Deleting and renaming are refused.
 */
import * as vscode from "vscode";
import { serverErrorCode, errorMessage } from "../common/errors";
import type { MemoryDidChangeParams } from "../common/protocol";
import { Requests } from "../common/protocol";
import { type RequestSender, request } from "../common/requests";
import { fileKind } from "./names";
import { parseMemoryUri, workspaceParams } from "./uri";

/** The folders that make up a store, for stat and readDirectory. */
const FOLDERS = new Set(["", "daily", "notes"]);

/** Looks up which project a workspace folder belongs to (the ProjectIndex in VS Code). */
export interface ProjectLookup {
  projectOfFolder(folderUri: string): { projectRoot: string } | undefined;
}

function toFileSystemError(error: unknown): vscode.FileSystemError {
  const message = errorMessage(error);
  switch (serverErrorCode(error)) {
    case "not_found":
    case "invalid_name":
      return vscode.FileSystemError.FileNotFound(message);
    case "symlink_refused":
    case "outside_workspace":
      return vscode.FileSystemError.NoPermissions(message);
    default:
      // memory_disabled, store_error, internal_error, a stopped server: VS Code shows the
      // message in its "could not open/save <file>" notification.
      return vscode.FileSystemError.Unavailable(message);
  }
}

export class MemoryFileSystem implements vscode.FileSystemProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.changed.event;
  /** Every URI the editor has asked about, by string: the ones to report changes for. */
  private readonly seen = new Map<string, vscode.Uri>();

  constructor(
    private readonly sender: RequestSender,
    private readonly projects: ProjectLookup,
  ) {}

  watch(): vscode.Disposable {
    // Changes arrive as lecode/memory/didChange for the whole store; see handleDidChange.
    return new vscode.Disposable(() => undefined);
  }

  async stat(uri: vscode.Uri): Promise<vscode.FileStat> {
    const { file, workspaceUri } = parseMemoryUri(uri);
    if (FOLDERS.has(file)) {
      return { type: vscode.FileType.Directory, ctime: 0, mtime: 0, size: 0 };
    }
    if (fileKind(file) === undefined) {
      throw vscode.FileSystemError.FileNotFound(uri);
    }
    this.seen.set(uri.toString(), uri);
    const listing = await this.call(() =>
      request(this.sender, Requests.memoryList, workspaceParams(workspaceUri)),
    );
    const info = listing.files.find((entry) => entry.file === file.normalize("NFC"));
    if (info === undefined) {
      return { type: vscode.FileType.File, ctime: 0, mtime: 0, size: 0 };
    }
    const mtime = Date.parse(info.modified);
    return { type: vscode.FileType.File, ctime: mtime, mtime, size: info.bytes };
  }

  async readDirectory(uri: vscode.Uri): Promise<[string, vscode.FileType][]> {
    const { file: folder, workspaceUri } = parseMemoryUri(uri);
    if (!FOLDERS.has(folder)) {
      throw vscode.FileSystemError.FileNotADirectory(uri);
    }
    const listing = await this.call(() =>
      request(this.sender, Requests.memoryList, workspaceParams(workspaceUri)),
    );
    const entries = new Map<string, vscode.FileType>();
    const prefix = folder === "" ? "" : `${folder}/`;
    for (const { file } of listing.files) {
      if (!file.startsWith(prefix)) {
        continue;
      }
      const [head, ...rest] = file.slice(prefix.length).split("/");
      entries.set(head, rest.length > 0 ? vscode.FileType.Directory : vscode.FileType.File);
    }
    return [...entries];
  }

  async readFile(uri: vscode.Uri): Promise<Uint8Array> {
    const { file, workspaceUri } = parseMemoryUri(uri);
    this.seen.set(uri.toString(), uri);
    const result = await this.call(() =>
      request(this.sender, Requests.memoryRead, { ...workspaceParams(workspaceUri), file }),
    );
    return new TextEncoder().encode(result.content);
  }

  async writeFile(uri: vscode.Uri, content: Uint8Array): Promise<void> {
    const { file, workspaceUri } = parseMemoryUri(uri);
    let text: string;
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(content);
    } catch {
      throw vscode.FileSystemError.NoPermissions("lecode memory files are UTF-8 text; save with UTF-8 encoding");
    }
    this.seen.set(uri.toString(), uri);
    await this.call(() =>
      request(this.sender, Requests.memoryWrite, {
        ...workspaceParams(workspaceUri),
        file,
        content: text,
        mode: "replace",
      }),
    );
  }

  createDirectory(uri: vscode.Uri): void {
    if (!FOLDERS.has(parseMemoryUri(uri).file)) {
      throw vscode.FileSystemError.NoPermissions("lecode memory has only the daily/ and notes/ folders");
    }
  }

  delete(): void {
    throw vscode.FileSystemError.NoPermissions("lecode memory files cannot be deleted from the editor");
  }

  rename(): void {
    throw vscode.FileSystemError.NoPermissions("lecode memory files cannot be renamed from the editor");
  }

  /**
   * Report a server change to every URI of the changed files that the editor knows. A URI
   * matches when its folder belongs to the changed project, or is the folder the change was
   * made through (a folder the project index does not know yet). A URI without a folder means
   * "the first folder" and is always reported: a needless event only makes VS Code stat again.
   */
  handleDidChange(params: MemoryDidChangeParams): void {
    const files = new Set(params.files);
    const events: vscode.FileChangeEvent[] = [];
    for (const uri of this.seen.values()) {
      const { file, workspaceUri } = parseMemoryUri(uri);
      if (!files.has(file.normalize("NFC"))) {
        continue;
      }
      const sameProject =
        workspaceUri === undefined ||
        workspaceUri === params.workspaceUri ||
        this.projects.projectOfFolder(workspaceUri)?.projectRoot === params.projectRoot;
      if (sameProject) {
        events.push({ type: vscode.FileChangeType.Changed, uri });
      }
    }
    if (events.length > 0) {
      this.changed.fire(events);
    }
  }

  dispose(): void {
    this.changed.dispose();
  }

  private async call<T>(send: () => Promise<T>): Promise<T> {
    try {
      return await send();
    } catch (error) {
      throw toFileSystemError(error);
    }
  }
}
