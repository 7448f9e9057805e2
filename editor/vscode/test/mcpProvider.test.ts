/**
 * The MCP server definition provider (issue 28, item 4) against the shape of VS Code 1.101's API:
 * `vscode.lm.registerMcpServerDefinitionProvider(id, provider)` and
 * `new vscode.McpStdioServerDefinition(label, command, args, env, version)`, with `cwd` set after.
 * VS Code itself cannot run here (test/stub/vscode.ts); the fake below records what VS Code would
 * be given.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import * as vscode from "vscode";
import {
  type DefinitionProvider,
  LecodeMcpProvider,
  MCP_PROVIDER_ID,
  type McpDeps,
  type StdioDefinition,
  mcpApi,
  registerMcpProvider,
} from "../src/mcp/provider";

/** vscode.McpStdioServerDefinition as 1.101 declares it. */
class StdioServerDefinition implements StdioDefinition {
  cwd?: vscode.Uri;
  constructor(
    readonly label: string,
    public command: string,
    public args: string[] = [],
    public env: Record<string, string | number | null> = {},
    public version?: string,
  ) {}
}

const token = new vscode.CancellationTokenSource().token;

function fakeVscode() {
  const registered: { id: string; provider: DefinitionProvider }[] = [];
  const module = {
    lm: {
      registerMcpServerDefinitionProvider(id: string, provider: DefinitionProvider) {
        registered.push({ id, provider });
        return new vscode.Disposable(() => registered.splice(0));
      },
    },
    McpStdioServerDefinition: StdioServerDefinition,
  };
  return { module, registered };
}

function deps(overrides: Partial<McpDeps> = {}): McpDeps {
  return {
    folders: () => [{ uri: vscode.Uri.file("/home/me/app"), name: "app" }],
    enabled: () => true,
    command: async () => ["/store/server/0.1.0/bin/python", "-m", "lecode_ls"],
    prepare: async () => undefined,
    version: "0.1.0",
    env: { LECODE_CONFIG_DIR: "/store/lecode", OPENAI_API_KEY: "sk-secret", HOME: "/home/me" },
    log: () => undefined,
    ...overrides,
  };
}

describe("the MCP server definition provider", () => {
  it("is contributed in package.json under the id it registers, activating the extension", () => {
    const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
    expect(manifest.contributes.mcpServerDefinitionProviders).toEqual([{ id: MCP_PROVIDER_ID, label: "lecode memory" }]);
    expect(manifest.activationEvents).toContain(`onMcpCollection:${MCP_PROVIDER_ID}`);
    expect(manifest.contributes.configuration.properties["lecode.mcp.provide_to_agents"]).toMatchObject({ type: "boolean", default: true });
  });

  it("registers nothing on a VS Code without the API (before 1.101, as code-server 4.100.3)", () => {
    expect(mcpApi({})).toBeUndefined();
    expect(mcpApi({ lm: {} })).toBeUndefined();
    expect(mcpApi({ lm: { registerMcpServerDefinitionProvider: () => undefined } })).toBeUndefined(); // no class
    const result = registerMcpProvider(mcpApi({ lm: {} }), deps(), () => new vscode.EventEmitter<void>());
    expect(result.disposables).toEqual([]);
    result.refresh(); // harmless
  });

  it("goes on with nothing registered when VS Code refuses the registration (1.100's proposed API throws)", () => {
    const logged: string[] = [];
    const module = {
      lm: {
        registerMcpServerDefinitionProvider() {
          throw new Error("Extension 'lecode.lecode' CANNOT use API proposal: mcpConfigurationProvider.");
        },
      },
      McpStdioServerDefinition: StdioServerDefinition,
    };
    const result = registerMcpProvider(mcpApi(module), deps({ log: (l) => logged.push(l) }), () => new vscode.EventEmitter<void>());
    expect(result.disposables).toEqual([]);
    expect(logged).toEqual(["VS Code did not take the MCP server for agents: Extension 'lecode.lecode' CANNOT use API proposal: mcpConfigurationProvider."]);
  });

  it("offers `lecode-ls mcp --project <folder>` of the server command, with the store's variable only", async () => {
    const { module, registered } = fakeVscode();
    const result = registerMcpProvider(mcpApi(module), deps(), () => new vscode.EventEmitter<void>());
    expect(registered.map((r) => r.id)).toEqual([MCP_PROVIDER_ID]);
    const [definition] = await registered[0].provider.provideMcpServerDefinitions(token);
    expect(definition).toBeInstanceOf(StdioServerDefinition);
    expect(definition).toMatchObject({
      label: "lecode memory",
      command: "/store/server/0.1.0/bin/python",
      args: ["-m", "lecode_ls", "mcp", "--project", vscode.Uri.file("/home/me/app").fsPath],
      env: { LECODE_CONFIG_DIR: "/store/lecode" }, // never the API key or the rest
      version: "0.1.0",
    });
    expect(definition.cwd?.toString()).toBe("file:///home/me/app");
    expect(await registered[0].provider.resolveMcpServerDefinition(definition, token)).toBe(definition);
    for (const disposable of result.disposables) {
      disposable.dispose();
    }
    expect(registered).toEqual([]);
  });

  it("offers one server per local folder, named by folder, and none for a remote or virtual folder", async () => {
    const provider = new LecodeMcpProvider(
      deps({
        folders: () => [
          { uri: vscode.Uri.file("/a/web"), name: "web" },
          { uri: vscode.Uri.parse("vscode-vfs://github/me/repo"), name: "repo" },
          { uri: vscode.Uri.file("/a/api"), name: "api" },
        ],
        command: async () => ["lecode-ls"],
        env: {},
      }),
      StdioServerDefinition,
      new vscode.EventEmitter<void>(),
    );
    const definitions = await provider.provideMcpServerDefinitions();
    expect(definitions.map((d) => [d.label, d.command, d.args, d.env])).toEqual([
      ["lecode memory (web)", "lecode-ls", ["mcp", "--project", vscode.Uri.file("/a/web").fsPath], {}],
      ["lecode memory (api)", "lecode-ls", ["mcp", "--project", vscode.Uri.file("/a/api").fsPath], {}],
    ]);
  });

  it("offers nothing when lecode.mcp.provide_to_agents is off, without making the server", async () => {
    let asked = 0;
    let enabled = false;
    const changed = new vscode.EventEmitter<void>();
    const provider = new LecodeMcpProvider(
      deps({ enabled: () => enabled, command: async () => (asked++, ["lecode-ls"]) }),
      StdioServerDefinition,
      changed,
    );
    let told = 0;
    provider.onDidChangeMcpServerDefinitions(() => told++);
    expect(await provider.provideMcpServerDefinitions()).toEqual([]);
    expect(asked).toBe(0);
    enabled = true;
    provider.refresh();
    expect(told).toBe(1);
    const [definition] = await provider.provideMcpServerDefinitions();
    enabled = false; // turned off between listing and starting: not started
    expect(await provider.resolveMcpServerDefinition(definition)).toBeUndefined();
  });

  it("prepares the server (the bundled environment's MCP SDK) before VS Code starts it, and does not start one that failed", async () => {
    let prepared = 0;
    const logged: string[] = [];
    let fail = false;
    const provider = new LecodeMcpProvider(
      deps({
        prepare: async () => {
          prepared++;
          if (fail) throw new Error("Setting up lecode-ls failed: pip exited with 1.");
        },
        log: (l) => logged.push(l),
      }),
      StdioServerDefinition,
      new vscode.EventEmitter<void>(),
    );
    const [definition] = await provider.provideMcpServerDefinitions();
    expect(prepared).toBe(0); // listing makes nothing
    expect(await provider.resolveMcpServerDefinition(definition)).toBe(definition);
    expect(prepared).toBe(1);
    fail = true;
    expect(await provider.resolveMcpServerDefinition(definition)).toBeUndefined();
    expect(logged).toEqual(["the MCP server for agents could not be set up: Setting up lecode-ls failed: pip exited with 1."]);
  });

  it("offers nothing, and logs why, when no server command can be had", async () => {
    const logged: string[] = [];
    const failing = new LecodeMcpProvider(
      deps({ command: async () => Promise.reject(new Error("no uv or Python 3.11+ found")), log: (l) => logged.push(l) }),
      StdioServerDefinition,
      new vscode.EventEmitter<void>(),
    );
    expect(await failing.provideMcpServerDefinitions()).toEqual([]);
    expect(logged).toEqual(["no MCP server for agents: no uv or Python 3.11+ found"]);
    const invalid = new LecodeMcpProvider(deps({ command: async () => undefined }), StdioServerDefinition, new vscode.EventEmitter<void>());
    expect(await invalid.provideMcpServerDefinitions()).toEqual([]);
  });
});
