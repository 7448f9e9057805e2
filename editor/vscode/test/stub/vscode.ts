/**
 * A small stand-in for the `vscode` module, aliased in vitest.config.ts. VS Code itself cannot
 * run here, so tests use these classes; `Uri` is the real implementation VS Code uses
 * (the vscode-uri package). UI functions are inert; tests replace `src/common/vscodeapi.ts`.
 */
import { URI, Utils } from "vscode-uri";

/** vscode.Uri: vscode-uri's URI, with the static `joinPath` VS Code adds to it. */
export const Uri = Object.assign(URI, { joinPath: Utils.joinPath });
export type Uri = URI;

export class Disposable {
  constructor(private readonly callOnDispose: () => unknown) {}
  static from(...items: { dispose(): unknown }[]): Disposable {
    return new Disposable(() => items.forEach((item) => item.dispose()));
  }
  dispose(): void {
    this.callOnDispose();
  }
}

export class EventEmitter<T> {
  private listeners = new Set<(value: T) => unknown>();
  readonly event = (listener: (value: T) => unknown): Disposable => {
    this.listeners.add(listener);
    return new Disposable(() => this.listeners.delete(listener));
  };
  fire(value: T): void {
    for (const listener of [...this.listeners]) {
      listener(value);
    }
  }
  dispose(): void {
    this.listeners.clear();
  }
}

export class CancellationTokenSource {
  private readonly cancelled = new EventEmitter<void>();
  readonly token = { isCancellationRequested: false, onCancellationRequested: this.cancelled.event };
  cancel(): void {
    if (!this.token.isCancellationRequested) {
      this.token.isCancellationRequested = true;
      this.cancelled.fire();
    }
  }
  dispose(): void {
    this.cancelled.dispose();
  }
}

export enum TreeItemCollapsibleState {
  None = 0,
  Collapsed = 1,
  Expanded = 2,
}

export class ThemeColor {
  constructor(public readonly id: string) {}
}

export class ThemeIcon {
  constructor(
    public readonly id: string,
    public readonly color?: ThemeColor,
  ) {}
}

export class TreeItem {
  description?: string;
  tooltip?: string;
  iconPath?: ThemeIcon;
  resourceUri?: URI;
  command?: { command: string; title: string; arguments?: unknown[] };
  contextValue?: string;
  id?: string;
  constructor(
    public label: string,
    public collapsibleState: TreeItemCollapsibleState = TreeItemCollapsibleState.None,
  ) {}
}

export enum FileType {
  Unknown = 0,
  File = 1,
  Directory = 2,
  SymbolicLink = 64,
}

export enum FileChangeType {
  Changed = 1,
  Created = 2,
  Deleted = 3,
}

export class FileSystemError extends Error {
  constructor(
    message: string,
    public readonly code: string,
  ) {
    super(message);
  }
  private static make(code: string, messageOrUri?: string | URI): FileSystemError {
    const message = typeof messageOrUri === "string" ? messageOrUri : String(messageOrUri ?? code);
    return new FileSystemError(message, code);
  }
  static FileNotFound(messageOrUri?: string | URI): FileSystemError {
    return FileSystemError.make("FileNotFound", messageOrUri);
  }
  static FileExists(messageOrUri?: string | URI): FileSystemError {
    return FileSystemError.make("FileExists", messageOrUri);
  }
  static FileNotADirectory(messageOrUri?: string | URI): FileSystemError {
    return FileSystemError.make("FileNotADirectory", messageOrUri);
  }
  static FileIsADirectory(messageOrUri?: string | URI): FileSystemError {
    return FileSystemError.make("FileIsADirectory", messageOrUri);
  }
  static NoPermissions(messageOrUri?: string | URI): FileSystemError {
    return FileSystemError.make("NoPermissions", messageOrUri);
  }
  static Unavailable(messageOrUri?: string | URI): FileSystemError {
    return FileSystemError.make("Unavailable", messageOrUri);
  }
}

export class Position {
  constructor(
    public readonly line: number,
    public readonly character: number,
  ) {}
}

export class Range {
  constructor(
    public readonly start: Position,
    public readonly end: Position,
  ) {}
}

export class Selection extends Range {
  constructor(
    public readonly anchor: Position,
    public readonly active: Position,
  ) {
    super(anchor, active);
  }
}

export enum TextEditorRevealType {
  Default = 0,
  InCenter = 1,
  InCenterIfOutsideViewport = 2,
  AtTop = 3,
}

export enum ProgressLocation {
  SourceControl = 1,
  Window = 10,
  Notification = 15,
}

const inert = (): undefined => undefined;

export const window = {
  showErrorMessage: inert,
  showInformationMessage: inert,
  showWarningMessage: inert,
  showInputBox: inert,
  showQuickPick: inert,
  showOpenDialog: inert,
  createOutputChannel: inert,
  createTreeView: inert,
  registerWebviewViewProvider: () => new Disposable(inert),
  showTextDocument: inert,
  activeTextEditor: undefined,
};

export const workspace = {
  workspaceFolders: undefined,
  getConfiguration: inert,
  getWorkspaceFolder: inert,
  onDidChangeConfiguration: () => new Disposable(inert),
  registerFileSystemProvider: () => new Disposable(inert),
  registerTextDocumentContentProvider: () => new Disposable(inert),
  openTextDocument: inert,
};

export const commands = {
  registerCommand: () => new Disposable(inert),
};
