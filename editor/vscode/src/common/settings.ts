/**
 * The extension's settings: `lecode.server` (the extension's own), then every section of the
 * server's config.toml, which serverSettings.ts and package.json's configuration contribution
 * are generated from (`uv run python -m lecode_ls.contract`; tests keep the three equal).
 *
 * Everything under the server's sections (`lecode.memory`, `lecode.provider`, `lecode.agent`,
 * `lecode.compaction`) goes to the server with the same snake_case keys as its config.toml
 * (`lecode.memory.max_bytes` is `[memory] max_bytes`). `lecode.server` is the extension's own and
 * never leaves it: the server refuses unknown keys. The API key is no setting at all: it lives in
 * SecretStorage (see apiKey.ts).
 */
import { SERVER_DEFAULTS, SERVER_SECTIONS, type ServerSections } from "./serverSettings";

export { BOUNDS, SERVER_SECTIONS } from "./serverSettings";

export const SECTION = "lecode";

export interface ServerSettings {
  /**
   * The command and its arguments that start lecode-ls; it must speak LSP over stdio. Empty (the
   * default): the server the extension brings (see install/environment.ts).
   */
  command: string[];
}

export interface LecodeSettings extends ServerSections {
  server: ServerSettings;
  /** The extension's own (never sent to the server: `[mcp]` is config.toml's only). */
  mcp: {
    /** Offer `lecode-ls mcp` to VS Code's agent mode (1.101+; see mcp/provider.ts). */
    provide_to_agents: boolean;
  };
}

export const DEFAULTS: LecodeSettings = {
  server: { command: [] },
  mcp: { provide_to_agents: true },
  ...SERVER_DEFAULTS,
};

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
