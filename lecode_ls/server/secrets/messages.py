"""Payloads of the secret scan and scrub methods. No payload ever carries a secret's value: a
place says where and what kind, and the person-given string of a scrub is only read."""

from __future__ import annotations

from pydantic import Field

from lecode_ls.server.messages import Message, Params, WorkspaceParams


class ScanSecretsParams(WorkspaceParams):
    limit: int = Field(default=100, ge=0, le=1000)
    """How many places to list, 0 to 1000 (default 100); `found` counts them all."""


class SecretPlace(Message):
    kind: str
    """What the detector found (`github-token`, `aws-access-key`, `url-password`, ...)."""
    file: str
    """The store file, relative to the project's store folder (`MEMORY.md.bak`,
    `sessions/<id>.jsonl`, `facts.sqlite3`); a secret in a note's name shows as its marker."""
    session_id: str | None = None
    """In a transcript: the session."""
    seq: int | None = None
    """In a transcript: the record."""
    fact_id: int | None = None
    """In facts.sqlite3: the fact."""
    revision: int | None = None
    """In facts.sqlite3: the revision of that fact (older ones count: they are kept)."""
    line: int | None = None
    """In a Markdown file or its `.bak`: the 1-based line (none for a secret in its name)."""


class RawFile(Message):
    file: str
    """A store file read byte for byte (SQLite's databases and WAL, indexes, titles)."""
    found: int
    """Secrets in its bytes: live text, and copies in free pages or the WAL a read cannot see."""
    kinds: dict[str, int]
    """Of which, by kind."""


class ScanSecretsResult(Message):
    found: int
    """Secrets found in notes, transcripts and fact revisions, in all."""
    kinds: dict[str, int]
    """Of which, by kind."""
    places: list[SecretPlace]
    """The first `limit` of them, notes first, then transcripts, then facts."""
    truncated: bool
    """Whether `found` is more than the places listed."""
    raw: list[RawFile]
    """Every other file of the store whose bytes hold a secret."""
    unreadable: list[str]
    """Transcripts that could not be read (damaged): not scanned."""


class ScrubSecretsParams(WorkspaceParams):
    secret: str | None = None
    """An exact string to scrub as well, detectable or not (a token just rotated), 8 to 16,384
    characters; it becomes `[secret:given:<8 hex>]`. Never logged, never stored."""


class ScrubSecretsResult(Message):
    notes: list[str]
    """The Markdown files and `.bak` copies rewritten."""
    titles: bool
    """Whether session titles (sessions/titles.json, what renames keep) were rewritten."""
    sessions: list[str]
    """The sessions whose transcripts were rewritten."""
    records: int
    """Transcript records rewritten."""
    reattached: int
    """Source references moved to their records' new digest (their facts stay `valid`)."""
    facts: list[int]
    """Facts whose text (in any revision) was redacted."""
    revisions: int
    """Fact revisions rewritten."""
    purged: bool
    """Whether SQLite's leftovers are gone (false: another process held a read on
    facts.sqlite3; the next scrub finishes it)."""
    remaining: int
    """What a scan finds afterwards in notes, transcripts and facts (0 unless a file could not
    be rewritten)."""


class ScanSecretsCommand(Params):
    params: ScanSecretsParams = ScanSecretsParams()
    """`{workspaceUri?, limit?}`."""


class ScrubSecretsCommand(Params):
    params: ScrubSecretsParams = ScrubSecretsParams()
    """`{workspaceUri?, secret?}`."""
