"""Rewriting a transcript's records in place: the scrub of a leaked secret (issue 27), the one
operation that changes records already written (everything else only appends, S1).

`rewrite` holds the transcript's lock for the whole operation, reads every record, asks
`change` for the new ones, lets the caller record what is about to change (`before_replace`:
the scrub journal in facts.sqlite3, committed before the file moves), then replaces the file
atomically: the new lines go to a locked temp file, fsynced, renamed over the transcript, and
the offset index is written while the new file is still locked. A crash at any instant leaves
the old file or the new one, whole; an index left missing or stale is rebuilt by the next open
(transcript.py). Another operation waiting on the old file's lock sees a new file when it gets
it and opens that one (transcript_files.lock_transcript).

`redact_records` redacts a transcript's records and keeps its compact events true: a lineage
chunk's or a prior's digest that held for the old records is recomputed over the new ones, so
a working summary survives the scrub of the records it covers (C5, C7).
"""

from __future__ import annotations

import bisect
import contextlib
from collections.abc import Callable, Sequence
from typing import Any

from lecode_ls.memory.canonical import canonical_json, records_digest
from lecode_ls.memory.files import atomic_write, fsync_dir
from lecode_ls.memory.sessions.records import kind_code
from lecode_ls.memory.sessions.transcript import open_locked
from lecode_ls.memory.sessions.transcript_files import ENTRY, TranscriptPaths, TranscriptState

Records = list[dict[str, Any]]


def rewrite(
    paths: TranscriptPaths,
    states: dict[str, TranscriptState],
    change: Callable[[Records], Records | None],
    before_replace: Callable[[Records, Records], None],
) -> bool:
    """Replace the transcript's records by `change(records)` (None: nothing to change). Returns
    whether the file was rewritten. `change` must keep every record's seq and kind."""
    with open_locked(paths, states) as transcript:
        count = transcript.state.count
        old = transcript.read(0, count - 1)
        new = change(old)
        if new is None:
            return False
        if len(new) != count or any(
            kind_code(a) != kind_code(b) for a, b in zip(old, new, strict=True)
        ):
            raise ValueError("a rewrite must keep every record's seq and kind")
        before_replace(old, new)
        _replace(paths, new)
    states.pop(paths.session_id, None)
    return True


def _replace(paths: TranscriptPaths, records: Records) -> None:
    lines = [canonical_json(record) + b"\n" for record in records]
    entries, offset = [], 0
    for record, line in zip(records, lines, strict=True):
        entries.append(ENTRY.pack(offset | kind_code(record) << 56))
        offset += len(line)

    def index() -> None:  # the new file is still locked: no one reads it before its index
        atomic_write(paths.idx, b"".join(entries), backup=False)
        fsync_dir(paths.jsonl.parent)

    with contextlib.suppress(FileNotFoundError):
        paths.idx.unlink()  # the old index must never describe the new file
    atomic_write(paths.jsonl, b"".join(lines), backup=False, locked=index)


def redact_records(
    session_id: str, records: Sequence[dict[str, Any]], redact: Callable[[Any], Any]
) -> tuple[Records, list[int]]:
    """`records` with `redact` applied to each, compact events relinked; and the changed seqs."""
    new: Records = []
    changed: list[int] = []
    for seq, record in enumerate(records):
        fresh = redact(record)
        if record.get("kind") == "event" and record.get("type") == "compact" and changed:
            fresh = _relink(session_id, fresh, records, new, changed)
        if fresh != record:
            changed.append(seq)
        new.append(fresh)
    return new, changed


def _relink(
    session_id: str,
    event: dict[str, Any],
    old: Sequence[dict[str, Any]],
    new: Records,
    changed: list[int],
) -> dict[str, Any]:
    """A compact event whose digests that held over `old` are recomputed over `new`. Only a
    range holding a changed seq is hashed again."""

    def touched(first: int, last: int) -> bool:
        at = bisect.bisect_left(changed, first)
        return at < len(changed) and changed[at] <= last

    def moved(first: int, last: int, digest: object) -> str | None:
        if not (0 <= first <= last < len(new)) or not touched(first, last):
            return None
        if records_digest(old[first : last + 1]) != digest:
            return None  # it did not hold before: the scrub does not make it hold
        return records_digest(new[first : last + 1])

    event = dict(event)
    lineage = event.get("lineage")
    if isinstance(lineage, list):
        chunks = []
        for chunk in lineage:
            seqs = chunk.get("seqs") if isinstance(chunk, dict) else None
            if (
                isinstance(seqs, list)
                and seqs
                and all(type(s) is int for s in seqs)
                and chunk.get("session_id") == session_id
                and (digest := moved(seqs[0], seqs[-1], chunk.get("digest"))) is not None
            ):
                chunk = {**chunk, "digest": digest}
            chunks.append(chunk)
        event["lineage"] = chunks
    prior = event.get("prior")
    if isinstance(prior, dict) and type(prior.get("seq")) is int:
        digest = moved(prior["seq"], prior["seq"], prior.get("digest"))
        if digest is not None:
            event["prior"] = {**prior, "digest": digest}
    return event
