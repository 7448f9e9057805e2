/**
 * The one LanguageClient of this window, and its lifecycle (start, stop, restart).
 *
 * One client per window because vscode-languageclient registers every server command (such as
 * `lecode.memory`) as a VS Code command: a second client would fail with "command already
 * exists". The server handles every workspace folder itself.
 *
 * The server is the command in `lecode.server.command`, spoken to over stdio; its stderr (its log)
 * goes to the "lecode" output channel. Settings under `lecode.memory` reach the server as
 * `initializationOptions` and `workspace/didChangeConfiguration` (`{lecode: {memory: {...}}}`),
 * with only the keys the user set, so that config.toml keeps the others.
 *
 * The provider's API key (from SecretStorage) reaches the server only as an environment variable
 * of its process, named by `lecode.provider.api_key_env`: never in an LSP message, which message
 * tracing would log, and never in the log. Changing the key restarts the server.
 */
import type * as stream from "node:stream";
import * as readline from "node:readline";
import * as vscode from "vscode";
import {
  CloseAction,
  DidChangeConfigurationNotification,
  ErrorAction,
  type ErrorHandler,
  LanguageClient,
  type LanguageClientOptions,
  type Middleware,
  RevealOutputChannelOn,
  type ServerOptions,
} from "vscode-languageclient/node";
import { errorMessage } from "./errors";
import { type Logger, logServerLine } from "./logger";
import type { AnchorsDidChangeParams, ChatDeltaParams, FactsDidChangeParams, MemoryDidChangeParams } from "./protocol";
import { Notifications } from "./protocol";
import type { RequestSender } from "./requests";
import {
  type ConfigurationLike,
  SECTION,
  SERVER_SECTIONS,
  apiKeyVariable,
  serverCommand,
  settingsForServer,
} from "./settings";

/** The server's notifications this extension handles (below); `lecode/agents/didFollow` is for
 * other clients and tests. */
const HANDLED_NOTIFICATIONS = [
  Notifications.memoryDidChange,
  Notifications.chatDelta,
  Notifications.factsDidChange,
  Notifications.anchorsDidChange,
];

export const CLIENT_ID = "lecode";
export const CLIENT_NAME = "lecode";

/**
 * A LanguageClient that never pops up notifications of its own (its connection errors carry
 * stacks); it still logs them. The extension tells the user what failed, in a sentence.
 */
class QuietLanguageClient extends LanguageClient {
  override error(message: string, data?: unknown): void {
    super.error(message, data, false);
  }
}

/** What the extension needs of a LanguageClient (a seam: tests pass a fake). */
export interface ClientLike {
  start(): Promise<void>;
  dispose(timeout?: number): Promise<void>;
  sendRequest(method: string, params: unknown, token?: vscode.CancellationToken): Promise<unknown>;
  sendNotification(method: string, params: unknown): Promise<void>;
  // The library's GenericNotificationHandler, narrowed to the one params object LSP allows.
  onNotification(method: string, handler: (params: unknown) => void): vscode.Disposable;
  createDefaultErrorHandler(maxRestartCount?: number): ErrorHandler;
}

export type ClientFactory = (serverOptions: ServerOptions, clientOptions: LanguageClientOptions) => ClientLike;

export const createLanguageClient: ClientFactory = (serverOptions, clientOptions) =>
  new QuietLanguageClient(CLIENT_ID, CLIENT_NAME, serverOptions, clientOptions);

/**
 * The server command as a stdio executable, with its environment. No `--stdio` is added: it runs
 * exactly as configured.
 */
export function serverOptions(command: readonly string[], env: NodeJS.ProcessEnv): ServerOptions {
  return { command: command[0], args: command.slice(1), options: { env } };
}

/**
 * The server's environment: the extension host's, with the API key (when one is stored) under the
 * configured variable name. Without a stored key the inherited environment is left as it is, so a
 * key exported before VS Code started still works.
 */
export function serverEnvironment(
  base: NodeJS.ProcessEnv,
  variable: string | undefined,
  apiKey: string | undefined,
): NodeJS.ProcessEnv {
  const env = { ...base };
  if (variable !== undefined && apiKey !== undefined && apiKey !== "") {
    env[variable] = apiKey;
  }
  return env;
}

export interface ClientHooks {
  /** The LanguageClient being configured (for sending from middleware). */
  client(): ClientLike | undefined;
  /** The `lecode` configuration, read when settings are sent. */
  configuration(): ConfigurationLike;
  /** After the server was told about a change of workspace folders. */
  foldersChanged(): void;
  /** After the server was sent changed settings (they may turn memory on or off). */
  settingsChanged(): void;
  /** The server stopped and will not be restarted. */
  gaveUp(message: string): void;
  /** Middleware of the extension's features (anchors: see anchors/commands.ts). */
  middleware?: Middleware;
}

export function clientOptions(
  output: vscode.LogOutputChannel,
  logger: Logger,
  hooks: ClientHooks,
): LanguageClientOptions {
  const lines = (input: stream.Readable, log: (line: string) => void): void => {
    readline.createInterface({ input, crlfDelay: Infinity, terminal: false }).on("line", log);
  };
  // The library's default handler (restart up to 4 times in 3 minutes), made once per client
  // because it counts the restarts; the extension reports the final stop itself.
  let base: ErrorHandler | undefined;
  const defaults = (): ErrorHandler | undefined => (base ??= hooks.client()?.createDefaultErrorHandler());
  const errorHandler: ErrorHandler = {
    error: (error, message, count) =>
      defaults()?.error(error, message, count) ?? { action: ErrorAction.Shutdown, handled: true },
    closed: async () => {
      const result = (await defaults()?.closed()) ?? { action: CloseAction.DoNotRestart };
      if (result.action === CloseAction.DoNotRestart) {
        hooks.gaveUp(
          'lecode-ls stopped and was not restarted; the "lecode" output shows why. Run "lecode: Restart Server" to try again.',
        );
      }
      return { action: result.action, handled: true };
    },
  };
  return {
    // Every local file, whatever its language: the server checks facts anchored to code lines
    // against the open buffers (unsaved edits too) and publishes diagnostics, CodeLenses and
    // hovers for them. Memory files (lecode-memory:) and transcripts are read through custom
    // requests and are not synced.
    documentSelector: [{ scheme: "file" }],
    outputChannel: output,
    revealOutputChannelOn: RevealOutputChannelOn.Never,
    stdioOptions: {
      stdout: (input) => lines(input, (line) => logger.info(line)),
      stderr: (input) => lines(input, (line) => logServerLine(logger, line)),
    },
    // The settings, and the custom notifications the extension handles: lecode-ls sends its own
    // notifications only to a client that names them (other editors' clients warn about them).
    initializationOptions: { ...settingsForServer(hooks.configuration()), notifications: HANDLED_NOTIFICATIONS },
    // The library watches these sections; the middleware below decides what is sent.
    synchronize: { configurationSection: SERVER_SECTIONS.map((section) => `${SECTION}.${section}`) },
    errorHandler,
    middleware: {
      ...hooks.middleware,
      workspace: {
        didChangeConfiguration: async () => {
          await hooks.client()?.sendNotification(DidChangeConfigurationNotification.method, {
            settings: { [SECTION]: settingsForServer(hooks.configuration()) },
          });
          hooks.settingsChanged();
        },
        didChangeWorkspaceFolders: async (event, next) => {
          await next(event);
          hooks.foldersChanged();
        },
      },
    },
  };
}

export type ServerState =
  | { state: "stopped" }
  | { state: "starting" }
  | { state: "running" }
  | { state: "failed"; message: string };

/** The window's connection to lecode-ls: a RequestSender that outlives restarts. */
export class ServerClient implements RequestSender, vscode.Disposable {
  private client: ClientLike | undefined;
  private current: ServerState = { state: "stopped" };
  /** Starts and stops run one at a time, in order. */
  private queue: Promise<void> = Promise.resolve();
  private readonly stateChanged = new vscode.EventEmitter<ServerState>();
  private readonly memoryChanged = new vscode.EventEmitter<MemoryDidChangeParams>();
  private readonly factsChanged = new vscode.EventEmitter<FactsDidChangeParams>();
  private readonly foldersChanged = new vscode.EventEmitter<void>();
  private readonly settingsChanged = new vscode.EventEmitter<void>();
  private readonly chatDelta = new vscode.EventEmitter<ChatDeltaParams>();
  private readonly anchorsChanged = new vscode.EventEmitter<AnchorsDidChangeParams>();
  /** Fires on every change of state; `running` means requests can be sent. */
  readonly onDidChangeState = this.stateChanged.event;
  /** The server's `lecode/memory/didChange` notification. */
  readonly onMemoryDidChange = this.memoryChanged.event;
  /** The server's `lecode/facts/didChange` notification. */
  readonly onFactsDidChange = this.factsChanged.event;
  /** The server has been told about added or removed workspace folders. */
  readonly onDidChangeFolders = this.foldersChanged.event;
  /** The server has been sent changed settings. */
  readonly onDidSendSettings = this.settingsChanged.event;
  /** The server's `lecode/chat/delta` notification (a piece of a running chat turn). */
  readonly onChatDelta = this.chatDelta.event;
  /** The server's `lecode/anchors/didChange` notification (the drift of some anchors changed). */
  readonly onAnchorsDidChange = this.anchorsChanged.event;
  /** Middleware for the next client started (set before `start`). */
  middleware: Middleware = {};

  constructor(
    private readonly output: vscode.LogOutputChannel,
    private readonly logger: Logger,
    private readonly configuration: () => ConfigurationLike,
    private readonly showError: (message: string) => unknown,
    /** The stored API key, read at each start. */
    private readonly apiKey: () => PromiseLike<string | undefined>,
    private readonly factory: ClientFactory = createLanguageClient,
    /** The command of the server the extension brings (made on first use); see install/. */
    private readonly bundled?: () => Promise<string[]>,
  ) {}

  /**
   * How long a request waits for a starting server before it fails. The first start of a version
   * may set up the server's environment first, which can take a minute or two.
   */
  startTimeoutMs = 120_000;
  private disposed = false;

  get state(): ServerState {
    return this.current;
  }

  /** A sentence while the server is not running, for views that have nothing to show. */
  get notRunning(): string | undefined {
    switch (this.current.state) {
      case "running":
        return undefined;
      case "starting":
        return "Starting lecode-ls…";
      case "failed":
        return this.current.message;
      case "stopped":
        return "lecode-ls is not running";
    }
  }

  start(): Promise<void> {
    return this.enqueue(() => this.doStart());
  }

  stop(): Promise<void> {
    return this.enqueue(() => this.doStop());
  }

  restart(): Promise<void> {
    return this.enqueue(async () => {
      await this.doStop();
      await this.doStart();
    });
  }

  /**
   * Send a request once the server runs: a request made while it starts (a memory editor
   * restored on reload, a command run at start-up) waits for it, up to `startTimeoutMs`, instead
   * of failing. A server that failed to start answers at once with the reason.
   */
  sendRequest(method: string, params: unknown, signal?: AbortSignal): Promise<unknown> {
    // A running server is sent the request at once, in this turn of the event loop.
    const now = this.runningClient();
    if (now !== undefined) {
      return this.send(now, method, params, signal);
    }
    return this.ready().then((client) => {
      if (signal?.aborted === true) {
        throw new Error("cancelled before lecode-ls was running");
      }
      return this.send(client, method, params, signal);
    });
  }

  private async send(client: ClientLike, method: string, params: unknown, signal?: AbortSignal): Promise<unknown> {
    if (signal === undefined) {
      return client.sendRequest(method, params);
    }
    // Cancelling the token sends `$/cancelRequest`; the promise still waits for the answer.
    const source = new vscode.CancellationTokenSource();
    const cancel = (): void => source.cancel();
    signal.addEventListener("abort", cancel);
    if (signal.aborted) {
      cancel();
    }
    try {
      return await client.sendRequest(method, params, source.token);
    } finally {
      signal.removeEventListener("abort", cancel);
      source.dispose();
    }
  }

  /** The running client, once there is one (see sendRequest). */
  private ready(): Promise<ClientLike> {
    const now = this.runningClient();
    if (now !== undefined) {
      return Promise.resolve(now);
    }
    if (this.current.state === "failed" || this.disposed) {
      return Promise.reject(new Error(this.notRunning ?? "lecode-ls is not running"));
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        subscription.dispose();
        reject(
          new Error(
            `lecode-ls is still not running after ${Math.round(this.startTimeoutMs / 1000)} s (its first start sets up its environment, which can take a few minutes); the "lecode" output shows what it is doing.`,
          ),
        );
      }, this.startTimeoutMs);
      const subscription = this.stateChanged.event((state) => {
        const client = this.runningClient();
        if (client !== undefined || state.state === "failed" || this.disposed) {
          clearTimeout(timer);
          subscription.dispose();
          if (client !== undefined) {
            resolve(client);
          } else {
            reject(new Error(this.notRunning ?? "lecode-ls is not running"));
          }
        }
      });
    });
  }

  private runningClient(): ClientLike | undefined {
    return this.current.state === "running" ? this.client : undefined;
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    await this.stop();
    this.stateChanged.dispose();
    this.memoryChanged.dispose();
    this.factsChanged.dispose();
    this.foldersChanged.dispose();
    this.settingsChanged.dispose();
    this.chatDelta.dispose();
    this.anchorsChanged.dispose();
  }

  private enqueue(step: () => Promise<void>): Promise<void> {
    const run = this.queue.then(step);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private setState(state: ServerState): void {
    this.current = state;
    this.stateChanged.fire(state);
  }

  private async doStart(): Promise<void> {
    if (this.client !== undefined) {
      return;
    }
    this.setState({ state: "starting" });
    const command = await this.command();
    if (command === undefined) {
      return;
    }
    const hooks: ClientHooks = {
      client: () => (this.client === client ? client : undefined),
      configuration: this.configuration,
      foldersChanged: () => this.foldersChanged.fire(),
      settingsChanged: () => this.settingsChanged.fire(),
      middleware: this.middleware,
      gaveUp: (message) => {
        const stopped = this.client;
        if (stopped !== undefined && stopped === client) {
          this.client = undefined;
          void stopped.dispose().catch((error: unknown) => this.logger.warn(`disposing lecode-ls: ${errorMessage(error)}`));
          this.fail(message);
        }
      },
    };
    let client: ClientLike | undefined;
    this.logger.info(`starting lecode-ls: ${JSON.stringify(command)}`);
    const env = serverEnvironment(process.env, apiKeyVariable(this.configuration()), await this.storedKey());
    try {
      client = this.factory(serverOptions(command, env), clientOptions(this.output, this.logger, hooks));
      this.client = client;
      // The params are what protocol.ts says the server sends; nothing checks them on the way.
      client.onNotification(Notifications.memoryDidChange, (params) =>
        this.memoryChanged.fire(params as MemoryDidChangeParams),
      );
      client.onNotification(Notifications.factsDidChange, (params) =>
        this.factsChanged.fire(params as FactsDidChangeParams),
      );
      client.onNotification(Notifications.chatDelta, (params) => this.chatDelta.fire(params as ChatDeltaParams));
      client.onNotification(Notifications.anchorsDidChange, (params) =>
        this.anchorsChanged.fire(params as AnchorsDidChangeParams),
      );
      await client.start();
    } catch (error) {
      this.client = undefined;
      await client?.dispose().catch((cleanup: unknown) => this.logger.warn(`disposing lecode-ls: ${errorMessage(cleanup)}`));
      this.fail(
        `lecode-ls did not start (${errorMessage(error)}). Check the setting lecode.server.command, then run "lecode: Restart Server".`,
      );
      return;
    }
    if (this.client === client) {
      this.setState({ state: "running" });
    }
  }

  /** The command to start: the setting's, or the bundled server's; undefined after a failure. */
  private async command(): Promise<string[] | undefined> {
    const setting = serverCommand(this.configuration());
    if ("command" in setting) {
      return setting.command;
    }
    if ("error" in setting) {
      this.fail(setting.error);
      return undefined;
    }
    if (this.bundled === undefined) {
      this.fail("lecode.server.command is empty and this build brings no server: set it to a lecode-ls command.");
      return undefined;
    }
    try {
      return await this.bundled();
    } catch (error) {
      this.fail(errorMessage(error));
      return undefined;
    }
  }

  /** The stored API key; a secret store that cannot be read starts the server without one. */
  private async storedKey(): Promise<string | undefined> {
    try {
      return await this.apiKey();
    } catch (error) {
      this.logger.warn(`the API key could not be read from VS Code's secret storage: ${errorMessage(error)}`);
      return undefined;
    }
  }

  private async doStop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client !== undefined) {
      try {
        await client.dispose();
      } catch (error) {
        this.logger.warn(`stopping lecode-ls: ${errorMessage(error)}`);
      }
    }
    this.setState({ state: "stopped" });
  }

  private fail(message: string): void {
    this.logger.error(message);
    this.setState({ state: "failed", message });
    void this.showError(message);
  }
}
