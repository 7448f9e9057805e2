"""The session store: a project's chat transcripts, their undo/redo/clear history, attach and delete,
and import (S1, S4, S5, S6). The file format and its locking live in transcript.py.

Seqs are 0-based line positions and every range here is inclusive. Undo, redo and clear never
rewrite a record: they append events, and `visibility()` derives what they hide (S5).
"""

from __future__ import annotations

import builtins
import contextlib
import datetime
import itertools
import logging
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from lecode_ls import platform
from lecode_ls.errors import (
    CorruptTranscript,
    InvalidParams,
    InvalidSessionId,
    NothingToRedo,
    NothingToUndo,
    SessionAttached,
    SessionNotFound,
    StoreError,
    SymlinkRefused,
)
from lecode_ls.memory.files import fsync_dir, make_dirs, refuse_symlinks
from lecode_ls.memory.secrets import Redactor
from lecode_ls.memory.sessions.records import (
    EVENT,
    MESSAGE,
    USAGE,
    USER,
    check_session_id,
    new_session_id,
)
from lecode_ls.memory.sessions.records import check_new_record as _check_new_record
from lecode_ls.memory.sessions.rewrite import Records
from lecode_ls.memory.sessions.rewrite import rewrite as _rewrite
from lecode_ls.memory.sessions.titles import ORIGINS, Origin, Titles, origin_of
from lecode_ls.memory.sessions.transcript import Known, open_locked
from lecode_ls.memory.sessions.transcript_files import (
    TranscriptPaths,
    TranscriptState,
    create_transcript,
    lock_transcript,
    session_not_found,
)

log = logging.getLogger(__name__)

Purpose = Literal["working", "durable"]


@dataclass(frozen=True)
class SessionInfo:
    """One entry of `SessionStore.list()`. A corrupt transcript is listed (so it can be deleted)
    with `corrupt=True`, an empty title and 0 records."""

    session_id: str
    title: str
    created: str
    records: int
    corrupt: bool = False
    origin: Origin = "chat"


@dataclass(frozen=True)
class Visibility:
    """What undo, redo and clear hide in one session (S5).

    `hidden`: seqs hidden by an undo that was not redone. `cleared_before`: the seq of the last
    clear event, or None; working context and direct session recall only see seqs after it,
    while durable facts keep their older evidence. `undos`: the seqs of undo events not yet
    redone, oldest first (the last is what `redo` restores).
    """

    hidden: frozenset[int]
    cleared_before: int | None
    undos: tuple[int, ...]

    def visible(self, seq: int, purpose: Purpose = "working") -> bool:
        """Whether record `seq` is visible for `purpose`."""
        if seq in self.hidden:
            return False
        return purpose == "durable" or self.cleared_before is None or seq > self.cleared_before


@dataclass(frozen=True)
class RangeRead:
    """Records `start` .. `start + len(records) - 1` and the visibility, read under one lock."""

    records: tuple[dict[str, Any], ...]
    visibility: Visibility
    length: int


class _BadEvent(Exception):
    def __init__(self, seq: int, message: str) -> None:
        super().__init__(message)
        self.seq = seq


def _history(
    events: Sequence[tuple[int, dict[str, Any]]],
) -> tuple[Visibility, dict[int, list[int]]]:
    """Replay undo/redo/clear events: the visibility, and each open undo's hidden seqs."""
    undos: dict[int, list[int]] = {}
    last_clear: int | None = None
    for seq, record in events:
        kind = record["type"]
        if kind == "undo":
            seqs = record.get("seqs")
            if (
                not isinstance(seqs, list)
                or not seqs
                or not all(type(s) is int and 0 < s < seq for s in seqs)
                or len(set(seqs)) != len(seqs)
            ):
                raise _BadEvent(seq, "seqs: expected distinct earlier seqs")
            undos[seq] = seqs
        elif kind == "redo":
            target = record.get("undo_seq")
            if type(target) is not int or target not in undos:
                raise _BadEvent(seq, "undo_seq: expected an earlier undo that is not yet redone")
            del undos[target]
        else:
            last_clear = seq
    hidden = frozenset(s for seqs in undos.values() for s in seqs)
    return Visibility(hidden, last_clear, tuple(undos)), undos


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


MAX_TITLE_CHARS = 200
# Characters that change how a line reads without being seen: C0 and C1 controls (ESC starts a
# terminal sequence) and the bidirectional controls (U+202E writes what follows backwards).
_UNSEEN = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]+")


def clean_title(title: str) -> str:
    """A session title as a person may be shown it: unseen characters become a space, runs of
    spaces one, at most MAX_TITLE_CHARS characters. Titles come from clients, MCP agents'
    names and imported files."""
    return " ".join(_UNSEEN.sub(" ", title).split())[:MAX_TITLE_CHARS]


def _check_title(title: object, field: str) -> str:
    if not isinstance(title, str):
        raise InvalidParams(f"{field}: expected a string", field=field)
    return clean_title(title)


def _check_range(start: object, end: object, length: int) -> tuple[int, int]:
    for name, value in (("start_seq", start), ("end_seq", end)):
        if type(value) is not int or value < 0:
            raise InvalidParams(f"{name}: expected a seq, an integer >= 0", field=name)
    assert isinstance(start, int) and isinstance(end, int)
    if end < start:
        raise InvalidParams(f"end_seq: {end} is before start_seq {start}", field="end_seq")
    if end >= length:
        raise InvalidParams(
            f"end_seq: {end} is past the end of the session (its last seq is {length - 1})",
            field="end_seq",
        )
    return start, end


class SessionStore:
    """The transcripts of one project store, in `<store_root>/sessions/`.

    Thread- and process-safe: every operation locks the transcript it touches (transcript.py).
    Sessions are named only by exact IDs (S4): there is no lookup by prefix or title, and
    `list()` reads only this store's own folder.
    """

    def __init__(
        self,
        store_root: Path,
        redactor: Redactor | None = None,
        identity: Callable[[], bool] | None = None,
    ) -> None:
        self.root = store_root
        self.identity = identity
        """Whether this store still belongs to the project being served (S3), asked by every
        validation of a source (sources.validate_source); None: no project to recheck."""
        self.redactor = redactor or Redactor(store_root)
        """Every record appended or imported passes through it before it is written (P5)."""
        self.folder = store_root / "sessions"
        self._states: dict[str, TranscriptState] = {}
        self._histories: dict[
            str, tuple[TranscriptState, int, Visibility, dict[int, list[int]]]
        ] = {}
        self._closed = False
        self._titles = Titles(store_root)

    def close(self) -> None:
        """Forget the cached state (the store holds no open files between calls); every later
        call raises StoreError (K3). Idempotent."""
        self._closed = True
        self._states.clear()
        self._histories.clear()

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError("the session store is closed (the server is shutting down)")

    # -- naming ----------------------------------------------------------------------------

    def _paths(self, session_id: object, field: str = "sessionId") -> TranscriptPaths:
        self._check_open()
        checked = check_session_id(session_id, field)
        paths = TranscriptPaths.of(self.folder, checked)
        try:
            refuse_symlinks(self.root, paths.jsonl)
        except SymlinkRefused:
            raise SymlinkRefused(
                f"{field}: the session folder or transcript of {checked} is a symbolic link; "
                "lecode-ls refuses to follow links in its store",
                field=field,
            ) from None
        return paths

    def exists(self, session_id: str) -> bool:
        """Whether `session_id` (an exact ID) has a transcript here. Refuses links."""
        paths = self._paths(session_id)
        return paths.jsonl.exists()

    # -- reading ---------------------------------------------------------------------------

    def _visibility(
        self, session_id: str, state: TranscriptState
    ) -> tuple[Visibility, dict[int, list[int]]]:
        """The visibility of `state`, replayed only when undo/redo/clear events were added."""
        cached = self._histories.get(session_id)
        if cached is not None and cached[0] is state and cached[1] == len(state.events):
            return cached[2], cached[3]
        try:
            visibility, undos = _history(state.events)
        except _BadEvent as error:
            raise CorruptTranscript(
                f"sessionId: the transcript of session {session_id} is damaged (event {error.seq} "
                f"{error}); it was left untouched",
                field="sessionId",
            ) from None
        self._histories[session_id] = (state, len(state.events), visibility, undos)
        return visibility, undos

    def read_range(
        self,
        session_id: str,
        start: int,
        end: int,
        *,
        clamp: bool = False,
        known: Known | None = None,
    ) -> RangeRead:
        """Records `start` .. `end` (inclusive) with the visibility, under one lock.

        With `clamp`, an `end` past the last record is cut to it (the result may then hold fewer
        records, or none); without, it is an `InvalidParams` naming `end_seq`. `known` records
        are reused where their line is unchanged (transcript.Known).
        """
        paths = self._paths(session_id)
        with open_locked(paths, self._states) as transcript:
            length = transcript.state.count
            if clamp and type(end) is int and end >= length:
                end = length - 1
                if type(start) is int and start > end:
                    visibility, _ = self._visibility(paths.session_id, transcript.state)
                    return RangeRead((), visibility, length)
            start, end = _check_range(start, end, length)
            records = transcript.read(start, end, known)
            visibility, _ = self._visibility(paths.session_id, transcript.state)
            return RangeRead(tuple(records), visibility, transcript.state.count)

    def read(self, session_id: str, start: int, end: int) -> list[dict[str, Any]]:
        """Records `start` .. `end`, inclusive, 0-based, whatever their visibility."""
        return list(self.read_range(session_id, start, end).records)

    def read_seqs(self, session_id: str, seqs: Sequence[int]) -> builtins.list[dict[str, Any]]:
        """The records at `seqs` (ascending, each in range), whatever their visibility, under one
        lock, without reading the records between them."""
        with open_locked(self._paths(session_id), self._states) as transcript:
            if seqs:
                _check_range(seqs[0], seqs[-1], transcript.state.count)
            if any(a >= b for a, b in itertools.pairwise(seqs)):
                raise InvalidParams("seqs: expected ascending seqs", field="seqs")
            return transcript.read_each(seqs)

    def seqs_of_kind(self, session_id: str, code: int) -> builtins.list[int]:
        """The seqs whose index code is `code` (records.py), from the index: no record is parsed."""
        with open_locked(self._paths(session_id), self._states) as transcript:
            codes, mark = transcript.state.codes, bytes([code])
            seqs: builtins.list[int] = []
            seq = codes.find(mark)
            while seq != -1:  # bytes.find runs at C speed over the whole index
                seqs.append(seq)
                seq = codes.find(mark, seq + 1)
            return seqs

    def prefix_digest(self, session_id: str, end_seq: int) -> str:
        """sha256 of the transcript's bytes through record `end_seq` (see Transcript)."""
        with open_locked(self._paths(session_id), self._states) as transcript:
            _check_range(0, end_seq, transcript.state.count)
            return transcript.prefix_digest(end_seq)

    def length(self, session_id: str) -> int:
        """The number of records, header included (the next seq)."""
        with open_locked(self._paths(session_id), self._states) as transcript:
            return transcript.state.count

    def visibility(self, session_id: str) -> Visibility:
        paths = self._paths(session_id)
        with open_locked(paths, self._states) as transcript:
            return self._visibility(paths.session_id, transcript.state)[0]

    def verify(self, session_id: str) -> None:
        """Check every line of the transcript and rebuild its index; `CorruptTranscript` if damaged."""
        paths = self._paths(session_id)
        with open_locked(paths, self._states) as transcript:
            transcript.verify()
            self._visibility(paths.session_id, transcript.state)

    def list(self) -> builtins.list[SessionInfo]:
        """Every session of this store, oldest first (IDs sort by creation time)."""
        self._check_open()
        refuse_symlinks(self.root, self.folder)
        if not self.folder.is_dir():
            return []
        infos: builtins.list[SessionInfo] = []
        renamed = self._titles.read()
        for entry in sorted(os.scandir(self.folder), key=lambda e: e.name):
            session_id = entry.name.removesuffix(".jsonl")
            try:
                check_session_id(session_id)
            except InvalidSessionId:
                continue
            if entry.name == session_id or not entry.is_file(follow_symlinks=False):
                continue
            try:
                with open_locked(TranscriptPaths.of(self.folder, session_id), self._states) as t:
                    header, count = t.state.header, t.state.count
            except SessionNotFound:
                continue  # deleted meanwhile
            except CorruptTranscript:
                log.warning("session %s: its transcript is damaged", session_id)
                infos.append(SessionInfo(session_id, "", "", 0, corrupt=True))
                continue
            title, created = renamed.get(session_id, header.get("title")), header.get("created")
            infos.append(
                SessionInfo(
                    session_id,
                    clean_title(title) if isinstance(title, str) else "",  # or hand-edited
                    created if isinstance(created, str) else "",
                    count,
                    origin=origin_of(header),
                )
            )
        return infos

    def rename(self, session_id: str, title: str) -> str:
        """Give a session a new title (kept in sessions/titles.json: the header is never
        rewritten); an empty one gives back the title it began with. Returns the title now."""
        self._check_open()
        paths = self._paths(session_id)
        refuse_symlinks(self.root, paths.jsonl)
        if not paths.jsonl.is_file():
            raise session_not_found(paths)
        cleaned = self.redactor.text(_check_title(title, "title"))  # a door too (P5)
        self._titles.set(paths.session_id, cleaned or None)
        if cleaned:
            return cleaned
        with open_locked(paths, self._states) as transcript:
            first = transcript.state.header.get("title")
        return clean_title(first) if isinstance(first, str) else ""

    # -- writing ---------------------------------------------------------------------------

    def _create(self, records: builtins.list[dict[str, Any]], session_id: str | None) -> str | None:
        """Write a new transcript; None if `session_id` is taken. Mints an ID when None."""
        self._check_open()
        make_dirs(self.folder)
        refuse_symlinks(self.root, self.folder)
        for _ in range(8):
            chosen = session_id or new_session_id(records[0]["created"])
            header = {**records[0], "id": chosen}
            if create_transcript(
                TranscriptPaths.of(self.folder, chosen), [header, *records[1:]], self._states
            ):
                return chosen
            if session_id is not None:
                return None
        raise StoreError("sessions: could not mint a free session ID")

    def create(self, title: str = "", origin: Origin = "chat") -> str:
        """Start a session with only its header (seq 0) and return its new ID. `origin` says
        what made it."""
        header = {
            "seq": 0,
            "kind": "session",
            "title": self.redactor.text(_check_title(title, "title")),
            "created": _now(),
            "origin": origin,
        }
        try:
            created = self._create([header], None)
        except OSError as error:
            raise StoreError(f"sessions: could not create a session: {error.strerror}") from None
        assert created is not None
        return created

    def append(self, session_id: str, record: Mapping[str, Any]) -> int:
        """Append a message or event record; return the seq it was given (its line index).

        `record` must not carry `seq`. undo, redo and clear events come only from the methods of
        those names. Durable on return: one `write()` of the whole line, then `fsync`, for every
        record (see `Transcript.append`).
        """
        checked = self._new_record(record, "record", seq=None, imported=False)
        with open_locked(self._paths(session_id), self._states) as transcript:
            return transcript.append(checked)

    def _new_record(
        self, record: Mapping[str, Any], field: str, *, seq: int | None, imported: bool
    ) -> dict[str, Any]:
        """The one door of every record that enters a transcript (chat, compaction, learning,
        import from any agent): checked, then redacted before it is written or digested (P5)."""
        checked = _check_new_record(record, field, seq=seq, imported=imported)
        redacted: dict[str, Any] = self.redactor.value(checked)
        return redacted

    def undo(self, session_id: str) -> builtins.list[int]:
        """Hide the last visible exchange after the last clear; return the seqs it hid.

        The exchange runs from the last visible user message to the end of the transcript, with
        the events among it. Earlier undo/redo/clear events are never hidden, and neither are
        compact events: a working summary only ever covers exchanges before the one in progress,
        so it never rests on what an undo hides.
        """
        paths = self._paths(session_id)
        with open_locked(paths, self._states) as transcript:
            state = transcript.state
            visibility, _ = self._visibility(paths.session_id, state)
            low = 1 if visibility.cleared_before is None else visibility.cleared_before + 1
            high = state.count
            start = -1
            while high > low:
                start = state.codes.rfind(bytes([USER]), low, high)
                if start < 0 or start not in visibility.hidden:
                    break
                high = start
                start = -1
            if start < 0:
                raise NothingToUndo(
                    f"sessionId: session {paths.session_id} has no exchange to undo"
                )
            seqs = [
                seq
                for seq in range(start, state.count)
                if state.codes[seq] in (USER, MESSAGE, EVENT, USAGE)
                and seq not in visibility.hidden
            ]
            transcript.append({"kind": "event", "type": "undo", "seqs": seqs})
            return seqs

    def redo(self, session_id: str) -> builtins.list[int]:
        """Restore what the most recent undo not yet redone hid; return those seqs."""
        paths = self._paths(session_id)
        with open_locked(paths, self._states) as transcript:
            visibility, undos = self._visibility(paths.session_id, transcript.state)
            if not visibility.undos:
                raise NothingToRedo(f"sessionId: session {paths.session_id} has no undo to redo")
            target = visibility.undos[-1]
            transcript.append({"kind": "event", "type": "redo", "undo_seq": target})
            return list(undos[target])

    def clear(self, session_id: str) -> int:
        """Start a fresh working context; return the clear event's seq. Durable facts keep
        their evidence: `Visibility.visible(seq, "durable")` ignores clears."""
        with open_locked(self._paths(session_id), self._states) as transcript:
            return transcript.append({"kind": "event", "type": "clear"})

    def rewrite(
        self,
        session_id: str,
        change: Callable[[Records], Records | None],
        before_replace: Callable[[Records, Records], None],
    ) -> bool:
        """Replace a session's records in place, atomically (the scrub of a secret: see
        sessions/rewrite.py); False when `change` returned None."""
        paths = self._paths(session_id)
        done = _rewrite(paths, self._states, change, before_replace)
        self._histories.pop(paths.session_id, None)
        return done

    def scrub_titles(self, redact: Callable[[str], str]) -> bool:
        """Rewrite sessions/titles.json with every title `redact` changes; whether it did."""
        self._check_open()
        return self._titles.scrub(redact)

    # -- attach and delete (S6) ------------------------------------------------------------

    def _lock_fd(self, paths: TranscriptPaths) -> int:
        try:
            return platform.open_file(paths.lock, write=True, create=True)
        except OSError as error:
            raise StoreError(
                f"sessions/{paths.lock.name} could not be opened: {error.strerror}"
            ) from None

    @contextlib.contextmanager
    def attach(self, session_id: str) -> Iterator[None]:
        """Hold the session's attach lock (shared) while in use; `delete` refuses meanwhile.

        The lock is `<id>.lock`, a sidecar created on first attach and never removed, so every
        holder and the deleter lock the same inode.
        """
        paths = self._paths(session_id)
        if not paths.jsonl.exists():
            raise session_not_found(paths)
        fd = self._lock_fd(paths)
        try:
            platform.lock(fd, shared=True)
            if not paths.jsonl.exists():  # deleted while we waited
                raise session_not_found(paths)
            yield
        finally:
            platform.close(fd)

    def delete(self, session_id: str) -> None:
        """Delete a transcript and its index; refused while anyone has it attached.

        Its `.lock` sidecar stays, same inode, so a late attacher cannot lock a fresh file while
        another process still holds the old one. Facts citing it become `missing` (orphaned).
        """
        paths = self._paths(session_id)
        if not paths.jsonl.exists():
            raise session_not_found(paths)
        fd = self._lock_fd(paths)
        try:
            if not platform.lock(fd, blocking=False):
                raise SessionAttached(
                    f"sessionId: session {paths.session_id} is attached (open in a chat or another "
                    "window); detach it before deleting",
                    field="sessionId",
                )
            # The transcript lock waits for an append in flight; the file may even be corrupt.
            with lock_transcript(paths):
                with contextlib.suppress(FileNotFoundError):
                    paths.idx.unlink()  # first: a crash in between leaves a transcript, not an index
                paths.jsonl.unlink()
                fsync_dir(self.folder)
            self._states.pop(paths.session_id, None)
            self._histories.pop(paths.session_id, None)
        finally:
            platform.close(fd)
        with contextlib.suppress(StoreError):  # a title left behind names no session, harmlessly
            self._titles.set(paths.session_id, None)

    # -- import (S6) -----------------------------------------------------------------------

    def import_records(
        self,
        records: Sequence[Mapping[str, Any]],
        title: str | None = None,
        session_id: str | None = None,
    ) -> tuple[str, str | None]:
        """Create a session from OpenAI-style messages or an exported lecode transcript.

        Returns (new session ID, renamed_from). A record without `kind` is an OpenAI message
        (`role`, `content`, `tool_calls`, `tool_call_id`, `name`, ...). Records with `kind` are
        kept as exported; a `seq` they carry must equal the position they land at, so their undo
        and redo events still point at the right records. records[0] may be the exported header.
        The ID is `session_id`, else the header's, else a fresh one; if that ID is taken, a fresh
        one is minted and the taken one returned as renamed_from. Nothing else is remapped:
        facts citing the old ID keep citing it.
        """
        if not isinstance(records, Sequence) or isinstance(records, str) or not records:
            raise InvalidParams("records: expected a non-empty array of records", field="records")
        exported = (
            records[0]
            if isinstance(records[0], Mapping) and records[0].get("kind") == "session"
            else None
        )
        shift = 0 if exported is not None else 1  # seq of records[i] is i + shift
        requested = None
        if session_id is not None:
            requested = check_session_id(session_id, "sessionId")
        elif exported is not None:
            requested = check_session_id(exported.get("id"), "records[0].id")
        if title is not None:
            title = self.redactor.text(_check_title(title, "title"))
        elif exported is not None:
            title = self.redactor.text(_check_title(exported.get("title", ""), "records[0].title"))
        body = [
            self._new_record(record, f"records[{index}]", seq=index + shift, imported=True)
            for index, record in enumerate(records)
            if index > 0 or exported is None
        ]
        try:
            _history(
                [
                    (r["seq"], r)
                    for r in body
                    if r["kind"] == "event" and r["type"] in ("undo", "redo", "clear")
                ]
            )
        except _BadEvent as error:
            index = error.seq - shift
            raise InvalidParams(f"records[{index}].{error}", field=f"records[{index}]") from None
        original = exported.get("id") if exported is not None else None
        created = exported.get("created") if exported is not None else None

        def header(chosen: str | None) -> dict[str, Any]:
            # An exported lecode transcript keeps its origin (a chat moved to another machine is
            # a chat); anything else is an import.
            origin = exported.get("origin") if exported is not None else None
            made: dict[str, Any] = {
                "seq": 0,
                "kind": "session",
                "title": title or "",
                "origin": origin if origin in ORIGINS else "import",
            }
            # An exported header keeps its creation time only under its own ID; the ID says when.
            keep = chosen is not None and chosen == original and isinstance(created, str)
            made["created"] = created if keep else _now()
            if original is not None and chosen != original:
                made["imported_from"] = original
            return made

        renamed_from: str | None = None
        try:
            made = None
            if requested is not None:
                made = self._create([header(requested), *body], requested)
                renamed_from = None if made is not None else requested
            if made is None:
                made = self._create([header(None), *body], None)
        except OSError as error:
            raise StoreError(f"sessions: could not import the session: {error.strerror}") from None
        assert made is not None
        return made, renamed_from
