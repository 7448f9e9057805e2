"""Crash-safe file primitives for the Markdown store: atomic writes, link refusal, a file lock.

These are the only functions in lecode-ls that put bytes into the memory store's Markdown files,
so the durability rules of the spec (L5) live here once: a temp file in the same folder, fsync,
rename, fsync of the folder, and a `.bak` of the previous content before an overwrite.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
import stat
import threading
from pathlib import Path
from types import TracebackType

from lecode_ls.errors import SymlinkRefused

# Store folders and files hold a person's notes about their project: owner-only access.
DIR_MODE = 0o700
FILE_MODE = 0o600

# O_NOFOLLOW: a link planted between our symlink check and the open must not be followed.
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


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
    """fsync a folder so that a rename inside it survives a power loss."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes, *, backup: bool) -> None:
    """Replace `path` with `data` so that readers and crashes see either the old or new bytes.

    With `backup`, the previous content (if the file exists) is first copied atomically to
    `<file>.bak`. Missing parent folders are created with mode 0700. On any failure, disk full
    included, the temp file is removed and the original error is re-raised (an `OSError`;
    callers turn it into a `StoreError`).
    """
    folder = path.parent
    make_dirs(folder)
    if backup and path.exists():
        atomic_write(path.with_name(path.name + ".bak"), path.read_bytes(), backup=False)

    temp = folder / f".{path.name}.{secrets.token_hex(8)}.tmp"
    fd = os.open(temp, _TEMP_FLAGS, FILE_MODE)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        temp.replace(path)
    except BaseException:
        # BaseException: a KeyboardInterrupt mid-write must not leave a stray temp file either.
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
        raise
    fsync_dir(folder)


class NotRegularFile(OSError):
    """The path names a folder, FIFO, device or socket where a regular file was expected."""


def read_regular(path: Path, max_bytes: int | None = None) -> bytes | None:
    """Read a regular file without following a link in its last component; None if it is missing.

    Reads at most `max_bytes` when given. Raises `OSError` (errno ELOOP) for a link and
    `NotRegularFile` for anything but a regular file. O_NONBLOCK keeps a planted FIFO from
    hanging the worker thread; it has no effect on regular files.
    """
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
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
    if root.is_symlink():
        raise SymlinkRefused(
            "file: the memory store folder is a symbolic link; lecode-ls refuses to follow links "
            "there",
            field="file",
        )
    relative = path.relative_to(root)
    current = root
    for part in relative.parts:
        current = current / part
        try:
            mode = current.lstat().st_mode
        except FileNotFoundError:
            return  # nothing below a missing component can exist
        if stat.S_ISLNK(mode):
            name = current.relative_to(root).as_posix()
            raise SymlinkRefused(
                f"file: {name} is a symbolic link in the store; lecode-ls refuses to follow "
                "links there",
                field="file",
            )


class FileLock:
    """An exclusive `flock` on a lock file, serializing read-modify-write across threads and processes.

    Each `__enter__` opens its own file descriptor. `flock` locks belong to the open file
    description, so two threads of one process that each open the file exclude each other just
    as two processes do; a lock shared through one fd would not. One instance may be shared by
    threads (the fd is kept per thread). Not reentrant: a thread that enters it twice deadlocks.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._held = threading.local()

    def __enter__(self) -> FileLock:
        make_dirs(self.path.parent)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except BaseException:
            os.close(fd)
            raise
        self._held.fd = fd
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        fd: int | None = getattr(self._held, "fd", None)
        self._held.fd = None
        if fd is not None:
            # Closing the only fd of the open file description releases the lock.
            os.close(fd)
