"""The connection to a project's facts.sqlite3 and its transactions, for `FactStore` (store.py),
which owns the database: opening (links refused, WAL, pragmas, migrations), one lock per store,
`BEGIN IMMEDIATE` writes, snapshot reads, and SQLite failures as `StoreError` sentences.

Durability and concurrency: apsw (a current SQLite, see PITFALLS "SQLite"), WAL with
`synchronous=FULL` (facts change rarely and a forget must survive a power loss once it returned;
a use record alone commits with NORMAL: `write(durable=False)`),
a 5 s busy timeout, and every write one `BEGIN IMMEDIATE` transaction, so several editor windows
(processes) can share one database. Within a process, one connection per store is guarded by a
re-entrant lock: a read inside this thread's own write transaction reads through it.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import apsw

from lecode_ls import platform
from lecode_ls.errors import LecodeError, StoreError, SymlinkRefused
from lecode_ls.memory.facts import schema
from lecode_ls.memory.files import FileLock, make_dirs, refuse_symlinks

log = logging.getLogger(__name__)

DB_NAME = "facts.sqlite3"
BUSY_TIMEOUT_MS = 5000
_SIDECARS = ("-wal", "-shm", "-journal")


@contextlib.contextmanager
def store_errors() -> Iterator[None]:
    """Turn SQLite failures into StoreError sentences that name no path."""
    try:
        yield
    except LecodeError:
        raise
    except apsw.BusyError as error:
        raise StoreError(
            f"{DB_NAME} is busy: another process held its write lock for more than "
            f"{BUSY_TIMEOUT_MS // 1000} s; try again"
        ) from error
    except (apsw.CorruptError, apsw.NotADBError) as error:
        raise StoreError(f"{DB_NAME} is damaged or not a SQLite database") from error
    except apsw.FullError as error:
        raise StoreError(f"{DB_NAME} could not be written: the disk is full") from error
    except apsw.CantOpenError as error:
        if getattr(error, "extendedresult", None) == apsw.SQLITE_CANTOPEN_SYMLINK:
            raise SymlinkRefused(
                f"{DB_NAME} is a symbolic link; lecode-ls refuses to follow links in its store"
            ) from error
        raise StoreError(f"{DB_NAME} could not be opened") from error
    except OSError as error:
        if error.errno == errno.ELOOP:  # O_NOFOLLOW met a link planted after the lstat check
            raise SymlinkRefused(
                f"{DB_NAME} is a symbolic link; lecode-ls refuses to follow links in its store"
            ) from error
        raise StoreError(f"{DB_NAME} could not be created ({type(error).__name__})") from error
    except apsw.Error as error:
        raise StoreError(
            f"{DB_NAME} could not be read or written ({type(error).__name__})"
        ) from error


def _open_read_only(real: Path) -> apsw.Connection:
    """The database of a store that cannot be written, for reading only.

    Reading a WAL database needs its shared-memory file (-shm), which SQLite creates beside it.
    Where it cannot (a read-only mount), the file is opened immutable: read as it is on disk, which
    nothing can change there (a -wal file left by a crash would not be read). Writes then fail as
    StoreError. A database from an older lecode-ls cannot be migrated here and is refused.
    """
    flags = apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI | apsw.SQLITE_OPEN_NOFOLLOW
    for query in ("mode=ro", "immutable=1"):
        conn = apsw.Connection(f"{real.as_uri()}?{query}", flags=flags)
        try:
            conn.set_busy_timeout(BUSY_TIMEOUT_MS)
            schema.migrate(conn)  # only checks the version: it needs no write when current
        except apsw.CantOpenError:
            conn.close()
            continue
        except BaseException:
            conn.close()
            raise
        log.info("%s is in a read-only store: opened for reading only (%s)", DB_NAME, query)
        return conn
    raise StoreError(f"{DB_NAME} could not be opened for reading")


def _open_current(real: Path) -> apsw.Connection:
    """The database opened read-only (`mode=ro`), with no lock of ours and no migration: a
    database whose schema is not this lecode-ls's current one is refused (the language server
    migrates it when it next opens it). Reading a WAL database never waits on its writers."""
    flags = apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI | apsw.SQLITE_OPEN_NOFOLLOW
    conn = apsw.Connection(f"{real.as_uri()}?mode=ro", flags=flags)
    try:
        conn.set_busy_timeout(BUSY_TIMEOUT_MS)
        version = schema.user_version(conn)
        if version != schema.SCHEMA_VERSION:
            raise StoreError(
                f"{DB_NAME} has schema version {version}, not {schema.SCHEMA_VERSION}: the "
                "language server migrates it when it next opens it"
            )
    except BaseException:
        conn.close()
        raise
    return conn


class FactsDatabase:
    """The connection to one facts.sqlite3, opened on first use (see the module docstring).

    The constructor touches no file. `read()` of a missing database yields None and does not
    create it (F3); the first `write()` creates it (mode 0600, parent folders 0700). A symbolic
    link at the database path (or, when `root` is given, anywhere from the store folder `root`
    down to it) is refused.
    """

    def __init__(self, path: Path, *, root: Path | None = None, read_only: bool = False) -> None:
        self.path = path
        self._root = root
        self.read_only = read_only
        """Never create, migrate or write the database, nor take the open lock: for a reader
        outside the server (`lecode-ls context`). Writes raise StoreError."""
        self.lock = threading.RLock()
        self._conn: apsw.Connection | None = None
        self._closed = False

    def _refuse_links(self) -> None:
        if self._root is not None:
            refuse_symlinks(self._root, self.path)
        for candidate in (self.path, *(Path(f"{self.path}{s}") for s in _SIDECARS)):
            with contextlib.suppress(FileNotFoundError):
                if platform.is_link(candidate):
                    raise SymlinkRefused(
                        f"{candidate.name} is a symbolic link; lecode-ls refuses to follow links "
                        "in its store"
                    )

    def connection(self, *, create: bool) -> apsw.Connection | None:
        """The open connection; None when the database is missing and `create` is false."""
        if self._closed:
            raise StoreError("the facts store is closed")
        if self._conn is not None:
            return self._conn
        self._refuse_links()
        if self.read_only:
            if create:
                raise StoreError(f"{DB_NAME} was opened for reading only")
            if not self.path.exists():
                return None
            self._conn = _open_current(self.path.parent.resolve() / self.path.name)
            return self._conn
        if create:
            make_dirs(self.path.parent)
            # Made here rather than by SQLite so that it is owner-only; SQLite gives its -wal and
            # -shm files the database file's mode. No-follow: no link planted since the check.
            platform.close(platform.open_file(self.path, write=True, create=True))
        elif not self.path.exists():
            return None
        # SQLITE_OPEN_NOFOLLOW refuses a link in *any* component, and folders above the store
        # (a symlinked ~/.config, macOS's /var) are legitimate: resolve them first, so that the
        # flag guards the database file itself against a link planted after our check.
        real = self.path.parent.resolve() / self.path.name
        # Opening is serialized across processes: two first opens switching a new database to
        # WAL at once get SQLITE_BUSY at once, busy timeout or not (SQLite avoids a deadlock).
        with FileLock(self.path.with_name(DB_NAME + ".open.lock")):
            conn = self._open(real)
        self._conn = conn
        return conn

    @staticmethod
    def _open(real: Path) -> apsw.Connection:
        """Connect, switch to WAL, set the pragmas, and migrate; in a store that cannot be
        written (a read-only mount, no write permission), open it for reading only."""
        try:
            return FactsDatabase._open_writable(real)
        except (apsw.CantOpenError, apsw.ReadOnlyError) as error:
            symlink = getattr(error, "extendedresult", None) == apsw.SQLITE_CANTOPEN_SYMLINK
            if symlink or (os.access(real.parent, os.W_OK) and os.access(real, os.W_OK)):
                raise
        return _open_read_only(real)

    @staticmethod
    def _open_writable(real: Path) -> apsw.Connection:
        conn = apsw.Connection(
            str(real), flags=apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_NOFOLLOW
        )
        try:
            conn.set_busy_timeout(BUSY_TIMEOUT_MS)
            if str(conn.pragma("journal_mode", "wal")).lower() != "wal":
                raise StoreError(f"{DB_NAME} could not be switched to write-ahead logging")
            conn.execute("PRAGMA synchronous = FULL")
            conn.execute("PRAGMA foreign_keys = ON")
            # Forgotten text is overwritten with zeros in the file rather than left in free pages.
            conn.execute("PRAGMA secure_delete = ON")
            schema.migrate(conn)
        except BaseException:
            conn.close()
            raise
        return conn

    @contextlib.contextmanager
    def write(self, *, counted: bool = True, durable: bool = True) -> Iterator[apsw.Connection]:
        """One BEGIN IMMEDIATE transaction: committed on normal exit, rolled back on an error.
        `counted`: the write advances `meta.changes` (schema migration 6), as every write that
        can change what injection selects does; recording a use does not. `durable=False`
        commits with `synchronous=NORMAL` (no fsync of the WAL at commit: never corrupting, and a
        power loss may drop it): for a use record, which a turn should not wait on a disk for."""
        with self.lock, store_errors():
            conn = self.connection(create=True)
            assert conn is not None
            if not durable:
                conn.execute("PRAGMA synchronous = NORMAL")
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    yield conn
                    if counted:
                        schema.count_change(conn)
                    conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:  # some errors (disk full) already rolled back
                        conn.execute("ROLLBACK")
                    raise
            finally:
                if not durable:
                    conn.execute("PRAGMA synchronous = FULL")

    @contextlib.contextmanager
    def read(self) -> Iterator[apsw.Connection | None]:
        """A read transaction (one consistent snapshot); None when there is no database yet."""
        with self.lock, store_errors():
            conn = self.connection(create=False)
            if conn is None:
                yield None
                return
            if conn.in_transaction:
                # Inside this thread's own write transaction (the lock is held): read what it
                # sees. A source check inside `remember` reads exclusions this way (A8).
                yield conn
                return
            conn.execute("BEGIN")
            try:
                yield conn
            finally:
                if conn.in_transaction:
                    conn.execute("COMMIT")

    def close(self) -> None:
        """Close the connection. Idempotent; later calls raise StoreError."""
        with self.lock:
            self._closed = True
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    @contextlib.contextmanager
    def rolled_back(self) -> Iterator[apsw.Connection | None]:
        """A write transaction that is always rolled back (for checks that issue writes, such
        as FTS5's integrity check); None when there is no database."""
        with self.lock, store_errors():
            conn = self.connection(create=False)
            if conn is None:
                yield None
                return
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            finally:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")

    def exists(self) -> bool:
        """Whether the database exists (opening it when it does)."""
        with self.lock, store_errors():
            return self.connection(create=False) is not None
