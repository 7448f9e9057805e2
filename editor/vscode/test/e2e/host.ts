/**
 * A small VS Code host for running the built extension (dist/extension.js) with the real
 * vscode-languageclient and a real lecode-ls: enough of the `vscode` API for both, backed by
 * in-memory state the test can inspect and drive. Settings defaults come from package.json.
 */
import { readFileSync } from "node:fs";
import Module, { createRequire } from "node:module";
import { URI } from "vscode-uri";
import * as stub from "../stub/vscode";

type Listener<T> = (value: T) => unknown;

const manifest = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
const DEFAULTS: Record<string, unknown> = Object.fromEntries(
  Object.entries(manifest.contributes.configuration.properties as Record<string, { default: unknown }>).map(
    ([key, schema]) => [key, schema.default],
  ),
);

/** A disposable that does nothing; the host keeps no registrations it must undo. */
const noop = (): stub.Disposable => new stub.Disposable(() => undefined);
const event = () => noop;

/**
 * Stand-ins for every other capitalized `vscode` export the bundle names (vscode-languageclient
 * extends some classes when it loads and reads enum members such as CodeActionKind.Empty when a
 * client is made): each is a class whose unknown static members read as their own names.
 */
function libraryValues(bundle: string): Record<string, unknown> {
  const names = new Set([...bundle.matchAll(/\b(?:code|vscode\d*|vscode_\d+)\.([A-Z]\w*)/g)].map((m) => m[1]));
  return Object.fromEntries(
    [...names].map((name) => [
      name,
      new Proxy(class {}, { get: (target, key) => (key in target ? Reflect.get(target, key) : String(key)) }),
    ]),
  );
}

/**
 * vscode.CodeActionKind: the language client builds the kinds a server registers (lecode-ls's
 * `refactor.lecode.remember`) by appending to `Empty`, so it must be the real thing here.
 */
class CodeActionKind {
  static readonly Empty = new CodeActionKind("");
  static readonly QuickFix = new CodeActionKind("quickfix");
  static readonly Refactor = new CodeActionKind("refactor");
  static readonly RefactorExtract = new CodeActionKind("refactor.extract");
  static readonly RefactorInline = new CodeActionKind("refactor.inline");
  static readonly RefactorMove = new CodeActionKind("refactor.move");
  static readonly RefactorRewrite = new CodeActionKind("refactor.rewrite");
  static readonly Source = new CodeActionKind("source");
  static readonly SourceOrganizeImports = new CodeActionKind("source.organizeImports");
  static readonly SourceFixAll = new CodeActionKind("source.fixAll");
  static readonly Notebook = new CodeActionKind("notebook");
  constructor(readonly value: string) {}
  append(part: string): CodeActionKind {
    return new CodeActionKind(this.value === "" ? part : `${this.value}.${part}`);
  }
  contains(other: CodeActionKind): boolean {
    return this.value === "" || other.value === this.value || other.value.startsWith(`${this.value}.`);
  }
  intersects(other: CodeActionKind): boolean {
    return this.contains(other) || other.contains(this);
  }
}

class CancellationTokenSource {
  private readonly cancelled = new stub.EventEmitter<void>();
  readonly token = { isCancellationRequested: false, onCancellationRequested: this.cancelled.event };
  cancel(): void {
    this.token.isCancellationRequested = true;
    this.cancelled.fire();
  }
  dispose(): void {
    this.cancelled.dispose();
  }
}

export interface Opened {
  uri: string;
  text: string;
  /** The first selected line, if the editor was opened with a selection. */
  line?: number;
  /** The last selected line. */
  endLine?: number;
}

/** What `workspace.openTextDocument` returns here: enough of a TextDocument for the extension. */
function textDocument(uri: URI, text: string) {
  const lines = text.split(/\r\n|\r|\n/);
  return {
    uri,
    getText: () => text,
    lineCount: lines.length,
    lineAt: (line: number) => ({
      text: lines[line],
      range: { start: new stub.Position(line, 0), end: new stub.Position(line, lines[line].length) },
    }),
  };
}

/** A webview view the host resolved: what the page was given, and both directions of messages. */
export interface ResolvedWebview {
  options: { enableScripts?: boolean; enableCommandUris?: boolean; localResourceRoots?: URI[] };
  html: string;
  /** Everything the extension posted to the page, in order. */
  posted: unknown[];
  /** Post a message as the page would. */
  receive(message: unknown): void;
  /** Resolves with the first message posted from index `since` on that satisfies `ready`. */
  postedWhen(ready: (message: unknown) => boolean, since?: number): Promise<unknown>;
}

type WebviewViewProvider = { resolveWebviewView(view: unknown, context: unknown, token: unknown): unknown };

export class FakeHost {
  readonly settings: Record<string, unknown> = {};
  readonly commands = new Map<string, (...args: unknown[]) => unknown>();
  readonly fileSystems = new Map<string, {
    readFile(uri: URI): Promise<Uint8Array>;
    writeFile(uri: URI, content: Uint8Array, options: object): Promise<void>;
    onDidChangeFile: (listener: Listener<{ type: number; uri: URI }[]>) => unknown;
  }>();
  readonly trees = new Map<string, {
    getChildren(node?: unknown): Promise<{ kind: string; text?: string; file?: string }[]>;
    getTreeItem(node: unknown): { label?: unknown; description?: unknown; command?: { command: string; arguments?: unknown[] } };
    onDidChangeTreeData: (listener: Listener<unknown>) => unknown;
  }>();
  readonly contentProviders = new Map<string, {
    provideTextDocumentContent(uri: URI, token: unknown): Promise<string> | string;
    onDidChange?: (listener: Listener<URI>) => unknown;
  }>();
  readonly webviewViews = new Map<string, WebviewViewProvider>();
  /** SecretStorage of the extension. */
  readonly secrets = new Map<string, string>();
  /** URLs the extension opened outside (env.openExternal). */
  readonly external: string[] = [];
  readonly messages: string[] = [];
  /** Fired with every message shown (see `messages`). */
  readonly messageShown = new stub.EventEmitter<string>();
  /** Titles and messages of progress notifications, in order. */
  readonly progress: string[] = [];
  readonly log: string[] = [];
  readonly opened: Opened[] = [];
  /** What the user types into the next input boxes, in order. A quick pick takes its first item. */
  readonly typed: string[] = [];
  /** The answers to the next modal questions (showWarningMessage with items), in order. */
  readonly answers: (string | undefined)[] = [];
  /** The files picked in the next open dialogs, in order. */
  readonly picked: (URI[] | undefined)[] = [];
  /** The status bar items the extension made, as they show now. */
  readonly statusBar: { id: string; text: string; tooltip: string; command: string }[] = [];
  /** What the extension put on the clipboard. */
  clipboard = "";
  /** The workspace's state (ExtensionContext.workspaceState), kept across activations. */
  readonly workspaceState = new Map<string, unknown>();
  /** Settings the extension wrote (WorkspaceConfiguration.update), in order. */
  readonly updates: [string, unknown][] = [];
  private readonly configurationChanged = new stub.EventEmitter<{ affectsConfiguration(section: string): boolean }>();

  constructor(readonly folders: { uri: URI; name: string; index: number }[]) {}

  private show(message: string): void {
    this.messages.push(message);
    this.messageShown.fire(message);
  }

  /** The first message shown (already, or from now on) that satisfies `match`. */
  messageWhen(match: (message: string) => boolean): Promise<string> {
    const seen = this.messages.find(match);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve) => {
      const subscription = this.messageShown.event((message) => {
        if (match(message)) {
          subscription.dispose();
          resolve(message);
        }
      });
    });
  }

  /** Change settings as the user would, and tell every listener. */
  changeSettings(patch: Record<string, unknown>): void {
    Object.assign(this.settings, patch);
    const keys = Object.keys(patch);
    this.configurationChanged.fire({
      affectsConfiguration: (section) => keys.some((key) => key === section || key.startsWith(`${section}.`)),
    });
  }

  private configuration(section?: string) {
    const full = (key: string) => (section ? `${section}.${key}` : key);
    const value = (key: string): unknown => {
      const name = full(key);
      if (name in this.settings) return this.settings[name];
      if (name in DEFAULTS) return DEFAULTS[name];
      // A section: the object of every key under it, as VS Code returns it.
      const prefix = `${name}.`;
      const keys = [...new Set([...Object.keys(DEFAULTS), ...Object.keys(this.settings)])].filter((k) => k.startsWith(prefix));
      if (keys.length === 0) return undefined;
      const tree: Record<string, unknown> = {};
      for (const k of keys) {
        const parts = k.slice(prefix.length).split(".");
        let node = tree;
        for (const part of parts.slice(0, -1)) node = (node[part] ??= {}) as Record<string, unknown>;
        node[parts.at(-1) as string] = k in this.settings ? this.settings[k] : DEFAULTS[k];
      }
      return tree;
    };
    return {
      get: (key: string, fallback?: unknown) => value(key) ?? fallback,
      has: (key: string) => value(key) !== undefined,
      inspect: (key: string) => ({ key: full(key), defaultValue: DEFAULTS[full(key)], globalValue: this.settings[full(key)] }),
      // The user's settings change, and every listener hears of it, as in VS Code.
      update: async (key: string, next: unknown) => {
        this.updates.push([full(key), next]);
        this.changeSettings({ [full(key)]: next });
      },
    };
  }

  /** The `vscode` module the extension and the LanguageClient see. */
  api(bundle = ""): Record<string, unknown> {
    const host = this;
    const unused = new Proxy({}, { get: () => noop });
    const channel = Object.fromEntries(
      ["trace", "debug", "info", "warn", "error", "append", "appendLine"].map((level) => [
        level,
        (message: unknown, ...rest: unknown[]) => host.log.push(`[${level}] ${String(message)} ${rest.join(" ")}`.trim()),
      ]),
    );
    Object.assign(channel, { name: "lecode", show() {}, hide() {}, clear() {}, replace() {}, dispose() {}, logLevel: 2, onDidChangeLogLevel: event() });
    const openTextDocument = async (uri: URI) => {
      const content = host.contentProviders.get(uri.scheme);
      if (content) {
        return textDocument(uri, await content.provideTextDocumentContent(uri, new CancellationTokenSource().token));
      }
      if (uri.scheme === "file") {
        return textDocument(uri, readFileSync(uri.fsPath, "utf8"));
      }
      const provider = host.fileSystems.get(uri.scheme);
      const text = provider ? new TextDecoder().decode(await provider.readFile(uri)) : "";
      return textDocument(uri, text);
    };
    return {
      ...libraryValues(bundle),
      ...stub,
      CancellationError: class extends Error {},
      CancellationTokenSource,
      CodeActionKind,
      ProgressLocation: { SourceControl: 1, Window: 10, Notification: 15 },
      StatusBarAlignment: { Left: 1, Right: 2 },
      ConfigurationTarget: { Global: 1, Workspace: 2, WorkspaceFolder: 3 },
      version: "1.91.0",
      env: {
        appName: "fake host",
        language: "en",
        clipboard: {
          writeText: async (text: string) => void (host.clipboard = text),
          readText: async () => host.clipboard,
        },
        openExternal: async (uri: URI) => {
          host.external.push(uri.toString(true));
          return true;
        },
      },
      languages: new Proxy({ match: () => 0 }, { get: (target, key) => (key in target ? target[key as "match"] : noop) }),
      commands: {
        registerCommand(id: string, run: (...args: unknown[]) => unknown) {
          if (host.commands.has(id)) throw new Error(`command '${id}' already exists`);
          host.commands.set(id, run);
          return new stub.Disposable(() => host.commands.delete(id));
        },
        executeCommand: async (id: string, ...args: unknown[]) => host.commands.get(id)?.(...args),
      },
      window: {
        createOutputChannel: () => channel,
        createStatusBarItem(id: string) {
          const item = { id, text: "", tooltip: "", command: "", name: "", show() {}, hide() {}, dispose() {} };
          host.statusBar.push(item);
          return item;
        },
        createTreeView(id: string, options: { treeDataProvider: never }) {
          host.trees.set(id, options.treeDataProvider);
          return noop();
        },
        registerWebviewViewProvider(id: string, provider: WebviewViewProvider) {
          host.webviewViews.set(id, provider);
          return noop();
        },
        showErrorMessage: async (message: string) => host.show(`error: ${message}`),
        showWarningMessage: async (message: string, ...rest: unknown[]) => {
          host.show(`warning: ${message}`);
          return rest.some((item) => typeof item === "string") ? host.answers.shift() : undefined;
        },
        showOpenDialog: async () => host.picked.shift(),
        showInformationMessage: async (message: string) => host.show(`info: ${message}`),
        showTextDocument: async (
          document: { uri: URI; getText(): string },
          options?: { selection?: { start: { line: number }; end: { line: number } } },
        ) => {
          const selection = options?.selection;
          host.opened.push({
            uri: document.uri.toString(),
            text: document.getText(),
            line: selection?.start.line,
            ...(selection && selection.end.line !== selection.start.line ? { endLine: selection.end.line } : {}),
          });
          return { document, revealRange() {} };
        },
        showInputBox: async () => host.typed.shift(),
        showQuickPick: async (items: readonly unknown[]) => items[0],
        activeTextEditor: undefined,
        visibleTextEditors: [],
        tabGroups: { all: [], onDidChangeTabs: event() },
        onDidChangeActiveTextEditor: event(),
        onDidChangeVisibleTextEditors: event(),
        // The server's work-done progress (a compaction, for one) reaches the LanguageClient's
        // ProgressPart, which listens on the token.
        // The extension's own (setting up the bundled server) is recorded in `progress`.
        withProgress: async (
          options: { title?: string },
          task: (progress: { report(value: { message?: string }): void }, token: unknown) => unknown,
        ) => {
          host.progress.push(options.title ?? "");
          return task(
            { report: (value) => void host.progress.push(value.message ?? "") },
            new CancellationTokenSource().token,
          );
        },
      },
      workspace: {
        workspaceFolders: host.folders,
        textDocuments: [],
        notebookDocuments: [],
        getWorkspaceFolder: (uri: URI) => host.folders.find((f) => uri.toString().startsWith(f.uri.toString())),
        getConfiguration: (section?: string) => host.configuration(section),
        onDidChangeConfiguration: this.configurationChanged.event,
        onDidChangeWorkspaceFolders: event(),
        registerFileSystemProvider(scheme: string, provider: never) {
          host.fileSystems.set(scheme, provider);
          return noop();
        },
        registerTextDocumentContentProvider(scheme: string, provider: never) {
          host.contentProviders.set(scheme, provider);
          return noop();
        },
        openTextDocument,
        createFileSystemWatcher: () => ({ ...unused, dispose() {} }),
        onDidOpenTextDocument: event(),
        onDidCloseTextDocument: event(),
        onDidChangeTextDocument: event(),
        onDidSaveTextDocument: event(),
        onWillSaveTextDocument: event(),
      },
    };
  }

  /**
   * The ExtensionContext activate() gets: SecretStorage backed by `secrets`, the extension's
   * version from package.json, and its global storage in `storage` (where the bundled server's
   * environment is made).
   */
  context(extensionRoot: URL, storage = "/nonexistent/lecode-global-storage"): unknown {
    const host = this;
    return {
      subscriptions: [],
      extensionUri: URI.file(extensionRoot.pathname),
      globalStorageUri: URI.file(storage),
      extension: { packageJSON: manifest },
      workspaceState: {
        get: (key: string) => host.workspaceState.get(key),
        update: async (key: string, value: unknown) => void host.workspaceState.set(key, value),
        keys: () => [...host.workspaceState.keys()],
      },
      secrets: {
        get: async (key: string) => host.secrets.get(key),
        store: async (key: string, value: string) => void host.secrets.set(key, value),
        delete: async (key: string) => void host.secrets.delete(key),
        onDidChange: event(),
      },
    };
  }

  /** Show a webview view: the provider resolves it as VS Code would when the view opens. */
  resolveWebview(id: string): ResolvedWebview {
    const provider = this.webviewViews.get(id);
    if (!provider) throw new Error(`no webview view provider for ${id}`);
    const received = new stub.EventEmitter<unknown>();
    const posted: unknown[] = [];
    let waiters: (() => void)[] = [];
    const webview = {
      options: {},
      html: "",
      cspSource: "https://webview.fake",
      asWebviewUri: (uri: URI) => uri.with({ scheme: "https", authority: "webview.fake" }),
      postMessage: async (message: unknown) => {
        // VS Code sends a copy (the message is serialized), never the extension's own objects.
        posted.push(structuredClone(message));
        const woken = waiters;
        waiters = [];
        woken.forEach((wake) => wake());
        return true;
      },
      onDidReceiveMessage: received.event,
    };
    provider.resolveWebviewView({ webview, onDidDispose: event() }, {}, new CancellationTokenSource().token);
    return {
      get options() {
        return webview.options;
      },
      get html() {
        return webview.html;
      },
      posted,
      receive: (message) => received.fire(message),
      async postedWhen(ready, since = 0) {
        for (let seen = since; ; ) {
          const found = posted.slice(seen).find(ready);
          if (found !== undefined) return found;
          seen = posted.length;
          await new Promise<void>((resolve) => waiters.push(resolve));
        }
      },
    };
  }

  /** Load the built extension with this host as its `vscode` module. */
  load(bundle: URL): { activate(context: unknown): void; deactivate(): Promise<void> } {
    const modules = Module as unknown as {
      _resolveFilename(request: string, ...rest: unknown[]): string;
    };
    const resolve = modules._resolveFilename;
    modules._resolveFilename = function (request: string, ...rest: unknown[]) {
      return request === "vscode" ? "vscode" : resolve.call(this, request, ...rest);
    };
    const require = createRequire(import.meta.url);
    require.cache.vscode = { id: "vscode", filename: "vscode", loaded: true, exports: this.api(readFileSync(bundle, "utf8")) } as never;
    delete require.cache[require.resolve(bundle.pathname)];
    return require(bundle.pathname);
  }
}
