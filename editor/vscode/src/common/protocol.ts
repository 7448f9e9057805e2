// Generated from lecode_ls/server/protocol.py by `uv run python -m lecode_ls.contract`.
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
  sessionList: "lecode/session/list",
  sessionImport: "lecode/session/import",
  sessionRead: "lecode/session/read",
  sessionSnapshot: "lecode/session/snapshot",
  sessionNew: "lecode/session/new",
  sessionRename: "lecode/session/rename",
  sessionUndo: "lecode/session/undo",
  sessionRedo: "lecode/session/redo",
  sessionClear: "lecode/session/clear",
  sessionDelete: "lecode/session/delete",
  chatSend: "lecode/chat/send",
  sessionCompact: "lecode/session/compact",
  chatHistory: "lecode/chat/history",
  command: "lecode/command",
  providerInfo: "lecode/provider/info",
  factsList: "lecode/facts/list",
  factsGet: "lecode/facts/get",
  factsDismissProposal: "lecode/facts/dismissProposal",
  factsAcceptProposal: "lecode/facts/acceptProposal",
  factsRemember: "lecode/facts/remember",
  factsRecall: "lecode/facts/recall",
  factsCorrect: "lecode/facts/correct",
  factsForget: "lecode/facts/forget",
  factsPin: "lecode/facts/pin",
  factsUnpin: "lecode/facts/unpin",
  factsRetire: "lecode/facts/retire",
  factsRestore: "lecode/facts/restore",
  memoryDoctor: "lecode/memory/doctor",
  factsRememberSelection: "lecode/facts/rememberSelection",
  factsCorrectSelection: "lecode/facts/correctSelection",
  factsReanchor: "lecode/facts/reanchor",
  memoryScanSecrets: "lecode/memory/scanSecrets",
  memoryScrubSecrets: "lecode/memory/scrubSecrets",
  factsShare: "lecode/facts/share",
  factsUnshare: "lecode/facts/unshare",
  factsTeam: "lecode/facts/team",
  factsTeamRecall: "lecode/facts/teamRecall",
  factsTeamCorrect: "lecode/facts/teamCorrect",
  factsTeamForget: "lecode/facts/teamForget",
} as const;

export const Notifications = {
  memoryDidChange: "lecode/memory/didChange",
  agentsDidFollow: "lecode/agents/didFollow",
  chatDelta: "lecode/chat/delta",
  factsDidChange: "lecode/facts/didChange",
  anchorsDidChange: "lecode/anchors/didChange",
} as const;

export const Commands = {
  memory: "lecode.memory",
  anchorRememberSelection: "lecode.anchor.rememberSelection",
  anchorCorrectSelection: "lecode.anchor.correctSelection",
  anchorReanchor: "lecode.anchor.reanchor",
  anchorForget: "lecode.anchor.forget",
  anchorShow: "lecode.anchor.show",
  factsAcceptProposal: "lecode.facts.acceptProposal",
  factsRetire: "lecode.facts.retire",
  factsRestore: "lecode.facts.restore",
  sessionDelete: "lecode.session.delete",
  answer: "lecode.answer",
  memoryScanSecrets: "lecode.memory.scanSecrets",
  memoryScrubSecrets: "lecode.memory.scrubSecrets",
  factsShare: "lecode.facts.share",
  factsUnshare: "lecode.facts.unshare",
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
  /** While `[agents] follow` names an agent: what following their transcripts has done for this project since the server started. */
  following?: FollowingStatus | null;
}

export interface FollowingStatus {
  /** The agents followed (`claude-code`, `codex`). */
  agents: string[];
  /** Polls of their transcripts completed (one about every 2 s). */
  polls: number;
  /** Records those polls appended to this project's sessions. */
  appended: number;
  /** When the last poll ended (ISO 8601 UTC). */
  lastPoll: string | null;
  /** Followed sessions compacted once idle (`[agents] learn_after_idle_seconds`), learning after each as after a chat's. */
  compactions: number;
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
  /** A regular expression in RE2 syntax (Python's `re` syntax without lookaround or backreferences), matched line by line over the Markdown files only. Matching takes linear time; a pattern that would compile past 8 MiB, or whose nested repeats expand past 1000 copies, is refused with `invalid_pattern` naming why. */
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
  /** The files `[agent] instruction_files` names in the folder, in the order the chat's system prompt takes them after AGENTS.md (empty when the setting is). */
  instructions: InstructionFile[];
  /** Why a glob brought in fewer files than it matches (the bounds on a glob). */
  notes: string[];
}

export interface InstructionFile {
  /** Relative to the active folder, with "/" separators. */
  path: string;
  /** What the chat's system prompt takes of it (empty when refused). */
  content: string;
  /** Whether it was cut: AGENTS.md and the instruction files share 256 KiB. */
  truncated: boolean;
  /** Why it was not read: a link leading outside the folder, not a regular file, over the size budget, or unreadable. */
  refused?: string | null;
}

export interface SessionListParams {
  /** Any folder or file URI inside a project; default: the first workspace folder. */
  workspaceUri?: string | null;
}

export interface SessionListResult {
  /** Every session of the project, oldest first. */
  sessions: SessionInfoModel[];
}

export interface SessionInfoModel {
  /** The exact session ID. */
  sessionId: string;
  /** The session's title (may be empty). */
  title: string;
  /** Creation time (ISO 8601, UTC). */
  created: string;
  /** Number of records, the header included (the next seq). */
  records: number;
  /** The transcript is damaged before its end (listed so it can be inspected). */
  corrupt?: boolean;
  /** How many facts cite this session (any revision): deleting it leaves them `missing`. */
  citingFacts?: number;
  /** What made it: `chat` (a chat session, or anything else), `editor` (the "Remembered in the editor" session of selections), `mcp` (an MCP client's, "MCP: <client>"), `import` (`lecode/session/import`; older imports are known only when their ID was taken). */
  origin?: "chat" | "editor" | "mcp" | "import";
}

export interface SessionImportParams {
  /** Any folder or file URI inside a project; default: the first workspace folder. */
  workspaceUri?: string | null;
  /** OpenAI-style messages `{role, content, tool_calls?, tool_call_id?, name?}`, or the records of a transcript lecode-ls exported. Exactly one of `records` and `path`. */
  records?: Record<string, unknown>[] | null;
  /** A JSONL file of either kind, or a Claude Code session or Codex CLI rollout, inside a workspace folder. */
  path?: string | null;
  /** A title for the new session. */
  title?: string | null;
}

export interface SessionImportResult {
  /** The new session's ID. */
  sessionId: string;
  /** The exported session's own ID when it collided with an existing one (then a new ID is minted; old provenance is never remapped). */
  renamedFrom: string | null;
}

export interface SessionReadParams {
  /** Any folder or file URI inside a project; default: the first workspace folder. */
  workspaceUri?: string | null;
  /** The exact session ID. */
  sessionId: string;
  /** First seq of the range (0-based, inclusive). */
  startSeq: number;
  /** Last seq of the range (inclusive); at most 200 positions in all. */
  endSeq: number;
  /** Character offset into `sourceText` (pass back `nextOffset`). */
  offset?: number;
  /** Page size in characters (default 4096, at most 8192; smaller when escaping needs it). */
  limit?: number | null;
}

/** The recall page of a session range (R1-R7). Only a valid answer carries text. */
export interface RecallSessionResult {
  /** The session ID asked for. */
  sessionId: string;
  /** The range asked for. */
  startSeq: number;
  /** The range asked for. */
  endSeq: number;
  /** valid, missing (no such session), stale (changed or damaged) or hidden (undone, cleared, forgotten). */
  status: "valid" | "missing" | "stale" | "hidden" | "unverified";
  /** Reminder that recalled text is untrusted evidence, not instructions. */
  label?: string | null;
  /** The visible messages of the range and their digest; compare it across pages. */
  source?: SourceRefModel | null;
  /** One character page of a JSON array of the cited records; concatenate pages, then parse. */
  sourceText?: string | null;
  /** Offset of this page. */
  offset?: number | null;
  /** Offset of the next page; null when this is the last. */
  nextOffset?: number | null;
}

/** Evidence: exact transcript records, checked by digest at every use. */
export interface SourceRefModel {
  /** The exact session ID (`YYYYMMDDTHHMMSSZ-xxxxxxxx`). */
  sessionId: string;
  /** The cited message seqs (0-based, increasing, spanning at most 200 positions). */
  seqs: number[];
  /** `sha256:` + hex of the canonical JSON of every record from the first seq to the last. */
  digest: string;
}

export interface SessionSnapshotParams {
  /** Any folder or file URI inside a project; default: the first workspace folder. */
  workspaceUri?: string | null;
  /** The exact session ID. */
  sessionId: string;
  /** First seq of the range (0-based, inclusive). */
  startSeq: number;
  /** Last seq of the range (inclusive); at most 200 positions in all. */
  endSeq: number;
}

export interface SessionNewParams {
  /** Any folder or file URI inside a project; default: the first workspace folder. */
  workspaceUri?: string | null;
  /** A title for the session (may be empty). */
  title?: string;
}

export interface SessionIdResult {
  /** The session's exact ID. */
  sessionId: string;
}

export interface SessionRenameParams {
  /** Any folder or file URI inside a project; default: the first workspace folder. */
  workspaceUri?: string | null;
  /** The exact session ID. */
  sessionId: string;
  /** The new title; empty gives back the title the session began with. */
  title: string;
}

export interface SessionRenameResult {
  /** The title now, as `lecode/session/list` shows it (unseen characters made spaces). */
  title: string;
}

export interface SessionParams {
  /** Any folder or file URI inside a project; default: the first workspace folder. */
  workspaceUri?: string | null;
  /** The exact session ID. */
  sessionId: string;
}

export interface SessionSeqsResult {
  /** The seqs the undo hid, or the redo restored. */
  seqs: number[];
}

export interface SessionClearResult {
  /** The seq of the clear event: working context and session recall start after it. */
  seq: number;
}

export interface SessionDeleteResult {
  /** How many facts cited the deleted session: they are `missing` now (orphaned, not purged). */
  citingFacts: number;
}

/** After each poll of the followed agents' transcripts (`[agents] follow`), and after each compaction of a followed session: what following has done for the project so far. */
export interface AgentsDidFollowParams {
  /** The workspace folder URI of the project. */
  workspaceUri: string;
  projectRoot: string;
  /** Polls completed (one about every 2 s). */
  polls: number;
  /** Records those polls appended to this project's sessions, in all. */
  appended: number;
  /** Followed sessions compacted once idle, in all. */
  compactions: number;
}

export interface ChatSendParams {
  /** Any folder or file URI inside a project; default: the first workspace folder. */
  workspaceUri?: string | null;
  /** The exact session ID (from `lecode/session/new` or `lecode/session/list`). */
  sessionId: string;
  /** The person's message. `/memory ...` and `/compact` lines are commands: their output is the turn's text (`/memory` makes no model call). */
  text: string;
}

export interface ChatSendResult {
  /** The turn's ID (also on every delta of the turn). */
  turnId: string;
  /** Why the turn ended: `stop` (the model finished), `length` (the model hit its output limit), `contentFilter`, `cancelled` (`$/cancelRequest`), `paused` (the next request cannot fit the model's window even after compaction; a `paused` delta says why), `error` (the provider failed; an `error` delta says why: after an HTTP 5xx, `provider_rejects_history` names the seq of the record the provider refuses), `toolLimit` (the model kept calling tools past the limit of 24 rounds, or asked for the very same calls 3 rounds in a row: an `error` delta with code `tool_limit` says which and that tools were stopped, and one last request without tools still gives the answer). An answer whose tool call was cut off halfway (`truncated_tool_call` delta) is kept as text, the call never run nor replayed, and the turn also ends with one last request without tools. */
  stopReason: "stop" | "length" | "contentFilter" | "cancelled" | "paused" | "error" | "toolLimit";
  /** The turn's usage, every provider call counted once. */
  usage: UsageModel;
}

/** Tokens as providers reported them. Calls without reported usage are counted in `unknownUsageCalls`, never as zero: the token counts are known subtotals (C10). */
export interface UsageModel {
  /** Provider requests made. */
  calls: number;
  /** Prompt tokens of the calls that reported usage. */
  promptTokens: number;
  /** Completion tokens of the calls that reported usage. */
  completionTokens: number;
  /** Total tokens of the calls that reported usage. */
  totalTokens: number;
  /** Calls whose usage the provider did not report. */
  unknownUsageCalls: number;
  /** Prompt tokens the provider served from its prompt cache, of the calls that reported it (`usage.prompt_tokens_details.cached_tokens`, llama-server's `timings.cache_n`); absent when none did. */
  cachedTokens?: number | null;
  /** Prompt tokens the provider evaluated anew, of the calls that reported it (llama-server's `timings.prompt_n`); absent when none did. */
  evaluatedTokens?: number | null;
}

/** One piece of a running turn. Fields beyond the first four depend on `kind`: `text`: text; `toolCall`: callId, name, arguments; `toolResult`: callId, name, output, isError; `memory`: facts, notes; `usage`: usage (null when the provider reported none); `error`: message, code; `compaction`: status (`started`, then `compacted`, `nothing`, `rejected`, `failed` or `stale`), message; `paused`: message; `learning`: status (automatic learning after a compaction: `no_candidates`, `rejected`, `learned`, `proposed`, `failed`, `stale`), facts (the facts learned). */
export interface ChatDeltaParams {
  /** `text`: the next piece of the assistant's answer (Markdown). */
  text?: string | null;
  /** `toolCall`, `toolResult`: the tool call's ID. */
  callId?: string | null;
  /** `toolCall`, `toolResult`: the tool's name. */
  name?: string | null;
  /** `toolCall`: the arguments as the model wrote them (JSON text). */
  arguments?: string | null;
  /** `toolResult`: what the tool returned to the model (untrusted data). */
  output?: string | null;
  /** `toolResult`: the tool failed or was refused. */
  isError?: boolean | null;
  /** `memory`: the facts injected into this model request. */
  facts?: InjectedFactModel[] | null;
  /** `memory`: the memory files injected (`MEMORY.md`, `scratchpad.md`). */
  notes?: string[] | null;
  /** `memory`: the memory files cut to their share of `[memory] max_bytes` (absent when none was): nothing is cut silently. */
  cut?: NoteCutModel[] | null;
  /** `compaction`, `learning`: how it went. */
  status?: string | null;
  /** `error`, `paused`, `compaction`: what happened, for the person. */
  message?: string | null;
  /** `error`: a stable machine code (as in error responses' `data.code`). */
  code?: string | null;
  /** The session the turn belongs to. */
  sessionId: string;
  /** The turn (as returned by `lecode/chat/send`). */
  turnId: string;
  /** 0, 1, 2... within the turn: apply deltas in this order. */
  seq: number;
  /** What this delta carries. */
  kind: "text" | "toolCall" | "toolResult" | "memory" | "usage" | "error" | "compaction" | "paused" | "learning";
  /** `usage`: this provider call's usage (`calls` is 1); null when it reported none. */
  usage?: UsageModel | null;
}

export interface InjectedFactModel {
  /** The fact's ID. */
  factId: number;
  /** The revision that was injected. */
  revision: number;
  /** Why it was chosen: `pinned`, `anchored in <path>` (a file open or read), `matched: <words>` (its words that the turn's message, earlier messages or files' paths hold) or `recent` (recently shown to a model, learned or corrected). Untrusted text (a person's words, a path). Absent in transcripts from before lecode-ls recorded it. */
  reason?: string | null;
}

export interface NoteCutModel {
  /** `MEMORY.md` or `scratchpad.md`. */
  file: string;
  /** The file's size (UTF-8 bytes of its text). */
  bytes: number;
  /** How many of those bytes the request showed (the rest was cut, marked for the model). */
  shown: number;
}

export interface SessionCompactResult {
  /** `compacted` (a new working summary), `nothing` (no complete exchange can be covered while four messages stay raw), `rejected` (the model's summary was empty, truncated, too long, called tools, or lost what the new exchanges added: the cutoff did not move), `failed` (the provider failed), `stale` (the session or a forget changed it meanwhile; the summary was discarded). */
  status: "compacted" | "nothing" | "rejected" | "failed" | "stale";
  /** Why, for anything but `compacted`; for `rejected`, a code: `tool_calls`, `truncated`, `incomplete` (an end other than stop or length), `empty`, `oversized`, `echoed_input` (an inert-data tag line, or more than half of the new transcript copied), `unchanged_summary` (the previous summary returned while new exchanges exist), `other_language` (in another language than the session and holding none of its terms: not a summary of it; a faithful summary is kept whatever its language), `injected_instructions` (an instruction to the assistant that is not in its input), `new_terms_lost` (none of the new exchanges' identifiers, paths, versions and convention words kept) or, for automatic compaction only, `given_up` followed by a sentence for the person (3 summaries of this session were rejected since its last accepted one: no call is made until this request, which always tries, is accepted). */
  message?: string | null;
  /** The last seq the working summary now covers (0: none). */
  coveredThrough: number;
  /** The summarisation call's usage (calls 0 when none was made). */
  usage: UsageModel;
}

export interface ChatHistoryParams {
  /** Any folder or file URI inside a project; default: the first workspace folder. */
  workspaceUri?: string | null;
  /** The exact session ID. */
  sessionId: string;
  /** At most this many items, the most recent ones (1-1000; default 200). */
  limit?: number;
}

export interface ChatHistoryResult {
  /** The most recent visible items, oldest first (undone and cleared records are left out). */
  items: ChatHistoryItem[];
  /** Older items exist that were left out. */
  truncated: boolean;
  /** The session's usage total: every provider call it ever made (chat, compaction, learning; rejected, discarded and undone ones included), each counted once (C10). */
  usage: UsageModel;
}

/** A visible transcript record in the shape of a delta, so a chat view renders history and live turns alike. `kind` is a delta kind, or `user` for the person's message. */
export interface ChatHistoryItem {
  /** `text`: the next piece of the assistant's answer (Markdown). */
  text?: string | null;
  /** `toolCall`, `toolResult`: the tool call's ID. */
  callId?: string | null;
  /** `toolCall`, `toolResult`: the tool's name. */
  name?: string | null;
  /** `toolCall`: the arguments as the model wrote them (JSON text). */
  arguments?: string | null;
  /** `toolResult`: what the tool returned to the model (untrusted data). */
  output?: string | null;
  /** `toolResult`: the tool failed or was refused. */
  isError?: boolean | null;
  /** `memory`: the facts injected into this model request. */
  facts?: InjectedFactModel[] | null;
  /** `memory`: the memory files injected (`MEMORY.md`, `scratchpad.md`). */
  notes?: string[] | null;
  /** `memory`: the memory files cut to their share of `[memory] max_bytes` (absent when none was): nothing is cut silently. */
  cut?: NoteCutModel[] | null;
  /** `compaction`, `learning`: how it went. */
  status?: string | null;
  /** `error`, `paused`, `compaction`: what happened, for the person. */
  message?: string | null;
  /** `error`: a stable machine code (as in error responses' `data.code`). */
  code?: string | null;
  /** The record's seq in the transcript. */
  seq: number;
  /** The turn that wrote it (absent for imported records). */
  turnId?: string | null;
  /** `user`: text; `text` (an assistant message): text; `toolCall`: callId, name, arguments; `toolResult`: callId, name, output, isError; `memory`: facts, notes; `error`: message, code; `cancelled`: the turn was stopped; `compaction`: status `compacted` (a working summary was written here); `paused`: message. */
  kind: "user" | "text" | "toolCall" | "toolResult" | "memory" | "error" | "cancelled" | "compaction" | "paused";
}

export interface CommandParams {
  /** Any folder or file URI inside a project; default: the first workspace folder. */
  workspaceUri?: string | null;
  /** The chat session the line was typed in, if any. */
  sessionId?: string | null;
  /** A `/memory ...` or `/compact` line, exactly as typed. */
  line: string;
}

export interface CommandResult {
  /** The command's answer: plain text, often in columns or JSON (show it preformatted). */
  output: string;
}

/** No fields: the provider is one per server, whatever the folder. */
export interface ProviderInfoParams {
}

/** The chat provider as the server's settings (config.toml, then the editor's) name it. */
export interface ProviderInfoResult {
  /** Whether `[provider] base_url` is set. Without it chat and compaction answer `provider_not_configured` and nothing is sent anywhere. */
  configured: boolean;
  /** The base URL, without any user name or password it holds; null when unset. */
  baseUrl: string | null;
  /** The model chat asks for (`[provider] model`). */
  model: string;
  /** The environment variable the API key is read from; empty for none. */
  apiKeyEnv: string;
  /** Whether that variable holds a key in the server's environment (the key is never sent). */
  apiKeySet: boolean;
}

export interface FactsListParams {
  /** Any folder or file URI inside a project; default: the first workspace folder. */
  workspaceUri?: string | null;
  /** Index of the first fact of the page (pass back `nextOffset`). */
  offset?: number;
  /** Report that session's latest automatic learning (default: the newest sessions'). */
  sessionId?: string | null;
  /** Only the facts anchored in this file: a `file://` URI inside a workspace folder, or a path relative to its checkout root as anchors store it. Paging runs over those facts. */
  path?: string | null;
  /** The facts that best match these words, best first (BM25 over every fact's current text; identifiers split, English stemmed, any script), each with the words it `matched`: at most 200 in all, paged as usual. Any text: its search syntax is words (the first 16,384 characters are read). With `path`, only the matching facts anchored in that file. */
  query?: string | null;
}

export interface FactsListResult {
  /** At most 20 facts, in ID order (with `query`: best first); the page with its `learning` status is within 16,384 bytes. */
  facts: FactEntry[];
  /** Offset of this page. */
  offset: number;
  /** Offset of the next page; null when this is the last. */
  nextOffset: number | null;
  /** The latest automatic learning attempt, when there is one: of `sessionId` when given, else of the newest sessions. */
  learning?: LearningModel | null;
  /** The first page of a listing without `query` or `path`: the facts proposed for retirement (unused for `[memory] retire_after_days`; not retired, not pinned), the longest unused first, at most 50. Nothing is retired until the person says so. */
  retirements?: RetirementModel[] | null;
}

/** One code anchor of a fact's current revision and its drift now. */
export interface AnchorModel {
  /** Its position among the revision's anchors (0-based; `lecode/facts/reanchor` takes it). */
  index: number;
  /** The file, relative to its checkout root, "/"-separated. */
  path: string;
  /** First anchored line as captured (1-based, inclusive). */
  startLine: number;
  /** Last anchored line as captured (1-based, inclusive). */
  endLine: number;
  /** `sha256:` + hex of the lines' text joined with `\n` (line endings dropped). */
  sha256: string;
  /** The commit checked out when captured; null outside Git. */
  commit: string | null;
  /** When it was captured (ISO 8601, UTC). */
  capturedAt: string;
  /** current (same lines in place), moved (found elsewhere: followed), changed (not in the file), deleted (file gone, or it ends before the lines), unchecked (file over 1 MiB, not text, outside the workspace, or past 200 anchors in the file). */
  status: "current" | "moved" | "changed" | "deleted" | "unchecked";
  /** The file Git says `path` was renamed to (`git mv`, or a commit since the capture), where the anchor was checked and is shown: the lines are then `moved` or `changed`; absent when the file was not renamed or Git cannot tell (a plain move, or no `git` on PATH). */
  currentPath?: string | null;
  /** Where the lines are now (1-based): the captured place when current, the new one when moved; absent otherwise. */
  currentStartLine?: number | null;
  /** Last line of where they are now. */
  currentEndLine?: number | null;
  /** The editor's open buffer (unsaved edits count) or the file on disk; absent when unchecked. */
  checkedAgainst?: "buffer" | "disk" | null;
}

export interface FactEntry {
  /** The fact's ID. */
  factId: number;
  /** Its current revision. */
  revision: number;
  /** Whether its current evidence validates now (`retired`: it does, and it is retired). */
  status: "valid" | "retired" | "missing" | "stale" | "hidden" | "unverified";
  /** Its evidence (valid facts only). */
  source?: SourceRefModel | null;
  /** Its text, at most 512 characters (valid facts only; untrusted data). */
  text?: string | null;
  /** The file it is shared in, in the first folder's checkout; absent when not shared. */
  shared?: SharedModel | null;
  /** Whether `text` was cut at 512 characters. */
  factTextTruncated?: boolean | null;
  /** The current revision's code anchors and their drift now; absent when it has none. */
  anchors?: AnchorModel[] | null;
  /** true when the person pinned it (injected first); absent otherwise. */
  pinned?: boolean | null;
  /** With `query`: the query's words it holds, as the query spelled them (valid facts). */
  matched?: string[] | null;
  /** When it was last used (ISO 8601 UTC): shown to a model in a turn, recalled by ID, or returned by a query; absent when never. */
  lastUsed?: string | null;
  /** How many times it was used (a turn counts once); absent when never. */
  uses?: number | null;
}

export interface LearnedFactModel {
  /** The fact's ID. */
  factId: number;
  /** Its revision when it was learned (an equal existing fact is returned unchanged). */
  revision: number;
}

/** The latest automatic learning attempt. */
export interface LearningModel {
  /** The session it ran in. */
  sessionId: string;
  /** Its `learning` event's seq (a proposal is named by this seq and its index). */
  seq: number;
  /** How it went. */
  status: "no_candidates" | "rejected" | "learned" | "proposed" | "failed" | "stale";
  /** Per fixed reason code, how many candidates (or responses) failed that check first. Beyond the seed's codes, the rules' verdicts on a sentence that reads like a convention but is not a lasting one of the person's own (issue 41): `one_off_request` (a request or a question), `hypothetical`, `past_practice`, `observation` (what happens, not what is done by choice: "we always forget to ..."), `task_scoped` ("this PR", "here", "the fix", "to reproduce ..."), `no_lasting_scope` (nothing project-, team- or habit-wide), `retracted_preference` (taken back later in its message) and `unsupported_script` (not in Latin script: the rules read English only). */
  reasonCounts: Partial<Record<string, number>>;
  /** The facts it remembered. */
  learned: LearnedFactModel[];
  /** Candidates left for review that still validate (same epoch, source valid now): what the rules alone found (with `[memory] rules_learn = "propose"`, the default), the ones the model marked uncertain or conflicting, worded as a correction, or preferences whose quote reads as a request or a question. Accept one with `lecode/facts/acceptProposal`. */
  proposals: ProposalModel[];
  /** Valid proposals left out to keep this status within 8,192 bytes: accept or dismiss the ones shown to see them. */
  omittedProposals?: number;
}

export interface ProposalModel {
  /** Its index in its learning event (what `lecode/facts/dismissProposal` takes). */
  index: number;
  /** The proposed fact (untrusted: the model's classification, source-checked). */
  text: string;
  /** What kind of evidence backs it. */
  kind: "explicit_user_preference" | "verified_project_fact";
  /** Its captured evidence, valid now (accept it with `lecode/facts/remember`). */
  source: SourceRefModel;
  /** Existing facts it would contradict or correct, at their current revision (resolve with `lecode/facts/correct`). */
  conflicts: LearnedFactModel[];
  /** Why it is a proposal and not a fact: `near-duplicate of #n` (its words nearly repeat that fact's: a proposed correction of it), `supersedes #n` (the model said so), `worded as a correction`, `reads as a request: "<quote>"`, `the model was not sure` (at most 200 characters). */
  why: string;
}

export interface RetirementModel {
  /** The fact proposed for retirement (accept with `lecode/facts/retire`; dismiss with `lecode/facts/restore`, which keeps it and starts its unused clock again). */
  factId: number;
  /** Why it is proposed: `unused since <date>` or `never used since <date>`. */
  why: string;
  /** Its last use, write or keep (ISO 8601 UTC). */
  since: string;
}

/** A fact shared with the team (`lecode/facts/share`): which file, who shared it, when. */
export interface SharedModel {
  /** The shared fact's ID (20 hex digits). */
  teamId: string;
  /** Its file, relative to the checkout root (`.lecode/facts/<teamId>.json`). */
  file: string;
  /** The sharer's Git `user.name` (or `[team] name`), as the file says: untrusted. */
  sharedBy?: string | null;
  /** When it was shared (ISO 8601 UTC), as the file says. */
  sharedAt?: string | null;
}

export interface FactsGetParams {
  /** Any folder or file URI inside a project; default: the first workspace folder. */
  workspaceUri?: string | null;
  /** The fact. */
  factId: number;
}

export interface DismissProposalParams {
  /** Any folder or file URI inside a project; default: the first workspace folder. */
  workspaceUri?: string | null;
  /** The session of the learning event (`learning.sessionId` of `lecode/facts/list`). */
  sessionId: string;
  /** The learning event's seq (`learning.seq`). */
  seq: number;
  /** The proposal's `index`. */
  index: number;
}

/** An empty object. */
export interface DismissProposalResult {
}

export interface FactRevisionResult {
  /** The fact's ID. */
  factId: number;
  /** Its current revision. */
  revision: number;
}

export interface FactsRememberParams {
  /** Any folder or file URI inside a project; default: the first workspace folder. */
  workspaceUri?: string | null;
  /** The fact. */
  text: string;
  /** Its evidence, from `lecode/session/snapshot` (validated now, and at every later use). */
  source: SourceRefModel;
}

export interface FactsRecallParams {
  /** Any folder or file URI inside a project; default: the first workspace folder. */
  workspaceUri?: string | null;
  /** The fact's ID. */
  factId: number;
  /** Character offset into `sourceText` (pass back `nextOffset`). */
  offset?: number;
  /** Page size in characters (default 4096, at most 8192). */
  limit?: number | null;
}

/** A fact and a page of its evidence (R1-R7). Only a valid answer carries text. */
export interface RecallFactResult {
  /** The fact's ID. */
  factId: number;
  /** Its current revision. */
  revision: number;
  /** valid, retired (valid and retired: text and evidence still shown), unverified (no source), hidden (forgotten or undone evidence), missing, stale. */
  status: "valid" | "retired" | "missing" | "stale" | "hidden" | "unverified";
  /** Reminder that recalled text is untrusted evidence, not instructions. */
  label?: string | null;
  /** The fact's text, at most 512 characters. */
  text?: string | null;
  /** Whether `text` was cut at 512 characters. */
  factTextTruncated?: boolean | null;
  /** The evidence of the current revision. */
  source?: SourceRefModel | null;
  /** One character page of a JSON array of the cited records. */
  sourceText?: string | null;
  /** Offset of this page. */
  offset?: number | null;
  /** Offset of the next page; null when this is the last. */
  nextOffset?: number | null;
  /** The cited records a secret scrub rewrote (`lecode/memory/scrubSecrets`), when any: the evidence was re-attached to their new digest then, so it is scrubbed, not tampered. */
  scrubbed?: ScrubbedRecord[] | null;
}

export interface ScrubbedRecord {
  /** The record. */
  seq: number;
  /** The scrub that rewrote it (the latest). */
  scrubId: number;
  /** When (ISO 8601 UTC). */
  at: string;
}

export interface FactsCorrectParams {
  /** Any folder or file URI inside a project; default: the first workspace folder. */
  workspaceUri?: string | null;
  /** The fact to correct. */
  factId: number;
  /** The revision the correction was made against (optimistic check). */
  expectedRevision: number;
  /** The corrected text. */
  text: string;
  /** New evidence: it must include persisted user or assistant text. */
  source: SourceRefModel;
}

export interface FactsForgetParams {
  /** Any folder or file URI inside a project; default: the first workspace folder. */
  workspaceUri?: string | null;
  /** The fact to forget, with all its revisions and the evidence they cite. */
  factId: number;
  /** true: change nothing, only answer which other facts the forget would hide (`hides`), for the confirmation an editor shows first. */
  dryRun?: boolean;
}

export interface FactsForgetResult {
  /** true the first time; false when the fact was already forgotten, and with `dryRun`. */
  forgotten: boolean;
  /** The other facts whose current evidence cites a position this forget excludes: they are hidden from recall and injection from now on (with `dryRun`: would be). */
  hides?: number[];
}

export interface FactsPinParams {
  /** Any folder or file URI inside a project; default: the first workspace folder. */
  workspaceUri?: string | null;
  /** The fact to pin or unpin. */
  factId: number;
}

export interface FactsPinResult {
  /** The fact. */
  factId: number;
  /** Whether it is pinned now. */
  pinned: boolean;
  /** false when it already was (pin) or was not (unpin). */
  changed: boolean;
}

export interface FactsRetireResult {
  /** The fact. */
  factId: number;
  /** Whether it is retired now. */
  retired: boolean;
  /** false when it already was (retire) or was not (restore). */
  changed: boolean;
}

/** Only the workspace folder (optional). */
export interface DoctorParams {
  /** Any folder or file URI inside a project; default: the first workspace folder. */
  workspaceUri?: string | null;
}

export interface DoctorResult {
  /** How many facts are stored. */
  facts: number;
  /** Facts by status, each validated now as listings do. */
  byStatus: StatusCounts;
  /** Facts with a code anchor `changed` or `deleted`. */
  drifted: CountedIds;
  /** Facts whose anchors are all `deleted`. */
  anchorsDeleted: CountedIds;
  /** Stored facts that say the same thing (see `lecode/facts/remember`). */
  duplicates: Duplicates;
  /** Facts never shown to a model, recalled by ID or found by a query. */
  neverUsed: CountedIds;
  /** Facts proposed for retirement (`[memory] retire_after_days`). */
  proposedRetirements: CountedIds;
  /** Facts that the latest learning's proposals would correct (their `conflicts`). */
  proposedCorrections: CountedIds;
  /** MEMORY.md and the scratchpad against their share of the injected memory. */
  notes: NoteShareModel[];
}

export interface CountedIds {
  /** How many facts. */
  count: number;
  /** Their IDs, the first 50 in ID order. */
  ids: number[];
}

export interface Duplicates {
  /** How many groups of stored facts share a dedup key (from before remembering refused duplicates: none are merged, so they are shown to be corrected or forgotten). */
  count: number;
  /** Each group's fact IDs (the first 50 groups, the first 10 IDs of each). */
  groups: number[][];
}

export interface NoteShareModel {
  /** `MEMORY.md` or `scratchpad.md` (a file that is empty is left out). */
  file: string;
  /** Its size (UTF-8 bytes of its text). */
  bytes: number;
  /** How many of them the memory injected into a chat request shows (its share of `[memory] max_bytes`, with the pinned and recent facts as a turn without a message has). */
  shown: number;
  /** `bytes - shown`: what is cut (marked for the model, and in the chat's memory line). */
  cut: number;
}

export interface StatusCounts {
  valid: CountedIds;
  retired: CountedIds;
  missing: CountedIds;
  stale: CountedIds;
  hidden: CountedIds;
  unverified: CountedIds;
}

export interface FactsDidChangeParams {
  /** The workspace folder URI of the project. */
  workspaceUri: string;
  /** The project whose facts changed (here or in another server process). */
  projectRoot: string;
  /** The project's exclusion generation (it grows with every forget). */
  generation: number;
}

export interface RememberSelectionParams {
  /** Any folder or file URI inside a project; default: the first workspace folder. */
  workspaceUri?: string | null;
  /** `file://` URI of the document (open or on disk) inside a workspace folder. */
  uri: string;
  /** The selection (whole lines are anchored, at most 200). */
  range: RangeModel;
  /** The fact in the person's words. Absent: one line gives `path contains "<line>"`, several give `path lines a-b: "<first line>" ...`. */
  text?: string | null;
  /** The session that records the exchange; default: the project's "Remembered in the editor" session (made on first use). */
  sessionId?: string | null;
}

export interface PositionModel {
  /** 0-based line (LSP). */
  line: number;
  /** 0-based UTF-16 offset in the line (LSP). */
  character: number;
}

/** An LSP range. Anchors cover whole lines: `start.line` to `end.line`, but an end at character 0 of a later line leaves that line out (a selection of whole lines). */
export interface RangeModel {
  /** Where the selection starts. */
  start: PositionModel;
  /** Where it ends (exclusive, LSP). */
  end: PositionModel;
}

export interface SelectionResult {
  /** The fact's ID. */
  factId: number;
  /** Its revision now (the new one after a correction). */
  revision: number;
  /** The session holding the exchange that is the fact's evidence. */
  sessionId: string;
  /** The evidence's seqs in that session. */
  seqs: number[];
  /** The anchor of the selection. */
  anchor: AnchorModel;
}

export interface CorrectSelectionParams {
  /** Any folder or file URI inside a project; default: the first workspace folder. */
  workspaceUri?: string | null;
  /** `file://` URI of the document (open or on disk) inside a workspace folder. */
  uri: string;
  /** The selection (whole lines are anchored, at most 200). */
  range: RangeModel;
  /** The fact in the person's words. Absent: one line gives `path contains "<line>"`, several give `path lines a-b: "<first line>" ...`. */
  text?: string | null;
  /** The session that records the exchange; default: the project's "Remembered in the editor" session (made on first use). */
  sessionId?: string | null;
  /** The fact to correct. */
  factId: number;
  /** The revision the correction was made against (optimistic check). */
  expectedRevision: number;
}

export interface ReanchorParams {
  /** Any folder or file URI inside a project; default: the first workspace folder. */
  workspaceUri?: string | null;
  /** The fact whose anchor moves. */
  factId: number;
  /** Its current revision (optimistic check). */
  expectedRevision: number;
  /** Which anchor of that revision (default the first). */
  index?: number;
  /** `file://` URI of the document the lines are in now. */
  uri: string;
  /** The lines the anchor covers from now on. */
  range: RangeModel;
}

export interface ReanchorResult {
  /** The fact's ID. */
  factId: number;
  /** Its revision (unchanged). */
  revision: number;
  /** The anchor as it is now stored. */
  anchor: AnchorModel;
}

export interface AnchorsDidChangeParams {
  /** The workspace folder URI of the project. */
  workspaceUri: string;
  /** The project whose anchors' drift changed. */
  projectRoot: string;
  /** The checkout-relative files whose anchors changed status (or gained or lost anchors): after an edit, that file; after a change of the checkout in Git (a branch switch, a commit, a `git mv`, noticed within a second), every anchored file whose anchors changed, at most 1,000. */
  paths: string[];
}

export interface ScanSecretsParams {
  /** Any folder or file URI inside a project; default: the first workspace folder. */
  workspaceUri?: string | null;
  /** How many places to list, 0 to 1000 (default 100); `found` counts them all. */
  limit?: number;
}

export interface ScanSecretsResult {
  /** Secrets found in notes, transcripts and fact revisions, in all. */
  found: number;
  /** Of which, by kind. */
  kinds: Partial<Record<string, number>>;
  /** The first `limit` of them, notes first, then transcripts, then facts. */
  places: SecretPlace[];
  /** Whether `found` is more than the places listed. */
  truncated: boolean;
  /** Every other file of the store whose bytes hold a secret. */
  raw: RawFile[];
  /** Transcripts that could not be read (damaged): not scanned. */
  unreadable: string[];
}

export interface RawFile {
  /** A store file read byte for byte (SQLite's databases and WAL, indexes, titles). */
  file: string;
  /** Secrets in its bytes: live text, and copies in free pages or the WAL a read cannot see. */
  found: number;
  /** Of which, by kind. */
  kinds: Partial<Record<string, number>>;
}

export interface SecretPlace {
  /** What the detector found (`github-token`, `aws-access-key`, `url-password`, ...). */
  kind: string;
  /** The store file, relative to the project's store folder (`MEMORY.md.bak`, `sessions/<id>.jsonl`, `facts.sqlite3`); a secret in a note's name shows as its marker. */
  file: string;
  /** In a transcript: the session. */
  sessionId?: string | null;
  /** In a transcript: the record. */
  seq?: number | null;
  /** In facts.sqlite3: the fact. */
  factId?: number | null;
  /** In facts.sqlite3: the revision of that fact (older ones count: they are kept). */
  revision?: number | null;
  /** In a Markdown file or its `.bak`: the 1-based line (none for a secret in its name). */
  line?: number | null;
}

export interface ScrubSecretsParams {
  /** Any folder or file URI inside a project; default: the first workspace folder. */
  workspaceUri?: string | null;
  /** An exact string to scrub as well, detectable or not (a token just rotated), 8 to 16,384 characters; it becomes `[secret:given:<8 hex>]`. Never logged, never stored. */
  secret?: string | null;
}

export interface ScrubSecretsResult {
  /** The Markdown files and `.bak` copies rewritten. */
  notes: string[];
  /** Whether session titles (sessions/titles.json, what renames keep) were rewritten. */
  titles: boolean;
  /** The sessions whose transcripts were rewritten. */
  sessions: string[];
  /** Transcript records rewritten. */
  records: number;
  /** Source references moved to their records' new digest (their facts stay `valid`). */
  reattached: number;
  /** Facts whose text (in any revision) was redacted. */
  facts: number[];
  /** Fact revisions rewritten. */
  revisions: number;
  /** Whether SQLite's leftovers are gone (false: another process held a read on facts.sqlite3; the next scrub finishes it). */
  purged: boolean;
  /** What a scan finds afterwards in notes, transcripts and facts (0 unless a file could not be rewritten). */
  remaining: number;
}

export interface FactsShareParams {
  /** Any folder or file URI inside a project; default: the first workspace folder. */
  workspaceUri?: string | null;
  /** The person's fact to share: its current revision, anchors and evidence are written to `.lecode/facts/<teamId>.json` in the checkout of `workspaceUri`. */
  factId: number;
}

export interface FactsShareResult {
  /** The shared fact's ID (the same for every revision of the fact). */
  teamId: string;
  /** The file written, relative to the checkout root: commit it with your change. */
  file: string;
  /** The same file as a `file://` URI. */
  uri: string;
  /** false when the file was there already and was rewritten (a new revision, say). */
  created: boolean;
}

export interface FactsUnshareParams {
  /** Any folder or file URI inside a project; default: the first workspace folder. */
  workspaceUri?: string | null;
  /** The shared fact to stop sharing. */
  teamId?: string | null;
  /** Or the person's own fact that is shared. */
  factId?: number | null;
}

export interface FactsUnshareResult {
  teamId: string;
  /** The file removed, relative to the checkout root: commit its removal. */
  file: string;
  uri: string;
}

export interface TeamListParams {
  /** Any folder or file URI inside a project; default: the first workspace folder. */
  workspaceUri?: string | null;
  /** Index of the first shared fact of the page (pass back `nextOffset`). */
  offset?: number;
}

export interface TeamListResult {
  /** At most 20 shared facts, by ID; the page is within 16,384 bytes. */
  facts: TeamFactEntry[];
  offset: number;
  nextOffset: number | null;
  /** Shared-fact files in the checkout (each listed, valid or not). */
  total: number;
  /** Files not read, by why (a name that is not `<id>.json`, past a bound). */
  skipped: Partial<Record<string, number>>;
  /** Changed files not read yet (a load stops after 2 s; the next refresh goes on). */
  pending: number;
}

export interface TeamFactEntry {
  /** The shared fact's ID (20 hex digits). */
  teamId: string;
  /** Its file, relative to the checkout root (`.lecode/facts/<teamId>.json`). */
  file: string;
  /** The sharer's Git `user.name` (or `[team] name`), as the file says: untrusted. */
  sharedBy?: string | null;
  /** When it was shared (ISO 8601 UTC), as the file says. */
  sharedAt?: string | null;
  /** valid (the bundle verifies and it is injected as team evidence); unverified (`reason` says why: not JSON, merge-conflict markers, over a bound, records that do not hash to the digest, a secret, an anchor outside the checkout, another repository); hidden (you forgot it here: its evidence is excluded for you). */
  status: "valid" | "unverified" | "hidden";
  /** Why it is unverified or hidden. */
  reason?: string | null;
  /** The file as a `file://` URI. */
  uri: string;
  revision?: number | null;
  /** What the bundle shows of the text (valid and hidden facts): `quote`, an exact quote of a cited user message; `read`, a `path contains "line"` fact whose bundle holds that read; `claim`, the sharer's own words, which the records do not contain (verification shows the file is intact, not that a claim follows from its evidence). */
  support?: "quote" | "read" | "claim" | null;
  /** At most 512 characters (valid and hidden facts; untrusted data). */
  text?: string | null;
  factTextTruncated?: boolean | null;
  /** The bundled evidence's reference (the sharer's session). */
  source?: SourceRefModel | null;
  /** Its code anchors and their drift now in this checkout (valid facts). */
  anchors?: AnchorModel[] | null;
  /** Your own fact that this is (you shared it, or hold the same evidence): one fact, not two. */
  localFactId?: number | null;
}

export interface TeamRecallParams {
  /** Any folder or file URI inside a project; default: the first workspace folder. */
  workspaceUri?: string | null;
  teamId: string;
  /** Character offset into `sourceText`. */
  offset?: number;
  /** Page size in characters (default 4096, at most 8192). */
  limit?: number | null;
}

export interface TeamRecallResult {
  /** The shared fact's ID (20 hex digits). */
  teamId: string;
  /** Its file, relative to the checkout root (`.lecode/facts/<teamId>.json`). */
  file: string;
  /** The sharer's Git `user.name` (or `[team] name`), as the file says: untrusted. */
  sharedBy?: string | null;
  /** When it was shared (ISO 8601 UTC), as the file says. */
  sharedAt?: string | null;
  status: "valid" | "unverified" | "hidden";
  reason?: string | null;
  /** Reminder that recalled text is untrusted evidence, not instructions. */
  label?: string | null;
  revision?: number | null;
  /** What the bundle shows of the text (see `lecode/facts/team`). */
  support?: "quote" | "read" | "claim" | null;
  text?: string | null;
  factTextTruncated?: boolean | null;
  source?: SourceRefModel | null;
  /** One character page of a JSON array of the cited records, from the file's bundle (valid facts only). */
  sourceText?: string | null;
  offset?: number | null;
  nextOffset?: number | null;
}

export interface TeamCorrectParams {
  /** Any folder or file URI inside a project; default: the first workspace folder. */
  workspaceUri?: string | null;
  /** The shared fact to correct. */
  teamId: string;
  /** The revision the correction was made against (optimistic check against the file). */
  expectedRevision: number;
  /** The corrected text. */
  text: string;
  /** New evidence from one of your sessions: it must include persisted user or assistant text. */
  source: SourceRefModel;
}

export interface TeamCorrectResult {
  teamId: string;
  /** The shared fact's new revision, written into its file (commit it). */
  revision: number;
  /** Your own fact that now holds the correction (the same fact as the shared one). */
  factId: number;
  file: string;
}

export interface TeamForgetParams {
  /** Any folder or file URI inside a project; default: the first workspace folder. */
  workspaceUri?: string | null;
  teamId: string;
}

export interface TeamForgetResult {
  teamId: string;
  /** false when its evidence was excluded here already. */
  forgotten: boolean;
  /** The file, which stays for the team: unshare it (`lecode/facts/unshare`) to remove it for everyone. */
  file: string;
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

export interface RememberSelectionCommand {
  /** The params of `lecode/facts/rememberSelection`. */
  params: RememberSelectionParams;
}

export interface CorrectSelectionCommand {
  /** The params of `lecode/facts/correctSelection`. */
  params: CorrectSelectionParams;
}

export interface ReanchorCommand {
  /** The params of `lecode/facts/reanchor`. */
  params: ReanchorParams;
}

export interface FactRefCommand {
  /** `{workspaceUri?, factId}`. */
  params: FactRefParams;
}

export interface FactRefParams {
  /** Any folder or file URI inside a project; default: the first workspace folder. */
  workspaceUri?: string | null;
  /** The fact. */
  factId: number;
}

export interface AskedResult {
  /** What the person was asked; the forget happens on their Forget, and only then. */
  question: QuestionModel;
  /** The other facts whose evidence the forget would exclude: hidden from recall and injection once it is done. */
  hides: number[];
}

/** An LSP `Command`: what an editor runs with `workspace/executeCommand`. */
export interface CommandModel {
  /** What to show the person. */
  title: string;
  /** The command's name. */
  command: string;
  /** Its arguments, as they are to be sent. */
  arguments: unknown[];
}

/** A question put to the person, waiting for an answer. What it decides happens when the answer comes; its outcome is shown then (`window/showMessage`). */
export interface QuestionModel {
  /** The question's ID (for `lecode.answer`). */
  questionId: number;
  /** The question, as the person sees it. */
  message: string;
  /** The yes (the change happens) and the no, in that order. */
  answers: string[];
  /** true: asked with `window/showMessageRequest` (the client advertised `window.showMessage`); false: announced with `window/showMessage` and offered as the code actions `confirm` and `cancel` in every document. */
  inEditor: boolean;
  /** Runs the yes (`lecode.answer`), for an editor that shows it as it likes. */
  confirm: CommandModel;
  /** Runs the no. */
  cancel: CommandModel;
}

export interface AcceptProposalCommand {
  /** `{workspaceUri?, sessionId, seq, index}`. */
  params: DismissProposalParams;
}

export interface FactRetireCommand {
  /** `{workspaceUri?, factId}`. */
  params: FactsPinParams;
}

export interface SessionDeleteCommand {
  /** `{workspaceUri?, sessionId}`. */
  params: SessionParams;
}

export interface SessionAskedResult {
  /** What the person was asked; the session is deleted on their Delete, and only then. */
  question: QuestionModel;
  /** How many facts cite the session: they would become `missing`. */
  citingFacts: number;
}

export interface AnswerCommand {
  /** The answer. */
  params: AnswerParams;
}

export interface AnswerParams {
  /** The question (its `questionId`). */
  questionId: number;
  /** One of its `answers`. */
  answer: string;
}

export interface AnswerResult {
  /** The question answered. */
  questionId: number;
  /** Whether the answer was the yes: what it allows now happens, and its outcome is shown. */
  yes: boolean;
}

export interface ScanSecretsCommand {
  /** `{workspaceUri?, limit?}`. */
  params?: ScanSecretsParams;
}

export interface ScrubSecretsCommand {
  /** `{workspaceUri?, secret?}`. */
  params?: ScrubSecretsParams;
}

export interface ShareCommand {
  /** `{workspaceUri?, factId}`. */
  params: FactsShareParams;
}

export interface UnshareCommand {
  /** `{workspaceUri?, teamId | factId}`. */
  params: FactsUnshareParams;
}
