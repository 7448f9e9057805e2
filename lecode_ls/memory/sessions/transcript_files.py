"""A transcript's files on disk, below transcript.py: their names, what a process knows of one
(`TranscriptState`), the exclusive lock every operation holds on the .jsonl, and the creation of a
new transcript. The file format and the checks on it are transcript.py's (see its docstring).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lecode_ls import platform
from lecode_ls.errors import SessionNotFound, StoreError, SymlinkRefused
from lecode_ls.memory.canonical import canonical_json
from lecode_ls.memory.files import atomic_write, fsync_dir, temp_path, write_all
from lecode_ls.memory.sessions.records import VISIBILITY_CODES, kind_code

ENTRY = struct.Struct("<Q")
"""One index entry: bits 0-55 the line's byte offset, bits 56-63 its kind code."""


@dataclass(frozen=True)
class TranscriptPaths:
    """The files of one session. Only built from a checked session ID."""

    session_id: str
    jsonl: Path
    idx: Path
    lock: Path

    @classmethod
    def of(cls, sessions: Path, session_id: str) -> TranscriptPaths:
        return cls(
            session_id,
            sessions / f"{session_id}.jsonl",
            sessions / f"{session_id}.idx",
            sessions / f"{session_id}.lock",
        )


@dataclass
class TranscriptState:
    """What one process knows of a transcript, valid while the file keeps `key`.

    Mutated only by the holder of the transcript's lock. `codes[seq]` is the kind code of record
    `seq`; `events` holds the undo, redo and clear events, in order, as (seq, record). `index`
    holds the offset index (the .idx file's bytes) when that file could not be written, as on a
    read-only store: reads then use it instead of the file.
    """

    key: tuple[int, int, int]  # (inode, size, mtime_ns) of the .jsonl
    count: int
    header: dict[str, Any]
    codes: bytearray
    events: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    # Prefix digests (end seq -> sha256) and the file identity they hold for: the identity seen
    # when they were computed, moved on by this process's own appends (which add bytes after
    # every digested prefix) and by nothing else. ctime is in it: no program can set it back, so
    # an edit in place that restores size and mtime still clears them.
    trusted: tuple[int, int, int, int] | None = None
    digests: dict[int, str] = field(default_factory=dict)
    index: bytearray | None = None

    @property
    def size(self) -> int:
        return self.key[1]


def state_key(st: os.stat_result) -> tuple[int, int, int]:
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _os_error(paths: TranscriptPaths, error: OSError) -> Exception:
    if error.errno == errno.ELOOP:
        return SymlinkRefused(
            f"sessionId: sessions/{paths.jsonl.name} is a symbolic link; lecode-ls refuses to "
            "follow links in its store",
            field="sessionId",
        )
    return StoreError(f"sessions/{paths.jsonl.name} could not be read or written: {error.strerror}")


def _open_transcript(paths: TranscriptPaths) -> tuple[int, bool]:
    """The transcript's descriptor, and whether it may be written (False on a read-only store)."""
    try:
        try:
            return platform.open_file(paths.jsonl, write=True, append=True), True
        except OSError as error:
            if not platform.is_read_only_error(error):
                raise
        return platform.open_file(paths.jsonl), False
    except FileNotFoundError:
        raise session_not_found(paths) from None
    except OSError as error:
        raise _os_error(paths, error) from None


@contextlib.contextmanager
def lock_transcript(paths: TranscriptPaths) -> Iterator[tuple[int, os.stat_result, bool]]:
    """Open the transcript and hold an exclusive lock on it; yields (fd, its stat, writable).

    `writable` is False when the store cannot be written (the descriptor is then read-only).
    Raises `SessionNotFound` (also when it was deleted while we waited for the lock),
    `SymlinkRefused`, or `StoreError`; an `OSError` raised in the body becomes a `StoreError`.
    """
    for _ in range(3):
        fd, writable = _open_transcript(paths)
        try:
            platform.lock(fd)
            st = os.fstat(fd)
            try:
                current: os.stat_result | None = os.lstat(paths.jsonl)
            except FileNotFoundError:
                current = None
            if current is None or st.st_nlink == 0:
                raise session_not_found(paths)
            if not platform.current().same_file(current, st):
                continue  # deleted and imported again while we waited: open the new file
            if not stat.S_ISREG(st.st_mode):
                raise StoreError(f"sessions/{paths.jsonl.name} is not a regular file")
            yield fd, st, writable
            return
        except OSError as error:
            raise _os_error(paths, error) from None
        finally:
            platform.close(fd)
    raise StoreError(f"sessions/{paths.jsonl.name} kept changing while being opened")


def session_not_found(paths: TranscriptPaths) -> SessionNotFound:
    return SessionNotFound(
        f"sessionId: there is no session {paths.session_id} in this project", field="sessionId"
    )


def create_transcript(
    paths: TranscriptPaths, records: list[dict[str, Any]], cache: dict[str, TranscriptState]
) -> bool:
    """Write a new transcript holding `records` (seq already set); False if the ID is taken.

    The file is written and fsynced under a temporary name, locked, then linked into place, which
    fails rather than overwrite an existing session. Until the index is written the lock keeps
    every other reader out, so no one ever sees a transcript without its header.
    """
    folder = paths.jsonl.parent
    temp = temp_path(paths.jsonl)
    fd = platform.open_file(temp, write=True, create=True, exclusive=True)
    try:
        platform.lock(fd)
        lines = [canonical_json(record) + b"\n" for record in records]
        write_all(fd, b"".join(lines))
        platform.fsync(fd)
        try:
            platform.publish(temp, paths.jsonl)  # never over an existing session
        except FileExistsError:
            return False
        offsets, position = [], 0
        for line in lines:
            offsets.append(position)
            position += len(line)
        codes = bytearray(kind_code(record) for record in records)
        atomic_write(
            paths.idx,
            b"".join(ENTRY.pack(o | c << 56) for o, c in zip(offsets, codes, strict=True)),
            backup=False,
        )
        fsync_dir(folder)
        events = [
            (r["seq"], r) for r, c in zip(records, codes, strict=True) if c in VISIBILITY_CODES
        ]
        cache[paths.session_id] = TranscriptState(
            state_key(os.fstat(fd)), len(records), records[0], codes, events
        )
        return True
    finally:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
        platform.close(fd)
