"""The data types and input checks of the facts store (`facts.FactStore`).

Source-reference Protocols and callback types that callers implement, the frozen records that
reads return, and the argument checks every `FactStore` method runs before touching SQLite.
Nothing here opens a database.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from lecode_ls.errors import InvalidParams, InvalidSource
from lecode_ls.memory.facts.schema import as_int, parse_seqs

MAX_TEXT_BYTES = 4096  # one revision's text, UTF-8
MAX_SOURCE_POSITIONS = 200  # a SourceRef covers at most 200 sequence positions (S2)
MAX_SESSION_ID_CHARS = 256
MAX_DIGEST_CHARS = 128
ORIGIN = re.compile(r"[a-z][a-z0-9_]{0,31}")
SOURCE_FIELD = "source_snapshot"


class SourceLike(Protocol):
    """A source reference as the session store makes it (`sources.SourceRef` satisfies this)."""

    @property
    def session_id(self) -> str: ...
    @property
    def seqs(self) -> tuple[int, ...]: ...
    @property
    def digest(self) -> str: ...


class PositionsLike(Protocol):
    """Unverified legacy provenance: a session and positions, with no digest."""

    @property
    def session_id(self) -> str: ...
    @property
    def seqs(self) -> tuple[int, ...]: ...


Purpose = Literal["working", "durable"]
SourceCheck = Callable[[SourceLike, Purpose], None]
"""Raises a LecodeError when the reference does not validate for the purpose (S3)."""
AuthoredCheck = Callable[[SourceLike], bool]
"""True when the reference's positions include persisted user or assistant text (F6)."""


@dataclass(frozen=True)
class StoredRef:
    """A source reference as stored: exact session ID, ascending positions, digest."""

    session_id: str
    seqs: tuple[int, ...]
    digest: str


@dataclass(frozen=True)
class Positions:
    """One row of legacy provenance. Never trusted: it has no digest to validate."""

    session_id: str
    seqs: tuple[int, ...]


@dataclass(frozen=True)
class Fact:
    """A fact's current revision, as an administrative (unverified) read sees it."""

    id: int
    revision: int  # the current revision, 1-based
    text: str
    origin: str  # "unverified" (add), "remembered" (remember) or a caller's label
    source: StoredRef | None  # the reference attached to the current revision, not validated
    suppressed: bool  # some evidence of some revision was excluded by a forget: hide from recall
    created_at: str  # ISO 8601 UTC
    updated_at: str
    pinned: bool = False  # the person pinned it: injection shows it first
    retired: bool = False  # the person retired it: not injected, not known to learning
    used_at: str | None = None  # when it was last used (shown, recalled, found): issue 26
    use_count: int = 0


@dataclass(frozen=True)
class RevisionEvidence:
    """What one revision of a fact cites."""

    revision: int
    created_at: str
    source: StoredRef | None  # attached reference; must still be validated before use
    provenance: tuple[Positions, ...]  # legacy claims, untrusted and never upgraded
    text: str = ""  # the revision's text


def check_text(text: object) -> str:
    if not isinstance(text, str) or not text.strip():
        raise InvalidParams("text: a fact needs non-empty text", field="text")
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:
        raise InvalidParams(
            "text: contains a lone surrogate, not valid Unicode", field="text"
        ) from None
    if size > MAX_TEXT_BYTES:
        raise InvalidParams(
            f"text: {size} UTF-8 bytes; a fact holds at most {MAX_TEXT_BYTES}", field="text"
        )
    return text


def check_origin(origin: object) -> str:
    if not isinstance(origin, str) or not ORIGIN.fullmatch(origin):
        raise InvalidParams(
            "origin: use a short lower-case label such as 'unverified'", field="origin"
        )
    return origin


def check_int(value: object, field: str, minimum: int) -> int:
    if type(value) is not int or value < minimum:
        raise InvalidParams(f"{field}: must be an integer of at least {minimum}", field=field)
    return value


def check_fact_id(fact_id: object) -> int:
    if type(fact_id) is not int:
        raise InvalidParams("fact_id: must be an integer", field="fact_id")
    return fact_id


def check_positions(source: PositionsLike, field: str) -> tuple[str, tuple[int, ...]]:
    session_id, seqs = getattr(source, "session_id", None), getattr(source, "seqs", None)
    if not isinstance(session_id, str) or not 0 < len(session_id) <= MAX_SESSION_ID_CHARS:
        raise InvalidSource(
            f"{field}: session_id must be an exact, non-empty session ID", field=field
        )
    if not isinstance(seqs, (tuple, list)) or not 0 < len(seqs) <= MAX_SOURCE_POSITIONS:
        raise InvalidSource(
            f"{field}: seqs must list 1 to {MAX_SOURCE_POSITIONS} sequence positions", field=field
        )
    if any(type(seq) is not int or seq < 0 for seq in seqs) or list(seqs) != sorted(set(seqs)):
        raise InvalidSource(
            f"{field}: seqs must be distinct non-negative integers in ascending order", field=field
        )
    return session_id, tuple(seqs)


def check_ref(ref: SourceLike) -> StoredRef:
    session_id, seqs = check_positions(ref, SOURCE_FIELD)
    digest = getattr(ref, "digest", None)
    if not isinstance(digest, str) or not 0 < len(digest) <= MAX_DIGEST_CHARS:
        raise InvalidSource(
            f"{SOURCE_FIELD}: digest must be a non-empty string", field=SOURCE_FIELD
        )
    return StoredRef(session_id, seqs, digest)


def to_ref(session_id: object, seqs: object, digest: object) -> StoredRef | None:
    if session_id is None:
        return None
    return StoredRef(str(session_id), tuple(parse_seqs(seqs) or ()), str(digest))


def fact_from_row(row: Sequence[Any]) -> Fact:
    """A Fact from one row in the column order of `facts._FACT_COLUMNS`."""
    (fact_id, revision, text, origin, session_id, seqs, digest, suppressed, created, updated) = row[
        :10
    ]
    pin, retired, used_at, use_count = row[10:14]
    return Fact(
        id=as_int(fact_id),
        revision=as_int(revision),
        text=str(text),
        origin=str(origin),
        source=to_ref(session_id, seqs, digest),
        suppressed=bool(suppressed),
        created_at=str(created),
        updated_at=str(updated),
        pinned=bool(pin),
        retired=bool(retired),
        used_at=None if used_at is None else str(used_at),
        use_count=0 if use_count is None else as_int(use_count),
    )
