// Generated from lecode_ls/server/protocol.py by `uv run python -m lecode_ls.server.docs`.
// Do not edit: a test fails when this file and the server disagree.

export const Requests = {
  ping: "lecode/ping",
  projectInfo: "lecode/project/info",
  memoryList: "lecode/memory/list",
  memoryRead: "lecode/memory/read",
  memoryWrite: "lecode/memory/write",
  memoryEdit: "lecode/memory/edit",
  memorySearch: "lecode/memory/search",
  agentsRead: "lecode/agents/read",
} as const;

export const Notifications = {
  memoryDidChange: "lecode/memory/didChange",
} as const;

export const Commands = {
  memory: "lecode.memory",
} as const;

/** No fields. */
export interface PingParams {
}

/** An empty object. */
export interface PingResult {
}

export interface ProjectInfoParams {
  /** Any folder or file URI inside a project; default: the first workspace folder. */
  workspaceUri?: string | null;
}

export interface ProjectInfoResult {
  /** The project path: the main Git checkout root, or the folder itself outside Git. */
  projectRoot: string;
  /** The project's store name: readable name plus a short hash of the project path. */
  slug: string;
  /** The folder that holds this project's memory. */
  storePath: string;
  /** Whether `[memory] enabled` is true. */
  memoryEnabled: boolean;
}

export interface MemoryListParams {
  /** Any folder or file URI inside a project; default: the first workspace folder. */
  workspaceUri?: string | null;
}

export interface MemoryListResult {
  /** Every memory file that exists, sorted by name. */
  files: MemoryFileInfo[];
}

export interface MemoryFileInfo {
  /** Store-relative name, e.g. `notes/build.md`. */
  file: string;
  /** Size in bytes. */
  bytes: number;
  /** Last modification time (ISO 8601, UTC). */
  modified: string;
}

export interface MemoryReadParams {
  /** Any folder or file URI inside a project; default: the first workspace folder. */
  workspaceUri?: string | null;
  /** `MEMORY.md`, `scratchpad.md`, `daily/YYYY-MM-DD.md` or `notes/<name>.md`. */
  file: string;
}

export interface MemoryReadResult {
  /** The normalized store-relative name. */
  file: string;
  /** The file's text; empty when it does not exist. */
  content: string;
  /** Whether the file exists. */
  exists: boolean;
}

export interface MemoryWriteParams {
  /** Any folder or file URI inside a project; default: the first workspace folder. */
  workspaceUri?: string | null;
  /** `MEMORY.md`, `scratchpad.md`, `daily/YYYY-MM-DD.md` or `notes/<name>.md`. */
  file: string;
  /** Text to write (at most 1 MiB per request). */
  content: string;
  /** `replace` the whole file, or `append` to it (a newline is inserted if the file lacks one). */
  mode?: "replace" | "append";
}

export interface MemoryWriteResult {
  /** The normalized store-relative name. */
  file: string;
  /** Size of the file after the write. */
  bytes: number;
}

export interface MemoryEditParams {
  /** Any folder or file URI inside a project; default: the first workspace folder. */
  workspaceUri?: string | null;
  /** The memory file to edit. */
  file: string;
  /** Exact text to find (not a pattern); every occurrence is replaced. */
  search: string;
  /** Replacement text. */
  replace: string;
}

export interface MemoryEditResult {
  /** The normalized store-relative name. */
  file: string;
  /** How many occurrences were replaced (at least 1). */
  replacements: number;
}

export interface MemorySearchParams {
  /** Any folder or file URI inside a project; default: the first workspace folder. */
  workspaceUri?: string | null;
  /** A Python regular expression, matched line by line over the Markdown files only. */
  pattern: string;
}

export interface MemorySearchResult {
  /** At most 50 hits, in file order. */
  hits: SearchHit[];
  /** Whether more lines matched than were returned. */
  truncated: boolean;
}

export interface SearchHit {
  /** Store-relative name of the file. */
  file: string;
  /** 1-based line number. */
  line: number;
  /** The line (at most 500 characters). */
  text: string;
}

export interface MemoryDidChangeParams {
  /** The workspace folder URI the change was made through. */
  workspaceUri: string;
  /** The project whose memory changed: every folder of this project should refresh. */
  projectRoot: string;
  /** Store-relative names of the files that changed. */
  files: string[];
}

export interface AgentsReadParams {
  /** Any folder or file URI inside a project; default: the first workspace folder. */
  workspaceUri?: string | null;
}

export interface AgentsReadResult {
  /** AGENTS.md of the active folder (checkout-specific instructions, kept apart from memory). */
  content: string;
  /** Whether the folder has an AGENTS.md. */
  exists: boolean;
}

export interface MemoryCommandArgs {
  /** arguments[0]: the text after `/memory`, e.g. `show`, `search foo`, `log 2026-11-29`. */
  text: string;
  /** arguments[1], optional: a URI inside the project; default: the first workspace folder. */
  workspaceUri?: string | null;
}

export interface CommandOutput {
  /** What the slash command shows (plain text). The command itself returns this string. */
  output: string;
}
