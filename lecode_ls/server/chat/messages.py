"""The JSON objects of chat: `lecode/chat/send`, its `lecode/chat/delta` stream, `lecode/command`."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from lecode_ls.agent.runner import DeltaKind, StopReason
from lecode_ls.server.messages import Message, Params, WorkspaceParams


class UsageModel(Message):
    """Tokens as providers reported them. Calls without reported usage are counted in
    `unknownUsageCalls`, never as zero: the token counts are known subtotals (C10)."""

    calls: int
    """Provider requests made."""
    prompt_tokens: int
    """Prompt tokens of the calls that reported usage."""
    completion_tokens: int
    """Completion tokens of the calls that reported usage."""
    total_tokens: int
    """Total tokens of the calls that reported usage."""
    unknown_usage_calls: int
    """Calls whose usage the provider did not report."""
    cached_tokens: int | None = None
    """Prompt tokens the provider served from its prompt cache, of the calls that reported it
    (`usage.prompt_tokens_details.cached_tokens`, llama-server's `timings.cache_n`); absent
    when none did."""
    evaluated_tokens: int | None = None
    """Prompt tokens the provider evaluated anew, of the calls that reported it (llama-server's
    `timings.prompt_n`); absent when none did."""


class NoteCutModel(Message):
    file: str
    """`MEMORY.md` or `scratchpad.md`."""
    bytes: int
    """The file's size (UTF-8 bytes of its text)."""
    shown: int
    """How many of those bytes the request showed (the rest was cut, marked for the model)."""


class InjectedFactModel(Message):
    fact_id: int
    """The fact's ID."""
    revision: int
    """The revision that was injected."""
    reason: str | None = None
    """Why it was chosen: `pinned`, `anchored in <path>` (a file open or read),
    `matched: <words>` (its words that the turn's message, earlier messages or files' paths
    hold) or `recent` (recently shown to a model, learned or corrected). Untrusted text (a
    person's words, a path). Absent in transcripts from before lecode-ls recorded it."""


class ChatSendParams(WorkspaceParams):
    session_id: str = Field(max_length=64)
    """The exact session ID (from `lecode/session/new` or `lecode/session/list`)."""
    text: str = Field(min_length=1, max_length=200_000)
    """The person's message. `/memory ...` and `/compact` lines are commands: their output is the
    turn's text (`/memory` makes no model call)."""


class ChatSendResult(Message):
    turn_id: str
    """The turn's ID (also on every delta of the turn)."""
    stop_reason: StopReason
    """Why the turn ended: `stop` (the model finished), `length` (the model hit its output
    limit), `contentFilter`, `cancelled` (`$/cancelRequest`), `paused` (the next request cannot
    fit the model's window even after compaction; a `paused` delta says why), `error` (the
    provider failed; an `error` delta says why: after an HTTP 5xx, `provider_rejects_history`
    names the seq of the record the provider refuses), `toolLimit` (the model kept calling tools
    past the limit of 24 rounds, or asked for the very same calls 3 rounds in a row: an `error`
    delta with code `tool_limit` says which and that tools were stopped, and one last request
    without tools still gives the answer). An answer whose tool call was cut off halfway
    (`truncated_tool_call` delta) is kept as text, the call never run nor replayed, and the turn
    also ends with one last request without tools."""
    usage: UsageModel
    """The turn's usage, every provider call counted once."""


class ChatFields(Message):
    """The fields a chat item may carry besides its kind; which ones depends on the kind."""

    text: str | None = None
    """`text`: the next piece of the assistant's answer (Markdown)."""
    call_id: str | None = None
    """`toolCall`, `toolResult`: the tool call's ID."""
    name: str | None = None
    """`toolCall`, `toolResult`: the tool's name."""
    arguments: str | None = None
    """`toolCall`: the arguments as the model wrote them (JSON text)."""
    output: str | None = None
    """`toolResult`: what the tool returned to the model (untrusted data)."""
    is_error: bool | None = None
    """`toolResult`: the tool failed or was refused."""
    facts: list[InjectedFactModel] | None = None
    """`memory`: the facts injected into this model request."""
    notes: list[str] | None = None
    """`memory`: the memory files injected (`MEMORY.md`, `scratchpad.md`)."""
    cut: list[NoteCutModel] | None = None
    """`memory`: the memory files cut to their share of `[memory] max_bytes` (absent when none
    was): nothing is cut silently."""
    status: str | None = None
    """`compaction`, `learning`: how it went."""
    message: str | None = None
    """`error`, `paused`, `compaction`: what happened, for the person."""
    code: str | None = None
    """`error`: a stable machine code (as in error responses' `data.code`)."""


class ChatDeltaParams(ChatFields):
    """One piece of a running turn. Fields beyond the first four depend on `kind`:
    `text`: text; `toolCall`: callId, name, arguments; `toolResult`: callId, name, output,
    isError; `memory`: facts, notes; `usage`: usage (null when the provider reported none);
    `error`: message, code; `compaction`: status (`started`, then `compacted`, `nothing`,
    `rejected`, `failed` or `stale`), message; `paused`: message; `learning`: status (automatic
    learning after a compaction: `no_candidates`, `rejected`, `learned`, `proposed`, `failed`,
    `stale`), facts (the facts learned)."""

    session_id: str
    """The session the turn belongs to."""
    turn_id: str
    """The turn (as returned by `lecode/chat/send`)."""
    seq: int
    """0, 1, 2... within the turn: apply deltas in this order."""
    kind: DeltaKind
    """What this delta carries."""
    usage: UsageModel | None = None
    """`usage`: this provider call's usage (`calls` is 1); null when it reported none."""


class ChatHistoryParams(WorkspaceParams):
    session_id: str = Field(max_length=64)
    """The exact session ID."""
    limit: int = Field(200, ge=1, le=1000)
    """At most this many items, the most recent ones (1-1000; default 200)."""


class ChatHistoryItem(ChatFields):
    """A visible transcript record in the shape of a delta, so a chat view renders history and
    live turns alike. `kind` is a delta kind, or `user` for the person's message."""

    seq: int
    """The record's seq in the transcript."""
    turn_id: str | None = None
    """The turn that wrote it (absent for imported records)."""
    kind: Literal[
        "user",
        "text",
        "toolCall",
        "toolResult",
        "memory",
        "error",
        "cancelled",
        "compaction",
        "paused",
    ]
    """`user`: text; `text` (an assistant message): text; `toolCall`: callId, name,
    arguments; `toolResult`: callId, name, output, isError; `memory`: facts, notes; `error`:
    message, code; `cancelled`: the turn was stopped; `compaction`: status `compacted` (a
    working summary was written here); `paused`: message."""


class ChatHistoryResult(Message):
    items: list[ChatHistoryItem]
    """The most recent visible items, oldest first (undone and cleared records are left out)."""
    truncated: bool
    """Older items exist that were left out."""
    usage: UsageModel
    """The session's usage total: every provider call it ever made (chat, compaction,
    learning; rejected, discarded and undone ones included), each counted once (C10)."""


class CommandParams(WorkspaceParams):
    session_id: str | None = Field(None, max_length=64)
    """The chat session the line was typed in, if any."""
    line: str = Field(min_length=1, max_length=200_000)
    """A `/memory ...` or `/compact` line, exactly as typed."""


class CommandResult(Message):
    output: str
    """The command's answer: plain text, often in columns or JSON (show it preformatted)."""


class SessionCompactResult(Message):
    status: Literal["compacted", "nothing", "rejected", "failed", "stale"]
    """`compacted` (a new working summary), `nothing` (no complete exchange can be covered while
    four messages stay raw), `rejected` (the model's summary was empty, truncated, too long,
    called tools, or lost what the new exchanges added: the cutoff did not move), `failed` (the provider
    failed), `stale` (the session or a forget changed it meanwhile; the summary was discarded)."""
    message: str | None = None
    """Why, for anything but `compacted`; for `rejected`, a code: `tool_calls`, `truncated`,
    `incomplete` (an end other than stop or length), `empty`, `oversized`, `echoed_input` (an
    inert-data tag line, or more than half of the new transcript copied), `unchanged_summary`
    (the previous summary returned while new exchanges exist), `other_language` (in another
    language than the session and holding none of its terms: not a summary of it; a faithful
    summary is kept whatever its language),
    `injected_instructions` (an instruction to the assistant that is not in its input),
    `new_terms_lost` (none of the new exchanges' identifiers, paths, versions and convention
    words kept) or, for automatic compaction only, `given_up` followed by a sentence for the
    person (3 summaries of this session were rejected since its last accepted one: no call is
    made until this request, which always tries, is accepted)."""
    covered_through: int
    """The last seq the working summary now covers (0: none)."""
    usage: UsageModel
    """The summarisation call's usage (calls 0 when none was made)."""


class ProviderInfoParams(Params):
    """No fields: the provider is one per server, whatever the folder."""


class ProviderInfoResult(Message):
    """The chat provider as the server's settings (config.toml, then the editor's) name it."""

    configured: bool
    """Whether `[provider] base_url` is set. Without it chat and compaction answer
    `provider_not_configured` and nothing is sent anywhere."""
    base_url: str | None
    """The base URL, without any user name or password it holds; null when unset."""
    model: str
    """The model chat asks for (`[provider] model`)."""
    api_key_env: str
    """The environment variable the API key is read from; empty for none."""
    api_key_set: bool
    """Whether that variable holds a key in the server's environment (the key is never sent)."""
