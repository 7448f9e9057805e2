"""The error tree of lecode-ls.

Every failure a client can cause is a `LecodeError` with a stable machine `code` (it reaches the
client as `error.data.code`) and a message that is a sentence naming the field or file at fault.
The core raises these; only the server boundary turns them into JSON-RPC errors. Messages never
contain a traceback or a path of the server's own installation; store paths appear only where the
client asked about the store itself.
"""

from __future__ import annotations

from typing import ClassVar

# JSON-RPC codes. -32602 is "invalid params"; -32000 is the first code of the range JSON-RPC
# leaves to implementations, used for every domain error (the stable detail is `data.code`).
INVALID_PARAMS = -32602
DOMAIN_ERROR = -32000


class LecodeError(Exception):
    """Base of every error a client may see. `code` is stable; the message is for people."""

    code: ClassVar[str] = "error"
    rpc_code: ClassVar[int] = DOMAIN_ERROR

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


class InvalidParams(LecodeError):
    """Params that do not match a request's schema."""

    code = "invalid_params"
    rpc_code = INVALID_PARAMS


class InvalidName(LecodeError):
    """A memory file or note name that is not one of the allowed store-relative names."""

    code = "invalid_name"
    rpc_code = INVALID_PARAMS


class InvalidPattern(LecodeError):
    """A search pattern that is not a valid regular expression."""

    code = "invalid_pattern"
    rpc_code = INVALID_PARAMS


class NotFound(LecodeError):
    """A named thing (file, fact, session) does not exist."""

    code = "not_found"


class NoMatch(LecodeError):
    """An edit whose search text does not occur in the file."""

    code = "no_match"


class SymlinkRefused(LecodeError):
    """A store file or folder is a symbolic link; lecode-ls never follows links in its store."""

    code = "symlink_refused"


class OutsideWorkspace(LecodeError):
    """A URI or path that lies outside every open workspace folder."""

    code = "outside_workspace"
    rpc_code = INVALID_PARAMS


class NoWorkspace(LecodeError):
    """A request that needs a project, sent while no workspace folder is open."""

    code = "no_workspace"


class FileTooLarge(LecodeError):
    """A memory file, or the result of a write or edit, over the store's per-file size cap."""

    code = "file_too_large"


class MemoryDisabled(LecodeError):
    """A memory request while `[memory] enabled = false`."""

    code = "memory_disabled"

    def __init__(self) -> None:
        super().__init__(
            "project memory is disabled ([memory] enabled = false); enable it in config.toml "
            "or the editor setting lecode.memory.enabled"
        )


class StoreError(LecodeError):
    """The store could not be read or written (disk full, permissions, a damaged file)."""

    code = "store_error"


# Facts (lecode_ls/memory/facts/store.py).


class FactNotFound(NotFound):
    """A fact ID that was never stored, or that was forgotten."""

    code = "fact_not_found"


class DuplicateFact(LecodeError):
    """the text equals a stored fact's once case, spacing and a sentence's final full stop are set aside (signs, operators, digits and separators count): no second fact is made; `data.factId` names that fact

    (F8, issue 26.) Only a request is refused this way; learning and MCP get the stored fact back.
    """

    code = "duplicate_fact"

    def __init__(self, message: str, *, fact_id: int, field: str | None = "text") -> None:
        super().__init__(message, field=field)
        self.fact_id = fact_id


class FactUnavailable(LecodeError):
    """the fact's evidence is missing or hidden: it cannot be retired or restored, only forgotten"""

    code = "fact_unavailable"


class FactNotValid(LecodeError):
    """the fact's evidence does not validate now (missing, stale, hidden, or no source): only a valid fact can be shared"""

    code = "fact_not_valid"


class SecretInFact(LecodeError):
    """the fact's text or a record of its evidence holds a secret: nothing is shared; `field` names which (`text`, or `evidence.records[<seq>]`)"""

    code = "secret_in_fact"


class NotACheckout(LecodeError):
    """sharing needs a Git checkout with a commit: the folder is in none (or Git cannot be run)"""

    code = "not_a_checkout"


class SharedFactTooLarge(LecodeError):
    """the shared file would pass its size bound (its evidence is too large): nothing is shared"""

    code = "shared_fact_too_large"


class SharedFactNotFound(NotFound):
    """no shared fact of that ID in the checkout (`.lecode/facts/<id>.json`)"""

    code = "shared_fact_not_found"


class RevisionNotFound(NotFound):
    """A revision number that the named fact does not have."""

    code = "revision_not_found"


class StaleRevision(LecodeError):
    """An optimistic revision check failed: the fact moved on since the caller read it."""

    code = "stale_revision"


class StaleGeneration(LecodeError):
    """The project's exclusion generation moved on (something was forgotten) since the caller read it."""

    code = "stale_generation"


class ExcludedEvidence(LecodeError):
    """Evidence that cites a source position a forget excluded; it can never be used again."""

    code = "excluded_evidence"


class InvalidSource(LecodeError):
    """A source reference that is malformed, fails validation, or cannot justify the change."""

    code = "invalid_source"


class SourceAlreadyAttached(LecodeError):
    """A revision already carries a different source reference; each revision holds one."""

    code = "source_already_attached"


# Sessions and sources (memory/sessions/transcript.py, memory/sessions/store.py and
# memory/sessions/sources.py).


class InvalidSessionId(LecodeError):
    """A session ID that is not exactly `YYYYMMDDTHHMMSSZ-xxxxxxxx` (never a path, prefix or name)."""

    code = "invalid_session_id"
    rpc_code = INVALID_PARAMS


class SessionNotFound(NotFound):
    """A well-formed session ID with no transcript in this project's store."""

    code = "session_not_found"


class CorruptTranscript(StoreError):
    """A transcript damaged before its final line: a bad line, a seq out of place, a wrong header.

    A torn final line (a crash mid-append) is not corruption: it is cut off when the file is opened.
    """

    code = "corrupt_transcript"


class SessionAttached(LecodeError):
    """A session that cannot be deleted because a chat or another window has it attached."""

    code = "session_attached"


class SessionBusy(LecodeError):
    """A session that already has a chat turn running (one turn at a time per session)."""

    code = "session_busy"


# Questions to the person (lecode_ls/server/questions/).


class QuestionNotFound(NotFound):
    """An answer to a question that is not waiting: answered already, withdrawn, or never asked."""

    code = "question_not_found"


class TooManyQuestions(LecodeError):
    """A question while 16 others still wait for an answer."""

    code = "questions_pending"


class NothingToUndo(LecodeError):
    """An undo with no visible exchange after the last clear."""

    code = "nothing_to_undo"


class NothingToRedo(LecodeError):
    """A redo with no undo left to restore."""

    code = "nothing_to_redo"


class SourceInvalid(InvalidSource):
    """A source reference that `validate_source` did not find valid; `status` says why.

    `status` is "missing" (no such session here), "stale" (its records changed or are damaged) or
    "hidden" (undone, cleared from working context, or excluded by a forget).
    """

    code = "source_not_valid"

    def __init__(self, message: str, *, status: str, field: str | None = None) -> None:
        super().__init__(message, field=field)
        self.status = status


# The model provider (lecode_ls/agent/openai.py). Messages never contain the API key.


class ProviderNotConfigured(LecodeError):
    """Chat or compaction while no provider is configured (base_url unset); nothing was sent.

    The message names the settings to set, in config.toml and in the editor."""

    code = "provider_not_configured"


class ProviderKeyMissing(LecodeError):
    """a request the provider could only refuse, so nothing was sent: the variable `[provider] api_key_env` names (other than the default OPENAI_API_KEY) is unset or empty, or no key is set and base_url is not a loopback address

    A set-up problem, found before anything leaves the machine (memory included); the message
    names the variable, never a key."""

    code = "provider_key_missing"


class ProviderKeyInvalid(LecodeError):
    """the API key holds a character an HTTP header cannot carry (a control character, a space or a non-ASCII character inside it): nothing was sent, and the message names the variable, never the key

    Line breaks and spaces around a key (a CRLF env file) are trimmed instead, with a warning in
    the log."""

    code = "provider_key_invalid"


class ProviderError(LecodeError):
    """The model provider failed a request; the message quotes its status and error, trimmed."""

    code = "provider_error"
    status: int | None = None
    """The HTTP status of an error answer, when there was one (set by the adapter)."""


class ProviderAuth(ProviderError):
    """The provider rejected the API key (HTTP 401 or 403)."""

    code = "provider_auth"


class ProviderUnreachable(ProviderError):
    """The provider's base URL could not be reached (DNS, refused or timed-out connection)."""

    code = "provider_unreachable"


class ProviderModel(ProviderError):
    """The provider does not know the configured model."""

    code = "provider_model"


class ProviderTimeout(ProviderError):
    """The provider sent nothing for longer than the read timeout, between two chunks."""

    code = "provider_timeout"


class ProviderIncomplete(ProviderError):
    """The stream ended before the provider finished (no finish reason and no `[DONE]`)."""

    code = "provider_incomplete"


class ContextOverflow(ProviderError):
    """The provider refused the request as longer than the model's context window (llama.cpp's
    "exceeds the available context size", OpenAI's `context_length_exceeded`, vLLM's and
    Ollama's "maximum context length"). The runner compacts, or pauses with the reason."""

    code = "context_overflow"


# Agent tools (lecode_ls/tools/memory.py, tools/read.py).


class PermissionDenied(LecodeError):
    """A write-class tool call the permission policy denied, or the person refused when asked."""

    code = "permission_denied"


class ReadonlyMode(LecodeError):
    """A write-class tool called in readonly mode or from a child context."""

    code = "readonly"


class BinaryFile(LecodeError):
    """A workspace file the `read` tool refuses because it holds binary data."""

    code = "binary_file"
