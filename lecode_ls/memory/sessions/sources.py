"""Source references: the exact transcript records a fact or summary rests on (S2, S3).

A `SourceRef` names a session, the message seqs it cites, and the digest of every record from
the first cited seq to the last, inclusive: events between messages and all metadata (tool names,
arguments, outputs, usage) are hashed too. `validate_source` rechecks a reference on every use;
nothing about a past validation is trusted or cached, except what the session store caches about
its own files (the index, and visibility replayed from undo/redo/clear events), so the cost of a
check grows with the size of the cited range, not with the length of the transcript.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from lecode_ls.errors import (
    CorruptTranscript,
    InvalidParams,
    InvalidSessionId,
    InvalidSource,
    SessionNotFound,
    SourceInvalid,
    SymlinkRefused,
)
from lecode_ls.memory.canonical import records_digest
from lecode_ls.memory.sessions.records import check_session_id
from lecode_ls.memory.sessions.store import Purpose, SessionStore, Visibility

MAX_POSITIONS = 200
"""A source covers at most this many consecutive seq positions (first to last cited, inclusive)."""

_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")

Status = Literal["valid", "missing", "stale", "hidden"]

Reason = Literal[
    "project",  # missing: the store no longer belongs to the project being served
    "not_found",  # missing: no such session (never existed here, or deleted)
    "symlink",  # missing: the transcript or its folder is a symbolic link
    "corrupt",  # stale: the transcript is damaged
    "out_of_range",  # stale: the transcript is shorter than the cited range
    "digest",  # stale: the records changed
    "not_message",  # stale: a cited seq is not a message
    "undone",  # hidden: an undo that was not redone hides a cited message
    "cleared",  # hidden: working purpose, and a clear came after a cited message
    "excluded",  # hidden: a forget excluded a cited message
]


class ExclusionReader(Protocol):
    """Where forgotten evidence is recorded (the FactStore implements this)."""

    def excluded_seqs(self, session_id: str) -> frozenset[int]:
        """The seqs of `session_id` that a forget excluded; they can never be evidence again."""
        ...

    def scrubbed_digest(self, session_id: str, seqs: Sequence[int], digest: str) -> str | None:
        """The digest a secret scrub moved a reference's `digest` to, or None: a reference that
        a crash left on its old digest after its records were scrubbed (facts/scrubs.py)."""
        ...


def moved_by(exclusions: ExclusionReader | None) -> Callable[[SourceRef], str | None] | None:
    """The `moved` argument of `judge_source` for a reader (None: no reader, nothing moved)."""
    if exclusions is None:
        return None
    return lambda ref: exclusions.scrubbed_digest(ref.session_id, ref.seqs, ref.digest)


def _invalid(field: str, message: str) -> InvalidSource:
    return InvalidSource(f"{field}: {message}", field=field)


@dataclass(frozen=True)
class SourceRef:
    """An immutable reference to evidence: `seqs` are the cited message seqs (0-based, strictly
    increasing, spanning at most 200 positions); `digest` is `records_digest` of every record
    from `seqs[0]` to `seqs[-1]`, inclusive."""

    session_id: str
    seqs: tuple[int, ...]
    digest: str

    def __post_init__(self) -> None:
        _check_ref(self.session_id, self.seqs, self.digest, "source")

    @property
    def first(self) -> int:
        return self.seqs[0]

    @property
    def last(self) -> int:
        return self.seqs[-1]

    def to_json(self) -> dict[str, Any]:
        """`{"session_id", "seqs", "digest"}`, the form stored and sent to clients."""
        return {"session_id": self.session_id, "seqs": list(self.seqs), "digest": self.digest}

    @classmethod
    def from_json(cls, value: object, field: str = "source") -> SourceRef:
        """Parse `to_json`'s form; `InvalidSource` naming `field` for anything else."""
        if not isinstance(value, dict):
            raise _invalid(field, "expected an object {session_id, seqs, digest}")
        unknown = sorted(set(value) - {"session_id", "seqs", "digest"})
        if unknown:
            raise _invalid(f"{field}.{unknown[0]}", "is not a field of a source reference")
        seqs = value.get("seqs")
        if not isinstance(seqs, list):
            raise _invalid(f"{field}.seqs", "expected an array of seqs")
        session_id, digest = value.get("session_id"), value.get("digest")
        _check_ref(session_id, seqs, digest, field)
        assert isinstance(session_id, str) and isinstance(digest, str)
        return cls(session_id, tuple(seqs), digest)


def _check_ref(session_id: object, seqs: object, digest: object, field: str) -> None:
    try:
        check_session_id(session_id, f"{field}.session_id")
    except InvalidSessionId as error:
        raise _invalid(f"{field}.session_id", error.message.split(": ", 1)[1]) from None
    if (
        not isinstance(seqs, tuple | list)
        or not seqs
        or not all(type(s) is int and s >= 0 for s in seqs)
        or any(a >= b for a, b in itertools.pairwise(seqs))
    ):
        raise _invalid(f"{field}.seqs", "expected strictly increasing seqs, at least one")
    if seqs[-1] - seqs[0] + 1 > MAX_POSITIONS:
        raise _invalid(f"{field}.seqs", f"a source spans at most {MAX_POSITIONS} positions")
    if not isinstance(digest, str) or not _DIGEST.fullmatch(digest):
        raise _invalid(f"{field}.digest", "expected sha256: and 64 lower-case hex digits")


@dataclass(frozen=True)
class ValidatedSource:
    """The verdict of one `validate_source`. `records` (every record from the first cited seq to
    the last, as hashed) is filled only when `status` is "valid"; `reason` says why it is not."""

    ref: SourceRef
    status: Status
    reason: Reason | None = None
    records: tuple[dict[str, Any], ...] = ()

    @property
    def valid(self) -> bool:
        return self.status == "valid"

    def require(self, field: str = "source") -> ValidatedSource:
        """Return self if valid, else raise `SourceInvalid` carrying the status."""
        if self.status != "valid":
            raise SourceInvalid(
                f"{field}: the source in session {self.ref.session_id} is {self.status} "
                f"({self.reason})",
                status=self.status,
                field=field,
            )
        return self


def source_snapshot(
    store: SessionStore,
    session_id: str,
    start_seq: int,
    end_seq: int,
    *,
    exclusions: ExclusionReader | None = None,
) -> SourceRef:
    """Capture the visible messages of `start_seq` .. `end_seq` (inclusive, at most 200 positions).

    Visible means: a message, not undone, after the last clear (the working purpose: snapshots are
    taken for new evidence), and not excluded. The digest covers every record from the first
    captured message to the last, events and hidden records between them included. Appends are
    fsynced before they return, so what is hashed here is already durable.
    """
    check_session_id(session_id, "sessionId")
    for name, value in (("start_seq", start_seq), ("end_seq", end_seq)):
        if type(value) is not int or value < 0:
            raise InvalidParams(f"{name}: expected a seq, an integer >= 0", field=name)
    if end_seq - start_seq + 1 > MAX_POSITIONS:
        raise InvalidParams(
            f"end_seq: a source covers at most {MAX_POSITIONS} positions; "
            f"{start_seq}..{end_seq} covers {end_seq - start_seq + 1}",
            field="end_seq",
        )
    view = store.read_range(session_id, start_seq, end_seq)
    excluded = exclusions.excluded_seqs(session_id) if exclusions is not None else frozenset()
    messages = [
        seq for seq, record in enumerate(view.records, start_seq) if record["kind"] == "message"
    ]
    seqs = [s for s in messages if view.visibility.visible(s, "working") and s not in excluded]
    if not messages:
        raise InvalidParams(
            f"start_seq: {start_seq}..{end_seq} holds no message", field="start_seq"
        )
    if not seqs:
        raise SourceInvalid(
            f"start_seq: {start_seq}..{end_seq} is hidden (undone, cleared or forgotten)",
            status="hidden",
            field="start_seq",
        )
    covered = view.records[seqs[0] - start_seq : seqs[-1] - start_seq + 1]
    return SourceRef(session_id, tuple(seqs), records_digest(covered))


def validate_source(
    store: SessionStore,
    ref: SourceRef,
    *,
    purpose: Purpose = "working",
    exclusions: ExclusionReader | None = None,
    project_root_check: Callable[[], bool] | None = None,
) -> ValidatedSource:
    """Recheck `ref` now: project, ID, existence, corruption, digest, visibility, exclusions.

    - missing: the project's identity check says the store is not this project's any more
      (`project_root_check`, by default the store's own `identity`, the Runtime's: S3 rechecks
      project identity on every use), or the
      session does not exist here (deleted sessions orphan their facts; an import under a renamed
      ID is a different session), or a link stands where it should be.
    - stale: the transcript is damaged, shorter than the range, or its records' digest differs.
    - hidden: a cited message is undone (both purposes), precedes the last clear (purpose
      "working" only: durable facts survive /clear), or is excluded by a forget.
    Storage failures other than these (disk errors) raise `StoreError`: they are not a verdict.
    """
    if purpose not in ("working", "durable"):
        raise InvalidParams('purpose: expected "working" or "durable"', field="purpose")

    def verdict(status: Status, reason: Reason) -> ValidatedSource:
        return ValidatedSource(ref, status, reason)

    check = project_root_check if project_root_check is not None else store.identity
    if check is not None and not check():
        return verdict("missing", "project")
    try:
        view = store.read_range(ref.session_id, ref.first, ref.last, clamp=True)
    except (SessionNotFound, InvalidSessionId):
        return verdict("missing", "not_found")
    except SymlinkRefused:
        return verdict("missing", "symlink")
    except CorruptTranscript:
        return verdict("stale", "corrupt")
    if len(view.records) != ref.last - ref.first + 1:
        return verdict("stale", "out_of_range")
    excluded = exclusions.excluded_seqs(ref.session_id) if exclusions is not None else frozenset()
    return judge_source(ref, view.records, view.visibility, excluded, purpose, moved_by(exclusions))


def judge_source(
    ref: SourceRef,
    records: Sequence[dict[str, Any]],
    visibility: Visibility,
    excluded: frozenset[int],
    purpose: Purpose = "working",
    moved: Callable[[SourceRef], str | None] | None = None,
) -> ValidatedSource:
    """The checks of `validate_source` on records already read: `records` are exactly those of
    `ref.first` .. `ref.last`, read with `visibility` under one lock. For a caller holding a whole
    transcript (the working view), so each reference does not read its range again. `moved`
    names the digest a secret scrub moved the reference to, asked only when the digest differs."""
    try:
        digest = records_digest(records)
    except (TypeError, ValueError):  # a hand-edited line holding a lone surrogate, say
        return ValidatedSource(ref, "stale", "corrupt")
    if digest != ref.digest and (moved is None or moved(ref) != digest):
        return ValidatedSource(ref, "stale", "digest")
    if any(records[seq - ref.first].get("kind") != "message" for seq in ref.seqs):
        return ValidatedSource(ref, "stale", "not_message")
    if any(seq in visibility.hidden for seq in ref.seqs):
        return ValidatedSource(ref, "hidden", "undone")
    if not all(visibility.visible(seq, purpose) for seq in ref.seqs):
        return ValidatedSource(ref, "hidden", "cleared")
    if any(seq in excluded for seq in ref.seqs):
        return ValidatedSource(ref, "hidden", "excluded")
    return ValidatedSource(ref, "valid", None, tuple(records))


def validate_sources(
    store: SessionStore,
    refs: Sequence[SourceRef],
    *,
    purpose: Purpose = "durable",
    exclusions: ExclusionReader | None = None,
) -> list[ValidatedSource]:
    """`validate_source` of each of `refs`, the same verdicts, with each session's transcript
    read once (one range covering all its references, under one lock) and its exclusions read
    once: for a caller judging many references at once (the doctor). A session whose covering
    range cannot be read as a whole (a damaged line anywhere in it) is judged reference by
    reference, so a damaged line outside a reference's range never changes its verdict."""
    if store.identity is not None and not store.identity():  # once for the batch (S3)
        return [ValidatedSource(ref, "missing", "project") for ref in refs]
    by_session: dict[str, list[int]] = {}
    for index, ref in enumerate(refs):
        by_session.setdefault(ref.session_id, []).append(index)
    verdicts: list[ValidatedSource | None] = [None] * len(refs)
    for session_id, indexes in by_session.items():
        first = min(refs[i].first for i in indexes)
        last = max(refs[i].last for i in indexes)
        try:
            view = store.read_range(session_id, first, last, clamp=True)
        except (SessionNotFound, InvalidSessionId):
            for i in indexes:
                verdicts[i] = ValidatedSource(refs[i], "missing", "not_found")
            continue
        except SymlinkRefused:
            for i in indexes:
                verdicts[i] = ValidatedSource(refs[i], "missing", "symlink")
            continue
        except (CorruptTranscript, InvalidParams):
            for i in indexes:
                verdicts[i] = validate_source(
                    store, refs[i], purpose=purpose, exclusions=exclusions
                )
            continue
        excluded = exclusions.excluded_seqs(session_id) if exclusions is not None else frozenset()
        for i in indexes:
            ref = refs[i]
            records = view.records[ref.first - first : ref.last - first + 1]
            if len(records) != ref.last - ref.first + 1:
                verdicts[i] = ValidatedSource(ref, "stale", "out_of_range")
            else:
                verdicts[i] = judge_source(
                    ref, records, view.visibility, excluded, purpose, moved_by(exclusions)
                )
    return [verdict for verdict in verdicts if verdict is not None]
