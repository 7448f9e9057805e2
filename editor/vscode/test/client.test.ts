/**
 * The window's LanguageClient: what it is configured with, what it sends as settings, and its
 * lifecycle (one client at a time, failures told as sentences, server notifications passed on).
 */
// covers P7 (settings reach the server; one client per window)
import { describe, expect, it, vi } from "vitest";
import type * as vscode from "vscode";
import {
  type ClientHooks,
  type ClientLike,
  ServerClient,
  type ServerState,
  clientOptions,
  serverEnvironment,
  serverOptions,
} from "../src/common/client";
import type { Logger } from "../src/common/logger";
import type { ConfigurationLike } from "../src/common/settings";

vi.mock("vscode-languageclient/node", () => ({
  LanguageClient: class {
    error(): void {}
  },
  CloseAction: { DoNotRestart: 1, Restart: 2 },
  ErrorAction: { Continue: 1, Shutdown: 2 },
  RevealOutputChannelOn: { Debug: 0, Info: 1, Warn: 2, Error: 3, Never: 4 },
  DidChangeConfigurationNotification: { method: "workspace/didChangeConfiguration" },
}));

const output = {} as vscode.LogOutputChannel;
const logger: Logger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

function configuration(user: Record<string, unknown> = {}): ConfigurationLike {
  return {
    get: <T>(key: string) => user[key] as T,
    inspect: <T>(key: string) => ({ globalValue: user[key] as T | undefined }),
  };
}

class FakeLanguageClient implements ClientLike {
  disposed = false;
  readonly notifications: [string, unknown][] = [];
  readonly handlers = new Map<string, (...params: unknown[]) => void>();
  closeAction = 2;
  constructor(
    readonly serverOptions: unknown,
    readonly options: ReturnType<typeof clientOptions>,
    private readonly startError?: Error,
  ) {}
  async start(): Promise<void> {
    if (this.startError) throw this.startError;
  }
  async dispose(): Promise<void> {
    this.disposed = true;
  }
  async sendRequest(method: string, params: unknown, token?: vscode.CancellationToken): Promise<unknown> {
    if (token === undefined) {
      return { answered: method, params };
    }
    // Like the server: the answer comes when the request is cancelled.
    return new Promise((resolve) => token.onCancellationRequested(() => resolve({ answered: method, cancelled: true })));
  }
  async sendNotification(method: string, params: unknown): Promise<void> {
    this.notifications.push([method, params]);
  }
  onNotification(method: string, handler: (...params: unknown[]) => void) {
    this.handlers.set(method, handler);
    return { dispose: () => this.handlers.delete(method) };
  }
  createDefaultErrorHandler() {
    return { error: () => ({ action: 1 }), closed: () => ({ action: this.closeAction }) };
  }
}

function harness(
  user: Record<string, unknown> = {},
  startError?: Error,
  apiKey: () => Promise<string | undefined> = async () => undefined,
  bundled?: () => Promise<string[]>,
) {
  const clients: FakeLanguageClient[] = [];
  const errors: string[] = [];
  const server = new ServerClient(
    output,
    logger,
    () => configuration(user),
    (message) => errors.push(message),
    apiKey,
    (serverOpts, options) => {
      // One client per window: the previous one must be gone before the next is made.
      expect(clients.filter((c) => !c.disposed)).toEqual([]);
      const client = new FakeLanguageClient(serverOpts, options, startError);
      clients.push(client);
      return client;
    },
    bundled,
  );
  const states: ServerState[] = [];
  server.onDidChangeState((state) => states.push(state));
  return { server, clients, errors, states };
}

describe("clientOptions", () => {
  const hooks = (client?: ClientLike, foldersChanged = () => {}, settingsChanged = () => {}): ClientHooks => ({
    client: () => client,
    configuration: () => configuration({ "memory.max_bytes": 4096, "server.command": ["lecode-ls"] }),
    foldersChanged,
    settingsChanged,
    gaveUp: () => {},
  });

  it("syncs every local file, whatever its language, and sends the settings the user set at initialize", () => {
    // covers issue 14 (open buffers, unsaved edits too, reach the server for drift)
    const options = clientOptions(output, logger, hooks());
    expect(options.documentSelector).toEqual([{ scheme: "file" }]);
    expect(options.initializationOptions).toEqual({
      memory: { max_bytes: 4096 },
      provider: {},
      agent: {},
      compaction: {},
      agents: {},
      team: {},
      // Issue 24: the server sends its notifications only to a client that asks for them.
      notifications: ["lecode/memory/didChange", "lecode/chat/delta", "lecode/facts/didChange", "lecode/anchors/didChange"],
    });
    expect(options.synchronize).toEqual({ configurationSection: ["lecode.memory", "lecode.provider", "lecode.agent", "lecode.compaction", "lecode.agents", "lecode.team"] });
  });

  it("sends settings changes as {lecode: {memory}}, never the extension's server section, then announces them", async () => {
    const client = new FakeLanguageClient(undefined, undefined as never);
    let announcedAfter: unknown[] | undefined;
    const options = clientOptions(output, logger, hooks(client, undefined, () => (announcedAfter = [...client.notifications])));
    await options.middleware?.workspace?.didChangeConfiguration?.(["lecode.memory"], async () => {});
    const sent = [["workspace/didChangeConfiguration", { settings: { lecode: { memory: { max_bytes: 4096 }, provider: {}, agent: {}, compaction: {}, agents: {}, team: {} } } }]];
    expect(client.notifications).toEqual(sent);
    expect(announcedAfter).toEqual(sent);
  });

  it("announces a folder change only after the server was told about it", async () => {
    const order: string[] = [];
    const options = clientOptions(output, logger, hooks(undefined, () => order.push("announced")));
    const event = { added: [], removed: [] };
    await options.middleware?.workspace?.didChangeWorkspaceFolders?.(event, async () => {
      order.push("server told");
    });
    expect(order).toEqual(["server told", "announced"]);
  });
});

describe("serverOptions", () => {
  it("runs the configured command as it is, over stdio, with the given environment", () => {
    expect(serverOptions(["uvx", "lecode-ls", "--log-level", "DEBUG"], { PATH: "/bin" })).toEqual({
      command: "uvx",
      args: ["lecode-ls", "--log-level", "DEBUG"],
      options: { env: { PATH: "/bin" } },
    });
  });
});

describe("ServerClient", () => {
  it("starts the configured command and then passes requests to the client", async () => {
    const { server, clients, states } = harness({ "server.command": ["uv", "run", "lecode-ls"] });
    await server.start();
    expect(clients.map((c) => c.serverOptions)).toEqual([
      { command: "uv", args: ["run", "lecode-ls"], options: { env: expect.objectContaining({ PATH: process.env.PATH }) } },
    ]);
    expect(states).toEqual([{ state: "starting" }, { state: "running" }]);
    expect(await server.sendRequest("lecode/ping", {})).toEqual({ answered: "lecode/ping", params: {} });
  });

  it("restarts by disposing the old client before making the new one", async () => {
    const { server, clients } = harness({ "server.command": ["lecode-ls"] });
    await server.start();
    await server.restart();
    expect(clients.map((c) => c.disposed)).toEqual([true, false]);
  });

  it("passes lecode/memory/didChange on to its listeners", async () => {
    const { server, clients } = harness({ "server.command": ["lecode-ls"] });
    const seen: unknown[] = [];
    server.onMemoryDidChange((params) => seen.push(params));
    await server.start();
    const params = { workspaceUri: "file:///p", projectRoot: "/p", files: ["MEMORY.md"] };
    clients[0].handlers.get("lecode/memory/didChange")?.(params);
    expect(seen).toEqual([params]);
  });

  it("passes lecode/facts/didChange on to its listeners", async () => {
    const { server, clients } = harness({ "server.command": ["lecode-ls"] });
    const seen: unknown[] = [];
    server.onFactsDidChange((params) => seen.push(params));
    await server.start();
    const params = { workspaceUri: "file:///p", projectRoot: "/p", generation: 2 };
    clients[0].handlers.get("lecode/facts/didChange")?.(params);
    expect(seen).toEqual([params]);
  });

  it("passes lecode/anchors/didChange on to its listeners", async () => {
    // covers issue 14 (the Facts tree refreshes when drift changes)
    const { server, clients } = harness({ "server.command": ["lecode-ls"] });
    const seen: unknown[] = [];
    server.onAnchorsDidChange((params) => seen.push(params));
    await server.start();
    const params = { workspaceUri: "file:///p", projectRoot: "/p", paths: ["src/app.py"] };
    clients[0].handlers.get("lecode/anchors/didChange")?.(params);
    expect(seen).toEqual([params]);
  });

  it("starts the client with the extension's middleware beside its own settings middleware", async () => {
    const { server, clients } = harness({ "server.command": ["lecode-ls"] });
    const executeCommand = vi.fn();
    server.middleware = { executeCommand };
    await server.start();
    const middleware = clients[0].options.middleware;
    expect(middleware?.executeCommand).toBe(executeCommand);
    expect(middleware?.workspace?.didChangeConfiguration).toBeTypeOf("function");
  });

  it("tells the user in a sentence when the server does not start, and refuses requests", async () => {
    const { server, errors, states } = harness({ "server.command": ["lecode-ls"] }, new Error("spawn lecode-ls ENOENT"));
    await server.start();
    expect(errors).toEqual([
      'lecode-ls did not start (spawn lecode-ls ENOENT). Check the setting lecode.server.command, then run "lecode: Restart Server".',
    ]);
    expect(states.at(-1)).toEqual({ state: "failed", message: errors[0] });
    await expect(server.sendRequest("lecode/ping", {})).rejects.toThrow(errors[0]);
  });

  it("reports a client that cannot even be made, instead of staying in starting", async () => {
    const errors: string[] = [];
    const server = new ServerClient(
      output,
      logger,
      () => configuration({ "server.command": ["lecode-ls"] }),
      (m) => errors.push(m),
      async () => undefined,
      () => {
        throw new Error("Cannot read properties of undefined (reading 'Empty')");
      },
    );
    await server.start();
    expect(server.state).toEqual({ state: "failed", message: errors[0] });
    expect(errors[0]).toMatch(/^lecode-ls did not start \(Cannot read properties/);
  });

  it("does not start an invalid command", async () => {
    const { server, clients, errors } = harness({ "server.command": [""] });
    await server.start();
    expect(clients).toEqual([]);
    expect(errors[0]).toContain("lecode.server.command must be a list of strings");
  });

  it("reports a server that crashed too often and was not restarted", async () => {
    const { server, clients, errors } = harness({ "server.command": ["lecode-ls"] });
    await server.start();
    clients[0].closeAction = 1; // the library's handler gives up: DoNotRestart
    const result = await clients[0].options.errorHandler?.closed();
    expect(result).toEqual({ action: 1, handled: true });
    expect(server.state.state).toBe("failed");
    expect(errors[0]).toContain("lecode-ls stopped and was not restarted");
  });
});

describe("the server the extension brings", () => {
  // covers P6, P7 (install and go)
  it("starts it when lecode.server.command is left empty", async () => {
    const { server, clients, states } = harness({}, undefined, undefined, async () => ["/store/server/0.1.0/bin/python", "-m", "lecode_ls"]);
    await server.start();
    expect(clients.map((c) => c.serverOptions)).toEqual([
      { command: "/store/server/0.1.0/bin/python", args: ["-m", "lecode_ls"], options: { env: expect.anything() } },
    ]);
    expect(states).toEqual([{ state: "starting" }, { state: "running" }]);
  });

  it("lets lecode.server.command override it", async () => {
    const bundled = vi.fn(async () => ["never"]);
    const { server, clients } = harness({ "server.command": ["lecode-ls"] }, undefined, undefined, bundled);
    await server.start();
    expect(bundled).not.toHaveBeenCalled();
    expect(clients.map((c) => (c.serverOptions as { command: string }).command)).toEqual(["lecode-ls"]);
  });

  it("shows the setup's one sentence when it cannot be set up", async () => {
    const sentence = "lecode needs Python 3.11 or newer, or uv, to set up its language server, and found neither on PATH. Install uv";
    const { server, clients, errors, states } = harness({}, undefined, undefined, async () => {
      throw new Error(sentence);
    });
    await server.start();
    expect(clients).toEqual([]);
    expect(errors).toEqual([sentence]);
    expect(states.at(-1)).toEqual({ state: "failed", message: sentence });
  });
});

describe("Restart Server after a failed set-up", () => {
  // issue 30, item 1: "lecode: Restart Server" recovers from any set-up error it reported.
  it("runs the set-up again and starts the server once it succeeds", async () => {
    let attempts = 0;
    const { server, clients, errors, states } = harness({}, undefined, undefined, async () => {
      attempts++;
      if (attempts === 1) {
        throw new Error("Setting up lecode-ls failed: pip exited with 1.");
      }
      return ["/store/server/0.1.0/bin/python", "-m", "lecode_ls"];
    });
    await server.start();
    expect(states.at(-1)).toEqual({ state: "failed", message: "Setting up lecode-ls failed: pip exited with 1." });
    await server.restart();
    expect(attempts).toBe(2);
    expect(clients).toHaveLength(1);
    expect(states.at(-1)).toEqual({ state: "running" });
    expect(errors).toEqual(["Setting up lecode-ls failed: pip exited with 1."]);
    expect(server.notRunning).toBeUndefined();
  });
});

describe("requests made before the server runs", () => {
  // covers P7 (a memory editor restored on reload, a command run at start-up)
  function gatedHarness(startError?: Error) {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const { server, clients, errors } = harness({}, startError, undefined, async () => {
      await gate;
      return ["python", "-m", "lecode_ls"];
    });
    return { server, clients, errors, open };
  }

  it("wait for the server and are then sent", async () => {
    const { server, open } = gatedHarness();
    const early = server.sendRequest("lecode/memory/read", { file: "MEMORY.md" });
    const starting = new Promise<void>((resolve) => server.onDidChangeState((s) => s.state === "starting" && resolve()));
    const started = server.start();
    await starting;
    open();
    await started;
    expect(await early).toEqual({ answered: "lecode/memory/read", params: { file: "MEMORY.md" } });
  });

  it("fail with the reason when the server does not start", async () => {
    const { server, errors, open } = gatedHarness(new Error("spawn python ENOENT"));
    const early = server.sendRequest("lecode/memory/read", {});
    const started = server.start();
    open();
    await started;
    await expect(early).rejects.toThrow(errors[0]);
    expect(errors[0]).toMatch(/^lecode-ls did not start \(spawn python ENOENT\)/);
  });

  it("fail after the bounded wait with a sentence when the server never comes up", async () => {
    vi.useFakeTimers();
    try {
      const { server } = gatedHarness();
      server.startTimeoutMs = 120_000;
      void server.start();
      const early = server.sendRequest("lecode/memory/read", {});
      const failed = expect(early).rejects.toThrow(
        /^lecode-ls is still not running after 120 s \(its first start sets up its environment, which can take a few minutes\); the "lecode" output shows what it is doing\.$/,
      );
      await vi.advanceTimersByTimeAsync(120_000);
      await failed;
    } finally {
      vi.useRealTimers();
    }
  });

  it("fail at once after the window closed", async () => {
    const { server } = harness({ "server.command": ["lecode-ls"] });
    await server.dispose();
    await expect(server.sendRequest("lecode/ping", {})).rejects.toThrow("lecode-ls is not running");
  });
});

describe("the API key", () => {
  const KEY = "sk-test-0123456789abcdef";

  function keyedHarness(user: Record<string, unknown>, apiKey: () => Promise<string | undefined> = async () => KEY) {
    const logged: string[] = [];
    const record = (message: string) => void logged.push(message);
    const clients: FakeLanguageClient[] = [];
    const server = new ServerClient(
      output,
      { debug: record, info: record, warn: record, error: record },
      () => configuration(user),
      () => undefined,
      apiKey,
      (serverOpts, options) => {
        const client = new FakeLanguageClient(serverOpts, options);
        clients.push(client);
        return client;
      },
    );
    return { server, clients, logged };
  }

  const envOf = (client: FakeLanguageClient) => (client.serverOptions as { options: { env: Record<string, string> } }).options.env;

  it("reaches the server only as the environment variable the settings name", async () => {
    const { server, clients, logged } = keyedHarness({ "server.command": ["lecode-ls"], "provider.api_key_env": "MY_PROVIDER_KEY" });
    await server.start();
    const env = envOf(clients[0]);
    expect(Object.entries(env).filter(([, value]) => value === KEY)).toEqual([["MY_PROVIDER_KEY", KEY]]);
    expect(env.PATH).toBe(process.env.PATH);
    // Never in an LSP message: not at initialize, not with changed settings; never in the log.
    await clients[0].options.middleware?.workspace?.didChangeConfiguration?.(["lecode.provider"], async () => {});
    expect(JSON.stringify(clients[0].options.initializationOptions)).not.toContain(KEY);
    expect(JSON.stringify(clients[0].notifications)).not.toContain(KEY);
    expect(clients[0].notifications).toHaveLength(1);
    expect(logged.join("\n")).not.toContain(KEY);
  });

  it("uses OPENAI_API_KEY when the setting is left at its default", async () => {
    const { server, clients } = keyedHarness({ "server.command": ["lecode-ls"] });
    await server.start();
    expect(envOf(clients[0]).OPENAI_API_KEY).toBe(KEY);
  });

  it.each([[""], ["NOT A NAME"], ["A=B"]])("is not handed over when the variable name is %j", async (name) => {
    const { server, clients } = keyedHarness({ "server.command": ["lecode-ls"], "provider.api_key_env": name });
    await server.start();
    expect(Object.values(envOf(clients[0]))).not.toContain(KEY);
  });

  it("starts the server without a key, and says so in the log, when the secret storage fails", async () => {
    const { server, clients, logged } = keyedHarness({ "server.command": ["lecode-ls"] }, async () => {
      throw new Error("no keyring");
    });
    await server.start();
    expect(server.state).toEqual({ state: "running" });
    expect(Object.values(envOf(clients[0]))).not.toContain(KEY);
    expect(logged).toContain("the API key could not be read from VS Code's secret storage: no keyring");
  });

  it("leaves an inherited variable alone when no key is stored", () => {
    expect(serverEnvironment({ OPENAI_API_KEY: "from-shell" }, "OPENAI_API_KEY", undefined)).toEqual({ OPENAI_API_KEY: "from-shell" });
    expect(serverEnvironment({ OPENAI_API_KEY: "from-shell" }, "OPENAI_API_KEY", "stored")).toEqual({ OPENAI_API_KEY: "stored" });
  });
});

describe("chat requests", () => {
  it("cancel through the token handed to the client when the signal aborts", async () => {
    const { server } = harness({ "server.command": ["lecode-ls"] });
    await server.start();
    const abort = new AbortController();
    const answer = server.sendRequest("lecode/chat/send", { sessionId: "s", text: "hi" }, abort.signal);
    abort.abort();
    expect(await answer).toEqual({ answered: "lecode/chat/send", cancelled: true });
  });

  it("pass lecode/chat/delta on to their listeners", async () => {
    const { server, clients } = harness({ "server.command": ["lecode-ls"] });
    const seen: unknown[] = [];
    server.onChatDelta((params) => seen.push(params));
    await server.start();
    const delta = { sessionId: "s", turnId: "t", seq: 0, kind: "text", text: "Hi" };
    clients[0].handlers.get("lecode/chat/delta")?.(delta);
    expect(seen).toEqual([delta]);
  });
});
