"""A trigram index of the store's Markdown files, so a search reads only the files that can match.

`NoteIndex.candidates(pattern)` answers which memory files may hold a line that `pattern` matches,
with their text: the files whose text contains the literals every match needs
(pattern.required_literals), looked up in an SQLite FTS5 trigram index, or every file when the
pattern needs no literal of three characters. The search itself still runs RE2 over each
candidate's lines, so answers are exactly those of a full scan, only cheaper: no file is opened,
and a pattern with a rare word reads a few rows.

Never stale, never trusted:
- before each lookup the index catches up with the files on disk: the changes the kernel reported
  since the last lookup (platform/watch.py), or a full comparison of every file's identity (device, inode,
  size, mtime) on the first lookup, after an overflow, and on systems without inotify. Writes
  through lecode-ls, an editor and another process are all seen the same way;
- the database (`notes-index.sqlite3` in the store) is a cache: a damaged, unreadable or
  hand-edited one is deleted and rebuilt, and where it cannot be written (a read-only store) the
  search falls back to reading every file.

Blocking, like the store; one instance per MarkdownStore, used under the store's search lock.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from lecode_ls import platform
from lecode_ls.memory.notes.pattern import required_literals

if TYPE_CHECKING:
    import apsw

log = logging.getLogger(__name__)

INDEX_NAME = "notes-index.sqlite3"
SCHEMA_VERSION = 1

Identity = tuple[int, int, int, int, int]

_SCHEMA = f"""
PRAGMA user_version = {SCHEMA_VERSION};
CREATE TABLE files (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    dev INTEGER, ino INTEGER, size INTEGER, mtime_ns INTEGER, ctime_ns INTEGER,
    indexed INTEGER NOT NULL  -- 1: its text is in `texts`; 0: always a candidate (unreadable)
);
CREATE INDEX unreadable ON files (name) WHERE indexed = 0;
CREATE VIRTUAL TABLE texts USING fts5(text, tokenize = 'trigram');
"""


def _check(db: apsw.Connection) -> None:
    """Damage and lost rows, checked once a process: SQLite's structure, FTS5's own consistency,
    and one text row for every file marked as indexed. (The index is the store owner's cache,
    in a folder only they can write; checking it against every file would cost what rebuilding
    does.)"""
    import apsw

    if db.execute("PRAGMA quick_check").fetchone() != ("ok",):
        raise apsw.CorruptError("quick_check failed")
    db.execute("INSERT INTO texts(texts) VALUES('integrity-check')")
    marked = db.execute("SELECT count(*) FROM files WHERE indexed = 1").fetchone()
    held = db.execute("SELECT count(*) FROM texts").fetchone()
    if marked != held:
        raise apsw.CorruptError(f"{marked} files are marked indexed, {held} texts are held")


def identity(info: os.stat_result) -> Identity:
    """What changes whenever a file's content may have: ctime too, which no program can set back
    (an edit in place that restores size and mtime still moves it)."""
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


class NoteIndex:
    """The index of one store folder, told the store's own rules by three functions:
    `scan()` lists the files a search reads, with their lstat results; `listed(name)` is one
    name's lstat result if `scan` would list it, else None; `load(name)` is a file's text, or None
    if it cannot be indexed (not UTF-8, too large, gone), which makes it a candidate of every
    search (the search then reports it exactly as a full scan would)."""

    def __init__(
        self,
        root: Path,
        subfolders: tuple[str, ...],
        *,
        scan: Callable[[], list[tuple[str, os.stat_result]]],
        listed: Callable[[str], os.stat_result | None],
        load: Callable[[str], str | None],
    ) -> None:
        self.root = root
        self._scan = scan
        self._listed = listed
        self._load = load
        from lecode_ls.platform.watch import FolderWatch  # ctypes: only once a search runs

        self._watch = FolderWatch(root, subfolders)
        self._db: apsw.Connection | None = None
        self._broken = False  # could not be created here: searches read every file

    def candidates(self, pattern: str) -> list[tuple[str, str | None]] | None:
        """The files that may match, sorted by name, each with its text as indexed (None: read
        it yourself, it could not be indexed); None: no index here, read every file."""
        if self._broken or not self.root.is_dir():
            return None
        try:
            db = self._connection()
            self._catch_up(db)
            clauses = required_literals(pattern)
            if clauses is None:
                rows = db.execute(
                    "SELECT name, text FROM files LEFT JOIN texts ON texts.rowid = files.id"
                )
            else:
                query = " AND ".join(
                    "(" + " OR ".join('"' + text.replace('"', '""') + '"' for text in clause) + ")"
                    for clause in clauses
                )
                rows = db.execute(
                    "SELECT name, text FROM files JOIN texts ON texts.rowid = files.id "
                    "WHERE texts MATCH ? "
                    "UNION ALL SELECT name, NULL FROM files WHERE indexed = 0",
                    (query,),
                )
            return sorted((name, text) for name, text in rows)
        except Exception as exc:  # apsw's errors, a damaged file: never trusted, rebuilt
            log.warning("the note index failed (%s); rebuilding it", exc, exc_info=True)
            self._reset()
            return None

    # -- keeping up with the files -----------------------------------------------------------

    def _catch_up(self, db: apsw.Connection) -> None:
        changed = self._watch.changes()
        with db:  # one transaction (apsw: BEGIN ... COMMIT)
            if changed is None:
                self._reconcile_all(db)
            else:
                for name in sorted(changed):
                    self._reconcile(db, name)

    def _reconcile_all(self, db: apsw.Connection) -> None:
        on_disk = dict(self._scan())
        known = {
            name: tuple(row)
            for name, *row in db.execute(
                "SELECT name, dev, ino, size, mtime_ns, ctime_ns FROM files"
            )
        }
        for name in known.keys() - on_disk.keys():
            self._remove(db, name)
        for name, info in on_disk.items():
            if known.get(name) != identity(info):
                self._store(db, name, info)

    def _reconcile(self, db: apsw.Connection, name: str) -> None:
        """Index `name` again: the kernel said it changed (even if its identity looks the same)."""
        info = self._listed(name)
        if info is None:
            self._remove(db, name)
        else:
            self._store(db, name, info)

    def _store(self, db: apsw.Connection, name: str, info: os.stat_result) -> None:
        self._remove(db, name)
        text = self._load(name)
        db.execute(
            "INSERT INTO files (name, dev, ino, size, mtime_ns, ctime_ns, indexed) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (name, *identity(info), 0 if text is None else 1),
        )
        if text is not None:
            db.execute(
                "INSERT INTO texts (rowid, text) VALUES (?, ?)", (db.last_insert_rowid(), text)
            )

    def _remove(self, db: apsw.Connection, name: str) -> None:
        row = db.execute("SELECT id FROM files WHERE name = ?", (name,)).fetchone()
        if row is not None:
            db.execute("DELETE FROM texts WHERE rowid = ?", (row[0],))
            db.execute("DELETE FROM files WHERE id = ?", (row[0],))

    # -- the database ------------------------------------------------------------------------

    def _connection(self) -> apsw.Connection:
        if self._db is not None:
            return self._db
        import apsw

        path = self.root / INDEX_NAME
        if platform.is_link(path):  # the store refuses links; a planted one is not followed
            raise OSError(f"{INDEX_NAME} is a symbolic link")
        try:
            db = apsw.Connection(str(path))
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = OFF")  # a cache: rebuilt, never trusted
            db.setbusytimeout(5000)
            version = db.execute("PRAGMA user_version").fetchone()
            if version is None or version[0] != SCHEMA_VERSION:
                with db:
                    db.execute("DROP TABLE IF EXISTS files; DROP TABLE IF EXISTS texts")
                    db.execute(_SCHEMA)
            _check(db)
        except apsw.ReadOnlyError:
            self._broken = True
            raise
        self._db = db
        return db

    def reset(self) -> None:
        """Delete the database and its files, which may hold text a scrub rewrote; the next
        lookup rebuilds it."""
        self._reset()

    def _reset(self) -> None:
        """Forget the database and delete its files; the next lookup rebuilds it."""
        self.close()
        self._watch.close()  # the rebuild compares every file again
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(OSError):
                (self.root / (INDEX_NAME + suffix)).unlink()
        if not os.access(self.root, os.W_OK):
            self._broken = True  # a read-only store: read every file, every time

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
        self._watch.close()
