"""Validating fact sources without a lock, for readers outside the server (`lecode-ls context`).

`SourceVerdicts` reads transcripts through the session store, which locks each transcript for the
length of a read and may rewrite a stale index: a running server would wait on that lock. A hook
that runs at every prompt must not make it wait, and must never write. `PeekVerdicts` answers the
same question (does this reference validate now, for a durable use) by reading the transcript's
bytes without any lock:

- transcripts only ever grow by whole lines (transcript.py), so what a lock-free read sees is a
  prefix of the file; a final line without its newline (an append under way) is left out;
- the file is opened without following a link, must be a regular file (a FIFO is never opened
  for reading: `read_regular`), and is read only up to MAX_PEEK_BYTES: a larger transcript's
  facts are left out (logged), never read whole;
- the header, the cited lines and every line that may be an undo/redo/clear event are decoded
  and checked at their position as the store checks them (the store, too, checks the lines it
  reads, not every line), the events are replayed as the store replays them, and the cited records are judged by `judge_source`, so a
  reference is valid here exactly when it would be there. Anything doubtful is "not valid": the
  fact is left out of this one answer, nothing is repaired.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from lecode_ls.memory.files import read_regular
from lecode_ls.memory.sessions.records import VISIBILITY_CODES, Damage, check_stored, kind_code
from lecode_ls.memory.sessions.sources import (
    ExclusionReader,
    SourceRef,
    judge_source,
    moved_by,
)
from lecode_ls.memory.sessions.store import Visibility, _BadEvent, _history

log = logging.getLogger(__name__)

MAX_PEEK_BYTES = 64 * 1024 * 1024
"""The largest transcript a lock-free reader reads (a 1 GiB one is not read at all)."""


class Peeked:
    """The complete lines of one transcript, read without a lock, decoded as they are asked for:
    like the store, which checks the lines it reads rather than every line of the file."""

    def __init__(self, session_id: str, lines: list[bytes], visibility: Visibility) -> None:
        self.session_id = session_id
        self.lines = lines
        self.visibility = visibility
        self._records: dict[int, dict[str, Any]] = {}

    def records(self, first: int, last: int) -> list[dict[str, Any]] | None:
        """Records `first` .. `last`, each checked at its position; None if one is damaged."""
        if last >= len(self.lines):
            return None
        try:
            for seq in range(first, last + 1):
                if seq not in self._records:
                    self._records[seq] = _record(self.lines[seq], seq, self.session_id)
        except (ValueError, Damage):
            return None
        return [self._records[seq] for seq in range(first, last + 1)]


def _record(line: bytes, seq: int, session_id: str) -> dict[str, Any]:
    record = json.loads(line)
    check_stored(record, seq, session_id)
    assert isinstance(record, dict)
    return record


def peek_transcript(folder: Path, session_id: str) -> Peeked | None:
    """The complete lines of `<folder>/<session_id>.jsonl` and its visibility, read without a
    lock; None when it is missing, not a regular file, a link, too large or damaged."""
    path = folder / f"{session_id}.jsonl"
    try:
        data = read_regular(path, MAX_PEEK_BYTES + 1)
    except OSError as error:  # NotRegularFile (a FIFO, a folder) is one
        log.info("session %s: not read (%s)", session_id, type(error).__name__)
        return None
    if data is None:
        return None
    if len(data) > MAX_PEEK_BYTES:
        log.info("session %s: larger than %d bytes; its facts are left out", session_id, len(data))
        return None
    lines = data.split(b"\n")[:-1]  # the last piece is empty or an append under way
    events: list[tuple[int, dict[str, Any]]] = []
    try:
        _record(lines[0], 0, session_id)  # the header
        for seq, line in enumerate(lines):
            # An event record holds the bytes "event" unescaped (its kind); a line without them
            # cannot be one, and is decoded only if a reference cites it.
            if seq and b'"event"' in line:
                record = _record(line, seq, session_id)
                if kind_code(record) in VISIBILITY_CODES:
                    events.append((seq, record))
        visibility, _ = _history(events)
    except (ValueError, IndexError, Damage, _BadEvent) as error:
        log.info("session %s: damaged (%s); its facts are left out", session_id, error)
        return None
    return Peeked(session_id, lines, visibility)


class PeekVerdicts:
    """`SourceVerdicts.is_valid` without locks or writes, for one short-lived reader: each
    transcript is read once (the first time a reference cites it) and kept for the reader's
    life."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._read: dict[str, Peeked | None] = {}

    def is_valid(self, ref: SourceRef, exclusions: ExclusionReader, generation: int) -> bool:
        del generation  # nothing is remembered past this reader
        if ref.session_id not in self._read:
            self._read[ref.session_id] = peek_transcript(self.folder, ref.session_id)
        peeked = self._read[ref.session_id]
        if peeked is None:
            return False
        cited = peeked.records(ref.first, ref.last)
        if cited is None:
            return False
        excluded = exclusions.excluded_seqs(ref.session_id)
        moved = moved_by(exclusions)
        return judge_source(ref, cited, peeked.visibility, excluded, "durable", moved).valid
