"""The JSON objects of the session (transcript) methods, and the source reference that the fact
payloads share.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from lecode_ls.server.messages import Message, Params, WorkspaceParams
from lecode_ls.server.questions.messages import QuestionModel

Status = Literal["valid", "missing", "stale", "hidden", "unverified"]


class SourceRefModel(Message):
    """Evidence: exact transcript records, checked by digest at every use."""

    session_id: str
    """The exact session ID (`YYYYMMDDTHHMMSSZ-xxxxxxxx`)."""
    seqs: list[int] = Field(min_length=1, max_length=200)
    """The cited message seqs (0-based, increasing, spanning at most 200 positions)."""
    digest: str
    """`sha256:` + hex of the canonical JSON of every record from the first seq to the last."""


class SessionInfoModel(Message):
    session_id: str
    """The exact session ID."""
    title: str
    """The session's title (may be empty)."""
    created: str
    """Creation time (ISO 8601, UTC)."""
    records: int
    """Number of records, the header included (the next seq)."""
    corrupt: bool = False
    """The transcript is damaged before its end (listed so it can be inspected)."""
    citing_facts: int = 0
    """How many facts cite this session (any revision): deleting it leaves them `missing`."""
    origin: Literal["chat", "editor", "mcp", "import"] = "chat"
    """What made it: `chat` (a chat session, or anything else), `editor` (the "Remembered in
    the editor" session of selections), `mcp` (an MCP client's, "MCP: <client>"), `import`
    (`lecode/session/import`; older imports are known only when their ID was taken)."""


class SessionListParams(WorkspaceParams):
    pass


class SessionListResult(Message):
    sessions: list[SessionInfoModel]
    """Every session of the project, oldest first."""


class SessionImportParams(WorkspaceParams):
    records: list[dict[str, Any]] | None = Field(None, max_length=100_000)
    """OpenAI-style messages `{role, content, tool_calls?, tool_call_id?, name?}`, or the records
    of a transcript lecode-ls exported. Exactly one of `records` and `path`."""
    path: str | None = Field(None, max_length=4096)
    """A JSONL file of either kind, or a Claude Code session or Codex CLI rollout, inside a
    workspace folder."""
    title: str | None = Field(None, max_length=200)
    """A title for the new session."""


class SessionImportResult(Message):
    session_id: str
    """The new session's ID."""
    renamed_from: str | None
    """The exported session's own ID when it collided with an existing one (then a new ID is
    minted; old provenance is never remapped)."""


class SessionRangeParams(WorkspaceParams):
    session_id: str = Field(max_length=64)
    """The exact session ID."""
    start_seq: int = Field(ge=0)
    """First seq of the range (0-based, inclusive)."""
    end_seq: int = Field(ge=0)
    """Last seq of the range (inclusive); at most 200 positions in all."""


class SessionReadParams(SessionRangeParams):
    offset: int = Field(0, ge=0)
    """Character offset into `sourceText` (pass back `nextOffset`)."""
    limit: int | None = Field(None, ge=1)
    """Page size in characters (default 4096, at most 8192; smaller when escaping needs it)."""


class RecallSessionResult(Message):
    """The recall page of a session range (R1-R7). Only a valid answer carries text."""

    session_id: str
    """The session ID asked for."""
    start_seq: int
    """The range asked for."""
    end_seq: int
    """The range asked for."""
    status: Status
    """valid, missing (no such session), stale (changed or damaged) or hidden (undone, cleared,
    forgotten)."""
    label: str | None = None
    """Reminder that recalled text is untrusted evidence, not instructions."""
    source: SourceRefModel | None = None
    """The visible messages of the range and their digest; compare it across pages."""
    source_text: str | None = None
    """One character page of a JSON array of the cited records; concatenate pages, then parse."""
    offset: int | None = None
    """Offset of this page."""
    next_offset: int | None = None
    """Offset of the next page; null when this is the last."""


class SessionSnapshotParams(SessionRangeParams):
    pass


class SessionNewParams(WorkspaceParams):
    title: str = Field("", max_length=200)
    """A title for the session (may be empty)."""


class SessionIdResult(Message):
    session_id: str
    """The session's exact ID."""


class SessionParams(WorkspaceParams):
    session_id: str = Field(max_length=64)
    """The exact session ID."""


class SessionSeqsResult(Message):
    seqs: list[int]
    """The seqs the undo hid, or the redo restored."""


class SessionClearResult(Message):
    seq: int
    """The seq of the clear event: working context and session recall start after it."""


class SessionDeleteCommand(Params):
    params: SessionParams
    """`{workspaceUri?, sessionId}`."""


class SessionAskedResult(Message):
    question: QuestionModel
    """What the person was asked; the session is deleted on their Delete, and only then."""
    citing_facts: int
    """How many facts cite the session: they would become `missing`."""


class SessionDeleteResult(Message):
    citing_facts: int
    """How many facts cited the deleted session: they are `missing` now (orphaned, not purged)."""


class SessionRenameParams(WorkspaceParams):
    session_id: str = Field(max_length=64)
    """The exact session ID."""
    title: str = Field(max_length=200)
    """The new title; empty gives back the title the session began with."""


class SessionRenameResult(Message):
    title: str
    """The title now, as `lecode/session/list` shows it (unseen characters made spaces)."""


class AgentsDidFollowParams(Message):
    """After each poll of the followed agents' transcripts (`[agents] follow`), and after each
    compaction of a followed session: what following has done for the project so far."""

    workspace_uri: str
    """The workspace folder URI of the project."""
    project_root: str
    polls: int
    """Polls completed (one about every 2 s)."""
    appended: int
    """Records those polls appended to this project's sessions, in all."""
    compactions: int
    """Followed sessions compacted once idle, in all."""
