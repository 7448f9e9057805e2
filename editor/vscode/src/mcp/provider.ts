/**
 * lecode's memory for VS Code's agent mode with no set-up (issue 28, item 4): the extension offers
 * `lecode-ls mcp` of the server it starts (the bundled one, or `lecode.server.command`) through
 * VS Code's MCP server definition provider API, one definition per local workspace folder
 * (`--project <folder>`), so Copilot's agent mode and other chat extensions list the memory tools.
 *
 * That API came with VS Code 1.101; the extension's engines minimum is older, and @types/vscode
 * is pinned to that minimum, so the API's shape is typed here and looked up at run time: on an
 * older VS Code `mcpApi` finds nothing and nothing is registered. `lecode.mcp.provide_to_agents`
 * (default on) turns it off; while off, the provider lists no server.
 */
import type * as vscode from "vscode";

/** The id package.json's `contributes.mcpServerDefinitionProviders` declares. */
export const MCP_PROVIDER_ID = "lecode.memory";

/** The setting, under the `lecode` section, that turns the provider off. */
export const PROVIDE_SETTING = "mcp.provide_to_agents";

/** vscode.McpStdioServerDefinition (1.101): the fields this sets. */
export interface StdioDefinition {
  label: string;
  command: string;
  args: string[];
  env: Record<string, string | number | null>;
  version?: string;
  cwd?: vscode.Uri;
}

export type StdioDefinitionClass = new (
  label: string,
  command: string,
  args?: string[],
  env?: Record<string, string | number | null>,
  version?: string,
) => StdioDefinition;

/** vscode.McpServerDefinitionProvider (1.101). */
export interface DefinitionProvider {
  readonly onDidChangeMcpServerDefinitions: vscode.Event<void>;
  provideMcpServerDefinitions(token: vscode.CancellationToken): Promise<StdioDefinition[]>;
  resolveMcpServerDefinition(definition: StdioDefinition, token: vscode.CancellationToken): Promise<StdioDefinition | undefined>;
}

/** The two names of VS Code 1.101's API this uses. */
export interface McpApi {
  registerMcpServerDefinitionProvider(id: string, provider: DefinitionProvider): vscode.Disposable;
  McpStdioServerDefinition: StdioDefinitionClass;
}

/** The MCP API of the `vscode` module, or undefined on a VS Code that lacks it (before 1.101). */
export function mcpApi(module: unknown): McpApi | undefined {
  const found = module as {
    lm?: { registerMcpServerDefinitionProvider?: unknown };
    McpStdioServerDefinition?: unknown;
  };
  const register = found.lm?.registerMcpServerDefinitionProvider;
  const Definition = found.McpStdioServerDefinition;
  if (typeof register !== "function" || typeof Definition !== "function") {
    return undefined;
  }
  return {
    registerMcpServerDefinitionProvider: (id, provider) => register.call(found.lm, id, provider) as vscode.Disposable,
    McpStdioServerDefinition: Definition as StdioDefinitionClass,
  };
}

export interface McpDeps {
  /** The workspace folders (only `file:` ones are offered: the server reads the disk). */
  folders: () => readonly { uri: vscode.Uri; name: string }[];
  /** `lecode.mcp.provide_to_agents`. */
  enabled: () => boolean;
  /** The command that starts the language server (`python -m lecode_ls`, or the setting's);
   *  undefined or a throw: no server can be offered. */
  command: () => Promise<string[] | undefined>;
  /** Called before VS Code starts a server: makes what it needs (the bundled environment's MCP
   *  SDK); a throw: the server is not started, and the reason is logged. */
  prepare: () => Promise<void>;
  /** The extension's version, given to VS Code so that it restarts the server after an update. */
  version: string;
  /** The extension host's environment: the store (LECODE_CONFIG_DIR) the language server uses. */
  env: NodeJS.ProcessEnv;
  log: (line: string) => void;
}

/** Variables passed on so that the MCP server uses the language server's store. */
const PASSED = ["LECODE_CONFIG_DIR"];

export class LecodeMcpProvider implements DefinitionProvider {
  private readonly changed: vscode.EventEmitter<void>;
  readonly onDidChangeMcpServerDefinitions: vscode.Event<void>;

  constructor(
    private readonly deps: McpDeps,
    private readonly Definition: StdioDefinitionClass,
    emitter: vscode.EventEmitter<void>,
  ) {
    this.changed = emitter;
    this.onDidChangeMcpServerDefinitions = emitter.event;
  }

  /** The folders or the setting changed: VS Code asks for the definitions again. */
  refresh(): void {
    this.changed.fire();
  }

  async provideMcpServerDefinitions(): Promise<StdioDefinition[]> {
    const folders = this.deps.folders().filter((folder) => folder.uri.scheme === "file");
    if (!this.deps.enabled() || folders.length === 0) {
      return [];
    }
    let command: string[] | undefined;
    try {
      command = await this.deps.command();
    } catch (error) {
      this.deps.log(`no MCP server for agents: ${error instanceof Error ? error.message : String(error)}`);
      return [];
    }
    if (command === undefined || command.length === 0) {
      return [];
    }
    const env: Record<string, string> = {};
    for (const name of PASSED) {
      const value = this.deps.env[name];
      if (value !== undefined && value !== "") {
        env[name] = value;
      }
    }
    return folders.map((folder) => {
      const label = folders.length === 1 ? "lecode memory" : `lecode memory (${folder.name})`;
      const args = [...command.slice(1), "mcp", "--project", folder.uri.fsPath];
      const definition = new this.Definition(label, command[0], args, env, this.deps.version);
      definition.cwd = folder.uri;
      return definition;
    });
  }

  /** Called before VS Code starts a server: one turned off meanwhile is not started, and the
   *  bundled environment gets the MCP SDK first (installed on this first use only). */
  async resolveMcpServerDefinition(definition: StdioDefinition): Promise<StdioDefinition | undefined> {
    if (!this.deps.enabled()) {
      return undefined;
    }
    try {
      await this.deps.prepare();
    } catch (error) {
      this.deps.log(`the MCP server for agents could not be set up: ${error instanceof Error ? error.message : String(error)}`);
      return undefined;
    }
    return definition;
  }
}

/**
 * Register the provider where VS Code has the API; nothing (an empty list) where it does not.
 * The disposables include the emitter; `refresh` is the provider's, or a no-op.
 */
export function registerMcpProvider(
  api: McpApi | undefined,
  deps: McpDeps,
  emitter: () => vscode.EventEmitter<void>,
): { disposables: vscode.Disposable[]; refresh: () => void } {
  if (api === undefined) {
    return { disposables: [], refresh: () => undefined };
  }
  const changed = emitter();
  const provider = new LecodeMcpProvider(deps, api.McpStdioServerDefinition, changed);
  try {
    const registration = api.registerMcpServerDefinitionProvider(MCP_PROVIDER_ID, provider);
    return { disposables: [registration, changed], refresh: () => provider.refresh() };
  } catch (error) {
    // VS Code 1.100 had this API as a proposal, whose functions throw for extensions that did
    // not enable it: there, as before 1.100, nothing is offered and the extension goes on.
    deps.log(`VS Code did not take the MCP server for agents: ${error instanceof Error ? error.message : String(error)}`);
    changed.dispose();
    return { disposables: [], refresh: () => undefined };
  }
}
