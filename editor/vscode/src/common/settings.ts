/**
 * The extension's settings, typed to mirror `contributes.configuration` in package.json (a test
 * compares the two).
 *
 * Everything under `lecode.memory`, `lecode.provider` and `lecode.agent` goes to the server with
 * the same snake_case keys as its config.toml (`lecode.memory.max_bytes` is `[memory]
 * max_bytes`). `lecode.server` is the extension's own and never leaves it: the server refuses
 * unknown keys. The API key is no setting at all: it lives in SecretStorage (see apiKey.ts).
 */

export const SECTION = "lecode";

export interface ServerSettings {
  /**
   * The command and its arguments that start lecode-ls; it must speak LSP over stdio. Empty (the
   * default): the server the extension brings (see install/environment.ts).
   */
  command: string[];
}

export interface MemorySettings {
  enabled: boolean;
  max_bytes: number;
  auto_learn: boolean;
  facts_max_bytes: number;
}

export interface ProviderSettings {
  base_url: string;
  model: string;
  /** The name of the environment variable the server reads the API key from (never the key). */
  api_key_env: string;
  thinking: "low" | "medium" | "high" | null;
}

/** What the agent may do with a tool: run it, refuse it, or ask the person first. */
export type Permission = "allow" | "deny" | "ask";

export interface AgentSettings {
  context_window: number | null;
  readonly: boolean;
  /** Tool name -> permission; a whole object, not a section. */
  permissions: Record<string, Permission>;
}

export interface LecodeSettings {
  server: ServerSettings;
  memory: MemorySettings;
  provider: ProviderSettings;
  agent: AgentSettings;
}

export const DEFAULTS: LecodeSettings = {
  server: { command: [] },
  memory: { enabled: true, max_bytes: 32768, auto_learn: false, facts_max_bytes: 8192 },
  provider: { base_url: "https://api.openai.com/v1", model: "gpt-4o-mini", api_key_env: "OPENAI_API_KEY", thinking: null },
  agent: { context_window: null, readonly: false, permissions: {} },
};

/** Inclusive bounds of the integer settings, as the server's model declares them. */
export const BOUNDS: Record<string, { minimum: number; maximum: number }> = {
  "memory.max_bytes": { minimum: 0, maximum: 1_048_576 },
  "memory.facts_max_bytes": { minimum: 0, maximum: 65_536 },
  "agent.context_window": { minimum: 1024, maximum: 10_000_000 },
};

/** The sections sent to the server: every section of DEFAULTS except `server`. */
export const SERVER_SECTIONS = ["memory", "provider", "agent"] as const;

/**
 * Whether a settings change needs a new server process: its command changed, or the name of the
 * variable the API key is handed over in (the process environment is fixed at start).
 */
export function needsRestart(event: { affectsConfiguration(section: string): boolean }): boolean {
  return event.affectsConfiguration(`${SECTION}.server`) || event.affectsConfiguration(`${SECTION}.provider.api_key_env`);
}

/** What the extension reads from `workspace.getConfiguration("lecode")` (a seam for tests). */
export interface ConfigurationLike {
  get<T>(key: string): T | undefined;
  inspect<T>(key: string):
    | { globalValue?: T; workspaceValue?: T; workspaceFolderValue?: T }
    | undefined;
}

/** A command that works, for messages: lecode-ls installed as a tool from a clone. */
export const COMMAND_EXAMPLE = '["lecode-ls"] after `uv tool install .` in a clone of lecode-ls';

/**
 * The server command from `lecode.server.command`: the configured command, the bundled server
 * (the setting is empty, its default), or a sentence saying what is wrong with it.
 *
 * In an untrusted workspace VS Code hides the workspace's value of this restricted setting, so a
 * cloned repository cannot choose the binary that runs.
 */
export function serverCommand(config: ConfigurationLike): { command: string[] } | { bundled: true } | { error: string } {
  const value = config.get<unknown>("server.command") ?? DEFAULTS.server.command;
  if (Array.isArray(value) && value.length === 0) {
    return { bundled: true };
  }
  if (
    !Array.isArray(value) ||
    !value.every((part): part is string => typeof part === "string") ||
    value[0].trim() === ""
  ) {
    return {
      error:
        "lecode.server.command must be a list of strings: empty for the server the extension brings, " +
        `or a command such as ${COMMAND_EXAMPLE}`,
    };
  }
  return { command: value };
}

/**
 * The name of the environment variable that carries the API key to the server
 * (`lecode.provider.api_key_env`), or undefined when it is empty (a local server needs no key) or
 * is not a usable variable name.
 */
export function apiKeyVariable(config: ConfigurationLike): string | undefined {
  const name = config.get<unknown>("provider.api_key_env") ?? DEFAULTS.provider.api_key_env;
  return typeof name === "string" && /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? name : undefined;
}

/**
 * The settings to send to the server: `{memory: {...}, provider: {...}, agent: {...}}` with only
 * the keys the user set (in any scope). Keys left at their default are left out, so they do not override config.toml, which the
 * server reads first and the editor's settings overlay key by key.
 */
export function settingsForServer(config: ConfigurationLike): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const section of SERVER_SECTIONS) {
    const values: Record<string, unknown> = {};
    for (const key of Object.keys(DEFAULTS[section])) {
      const path = `${section}.${key}`;
      const seen = config.inspect<unknown>(path);
      const set =
        seen !== undefined &&
        (seen.globalValue !== undefined ||
          seen.workspaceValue !== undefined ||
          seen.workspaceFolderValue !== undefined);
      if (set) {
        values[key] = config.get<unknown>(path);
      }
    }
    out[section] = values;
  }
  return out;
}
