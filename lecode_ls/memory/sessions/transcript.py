"""One session transcript on disk: the JSONL file, its offset index, and the checks keeping both honest.

Session IDs, kind codes and the schema of records live in records.py; the files' names, the lock
and the creation of a transcript in transcript_files.py.

Files, in `<store>/sessions/` (S1):

- `<id>.jsonl`: one JSON object per line, canonical JSON. Every record's `seq` is its 0-based line
  index; line 0 is the `session` header. Appends only ever add whole lines.
- `<id>.idx`: a cache, 8 bytes per line, little-endian: bits 0-55 hold the byte offset where the
  line starts, bits 56-63 its kind code (records.py). It lets a read seek straight to a
  range, and lets visibility find undo/redo/clear events without parsing messages. Derived only
  from the .jsonl: when it is missing, short, or disagrees with the file, it is rebuilt by a scan.
- `<id>.lock`: the attach lock, owned by store.py.

Every operation holds an exclusive lock (`platform.lock`: flock on POSIX, LockFileEx on Windows)
on the .jsonl file itself for its whole length, which serializes threads (each operation opens its
own descriptor) and processes alike. Locking the transcript rather than a separate lock file means
a lookup never creates a file, and a delete leaves nothing behind but the attach lock.

A store that cannot be written (a read-only mount, no write permission) can still be read: the
transcript is then opened read-only, which is enough to lock it, a torn final line is skipped
instead of cut, a missing or stale index is rebuilt in memory only, and an append is a StoreError.

Damage (S1): a final line without its newline, or whose bytes are not JSON, is what a crash in the
middle of an append leaves; it is cut off and logged. Anything else (a bad line before the end, a
seq that is not its line index, a wrong header) raises `CorruptTranscript` whenever it is read.
Opening checks the index against the file (its length, its last line, the header) rather than
parsing every line, so a read near the end of a long transcript costs what it costs in a short one;
a full scan, which checks every line, runs when the index is rebuilt and in `verify()`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import struct
from collections.abc import Iterator, Sequence
from typing import Any

from lecode_ls import platform
from lecode_ls.errors import (
    CorruptTranscript,
    StoreError,
)
from lecode_ls.memory.canonical import canonical_json
from lecode_ls.memory.files import atomic_write
from lecode_ls.memory.sessions.records import (
    CODES,
    VISIBILITY_CODES,
    Damage,
    check_stored,
    kind_code,
)
from lecode_ls.memory.sessions.transcript_files import (
    ENTRY,
    TranscriptPaths,
    TranscriptState,
    lock_transcript,
    state_key,
)

log = logging.getLogger(__name__)

# The kind codes (records.py) an index entry may hold; 0 never is, so a zero-filled entry shows.
_VALID_CODES = CODES
_VISIBILITY_BYTE = re.compile(rb"[\x05-\x07]")  # finds UNDO, REDO, CLEAR in `codes` at C speed

_OFFSET_MASK = (1 << 56) - 1
_CHUNK = 1 << 20


class _Unreadable(Exception):
    """Bytes that are not one JSON value in UTF-8: what a torn write leaves."""


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _decode(line: bytes) -> object:
    try:
        return json.loads(line.decode("utf-8"), parse_constant=_reject_constant)
    except ValueError as error:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise _Unreadable(str(error)) from None


@contextlib.contextmanager
def open_locked(paths: TranscriptPaths, cache: dict[str, TranscriptState]) -> Iterator[Transcript]:
    """`lock_transcript`, then bring `cache[session_id]` up to date and yield the transcript.

    The cache entry is replaced on success and dropped on any failure, so a half-updated state is
    never reused. Raises as `lock_transcript`, and `CorruptTranscript`.
    """
    with lock_transcript(paths) as (fd, st, writable):
        transcript = Transcript(paths, fd, st, cache.pop(paths.session_id, None), writable=writable)
        yield transcript
        cache[paths.session_id] = transcript.state


MAX_DIGESTS = 64  # remembered prefix digests per transcript

Known = dict[int, dict[str, Any]]
"""seq -> record: records a reader parsed from bytes it then checked with `prefix_digest`."""


class _StaleIndex(Exception):
    """The index disagrees with the file; it must be rebuilt."""


class Transcript:
    """A transcript open and locked for one operation (see `open_locked`)."""

    def __init__(
        self,
        paths: TranscriptPaths,
        fd: int,
        st: os.stat_result,
        prior: TranscriptState | None,
        *,
        writable: bool = True,
    ) -> None:
        self.paths = paths
        self._fd = fd
        self._size = st.st_size
        self.writable = writable
        if prior is not None and prior.key == state_key(st):
            self.state = prior
            return
        if prior is not None and (
            prior.key[0] != st.st_ino or prior.size > st.st_size or prior.index is not None
        ):
            # Another file, or cut shorter, or changed while its index was only in memory:
            # nothing of it can be reused.
            prior = None
        loaded = self._load_from_index(prior)
        self.state = loaded if loaded is not None else self._rebuild()

    # -- reading ---------------------------------------------------------------------------

    def _damage(self, why: str) -> CorruptTranscript:
        return CorruptTranscript(
            f"sessionId: the transcript of session {self.paths.session_id} is damaged ({why}); "
            "it was left untouched",
            field="sessionId",
        )

    def _raw_entries(self, start: int, stop: int) -> bytes:
        """The bytes of index entries `start` .. `stop - 1`."""
        state: TranscriptState | None = getattr(self, "state", None)  # unset while loading
        if state is not None and state.index is not None:
            data = bytes(state.index[8 * start : 8 * stop])
        else:
            with _open_index(self.paths) as idx:
                data = platform.pread(idx, 8 * (stop - start), 8 * start)
        if len(data) != 8 * (stop - start):
            raise _StaleIndex
        return data

    def _entries(self, start: int, stop: int) -> list[int]:
        """Index entries `start` .. `stop - 1`, as integers."""
        return list(struct.unpack(f"<{stop - start}Q", self._raw_entries(start, stop)))

    def _read_lines(
        self,
        start: int,
        end: int,
        count: int,
        codes: bytes | bytearray | None,
        known: Known | None = None,
    ) -> list[dict[str, Any]]:
        """Records `start` .. `end` inclusive, each checked against its position (and code).

        A record of `known` is not decoded again while the file is still the one the remembered
        prefix digests describe (see `prefix_digest`): the caller checked those bytes."""
        if end + 1 < count:
            entries = self._entries(start, end + 2)
            stop = entries.pop() & _OFFSET_MASK
        else:
            entries = self._entries(start, end + 1)
            stop = self._size
        begin = entries[0] & _OFFSET_MASK
        if start == 0 and begin != 0:
            raise _StaleIndex
        data = platform.pread(self._fd, stop - begin, begin) if stop > begin else b""
        lines = data.split(b"\n")
        if len(lines) != end - start + 2 or lines[-1]:
            raise _StaleIndex
        records: list[dict[str, Any]] = []
        position = begin
        known = known or {}
        reuse = bool(known) and self.state.trusted == self._identity()
        for seq, (line, entry) in enumerate(zip(lines, entries, strict=False), start):
            if entry & _OFFSET_MASK != position:
                raise _StaleIndex
            position += len(line) + 1
            if reuse and seq in known:
                records.append(known[seq])
                continue
            try:
                record = _decode(line)
                code = check_stored(record, seq, self.paths.session_id)
            except (_Unreadable, Damage):
                raise _StaleIndex from None
            if code != entry >> 56 or (codes is not None and code != codes[seq]):
                raise _StaleIndex
            assert isinstance(record, dict)
            records.append(record)
        return records

    def prefix_digest(self, end: int) -> str:
        """sha256 of the file's bytes from its start through the end of line `end`: what a
        verdict about those records may be remembered against (working.py).

        Computed once while the file is only appended to by this process: a turn start after a
        summary costs what follows it, not a pass over everything the summary covers. Any other
        change to the file (an edit, a truncation, another process's append) is seen in its
        identity, and every remembered digest is computed afresh.
        """
        state = self.state
        identity = self._identity()
        if state.trusted != identity:
            state.digests.clear()
            state.trusted = identity
        known = state.digests.get(end)
        if known is not None:
            return known
        digest = self._hash_prefix(end)
        if len(state.digests) >= MAX_DIGESTS:
            state.digests.clear()
        state.digests[end] = digest
        return digest

    def _identity(self) -> tuple[int, int, int, int]:
        st = os.fstat(self._fd)
        return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)

    def _hash_prefix(self, end: int) -> str:
        stop = (
            self._entries(end + 1, end + 2)[0] & _OFFSET_MASK
            if end + 1 < self.state.count
            else self._size
        )
        digest = hashlib.sha256()
        position = 0
        while position < stop:
            chunk = platform.pread(self._fd, min(1 << 20, stop - position), position)
            if not chunk:
                raise self._damage("the file is shorter than its index")
            digest.update(chunk)
            position += len(chunk)
        return digest.hexdigest()

    def read(self, start: int, end: int, known: Known | None = None) -> list[dict[str, Any]]:
        """Records `start` .. `end`, inclusive, 0-based; the caller checks the bounds."""
        try:
            return self._read_lines(start, end, self.state.count, self.state.codes, known)
        except _StaleIndex:
            self._rebuild_stale()
        try:
            return self._read_lines(start, end, self.state.count, self.state.codes)
        except _StaleIndex:
            raise self._damage(f"records {start}..{end} changed while being read") from None

    def read_each(self, seqs: Sequence[int]) -> list[dict[str, Any]]:
        """The records at `seqs` (ascending; the caller checks the bounds), one read each: the
        index entries of their span are read once, and no record between them is."""
        try:
            return self._read_each(seqs)
        except _StaleIndex:
            self._rebuild_stale()
        try:
            return self._read_each(seqs)
        except _StaleIndex:
            raise self._damage(f"records {seqs[0]}..{seqs[-1]} changed while being read") from None

    def _rebuild_stale(self) -> None:
        log.warning(
            "session %s: index disagrees with the transcript; rebuilding", self.paths.session_id
        )
        self.state = self._rebuild()

    def _read_each(self, seqs: Sequence[int]) -> list[dict[str, Any]]:
        if not seqs:
            return []
        count, codes = self.state.count, self.state.codes
        first = seqs[0]
        entries = self._entries(first, min(seqs[-1] + 2, count))
        records: list[dict[str, Any]] = []
        for seq in seqs:
            entry = entries[seq - first]
            begin = entry & _OFFSET_MASK
            stop = entries[seq - first + 1] & _OFFSET_MASK if seq + 1 < count else self._size
            line = platform.pread(self._fd, stop - begin, begin) if stop > begin else b""
            if not line.endswith(b"\n"):
                raise _StaleIndex
            try:
                record = _decode(line[:-1])
                code = check_stored(record, seq, self.paths.session_id)
            except (_Unreadable, Damage):
                raise _StaleIndex from None
            if code != entry >> 56 or code != codes[seq]:
                raise _StaleIndex
            assert isinstance(record, dict)
            records.append(record)
        return records

    def verify(self) -> None:
        """Check every line of the file (a full scan) and rewrite the index from it."""
        self.state = self._rebuild()

    # -- loading ---------------------------------------------------------------------------

    def _line_at(self, offset: int) -> bytes:
        """The complete line starting at `offset`, without its newline; `_StaleIndex` if none."""
        parts: list[bytes] = []
        position = offset
        while position < self._size:
            chunk = platform.pread(self._fd, min(_CHUNK, self._size - position), position)
            if not chunk:
                break
            newline = chunk.find(b"\n")
            if newline >= 0:
                parts.append(chunk[:newline])
                return b"".join(parts)
            parts.append(chunk)
            position += len(chunk)
        raise _StaleIndex

    def _load_from_index(self, base: TranscriptState | None) -> TranscriptState | None:
        """The state from the index and `base`, after checking the index's last entry; None if
        the index cannot be trusted."""
        try:
            with _open_index(self.paths) as idx:
                idx_size = os.fstat(idx).st_size
            count = idx_size // 8
            if count == 0 or (base is not None and base.count > count):
                return None
            start = base.count if base is not None else 0
            raw = self._raw_entries(start, count)
            codes = raw[7::8]  # the top byte of each little-endian entry
            if codes.translate(None, _VALID_CODES):
                return None
            (last,) = ENTRY.unpack(raw[-8:] if raw else self._raw_entries(count - 1, count))
            last_offset = last & _OFFSET_MASK
            if last_offset >= self._size:
                return None
            last_line = self._line_at(last_offset)
            if check_stored(_decode(last_line), count - 1, self.paths.session_id) != last >> 56:
                return None
            if base is None:
                header = self._read_lines(0, 0, count, None)[0]
                state = TranscriptState((0, 0, 0), 0, header, bytearray())
            else:
                state = base
            first_new = state.count
            state.codes += codes
            state.count = count
            for match in _VISIBILITY_BYTE.finditer(state.codes, first_new):
                seq = match.start()
                state.events.append((seq, self._read_lines(seq, seq, count, state.codes)[0]))
        except (_StaleIndex, _Unreadable, Damage):
            return None
        if idx_size % 8:
            self._truncate_index(count)
        end = last_offset + len(last_line) + 1
        if end < self._size:
            # A writer died between its line and its index entry, or left a torn line.
            self._scan_into(state, end)
        state.key = self._stat_key()
        return state

    def _rebuild(self) -> TranscriptState:
        """Scan the whole file, checking every line, and rewrite the index from it."""
        state = TranscriptState((0, 0, 0), 0, {}, bytearray())
        offsets = self._scan_into(state, 0, write_index=False)
        if state.count == 0:
            raise self._damage("it has no session header")
        data = b"".join(
            ENTRY.pack(offset | code << 56)
            for offset, code in zip(offsets, state.codes, strict=True)
        )
        written = False
        if self.writable:  # on a read-only store the index lives only in this process
            try:
                atomic_write(self.paths.idx, data, backup=False)
                written = True
            except OSError as error:
                # The index is only a cache: reads work from the copy kept in memory.
                log.warning(
                    "session %s: could not write its index: %s", self.paths.session_id, error
                )
        if not written:
            state.index = bytearray(data)
        state.key = self._stat_key()
        return state

    def _scan_into(
        self, state: TranscriptState, offset: int, *, write_index: bool = True
    ) -> list[int]:
        """Parse every line from `offset` (the start of line `state.count`) to the end of the file,
        adding them to `state`; cut a torn final line. Returns the new lines' offsets."""
        offsets: list[int] = []
        pending = b""
        position = offset  # where `pending` starts in the file
        read_at = offset
        while read_at < self._size:
            chunk = platform.pread(self._fd, min(_CHUNK, self._size - read_at), read_at)
            if not chunk:
                break
            read_at += len(chunk)
            lines = (pending + chunk).split(b"\n")
            pending = lines.pop()
            for line in lines:
                seq = state.count
                is_last = position + len(line) + 1 >= self._size
                try:
                    record = _decode(line)
                except _Unreadable as error:
                    if is_last:
                        self._cut(position, "its final line is not JSON")
                        break
                    raise self._damage(f"line {seq} is not JSON: {error}") from None
                try:
                    code = check_stored(record, seq, self.paths.session_id)
                except Damage as error:
                    raise self._damage(str(error)) from None
                assert isinstance(record, dict)
                if seq == 0:
                    state.header = record
                elif code in VISIBILITY_CODES:
                    state.events.append((seq, record))
                offsets.append(position)
                state.codes.append(code)
                state.count += 1
                position += len(line) + 1
        if pending:
            self._cut(position, "its final line has no newline")
        if write_index and offsets:
            self._append_index(
                state, state.count - len(offsets), offsets, state.codes[-len(offsets) :]
            )
        return offsets

    def _cut(self, offset: int, why: str) -> None:
        """Truncate a torn final line (a crash mid-append); it was never acknowledged.

        On a read-only store the bytes stay on disk and are only left out of this read."""
        if not self.writable:
            log.warning(
                "session %s: skipped %d bytes at the end of its transcript (%s; a crash "
                "mid-append); the store is read-only, so they stay on disk",
                self.paths.session_id,
                self._size - offset,
                why,
            )
            self._size = offset
            return
        log.warning(
            "session %s: cut %d bytes at the end of its transcript (%s; a crash mid-append)",
            self.paths.session_id,
            self._size - offset,
            why,
        )
        os.ftruncate(self._fd, offset)
        platform.fsync(self._fd)
        self._size = offset

    def _stat_key(self) -> tuple[int, int, int]:
        return state_key(os.fstat(self._fd))

    # -- writing ---------------------------------------------------------------------------

    def _append_index(
        self, state: TranscriptState, first: int, offsets: list[int], codes: bytes | bytearray
    ) -> None:
        data = b"".join(ENTRY.pack(o | c << 56) for o, c in zip(offsets, codes, strict=True))
        if state.index is not None:
            del state.index[8 * first :]
            state.index += data
            return
        if not self.writable:
            return  # a read-only store: the next open rebuilds it in memory again
        try:
            with _open_index(self.paths, write=True) as idx:
                platform.pwrite(idx, data, 8 * first)
        except OSError as error:
            # The line itself is durable; the next open finds the index short and catches up.
            log.warning("session %s: could not extend its index: %s", self.paths.session_id, error)

    def _truncate_index(self, count: int) -> None:
        if not self.writable:
            return
        with contextlib.suppress(OSError), _open_index(self.paths, write=True) as idx:
            os.ftruncate(idx, 8 * count)

    def append(self, record: dict[str, Any]) -> int:
        """Append `record` at the next seq and return that seq.

        Durability policy: the whole line goes out in one `write()` and is `fsync`ed before this
        returns, one fsync per record, so an acknowledged record survives a crash or power loss
        and a crash can only tear the line being written (cut off on the next open). The index
        entry follows without an fsync: it is a cache the next open checks and repairs.
        """
        if not self.writable:
            raise StoreError(
                f"sessions/{self.paths.jsonl.name} could not be written: the store is read-only"
            )
        state = self.state
        seq = state.count
        stored = {**record, "seq": seq}
        line = canonical_json(stored) + b"\n"
        code = kind_code(stored)
        offset = self._size
        # Whether the file is still what the remembered digests were computed from; only then
        # do they survive this append (which adds bytes after all of them).
        unchanged = state.trusted is not None and state.trusted == self._identity()
        try:
            if os.write(self._fd, line) != len(line):
                raise StoreError(
                    f"sessions/{self.paths.jsonl.name}: the disk took only part of a record"
                )
            platform.fsync(self._fd)
        except BaseException:
            # Not acknowledged, so not kept: a record the caller was told failed must not
            # reappear on the next read. Best effort; a crash here leaves a torn tail instead.
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, offset)
            raise
        self._size += len(line)
        self._append_index(state, seq, [offset], bytes([code]))
        state.codes.append(code)
        state.count += 1
        if code in VISIBILITY_CODES:
            state.events.append((seq, stored))
        state.key = self._stat_key()
        state.trusted = self._identity() if unchanged else None
        return seq


@contextlib.contextmanager
def _open_index(paths: TranscriptPaths, *, write: bool = False) -> Iterator[int]:
    """The index, for reading (a missing or unopenable one is stale: `_StaleIndex`) or, with
    `write`, for writing (created if missing; errors raised as OSError)."""
    if write:
        fd = platform.open_file(paths.idx, write=True, create=True)
    else:
        try:
            fd = platform.open_file(paths.idx)
        except OSError:
            raise _StaleIndex from None
    try:
        yield fd
    finally:
        platform.close(fd)
