"""Scan a project's store for secrets, and scrub them from every copy (issue 27, item 3).

`scan` lists where the detector finds a secret (a note and its line, a session record, a fact
revision) and what kind, never the value, and counts what the bytes of every other file of the
store hold (SQLite's files with their free pages and WAL, indexes, titles): a copy a structured
read cannot see is still counted there.

`scrub` rewrites every copy of what the detector finds and, optionally, of one exact string the
person gives (a token they just rotated, detectable or not; it becomes `[secret:given:<8 hex>]`):
Markdown files and their `.bak` (notes/store.py), transcript records and their index
(sessions/rewrite.py), fact revisions and their full-text indexes, and SQLite's leftovers
(facts/scrubs.py). Evidence survives it: each source reference whose cited records change, and
whose digest held before, is moved to the records' new digest through the scrub journal (three
atomic steps, crash-safe: see facts/scrubs.py), and a working summary's lineage is relinked in
the rewritten file itself. A reference that did not hold before is left as it was: a scrub never
makes tampered evidence valid.

Blocking, and a pass over the whole store: callers run it off the request thread.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from lecode_ls import platform
from lecode_ls.errors import InvalidParams, LecodeError
from lecode_ls.memory.canonical import records_digest
from lecode_ls.memory.facts import FactStore, Moved
from lecode_ls.memory.files import NotRegularFile, read_regular
from lecode_ls.memory.notes import MAX_FILE_BYTES, MarkdownStore
from lecode_ls.memory.secrets import KEY_FILE, Finding, Redactor
from lecode_ls.memory.sessions import SessionStore, redact_records

DEFAULT_PLACES = 100
MAX_PLACES = 1000
MIN_SECRET_CHARS = 8
"""A person-given string shorter than this would rewrite ordinary words everywhere."""
MAX_SECRET_CHARS = 16_384
MAX_RAW_FILES = 10_000
"""Files of the store read byte for byte by a scan, at most."""
_CHUNK = 1 << 20
_OVERLAP = 1 << 14
"""A secret is at most this long to be found across a chunk boundary of a raw read."""


@dataclass(frozen=True)
class Place:
    """Where a secret was found; only the fields that apply are set."""

    kind: str
    file: str
    session_id: str | None = None
    seq: int | None = None
    fact_id: int | None = None
    revision: int | None = None
    line: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {key: value for key, value in vars(self).items() if value is not None}


@dataclass
class Scan:
    limit: int
    found: int = 0
    places: list[Place] = field(default_factory=list)
    kinds: Counter[str] = field(default_factory=Counter)
    raw: dict[str, Counter[str]] = field(default_factory=dict)
    unreadable: list[str] = field(default_factory=list)

    def add(self, place: Place) -> None:
        self.found += 1
        self.kinds[place.kind] += 1
        if len(self.places) < self.limit:
            self.places.append(place)

    def to_json(self) -> dict[str, Any]:
        return {
            "found": self.found,
            "kinds": dict(sorted(self.kinds.items())),
            "places": [place.to_json() for place in self.places],
            "truncated": self.found > len(self.places),
            "raw": [
                {"file": name, "found": sum(kinds.values()), "kinds": dict(sorted(kinds.items()))}
                for name, kinds in sorted(self.raw.items())
            ],
            "unreadable": self.unreadable,
        }


class Stores(Protocol):
    """A project's stores (`lecode_ls.runtime.Runtime` is one)."""

    @property
    def store_path(self) -> Path: ...
    @property
    def markdown(self) -> MarkdownStore: ...
    @property
    def sessions(self) -> SessionStore: ...
    @property
    def facts(self) -> FactStore: ...
    @property
    def redactor(self) -> Redactor: ...


def check_limit(limit: object) -> int:
    if limit is None:
        return DEFAULT_PLACES
    if type(limit) is not int or not 0 <= limit <= MAX_PLACES:
        raise InvalidParams(f"limit: expected an integer 0..{MAX_PLACES}", field="limit")
    return limit


def check_secret(secret: object) -> str | None:
    """A person-given string to scrub: None, or 8 to 16,384 characters, not only spaces."""
    if secret is None:
        return None
    if not isinstance(secret, str) or not secret.strip():
        raise InvalidParams("secret: expected the exact text to scrub", field="secret")
    if not MIN_SECRET_CHARS <= len(secret) <= MAX_SECRET_CHARS:
        raise InvalidParams(
            f"secret: expected {MIN_SECRET_CHARS} to {MAX_SECRET_CHARS} characters (a shorter "
            "one would rewrite ordinary text everywhere)",
            field="secret",
        )
    return secret


# -- scan ------------------------------------------------------------------------------------------


def scan(stores: Stores, limit: int = DEFAULT_PLACES, given: str | None = None) -> dict[str, Any]:
    """Where the detector finds secrets in the store (see the module docstring), and `given`
    (a person-given string, kind `given`: what a scrub of it counts as remaining)."""
    finish_pending(stores)
    found = Scan(check_limit(limit))
    # What the scrub's redaction replaces, found the same way: a JSON text's strings decoded,
    # keys as well as values (secrets/redactor.py).
    redactor = stores.redactor.with_given(given)
    structured: set[Path] = set()
    for name in _note_names(stores.markdown):
        path = stores.store_path / name
        structured.add(path)
        shown = redactor.text(name)  # a place never shows a secret, in a note's name neither
        for finding in redactor.find_all(name):
            found.add(Place(finding.kind, shown))
        text = _read_text(path)
        if text is None:
            continue
        for finding in redactor.find_all(text):
            line = text.count("\n", 0, finding.start) + 1
            found.add(Place(finding.kind, shown, line=line))
    for info in stores.sessions.list():
        file = f"sessions/{info.session_id}.jsonl"
        if info.corrupt:
            found.unreadable.append(file)
            continue
        structured.add(stores.store_path / file)
        try:
            records = stores.sessions.read_range(
                info.session_id, 0, max(0, info.records - 1), clamp=True
            ).records
        except LecodeError:
            found.unreadable.append(file)
            continue
        for seq, record in enumerate(records):
            for finding in redactor.find_value(record):
                found.add(Place(finding.kind, file, session_id=info.session_id, seq=seq))
    for fact_id, revision, text in stores.facts.scrubs.texts():
        for finding in redactor.find_all(text):
            found.add(Place(finding.kind, "facts.sqlite3", fact_id=fact_id, revision=revision))
    for fact_id, revision, text in stores.facts.scrubs.anchor_paths():  # a file's name
        for finding in redactor.find_all(text):
            found.add(Place(finding.kind, "facts.sqlite3", fact_id=fact_id, revision=revision))
    for path in _raw_files(stores.store_path, structured):
        kinds = _raw_kinds(path, redactor.find)
        if kinds:
            found.raw[path.relative_to(stores.store_path).as_posix()] = kinds
    return found.to_json()


def _note_names(markdown: MarkdownStore) -> Iterator[str]:
    for entry in markdown.list():
        yield entry.file
        if (markdown.root / f"{entry.file}.bak").is_file():
            yield f"{entry.file}.bak"


def _read_text(path: Path) -> str | None:
    try:
        data = read_regular(path, MAX_FILE_BYTES + 1)
    except (OSError, NotRegularFile):
        return None
    return None if data is None else data.decode("utf-8", "replace")


def _raw_files(root: Path, structured: set[Path]) -> Iterator[Path]:
    """The store's other regular files (links are never followed), at most MAX_RAW_FILES."""
    seen = 0
    for folder, folders, files in os.walk(root):
        base = Path(folder)
        folders[:] = [f for f in folders if platform.kind(base / f) == "dir"]
        for name in sorted(files):
            path = base / name
            if path in structured or name == KEY_FILE or platform.kind(path) != "file":
                continue
            seen += 1
            if seen > MAX_RAW_FILES:
                return
            yield path


def _raw_kinds(path: Path, find: Callable[[str], list[Finding]]) -> Counter[str]:
    """The secrets in a file's bytes, read in overlapping chunks (bounded memory)."""
    kinds: Counter[str] = Counter()
    try:
        fd = platform.open_file(path)  # never through a link
    except OSError:
        return kinds
    try:
        offset, carry = 0, b""
        while True:
            chunk = platform.pread(fd, _CHUNK, offset)
            offset += len(chunk)
            data, last = carry + chunk, not chunk
            text = data.decode("latin-1")  # one character a byte: offsets are byte offsets
            keep = len(text) if last else max(0, len(text) - _OVERLAP)
            for finding in find(text):
                if finding.start < keep:
                    kinds[finding.kind] += 1
            if last:
                return kinds
            carry = data[keep:]
    except OSError:
        return kinds
    finally:
        platform.close(fd)


# -- scrub -----------------------------------------------------------------------------------------


def scrub(stores: Stores, secret: str | None = None) -> dict[str, Any]:
    """Rewrite every copy of every found secret, and of `secret` (see the module docstring)."""
    secret = check_secret(secret)
    finish_pending(stores)
    redactor = stores.redactor.with_given(secret)
    text, value = redactor.text, redactor.value
    notes = stores.markdown.scrub(text)
    titles = stores.sessions.scrub_titles(text)
    sessions: list[str] = []
    records = attached = 0
    for info in stores.sessions.list():
        if info.corrupt:
            continue
        changed, moved = _scrub_session(stores, info.session_id, value)
        if changed:
            sessions.append(info.session_id)
            records += changed
            attached += moved
    revisions = stores.facts.scrubs.redact_revisions(text)
    revisions += stores.facts.scrubs.redact_anchor_paths(text)
    purged = stores.facts.scrubs.purge()
    return {
        "notes": notes,
        "titles": titles,
        "sessions": sessions,
        "records": records,
        "reattached": attached,
        "facts": sorted({fact_id for fact_id, _ in revisions}),
        "revisions": len(revisions),
        "purged": purged,
        "remaining": scan(stores, 0, secret)["found"],
    }


def _scrub_session(stores: Stores, session_id: str, value: Callable[[Any], Any]) -> tuple[int, int]:
    """Scrub one transcript: (records rewritten, references re-attached)."""
    changed: list[int] = []
    scrub_ids: list[int] = []

    def change(old: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
        new, seqs = redact_records(session_id, old, value)
        changed.extend(seqs)
        return new if seqs else None

    def before_replace(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> None:
        moved = []
        touched = set(changed)
        for seqs, digest in stores.facts.scrubs.refs(session_id):
            positions = Moved(session_id, seqs, digest, digest).positions
            if not positions or positions[-1] >= len(old):
                continue
            first, last = positions[0], positions[-1]
            if not touched.intersection(range(first, last + 1)):
                continue
            if records_digest(old[first : last + 1]) != digest:
                continue  # did not hold before the scrub: it is not made to hold now
            moved.append(Moved(session_id, seqs, digest, records_digest(new[first : last + 1])))
        scrub_ids.append(stores.facts.scrubs.begin(session_id, changed, moved))

    if not stores.sessions.rewrite(session_id, change, before_replace):
        return 0, 0
    return len(changed), stores.facts.scrubs.finish(scrub_ids[0], _holds(stores.sessions))


def _holds(sessions: SessionStore) -> Callable[[Moved], bool]:
    def holds(move: Moved) -> bool:
        positions = move.positions
        try:
            view = sessions.read_range(move.session_id, positions[0], positions[-1])
        except LecodeError:
            return False
        return records_digest(view.records) == move.new

    return holds


def finish_pending(stores: Stores) -> int:
    """Finish the scrubs a crash left pending (facts/scrubs.py); returns how many there were."""
    pending = stores.facts.scrubs.pending()
    for scrub_id, _ in pending:
        stores.facts.scrubs.finish(scrub_id, _holds(stores.sessions))
    return len(pending)
