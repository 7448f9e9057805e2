"""The POSIX implementation of `Files` (Linux, macOS and the BSDs): flock, O_NOFOLLOW, fsync.

Locks are `flock(2)` locks: they belong to the open file description, so each `open` is its own
holder, and the kernel drops them when the last descriptor closes or the process dies. macOS's
`fsync(2)` only hands the data to the drive, whose cache may still lose it on a power cut;
`F_FULLFSYNC` asks the drive to flush, so `darwin_files()` uses it (as SQLite's fullfsync does),
falling back to fsync where a file system refuses it.
"""

from __future__ import annotations

import sys

# mypy checks the rest of this module only for the platforms it can run on.
assert sys.platform != "win32"

import fcntl  # noqa: E402  (after the platform assertion on purpose)
import os  # noqa: E402
import stat  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402

from lecode_ls.platform.base import FILE_MODE, Files, Kind  # noqa: E402


class PosixFiles(Files):
    """`Files` on POSIX. `full_fsync`, when given, is tried before `os.fsync` (macOS)."""

    def __init__(self, full_fsync: Callable[[int], object] | None = None) -> None:
        self.name = "posix" if full_fsync is None else "darwin"
        self._full_fsync = full_fsync

    def open(
        self,
        path: Path,
        *,
        write: bool = False,
        create: bool = False,
        exclusive: bool = False,
        append: bool = False,
    ) -> int:
        # O_NOFOLLOW: a link planted between a caller's check and this open is refused (ELOOP).
        flags = os.O_NOFOLLOW | os.O_CLOEXEC
        # O_NONBLOCK keeps a planted FIFO from hanging a reader; it changes nothing for regular
        # files, and flock ignores it.
        flags |= os.O_RDWR if write else os.O_RDONLY | os.O_NONBLOCK
        if create:
            flags |= os.O_CREAT | (os.O_EXCL if exclusive else 0)
        if append:
            flags |= os.O_APPEND
        return os.open(path, flags, FILE_MODE)

    def lock(self, fd: int, *, shared: bool = False, blocking: bool = True) -> bool:
        operation = fcntl.LOCK_SH if shared else fcntl.LOCK_EX
        try:
            fcntl.flock(fd, operation if blocking else operation | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def unlock(self, fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)

    def close(self, fd: int) -> None:
        # Closing the only descriptor of the open file description releases its flock.
        os.close(fd)

    def fsync(self, fd: int) -> None:
        if self._full_fsync is not None:
            try:
                self._full_fsync(fd)
                return
            except OSError:
                pass  # not supported by this file system (some network ones): plain fsync
        os.fsync(fd)

    def fsync_dir(self, folder: Path) -> None:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            self.fsync(fd)
        finally:
            os.close(fd)

    def replace(self, source: Path, target: Path) -> None:
        source.replace(target)  # os.replace: rename(2), atomic over an existing target

    def publish(self, source: Path, target: Path) -> None:
        # link(2) fails with EEXIST rather than replace; follow_symlinks=False links `source`
        # itself, never what a link there would point to.
        os.link(source, target, follow_symlinks=False)

    def pread(self, fd: int, size: int, offset: int) -> bytes:
        return os.pread(fd, size, offset)

    def pwrite(self, fd: int, data: bytes, offset: int) -> int:
        return os.pwrite(fd, data, offset)

    def kind(self, path: Path) -> Kind:
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            return "missing"
        if stat.S_ISLNK(mode):
            return "link"
        if stat.S_ISREG(mode):
            return "file"
        if stat.S_ISDIR(mode):
            return "dir"
        return "other"


def darwin_files() -> PosixFiles:
    """`PosixFiles` for macOS, whose fsync needs F_FULLFSYNC to reach the disk."""
    if sys.platform == "darwin":
        return PosixFiles(full_fsync=lambda fd: fcntl.fcntl(fd, fcntl.F_FULLFSYNC))
    return PosixFiles()
