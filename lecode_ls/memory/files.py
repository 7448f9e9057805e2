"""Crash-safe file primitives for the Markdown store: atomic writes, link refusal, a file lock,
and the removal of temp files a killed writer left behind.

These are the only functions in lecode-ls that put bytes into the memory store's Markdown files,
so the durability rules of the spec (L5) live here once: a temp file in the same folder, fsync,
rename, fsync of the folder, and a `.bak` of the previous content before an overwrite. What each
step means on each operating system lives in lecode_ls.platform.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import re
import secrets
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from lecode_ls import platform
from lecode_ls.errors import SymlinkRefused
from lecode_ls.platform import FILE_MODE as FILE_MODE  # re-exported: the mode of store files
from lecode_ls.platform import is_read_only_error

log = logging.getLogger(__name__)

# Store folders and files hold a person's notes about their project: owner-only access.
DIR_MODE = 0o700

TEMP_NAME = re.compile(r"\.(?P<target>.+)\.[0-9a-f]{16}\.tmp")
"""The name of every temp file a write makes: `.<file name>.<16 hex digits>.tmp`."""

STALE_TEMP_SECONDS = 60.0
"""How long a temp file must have gone unwritten before `remove_stale_temps` may take it."""


def temp_path(path: Path) -> Path:
    """A fresh temp file name beside `path` (see TEMP_NAME)."""
    return path.parent / f".{path.name}.{secrets.token_hex(8)}.tmp"


def make_dirs(folder: Path) -> None:
    """Create `folder` and any missing parents with mode 0700.

    `Path.mkdir(parents=True)` gives the intermediate folders the default mode, so each missing
    component is created one by one instead.
    """
    missing: list[Path] = []
    current = folder
    while not current.exists():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for part in reversed(missing):
        # Another thread or process may create the same folder between the check and here.
        with contextlib.suppress(FileExistsError):
            part.mkdir(mode=DIR_MODE)


def fsync_dir(folder: Path) -> None:
    """fsync a folder so that a rename inside it survives a power loss (see platform)."""
    platform.fsync_dir(folder)


def atomic_write(
    path: Path, data: bytes, *, backup: bool, locked: Callable[[], None] | None = None
) -> None:
    """Replace `path` with `data` so that readers and crashes see either the old or new bytes.

    With `backup`, the previous content (if the file exists) is first copied atomically to
    `<file>.bak`. Missing parent folders are created with mode 0700. `locked` runs right after
    the rename, while the new file is still locked (a transcript's index is written there). On any failure, disk full
    included, the temp file is removed and the original error is re-raised (an `OSError`;
    callers turn it into a `StoreError`).
    """
    folder = path.parent
    make_dirs(folder)
    if backup and path.exists():
        atomic_write(path.with_name(path.name + ".bak"), path.read_bytes(), backup=False)

    temp = temp_path(path)
    # No-follow and exclusive: a link planted at the temp name is refused, never written through.
    fd = platform.open_file(temp, write=True, create=True, exclusive=True)
    try:
        # Locked for its whole life, so that `remove_stale_temps` never takes the temp file of a
        # writer that is alive; the lock goes with the file through the rename and is dropped
        # by the close.
        platform.lock(fd)
        write_all(fd, data)
        platform.fsync(fd)
        platform.replace(temp, path)
        if locked is not None:
            locked()
    except BaseException:
        # BaseException: a KeyboardInterrupt mid-write must not leave a stray temp file either.
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
        raise
    finally:
        platform.close(fd)
    fsync_dir(folder)


def write_all(fd: int, data: bytes) -> None:
    """Write all of `data` at the descriptor's position (os.write may take only part)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class NotRegularFile(OSError):
    """The path names a folder, FIFO, device or socket where a regular file was expected."""


def read_regular(path: Path, max_bytes: int | None = None) -> bytes | None:
    """Read a regular file without following a link in its last component; None if it is missing.

    Reads at most `max_bytes` when given. Raises `OSError` (errno ELOOP) for a link and
    `NotRegularFile` for anything but a regular file. The open never blocks on a planted FIFO.
    """
    try:
        fd = platform.open_file(path)
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise NotRegularFile(f"{path.name} is not a regular file") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegularFile(f"{path.name} is not a regular file")
        handle = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with handle:  # owns fd from here on
        return handle.read() if max_bytes is None else handle.read(max_bytes)


def refuse_symlinks(root: Path, path: Path) -> None:
    """Raise `SymlinkRefused` if `root`, or any existing component from it down to `path`, is a link.

    `path` must lie under `root`. Components that do not exist yet are fine: they will be created
    as real folders and files. The message names the store-relative component, never the absolute
    store path (the client sees messages).
    """
    if platform.is_link(root):
        raise SymlinkRefused(
            "file: the memory store folder is a symbolic link; lecode-ls refuses to follow links "
            "there",
            field="file",
        )
    relative = path.relative_to(root)
    current = root
    for part in relative.parts:
        current = current / part
        found = platform.kind(current)
        if found == "missing":
            return  # nothing below a missing component can exist
        if found == "link":
            name = current.relative_to(root).as_posix()
            raise SymlinkRefused(
                f"file: {name} is a symbolic link in the store; lecode-ls refuses to follow "
                "links there",
                field="file",
            )


class FileLock:
    """An exclusive lock on a lock file, serializing read-modify-write across threads and processes.

    Each `__enter__` opens its own file descriptor. The lock belongs to the descriptor (see
    `platform.lock`), so two threads of one process that each open the file exclude each other
    just as two processes do; a lock shared through one fd would not. One instance may be shared
    by threads (the fd is kept per thread). Not reentrant: a thread that enters it twice deadlocks.

    On a store that cannot be written (a read-only mount, a folder without write permission) an
    existing lock file is opened for reading, which is enough to lock it; a missing one that
    cannot be created is skipped, since no writer it would serialize can run there either.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._held = threading.local()

    def __enter__(self) -> FileLock:
        fd = self._open()
        if fd is not None:
            try:
                platform.lock(fd)
            except BaseException:
                platform.close(fd)
                raise
        self._held.fd = fd
        return self

    def _open(self) -> int | None:
        try:
            make_dirs(self.path.parent)
            return platform.open_file(self.path, write=True, create=True)
        except OSError as error:
            if not is_read_only_error(error):
                raise
            try:
                return platform.open_file(self.path)
            except FileNotFoundError:
                log.debug("%s cannot be created in a read-only store; not locking", self.path.name)
                return None

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        fd: int | None = getattr(self._held, "fd", None)
        self._held.fd = None
        if fd is not None:
            platform.close(fd)  # releases the lock


def remove_stale_temps(folder: Path, *, min_age: float = STALE_TEMP_SECONDS) -> list[str]:
    """Remove the temp files that writers killed mid-write left in `folder`; their names.

    A temp file (TEMP_NAME) is removed only when all of these hold, so the temp file of a writer
    that is still alive, in this process or another, is never taken:

    1. it is a regular file, not a link, in a folder that is not a link;
    2. nothing has written to it for `min_age` seconds (its mtime);
    3. a non-blocking exclusive lock on it succeeds. Every writer locks its temp file right after
       creating it and keeps it locked until it has been renamed into place or removed, and the
       operating system drops a dead writer's lock; so a lock held means a live writer. Rule 2
       covers the one instant a live writer's temp file exists unlocked (between its creation
       and the lock call);
    4. the name still names the file that was locked.

    Subfolders are not visited. Nothing is raised: a folder that cannot be listed, or a file that
    cannot be removed (a read-only store), is left as it is and logged at debug level.
    """
    removed: list[str] = []
    try:
        if platform.kind(folder) != "dir":
            return removed
        names = sorted(
            entry.name for entry in os.scandir(folder) if TEMP_NAME.fullmatch(entry.name)
        )
    except OSError as error:
        log.debug("cannot look for stale temp files in %s: %s", folder, error)
        return removed
    now = time.time()
    for name in names:
        path = folder / name
        try:
            fd = platform.open_file(path)  # refuses a link (ELOOP)
        except OSError:
            continue
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or now - st.st_mtime < min_age:
                continue
            if not platform.lock(fd, blocking=False):
                continue  # a live writer holds it
            if not platform.current().same_file(st, os.lstat(path)):
                continue
            path.unlink()
            removed.append(name)
        except OSError as error:
            if error.errno != errno.ENOENT:
                log.debug("cannot remove stale temp file %s: %s", path, error)
        finally:
            platform.close(fd)
    if removed:
        log.info("removed %d temp file(s) left by an interrupted write in %s", len(removed), folder)
    return removed
