/**
 * The extension's settings, typed to mirror `contributes.configuration` in package.json (a test
 * compares the two).
 *
 * Everything under `lecode.memory` goes to the server with the same snake_case keys as its
 * config.toml (`lecode.memory.max_bytes` is `[memory] max_bytes`). `lecode.server` is the
 * extension's own and never leaves it: the server refuses unknown keys.
 */

export const SECTION = "lecode";

export interface ServerSettings {
  /** The command and its arguments that start lecode-ls; it must speak LSP over stdio. */
  command: string[];
}

export interface MemorySettings {
  enabled: boolean;
  max_bytes: number;
  auto_learn: boolean;
  facts_max_bytes: number;
}

export interface LecodeSettings {
  server: ServerSettings;
  memory: MemorySettings;
}

export const DEFAULTS: LecodeSettings = {
  server: { command: ["lecode-ls"] },
  memory: { enabled: true, max_bytes: 32768, auto_learn: false, facts_max_bytes: 8192 },
};

/** Inclusive bounds of the integer settings, as the server's model declares them. */
export const BOUNDS: Record<string, { minimum: number; maximum: number }> = {
  "memory.max_bytes": { minimum: 0, maximum: 1_048_576 },
  "memory.facts_max_bytes": { minimum: 0, maximum: 65_536 },
};

/** The sections sent to the server: every section of DEFAULTS except `server`. */
export const SERVER_SECTIONS = ["memory"] as const;

/** What the extension reads from `workspace.getConfiguration("lecode")` (a seam for tests). */
export interface ConfigurationLike {
  get<T>(key: string): T | undefined;
  inspect<T>(key: string):
    | { globalValue?: T; workspaceValue?: T; workspaceFolderValue?: T }
    | undefined;
}

/**
 * The server command from `lecode.server.command`, or a sentence saying what is wrong with it.
 *
 * In an untrusted workspace VS Code hides the workspace's value of this restricted setting, so a
 * cloned repository cannot choose the binary that runs.
 */
export function serverCommand(config: ConfigurationLike): { command: string[] } | { error: string } {
  const value = config.get<unknown>("server.command") ?? DEFAULTS.server.command;
  if (
    !Array.isArray(value) ||
    value.length === 0 ||
    !value.every((part): part is string => typeof part === "string") ||
    value[0].trim() === ""
  ) {
    return {
      error:
        'lecode.server.command must be a non-empty list of strings, such as ["lecode-ls"] or ' +
        '["uvx", "lecode-ls"]',
    };
  }
  return { command: value };
}

/**
 * The settings to send to the server: `{memory: {...}}` with only the keys the user set (in any
 * scope). Keys left at their default are left out, so they do not override config.toml, which the
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
