"""A stand-in for the Win32 calls `WindowsFiles` makes, over real files on this machine.

It behaves as Windows does where the store's correctness depends on it, and records every call:

- `create_file` with FILE_FLAG_OPEN_REPARSE_POINT opens a symlink itself (a handle whose
  attributes say "reparse point, symlink tag"), without it follows the link; CREATE_NEW fails on
  an existing file, OPEN_EXISTING on a missing one; a folder cannot be opened as a file.
- `lock_file_ex` keeps byte-range locks per handle: exclusive conflicts with any other handle's
  lock on the same file, shared with another's exclusive; without LOCKFILE_FAIL_IMMEDIATELY it
  waits (threads of one process are real waiters).
- `move_file_ex` replaces only with MOVEFILE_REPLACE_EXISTING, else fails on an existing target.
- `lstat` reports symlinks as reparse points with the symlink tag, and the paths in `junctions`
  (real directory symlinks here) as junctions: a folder with the mount-point tag.

What it does not model: sharing modes (Linux lets anyone rename or delete an open file, as the
FILE_SHARE_DELETE that every open asks for allows on Windows; tests assert the flag instead).
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lecode_ls.platform import windows as w


@dataclass(frozen=True)
class FakeStat:
    st_mode: int
    st_dev: int
    st_ino: int
    st_file_attributes: int
    st_reparse_tag: int


@dataclass
class _Handle:
    path: str
    fd: int | None  # None: a handle on a link itself (no data to read)
    key: tuple[int, int]
    link_tag: int = 0


@dataclass
class FakeWin32:
    """`Win32Api` over real files, recording `calls` as tuples (name, *arguments)."""

    junctions: set[str] = field(default_factory=set)
    calls: list[tuple[Any, ...]] = field(default_factory=list)
    lock_conflicts: int = 0  # how often a lock had to wait or fail

    def __post_init__(self) -> None:
        self._handles: dict[int, _Handle] = {}
        self._by_fd: dict[int, int] = {}
        self._next = 0x100
        self._locks: dict[tuple[int, int], dict[int, bool]] = {}  # file -> handle -> exclusive
        self._cond = threading.Condition()

    # -- helpers ---------------------------------------------------------------------------------

    def names(self) -> list[str]:
        return [call[0] for call in self.calls]

    def _win_stat(self, path: str | None, st: os.stat_result) -> FakeStat:
        if path is not None and os.path.normpath(path) in self.junctions:
            attributes, tag = (
                w.FILE_ATTRIBUTE_REPARSE_POINT | w.FILE_ATTRIBUTE_DIRECTORY,
                (w.IO_REPARSE_TAG_MOUNT_POINT),
            )
            return FakeStat(stat.S_IFDIR | 0o700, st.st_dev, st.st_ino, attributes, tag)
        if stat.S_ISLNK(st.st_mode):
            attributes, tag = w.FILE_ATTRIBUTE_REPARSE_POINT, w.IO_REPARSE_TAG_SYMLINK
        elif stat.S_ISDIR(st.st_mode):
            attributes, tag = w.FILE_ATTRIBUTE_DIRECTORY, 0
        else:
            attributes, tag = w.FILE_ATTRIBUTE_NORMAL, 0
        return FakeStat(st.st_mode, st.st_dev, st.st_ino, attributes, tag)

    def _new_handle(self, handle: _Handle) -> int:
        with self._cond:
            self._next += 4
            self._handles[self._next] = handle
            return self._next

    # -- Win32Api --------------------------------------------------------------------------------

    def lstat(self, path: str) -> FakeStat:
        self.calls.append(("lstat", path))
        return self._win_stat(path, os.lstat(path))

    def fstat(self, fd: int) -> FakeStat:
        self.calls.append(("fstat", fd))
        return self._win_stat(None, os.fstat(fd))

    def create_file(self, path: str, access: int, share: int, disposition: int, flags: int) -> int:
        self.calls.append(("create_file", path, access, share, disposition, flags))
        try:
            st: os.stat_result | None = os.lstat(path)
        except FileNotFoundError:
            st = None
        junction = os.path.normpath(path) in self.junctions
        if st is not None and (stat.S_ISLNK(st.st_mode) or junction):
            if flags & w.FILE_FLAG_OPEN_REPARSE_POINT:
                if disposition == w.CREATE_NEW:
                    raise FileExistsError(errno.EEXIST, "The file exists", path)
                tag = w.IO_REPARSE_TAG_MOUNT_POINT if junction else w.IO_REPARSE_TAG_SYMLINK
                return self._new_handle(_Handle(path, None, (st.st_dev, st.st_ino), tag))
            st = Path(path).stat()  # Windows follows the link
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise PermissionError(errno.EACCES, "Access is denied", path)
        os_flags = os.O_CLOEXEC | (os.O_RDWR if access & w.GENERIC_WRITE else os.O_RDONLY)
        if st is not None and stat.S_ISFIFO(st.st_mode):
            os_flags |= os.O_NONBLOCK  # Windows has no FIFOs in its file systems; never hang
        if disposition == w.CREATE_NEW:
            os_flags |= os.O_CREAT | os.O_EXCL
        elif disposition == w.OPEN_ALWAYS:
            os_flags |= os.O_CREAT
        elif disposition != w.OPEN_EXISTING:
            raise AssertionError(f"unexpected disposition {disposition}")
        fd = os.open(path, os_flags, 0o600)
        opened = os.fstat(fd)
        return self._new_handle(_Handle(path, fd, (opened.st_dev, opened.st_ino)))

    def handle_attributes(self, handle: int) -> tuple[int, int]:
        self.calls.append(("handle_attributes", handle))
        entry = self._handles[handle]
        if entry.fd is None:
            attributes = w.FILE_ATTRIBUTE_REPARSE_POINT
            if entry.link_tag == w.IO_REPARSE_TAG_MOUNT_POINT:
                attributes |= w.FILE_ATTRIBUTE_DIRECTORY
            return attributes, entry.link_tag
        return self._win_stat(None, os.fstat(entry.fd)).st_file_attributes, 0

    def close_handle(self, handle: int) -> None:
        self.calls.append(("close_handle", handle))
        entry = self._handles.pop(handle)
        if entry.fd is not None:
            os.close(entry.fd)

    def open_osfhandle(self, handle: int, flags: int) -> int:
        self.calls.append(("open_osfhandle", handle, flags))
        fd = self._handles[handle].fd
        assert fd is not None, "a link's own handle was given to the C runtime"
        if flags & w.CRT_O_APPEND:
            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_APPEND)
        with self._cond:
            self._by_fd[fd] = handle
        return fd

    def get_osfhandle(self, fd: int) -> int:
        return self._by_fd[fd]

    def lock_file_ex(self, handle: int, flags: int, offset: int, length: int) -> bool:
        self.calls.append(("lock_file_ex", handle, flags, offset, length))
        exclusive = bool(flags & w.LOCKFILE_EXCLUSIVE_LOCK)
        key = self._handles[handle].key
        with self._cond:
            while True:
                holders = self._locks.setdefault(key, {})
                conflict = any(
                    other != handle and (exclusive or other_exclusive)
                    for other, other_exclusive in holders.items()
                )
                if not conflict:
                    holders[handle] = exclusive
                    return True
                self.lock_conflicts += 1
                if flags & w.LOCKFILE_FAIL_IMMEDIATELY:
                    return False
                self._cond.wait()

    def unlock_file_ex(self, handle: int, offset: int, length: int) -> None:
        entry = self._handles[handle]
        still_open = entry.fd is not None and _is_open(entry.fd)
        self.calls.append(("unlock_file_ex", handle, offset, length, still_open))
        with self._cond:
            self._locks.get(entry.key, {}).pop(handle, None)
            self._cond.notify_all()

    def move_file_ex(self, source: str, target: str, flags: int) -> None:
        self.calls.append(("move_file_ex", source, target, flags))
        if flags & w.MOVEFILE_REPLACE_EXISTING:
            Path(source).replace(target)  # os.replace, which a test may make fail
            return
        if os.path.lexists(target):
            raise FileExistsError(errno.EEXIST, "Cannot create a file when it already exists")
        Path(source).rename(target)


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True
