/**
 * The few VS Code API functions the extension calls, behind one module so that logic modules can
 * be tested with these functions replaced (`vi.mock("../src/common/vscodeapi")`).
 * Classes (Uri, EventEmitter, TreeItem, ...) are used from `vscode` directly.
 */
import * as vscode from "vscode";
import { type McpApi, mcpApi } from "../mcp/provider";

/** An error notification; with `items`, its buttons (the answer is the one clicked, if any). */
export function showErrorMessage(message: string, ...items: string[]): Thenable<string | undefined> {
  return vscode.window.showErrorMessage(message, ...items);
}

/** An information notification; with `items`, its buttons (the answer is the one clicked, if any). */
export function showInformationMessage(message: string, ...items: string[]): Thenable<string | undefined> {
  return vscode.window.showInformationMessage(message, ...items);
}

/** A warning; with `{ modal: true }` a dialog whose answer is the chosen item (undefined: cancelled). */
export function showWarningMessage(
  message: string,
  options: vscode.MessageOptions,
  ...items: string[]
): Thenable<string | undefined> {
  return vscode.window.showWarningMessage(message, options, ...items);
}

export function showOpenDialog(options: vscode.OpenDialogOptions): Thenable<vscode.Uri[] | undefined> {
  return vscode.window.showOpenDialog(options);
}

export function showInputBox(options: vscode.InputBoxOptions): Thenable<string | undefined> {
  return vscode.window.showInputBox(options);
}

export function showQuickPick<T extends vscode.QuickPickItem>(
  items: readonly T[],
  options: vscode.QuickPickOptions,
): Thenable<T | undefined> {
  return vscode.window.showQuickPick(items, options);
}

export function createLogOutputChannel(name: string): vscode.LogOutputChannel {
  return vscode.window.createOutputChannel(name, { log: true });
}

/** A plain output channel (no timestamps or levels), for a listing the person reads. */
export function createOutputChannel(name: string): vscode.OutputChannel {
  return vscode.window.createOutputChannel(name);
}

export function createTreeView<T>(
  id: string,
  options: vscode.TreeViewOptions<T>,
): vscode.TreeView<T> {
  return vscode.window.createTreeView(id, options);
}

export async function openDocument(uri: vscode.Uri, line?: number): Promise<void> {
  const document = await vscode.workspace.openTextDocument(uri);
  const options: vscode.TextDocumentShowOptions = {};
  if (line !== undefined) {
    const position = new vscode.Position(line, 0);
    options.selection = new vscode.Range(position, position);
  }
  await vscode.window.showTextDocument(document, options);
}

export function openTextDocument(uri: vscode.Uri): Thenable<vscode.TextDocument> {
  return vscode.workspace.openTextDocument(uri);
}

/**
 * Show an opened document with whole lines `start`..`end` (0-based, inclusive) selected and
 * scrolled into view; with no lines, just show it.
 */
export async function showLines(
  document: vscode.TextDocument,
  lines?: { start: number; end: number },
): Promise<void> {
  if (lines === undefined) {
    await vscode.window.showTextDocument(document);
    return;
  }
  const start = Math.max(Math.min(lines.start, document.lineCount - 1), 0);
  const end = Math.max(Math.min(lines.end, document.lineCount - 1), start);
  const selection = new vscode.Selection(new vscode.Position(start, 0), document.lineAt(end).range.end);
  const editor = await vscode.window.showTextDocument(document, { selection });
  editor?.revealRange(selection, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
}

export function activeDocumentUri(): vscode.Uri | undefined {
  return vscode.window.activeTextEditor?.document.uri;
}

export function activeTextEditor(): vscode.TextEditor | undefined {
  return vscode.window.activeTextEditor;
}

export function onDidChangeActiveTextEditor(
  listener: (editor: vscode.TextEditor | undefined) => unknown,
): vscode.Disposable {
  return vscode.window.onDidChangeActiveTextEditor(listener);
}

/** Set a context key that `when` clauses of package.json read. */
export function setContext(key: string, value: unknown): Thenable<unknown> {
  return vscode.commands.executeCommand("setContext", key, value);
}

export function registerCommand(
  id: string,
  callback: (...args: unknown[]) => unknown,
): vscode.Disposable {
  return vscode.commands.registerCommand(id, callback);
}

export function getConfiguration(section: string): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration(section);
}

export function onDidChangeConfiguration(
  listener: (event: vscode.ConfigurationChangeEvent) => unknown,
): vscode.Disposable {
  return vscode.workspace.onDidChangeConfiguration(listener);
}

export function workspaceFolders(): readonly vscode.WorkspaceFolder[] {
  return vscode.workspace.workspaceFolders ?? [];
}

export function onDidChangeWorkspaceFolders(listener: () => unknown): vscode.Disposable {
  return vscode.workspace.onDidChangeWorkspaceFolders(listener);
}

/** VS Code 1.101's MCP server definition API; undefined on an older VS Code. */
export function mcpServerApi(): McpApi | undefined {
  return mcpApi(vscode);
}

export function eventEmitter<T>(): vscode.EventEmitter<T> {
  return new vscode.EventEmitter<T>();
}

export function getWorkspaceFolder(uri: vscode.Uri): vscode.WorkspaceFolder | undefined {
  return vscode.workspace.getWorkspaceFolder(uri);
}

export function registerFileSystemProvider(
  scheme: string,
  provider: vscode.FileSystemProvider,
  options: { isCaseSensitive?: boolean },
): vscode.Disposable {
  return vscode.workspace.registerFileSystemProvider(scheme, provider, options);
}

export function registerTextDocumentContentProvider(
  scheme: string,
  provider: vscode.TextDocumentContentProvider,
): vscode.Disposable {
  return vscode.workspace.registerTextDocumentContentProvider(scheme, provider);
}

export function executeCommand(id: string, ...args: unknown[]): Thenable<unknown> {
  return vscode.commands.executeCommand(id, ...args);
}

/** Open an http(s) URL in the browser (after the person clicked it). */
export function openExternal(url: string): Thenable<boolean> {
  return vscode.env.openExternal(vscode.Uri.parse(url));
}

export function registerWebviewViewProvider(id: string, provider: vscode.WebviewViewProvider): vscode.Disposable {
  return vscode.window.registerWebviewViewProvider(id, provider);
}

/** A progress notification with a title, shown while `task` runs. */
export function withNotificationProgress<T>(
  title: string,
  task: (report: (message: string) => void) => Promise<T>,
): Thenable<T> {
  return vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title }, (progress) =>
    task((message) => progress.report({ message })),
  );
}

export function createStatusBarItem(id: string, name: string): vscode.StatusBarItem {
  const item = vscode.window.createStatusBarItem(id, vscode.StatusBarAlignment.Right, 100);
  item.name = name;
  return item;
}

/** Set a setting in the person's own (user) settings. */
export function updateUserSetting(section: string, key: string, value: unknown): Thenable<void> {
  return vscode.workspace.getConfiguration(section).update(key, value, vscode.ConfigurationTarget.Global);
}

export function writeClipboard(text: string): Thenable<void> {
  return vscode.env.clipboard.writeText(text);
}

/**
 * Put `text` at the cursor of the editor used last (the chat view has the focus, not it),
 * replacing its selection; false when no text editor is open.
 */
export async function insertAtCursor(text: string): Promise<boolean> {
  const editor = vscode.window.activeTextEditor ?? vscode.window.visibleTextEditors[0];
  if (editor === undefined) {
    return false;
  }
  const shown = await vscode.window.showTextDocument(editor.document, editor.viewColumn);
  return shown.edit((edit) => edit.replace(shown.selection, text));
}
