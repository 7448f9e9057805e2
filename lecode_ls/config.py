"""The settings model (K1) and how it is loaded.

Sources, later ones winning key by key: the defaults below, `<config_dir>/config.toml`, then the
editor (initializationOptions, workspace/didChangeConfiguration). Editor settings use the same
section and key names as config.toml (`lecode.memory.max_bytes` is `[memory] max_bytes`).

An invalid value never stops the server: the offending key falls back to its default and the
problem is reported as a sentence naming the key path (`memory.facts_max_bytes: ...`).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    field_validator,
)

from lecode_ls.memory.project import instruction_pattern_problem
from lecode_ls.memory.secrets import MAX_EXTRA_PATTERNS, check_extra_pattern


class _Section(BaseModel):
    # Field docstrings are documentation (docs/memory/settings.md's table reads them with
    # lecode_ls.contract.fielddocs); pydantic is not asked to parse them, which would cost
    # start-up time.
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class MemorySettings(_Section):
    """`[memory]`: the project memory."""

    enabled: bool = True
    """false turns the project memory off: notes, facts and recall answer `memory_disabled`, and
    no fact database is created; chat keeps working with no memory tools and nothing injected
    (its transcripts stay in the store's sessions/ folder)."""

    max_bytes: int = Field(32768, ge=0, le=1_048_576)
    """Cap on the whole memory section injected into every chat request (headings, Markdown,
    scratchpad, facts, provenance); `/memory show` is capped by it too."""

    auto_learn: bool = False
    """Opt in to automatic fact learning: after each successful compaction, one extraction call
    proposes facts, and only exactly evidenced ones are remembered. Also needs
    `[agent] permissions` memory_write = "allow" and readonly off."""

    learning: Literal["model", "rules", "both"] = "both"
    """Who proposes automatic learning's candidates: "rules" (the person's own sentences that
    state a convention, quoted verbatim and cited by the server: no model call), "model" (one
    extraction call to the chat model), or "both". Every candidate meets the same evidence
    checks; what the rules alone propose follows `rules_learn`."""

    rules_learn: Literal["propose", "remember"] = "propose"
    """What becomes of a convention the rules found and no model affirmed: "propose" leaves it
    for the person to accept in one step (`/memory accept`, `lecode/facts/acceptProposal`),
    shown but never injected; "remember" stores it as a fact at once. The rules are an English
    heuristic, and a fact is injected into every later session."""

    facts_max_bytes: int = Field(8192, ge=0, le=65536)
    """Share of max_bytes given first to whole, validated facts in the injected memory."""

    drifted_facts: Literal["label", "withhold"] = "label"
    """What injection does with a fact whose code anchor is `changed` or `deleted` (the code it
    was remembered from is no longer there): "label" shows it marked as drifted, "withhold"
    leaves it out. Listings show drift either way."""

    retire_after_days: int = Field(28, ge=0, le=36500)
    """A fact not used for this many days (not shown to a model, recalled by ID, found by a
    query, written or kept) is proposed for retirement in the review queue, with the reason;
    only the person retires it (`lecode/facts/retire`), and a retired fact can be restored.
    0 proposes every unused fact at once."""

    retire_drifted_after_days: int = Field(7, ge=0, le=36500)
    """A fact whose code anchors have all been `changed` or `deleted` for this many days (since
    lecode-ls first saw them so) is proposed for retirement too, with the reason; 0 proposes it
    as soon as it is seen drifted."""

    def retire_after(self) -> tuple[int, int]:
        """(retire_after_days, retire_drifted_after_days): what retirement proposals wait for."""
        return self.retire_after_days, self.retire_drifted_after_days

    embeddings_model: str | None = Field(None, min_length=1, max_length=200)
    """Opt in to semantic fact ranking: the embedding model the `[provider]` serves at its
    OpenAI-compatible `/embeddings` (llama-server with `--embeddings`, Ollama, vLLM, hosted
    APIs). Fact vectors are computed in the background and kept in facts.sqlite3; a turn's
    message is embedded once and ranked by BM25 and vector similarity together. Unset (the
    default): no embedding request is ever made."""


_LABEL = re.compile(r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?")
"""One label of a host name, as urlsplit lowercases it (`_` too: some local names have one)."""


_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class ProviderSettings(_Section):
    """`[provider]`: the OpenAI-compatible Chat Completions endpoint chat talks to."""

    base_url: str | None = Field(None, min_length=1, max_length=2048)
    """Base URL of the API, up to and including `/v1` (`/chat/completions` is appended):
    OpenAI (`https://api.openai.com/v1`), OpenRouter (`https://openrouter.ai/api/v1`), Ollama
    (`http://localhost:11434/v1`), LM Studio, vLLM or llama.cpp's server. Unset (the default),
    no provider is configured: chat and compaction answer `provider_not_configured` and nothing
    is sent anywhere."""

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        # Refused here, once, rather than failing every turn inside httpx. The value is not
        # quoted back: a URL may carry credentials (http://user:key@host).
        if value is None:
            return None
        if any(char <= " " or char == "\x7f" for char in value):
            raise ValueError("expected a URL without spaces or control characters")
        try:
            parts = urlsplit(value)
            parts.port  # noqa: B018 (raises ValueError for a port that is not a number)
        except ValueError:
            raise ValueError("expected a URL such as https://api.openai.com/v1") from None
        if parts.scheme.lower() not in ("http", "https"):
            raise ValueError("expected an http:// or https:// URL")
        if not parts.hostname:
            raise ValueError("expected a URL with a host, such as http://127.0.0.1:8080/v1")
        if ":" not in parts.hostname and not all(
            _LABEL.fullmatch(label) for label in parts.hostname.removesuffix(".").split(".")
        ):
            raise ValueError(
                "expected a host name of letters, digits, '-' and '.' (an international name "
                "in its xn-- form)"
            )
        return value

    model: str = Field("gpt-4o-mini", min_length=1, max_length=256)
    """Model ID as the provider names it (`gpt-4.1`, `anthropic/claude-sonnet-4`, `llama3.1:8b`)."""

    api_key_env: str = Field("OPENAI_API_KEY", max_length=256)
    """Name of the environment variable that holds the API key (never the key itself); empty
    for a server that needs no key. While the variable it names is unset or empty, chat answers
    `provider_key_missing` and nothing is sent, except that the default OPENAI_API_KEY may be
    unset for a server on this machine (localhost, 127.0.0.1, ::1), which is sent no key."""

    @field_validator("api_key_env")
    @classmethod
    def _variable_name(cls, value: str) -> str:
        # A key pasted here by mistake would be quoted by every message naming the variable.
        if value and not _VARIABLE.fullmatch(value):
            raise ValueError(
                "expected the name of an environment variable (letters, digits and _), never "
                "the key itself"
            )
        return value

    thinking: Literal["low", "medium", "high"] | None = None
    """Reasoning effort sent to models that have one (`reasoning_effort`); unset sends nothing."""

    read_timeout_seconds: int = Field(60, ge=1, le=3600)
    """Longest wait for the next piece of a streamed answer, the first one included. A model on
    a local CPU server can take minutes to read a long prompt before it sends anything: raise
    it there (a 0.5B model on 2 cores read about 30 prompt tokens a second)."""


WriteTool = Literal["memory_write", "memory_edit", "memory_correct", "memory_forget"]
# One flat Literal (not a union with WriteTool): an invalid key then drops only that entry.
Guarded = Literal["memory_write", "memory_edit", "memory_correct", "memory_forget", "read_secret"]

SECRET_FILES = (
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
    ".git/modules/*/config",  # a submodule's config, at any depth of nesting
    ".aws/credentials",
    ".docker/config.json",
    ".config/gh/hosts.yml",
    ".config/gcloud/credentials.db",
    ".config/gcloud/access_tokens.db",
    ".config/gcloud/application_default_credentials.json",
    ".kube/config",
)


class AgentSettings(_Section):
    """`[agent]`: the chat agent."""

    context_window: int | None = Field(None, ge=1024, le=10_000_000)
    """Context window in tokens of a model the built-in catalog does not know; unset means
    such a model's window is unknown."""

    max_output_tokens: int | None = Field(None, ge=16, le=1_000_000)
    """Cap on the tokens of one chat answer (`max_tokens`), within the catalog's output limit;
    unset takes the catalog's limit, or [compaction] buffer_tokens for a model it does not
    know."""

    readonly: bool = False
    """true offers the model only the read-class memory tools (memory_read, memory_search,
    memory_list, memory_recall) and refuses `/memory correct` and `/memory forget`: chat cannot
    change memory (the Facts view's Forget, the person's own act, still can)."""

    permissions: dict[Guarded, Literal["allow", "deny", "ask"]] = Field(default_factory=dict)
    """Per write-class memory tool (memory_write, memory_edit, memory_correct,
    memory_forget), and read_secret (the `read` tool on a file of secret_files): allow, deny,
    or ask (the default: the editor asks the person each time); `/memory correct` and
    `/memory forget` obey it too."""

    secret_files: list[str] = Field(default_factory=lambda: list(SECRET_FILES), max_length=200)
    """Workspace files that usually hold credentials: the model's `read` of one asks the person
    first (permissions.read_secret). Glob patterns, case-insensitive: one without "/" matches a
    file name in any folder, one with "/" the end of the path (".git/config")."""

    instruction_files: list[Annotated[str, StringConstraints(min_length=1, max_length=200)]] = (
        Field(default_factory=list, max_length=20)
    )
    """Other agents' instruction files to read beside AGENTS.md, for example ["CLAUDE.md",
    ".github/copilot-instructions.md", ".cursor/rules/*.mdc", "GEMINI.md"]: relative to the
    active working folder, a glob in the file name only (at most 20 files each). Read under
    AGENTS.md's rules: from that folder, each labelled with its path, all of them within
    AGENTS.md's 256 KiB (AGENTS.md first), a link leading outside the folder refused. Every
    request sends them to the provider: name no file that holds secrets. Empty (the default):
    AGENTS.md only."""

    @field_validator("instruction_files")
    @classmethod
    def _instruction_patterns(cls, value: list[str]) -> list[str]:
        for pattern in value:
            problem = instruction_pattern_problem(pattern)
            if problem is not None:
                raise ValueError(f"{pattern!r}: {problem}")
        return value


class CompactionSettings(_Section):
    """`[compaction]`: the working summary of long chats."""

    buffer_tokens: int = Field(4096, ge=256, le=200_000)
    """Tokens of the model's window kept free for the answer when a request is checked."""

    mid_turn_threshold: float = Field(0.8, ge=0.1, le=1.0)
    """Compact before a request that fills more than this share of the window's prompt budget
    (1.0: only when it would not fit)."""


McpWriteTool = Literal[
    "memory_write",
    "memory_edit",
    "memory_correct",
    "memory_forget",
    "memory_remember",
    "memory_remember_quote",
]


class McpSettings(_Section):
    """`[mcp]`: the memory served to other agents by `lecode-ls mcp` (Claude Code, Codex CLI,
    Cursor, VS Code's agent mode)."""

    allow: list[McpWriteTool] = Field(default_factory=list, max_length=6)
    """The write-class tools an MCP client may call: memory_write, memory_edit,
    memory_correct, memory_forget, memory_remember (a `path contains "line"` fact the
    server verifies in the workspace file itself), and memory_remember_quote (a fact from the
    person's exact words in a followed transcript; offered only while [agents] follow names an
    agent). Empty (the default) offers the read-class
    tools only; a tool not listed is neither offered nor run."""


class AgentsSettings(_Section):
    """`[agents]`: other agents whose conversations of this project lecode follows."""

    follow: list[Literal["claude-code", "codex"]] = Field(default_factory=list, max_length=2)
    """The agents whose transcripts of the project the language server follows, appending what
    they add to a session of its own (verbatim, each record's origin kept), so learning and
    memory_remember_quote can use what the person told them: "claude-code" (its sessions under
    $CLAUDE_CONFIG_DIR or ~/.claude/projects/), "codex" (its rollouts under $CODEX_HOME or
    ~/.codex/sessions/). Empty (the default): nothing is read."""

    learn_after_idle_seconds: int = Field(300, ge=0, le=86_400)
    """A followed session that grew and then stayed unchanged this long is compacted once, as
    a chat is, and automatic learning runs after it under its usual gates ([memory]
    auto_learn, memory_write allowed, a provider set), so what the person told the other agent
    can become facts whose evidence is that agent's own records. Costs one summary call (and
    the extraction's) per idle session; without auto_learn nothing is compacted."""


class PrivacySettings(_Section):
    """`[privacy]`: the secrets redacted where text enters memory (chat, tool results, imports,
    notes, facts, summaries, the log). Credentials of the formats detect-secrets knows (AWS,
    GitHub, GitLab, Slack, Stripe, OpenAI, Anthropic, Google, npm, PyPI, JWTs, private keys,
    passwords in URLs...) become markers such as `[secret:github-token:3fa9c2d1]`."""

    extra_patterns: list[str] = Field(default_factory=list, max_length=MAX_EXTRA_PATTERNS)
    """More secrets to redact: RE2 patterns (Python's syntax without lookaround or
    backreferences), at most 1000 characters each; what one matches is marked `custom`."""

    allow: list[str] = Field(default_factory=list, max_length=200)
    """Literal strings never redacted (a documented example key, a test fixture's URL): a
    secret found inside one of them is kept."""

    @field_validator("extra_patterns")
    @classmethod
    def _compiles(cls, patterns: list[str]) -> list[str]:
        return [check_extra_pattern(pattern) for pattern in patterns]

    @field_validator("allow")
    @classmethod
    def _bounded(cls, literals: list[str]) -> list[str]:
        if any(len(literal) > 4096 for literal in literals):
            raise ValueError("an allowed string may be at most 4096 characters")
        return literals


class TeamSettings(_Section):
    """`[team]`: facts shared with the team as files in the repository (`.lecode/facts/`)."""

    name: str | None = Field(None, min_length=1, max_length=200)
    """The name a fact you share is signed with (`sharedBy`); default: Git's `user.name`."""
    inject: bool = True
    """Whether the checkout's valid shared facts are shown to the model, as team evidence
    within `[memory] facts_max_bytes` (after your own facts)."""


class Settings(_Section):
    """Every setting of lecode-ls. Each section is a table of config.toml."""

    memory: MemorySettings = MemorySettings()
    provider: ProviderSettings = ProviderSettings()
    agent: AgentSettings = AgentSettings()
    compaction: CompactionSettings = CompactionSettings()
    mcp: McpSettings = McpSettings()
    agents: AgentsSettings = AgentsSettings()
    privacy: PrivacySettings = PrivacySettings()
    team: TeamSettings = TeamSettings()


def _drop(tree: dict[str, Any], loc: tuple[str | int, ...]) -> bool:
    """Remove the key at `loc` from a nested settings tree; whether it was there.

    pydantic ends the location of a bad dict key with "[key]": the entry itself is dropped.
    """
    if loc and loc[-1] == "[key]":
        loc = loc[:-1]
    node: Any = tree
    for key in loc[:-1]:
        if not isinstance(node, dict) or key not in node:
            return False
        node = node[key]
    if isinstance(node, dict) and loc and loc[-1] in node:
        del node[loc[-1]]
        return True
    return False


def merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """Deep-merge two settings trees; `override` wins key by key."""
    merged: dict[str, Any] = dict(base)
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def validate(raw: Mapping[str, Any]) -> tuple[Settings, list[str]]:
    """Build Settings from a raw tree, dropping each invalid key back to its default.

    Returns the settings and one sentence per problem, naming the key path.
    """
    tree = copy.deepcopy(dict(raw))
    problems: list[str] = []
    while True:
        try:
            return Settings.model_validate(tree), problems
        except ValidationError as exc:
            for error in exc.errors(include_input=False, include_url=False):
                loc = tuple(error["loc"])
                key = ".".join(str(part) for part in loc if part != "[key]") or "settings"
                if error["type"] == "extra_forbidden":
                    problems.append(f"{key}: unknown setting; ignored")
                else:
                    problems.append(f"{key}: {error['msg']}; using the default")
                # Every pass must remove something, or it would never end: failing the exact
                # key, the whole section goes back to its defaults.
                if not (_drop(tree, loc) or _drop(tree, loc[:1])):
                    tree = {}
            # Every error names a key that is now gone, so each pass shrinks the tree.


def read_config_file(path: Path) -> tuple[dict[str, Any], list[str]]:
    """Read config.toml; a missing file is empty, an unreadable one is reported."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}, []
    except (OSError, UnicodeDecodeError) as exc:
        return {}, [f"config.toml could not be read ({exc.__class__.__name__}); using the defaults"]
    import tomllib  # imported here: 17 ms that start-up without a config file never pays

    try:
        return tomllib.loads(text), []
    except tomllib.TOMLDecodeError as exc:
        return {}, [f"config.toml is not valid TOML ({exc}); using the defaults"]


def editor_section(settings: Any) -> dict[str, Any]:
    """The lecode settings inside what an editor sent.

    Editors send either `{"lecode": {...}}` (VS Code's configurationSection, Neovim's `settings`)
    or the section itself; anything that is not an object is treated as no settings.
    """
    if not isinstance(settings, Mapping):
        return {}
    inner = settings.get("lecode")
    if isinstance(inner, Mapping):
        return dict(inner)
    return dict(settings)
