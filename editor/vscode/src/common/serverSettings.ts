// Generated from lecode_ls/config.py by `uv run python -m lecode_ls.contract`.
// Do not edit: a test fails when this file and the server's settings model disagree.

/** `[memory]`: the project memory. */
export interface MemorySettings {
  /** false turns the project memory off: notes, facts and recall answer `memory_disabled`, and no fact database is created; chat keeps working with no memory tools and nothing injected (its transcripts stay in the store's sessions/ folder). */
  enabled: boolean;
  /** Cap on the whole memory section injected into every chat request (headings, Markdown, scratchpad, facts, provenance); `/memory show` is capped by it too. */
  max_bytes: number;
  /** Opt in to automatic fact learning: after each successful compaction, one extraction call proposes facts, and only exactly evidenced ones are remembered. Also needs `[agent] permissions` memory_write = "allow" and readonly off. */
  auto_learn: boolean;
  /** Who proposes automatic learning's candidates: "rules" (the person's own sentences that state a convention, quoted verbatim and cited by the server: no model call), "model" (one extraction call to the chat model), or "both". Every candidate meets the same evidence checks; what the rules alone propose follows `rules_learn`. */
  learning: "model" | "rules" | "both";
  /** What becomes of a convention the rules found and no model affirmed: "propose" leaves it for the person to accept in one step (`/memory accept`, `lecode/facts/acceptProposal`), shown but never injected; "remember" stores it as a fact at once. The rules are an English heuristic, and a fact is injected into every later session. */
  rules_learn: "propose" | "remember";
  /** Share of max_bytes given first to whole, validated facts in the injected memory. */
  facts_max_bytes: number;
  /** What injection does with a fact whose code anchor is `changed` or `deleted` (the code it was remembered from is no longer there): "label" shows it marked as drifted, "withhold" leaves it out. Listings show drift either way. */
  drifted_facts: "label" | "withhold";
  /** A fact not used for this many days (not shown to a model, recalled by ID, found by a query, written or kept) is proposed for retirement in the review queue, with the reason; only the person retires it (`lecode/facts/retire`), and a retired fact can be restored. 0 proposes every unused fact at once. */
  retire_after_days: number;
  /** A fact whose code anchors have all been `changed` or `deleted` for this many days (since lecode-ls first saw them so) is proposed for retirement too, with the reason; 0 proposes it as soon as it is seen drifted. */
  retire_drifted_after_days: number;
  /** Opt in to semantic fact ranking: the embedding model the `[provider]` serves at its OpenAI-compatible `/embeddings` (llama-server with `--embeddings`, Ollama, vLLM, hosted APIs). Fact vectors are computed in the background and kept in facts.sqlite3; a turn's message is embedded once and ranked by BM25 and vector similarity together. Unset (the default): no embedding request is ever made. */
  embeddings_model: string | null;
}

/** `[provider]`: the OpenAI-compatible Chat Completions endpoint chat talks to. */
export interface ProviderSettings {
  /** Base URL of the API, up to and including `/v1` (`/chat/completions` is appended): OpenAI (`https://api.openai.com/v1`), OpenRouter (`https://openrouter.ai/api/v1`), Ollama (`http://localhost:11434/v1`), LM Studio, vLLM or llama.cpp's server. Unset (the default), no provider is configured: chat and compaction answer `provider_not_configured` and nothing is sent anywhere. */
  base_url: string | null;
  /** Model ID as the provider names it (`gpt-4.1`, `anthropic/claude-sonnet-4`, `llama3.1:8b`). */
  model: string;
  /** Name of the environment variable that holds the API key (never the key itself); empty for a server that needs no key. While the variable it names is unset or empty, chat answers `provider_key_missing` and nothing is sent, except that the default OPENAI_API_KEY may be unset for a server on this machine (localhost, 127.0.0.1, ::1), which is sent no key. */
  api_key_env: string;
  /** Reasoning effort sent to models that have one (`reasoning_effort`); unset sends nothing. */
  thinking: "low" | "medium" | "high" | null;
  /** Longest wait for the next piece of a streamed answer, the first one included. A model on a local CPU server can take minutes to read a long prompt before it sends anything: raise it there (a 0.5B model on 2 cores read about 30 prompt tokens a second). */
  read_timeout_seconds: number;
}

/** `[agent]`: the chat agent. */
export interface AgentSettings {
  /** Context window in tokens of a model the built-in catalog does not know; unset means such a model's window is unknown. */
  context_window: number | null;
  /** Cap on the tokens of one chat answer (`max_tokens`), within the catalog's output limit; unset takes the catalog's limit, or [compaction] buffer_tokens for a model it does not know. */
  max_output_tokens: number | null;
  /** true offers the model only the read-class memory tools (memory_read, memory_search, memory_list, memory_recall) and refuses `/memory correct` and `/memory forget`: chat cannot change memory (the Facts view's Forget, the person's own act, still can). */
  readonly: boolean;
  /** Per write-class memory tool (memory_write, memory_edit, memory_correct, memory_forget), and read_secret (the `read` tool on a file of secret_files): allow, deny, or ask (the default: the editor asks the person each time); `/memory correct` and `/memory forget` obey it too. */
  permissions: Partial<Record<"memory_write" | "memory_edit" | "memory_correct" | "memory_forget" | "read_secret", "allow" | "deny" | "ask">>;
  /** Workspace files that usually hold credentials: the model's `read` of one asks the person first (permissions.read_secret). Glob patterns, case-insensitive: one without "/" matches a file name in any folder, one with "/" the end of the path (".git/config"). */
  secret_files: string[];
  /** Other agents' instruction files to read beside AGENTS.md, for example ["CLAUDE.md", ".github/copilot-instructions.md", ".cursor/rules/*.mdc", "GEMINI.md"]: relative to the active working folder, a glob in the file name only (at most 20 files each). Read under AGENTS.md's rules: from that folder, each labelled with its path, all of them within AGENTS.md's 256 KiB (AGENTS.md first), a link leading outside the folder refused. Every request sends them to the provider: name no file that holds secrets. Empty (the default): AGENTS.md only. */
  instruction_files: string[];
}

/** `[compaction]`: the working summary of long chats. */
export interface CompactionSettings {
  /** Tokens of the model's window kept free for the answer when a request is checked. */
  buffer_tokens: number;
  /** Compact before a request that fills more than this share of the window's prompt budget (1.0: only when it would not fit). */
  mid_turn_threshold: number;
}

/** `[agents]`: other agents whose conversations of this project lecode follows. */
export interface AgentsSettings {
  /** The agents whose transcripts of the project the language server follows, appending what they add to a session of its own (verbatim, each record's origin kept), so learning and memory_remember_quote can use what the person told them: "claude-code" (its sessions under $CLAUDE_CONFIG_DIR or ~/.claude/projects/), "codex" (its rollouts under $CODEX_HOME or ~/.codex/sessions/). Empty (the default): nothing is read. */
  follow: ("claude-code" | "codex")[];
  /** A followed session that grew and then stayed unchanged this long is compacted once, as a chat is, and automatic learning runs after it under its usual gates ([memory] auto_learn, memory_write allowed, a provider set), so what the person told the other agent can become facts whose evidence is that agent's own records. Costs one summary call (and the extraction's) per idle session; without auto_learn nothing is compacted. */
  learn_after_idle_seconds: number;
}

/** `[team]`: facts shared with the team as files in the repository (`.lecode/facts/`). */
export interface TeamSettings {
  /** The name a fact you share is signed with (`sharedBy`); default: Git's `user.name`. */
  name: string | null;
  /** Whether the checkout's valid shared facts are shown to the model, as team evidence within `[memory] facts_max_bytes` (after your own facts). */
  inject: boolean;
}

/** Every section the server reads, as the editor sends it. */
export interface ServerSections {
  memory: MemorySettings;
  provider: ProviderSettings;
  agent: AgentSettings;
  compaction: CompactionSettings;
  agents: AgentsSettings;
  team: TeamSettings;
}

/** The sections forwarded to the server: every section of config.toml. */
export const SERVER_SECTIONS = ["memory", "provider", "agent", "compaction", "agents", "team"] as const;

/** The server's defaults, key by key. */
export const SERVER_DEFAULTS: ServerSections = {
  "memory": {
    "enabled": true,
    "max_bytes": 32768,
    "auto_learn": false,
    "learning": "both",
    "rules_learn": "propose",
    "facts_max_bytes": 8192,
    "drifted_facts": "label",
    "retire_after_days": 28,
    "retire_drifted_after_days": 7,
    "embeddings_model": null
  },
  "provider": {
    "base_url": null,
    "model": "gpt-4o-mini",
    "api_key_env": "OPENAI_API_KEY",
    "thinking": null,
    "read_timeout_seconds": 60
  },
  "agent": {
    "context_window": null,
    "max_output_tokens": null,
    "readonly": false,
    "permissions": {},
    "secret_files": [
      ".env",
      ".env.*",
      ".envrc",
      "*.pem",
      "*.key",
      "*.p12",
      "*.pfx",
      "*.jks",
      "*.keystore",
      "id_rsa",
      "id_dsa",
      "id_ecdsa",
      "id_ed25519",
      ".npmrc",
      ".pypirc",
      ".netrc",
      ".git-credentials",
      ".git/config",
      ".git/modules/*/config",
      ".aws/credentials",
      ".docker/config.json",
      ".config/gh/hosts.yml",
      ".config/gcloud/credentials.db",
      ".config/gcloud/access_tokens.db",
      ".config/gcloud/application_default_credentials.json",
      ".kube/config"
    ],
    "instruction_files": []
  },
  "compaction": {
    "buffer_tokens": 4096,
    "mid_turn_threshold": 0.8
  },
  "agents": {
    "follow": [],
    "learn_after_idle_seconds": 300
  },
  "team": {
    "name": null,
    "inject": true
  }
};

/** Inclusive bounds of the numeric settings, as the server's model declares them. */
export const BOUNDS: Record<string, { minimum: number; maximum: number }> = {
  "memory.max_bytes": {
    "minimum": 0,
    "maximum": 1048576
  },
  "memory.facts_max_bytes": {
    "minimum": 0,
    "maximum": 65536
  },
  "memory.retire_after_days": {
    "minimum": 0,
    "maximum": 36500
  },
  "memory.retire_drifted_after_days": {
    "minimum": 0,
    "maximum": 36500
  },
  "provider.read_timeout_seconds": {
    "minimum": 1,
    "maximum": 3600
  },
  "agent.context_window": {
    "minimum": 1024,
    "maximum": 10000000
  },
  "agent.max_output_tokens": {
    "minimum": 16,
    "maximum": 1000000
  },
  "compaction.buffer_tokens": {
    "minimum": 256,
    "maximum": 200000
  },
  "compaction.mid_turn_threshold": {
    "minimum": 0.1,
    "maximum": 1.0
  },
  "agents.learn_after_idle_seconds": {
    "minimum": 0,
    "maximum": 86400
  }
};
