"""The Windows implementation of `Files`: CreateFileW, LockFileEx and MoveFileExW through ctypes.

`WindowsFiles` holds the logic and talks to Windows only through a `Win32Api`, so that its
decisions (which flags, which checks, in which order) run and are tested on any platform against
a stand-in; `Kernel32Api` at the bottom is the real binding, defined only on Windows.

How each POSIX guarantee the store relies on is kept:

- No-follow opens. `CreateFileW` with FILE_FLAG_OPEN_REPARSE_POINT opens a symlink or junction
  itself instead of its target (the counterpart of O_NOFOLLOW). The path is checked with `lstat`
  before opening, and the opened handle's own attributes after: a link found either time is
  refused with ELOOP, and a file swapped between the two (another identity) is opened again.
- Rename and delete while open. Python's `os.open` shares files without FILE_SHARE_DELETE, so a
  file one process holds open could not be renamed over or deleted by another (an atomic write
  replacing a note someone is reading, deleting a session someone waits on). Every open here
  shares read, write and delete, as POSIX descriptors do.
- Locks. `LockFileEx` locks a byte range of a handle, shared or exclusive, blocking or failing
  at once, and belongs to the handle (two handles of one process exclude each other, like flock).
  Windows byte-range locks are mandatory: a locked range cannot be read or written through other
  handles. So every lock covers one byte at LOCK_OFFSET, far beyond any data the store keeps,
  which makes it a whole-file advisory lock in effect: it never blocks the bytes themselves. The
  lock is released with `UnlockFileEx` before the handle is closed (Windows documents that
  leaving it to close releases it only "eventually").
- Durable renames. `MoveFileExW` with MOVEFILE_WRITE_THROUGH returns only once the rename is on
  disk. Windows has no folder fsync (a folder can be opened for FlushFileBuffers only with backup
  privileges), so `fsync_dir` does nothing and the write-through flag carries that duty.
- Links in `kind`. `lstat` reports a symlink as S_IFLNK but a junction as a folder; any reparse
  point whose tag is a name surrogate (symlinks, junctions, WSL links) counts as a link. Other
  reparse points (OneDrive placeholders, deduplicated files) are ordinary files.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from lecode_ls.platform.base import Files, Kind, link_refused

# CreateFileW
GENERIC_READ = 0x80000000
GENERIC_WRITE = 0x40000000
FILE_SHARE_READ = 0x1
FILE_SHARE_WRITE = 0x2
FILE_SHARE_DELETE = 0x4
SHARE_ALL = FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE
CREATE_NEW = 1
OPEN_EXISTING = 3
OPEN_ALWAYS = 4
FILE_ATTRIBUTE_NORMAL = 0x80
FILE_FLAG_OPEN_REPARSE_POINT = 0x00200000

# File attributes and reparse tags
FILE_ATTRIBUTE_DIRECTORY = 0x10
FILE_ATTRIBUTE_REPARSE_POINT = 0x400
IO_REPARSE_TAG_MOUNT_POINT = 0xA0000003  # a junction
IO_REPARSE_TAG_SYMLINK = 0xA000000C
_NAME_SURROGATE_BIT = 0x20000000  # IsReparseTagNameSurrogate: the tag names another path

# LockFileEx
LOCKFILE_FAIL_IMMEDIATELY = 0x1
LOCKFILE_EXCLUSIVE_LOCK = 0x2
LOCK_OFFSET = 1 << 62
LOCK_LENGTH = 1

# MoveFileExW
MOVEFILE_REPLACE_EXISTING = 0x1
MOVEFILE_WRITE_THROUGH = 0x8

# The C runtime's flags for _open_osfhandle (a descriptor is binary unless _O_TEXT is given).
CRT_O_RDONLY = 0x0000
CRT_O_APPEND = 0x0008
CRT_O_NOINHERIT = 0x0080

_OPEN_ATTEMPTS = 3
_REPLACE_ATTEMPTS = 10
_REPLACE_PAUSE = 0.05  # seconds; a virus scanner or indexer holds a new file for a moment


class WinStat(Protocol):
    """The fields of a Windows `os.stat_result` this module reads."""

    @property
    def st_mode(self) -> int: ...
    @property
    def st_dev(self) -> int: ...
    @property
    def st_ino(self) -> int: ...
    @property
    def st_file_attributes(self) -> int: ...
    @property
    def st_reparse_tag(self) -> int: ...


class Win32Api(Protocol):
    """The calls `WindowsFiles` makes; errors are OSError subclasses, as Python maps Win32 errors."""

    def lstat(self, path: str) -> WinStat:
        """`os.lstat`: does not follow a name-surrogate reparse point at the last component."""
        ...

    def fstat(self, fd: int) -> WinStat:
        """`os.fstat`; its `st_reparse_tag` is always 0 (use `handle_attributes`)."""
        ...

    def create_file(self, path: str, access: int, share: int, disposition: int, flags: int) -> int:
        """`CreateFileW`: a new handle."""
        ...

    def handle_attributes(self, handle: int) -> tuple[int, int]:
        """`GetFileInformationByHandleEx(FileAttributeTagInfo)`: (attributes, reparse tag)."""
        ...

    def close_handle(self, handle: int) -> None:
        """`CloseHandle`, for a handle not yet given to the C runtime."""
        ...

    def open_osfhandle(self, handle: int, flags: int) -> int:
        """`msvcrt.open_osfhandle`: a descriptor that owns `handle` (os.close closes both)."""
        ...

    def get_osfhandle(self, fd: int) -> int:
        """`msvcrt.get_osfhandle`: the handle a descriptor owns."""
        ...

    def lock_file_ex(self, handle: int, flags: int, offset: int, length: int) -> bool:
        """`LockFileEx`; False for ERROR_LOCK_VIOLATION (held elsewhere, FAIL_IMMEDIATELY)."""
        ...

    def unlock_file_ex(self, handle: int, offset: int, length: int) -> None:
        """`UnlockFileEx`; nothing for ERROR_NOT_LOCKED."""
        ...

    def move_file_ex(self, source: str, target: str, flags: int) -> None:
        """`MoveFileExW`; FileExistsError when the target exists and may not be replaced."""
        ...


def is_name_surrogate(tag: int) -> bool:
    """Whether a reparse tag makes its file stand for another path (a link of some kind)."""
    return bool(tag & _NAME_SURROGATE_BIT)


def is_link_attributes(attributes: int, tag: int) -> bool:
    return bool(attributes & FILE_ATTRIBUTE_REPARSE_POINT) and is_name_surrogate(tag)


class WindowsFiles(Files):
    """`Files` on Windows, through `api` (the real `Kernel32Api`, or a stand-in in tests)."""

    name = "windows"

    def __init__(self, api: Win32Api, sleep: Callable[[float], None] = time.sleep) -> None:
        self.api = api
        self._sleep = sleep
        self._locked: set[int] = set()  # descriptors holding a lock, to unlock before closing
        self._guard = threading.Lock()

    # -- opening --------------------------------------------------------------------------------

    def open(
        self,
        path: Path,
        *,
        write: bool = False,
        create: bool = False,
        exclusive: bool = False,
        append: bool = False,
    ) -> int:
        name = str(path)
        access = GENERIC_READ | (GENERIC_WRITE if write else 0)
        disposition = (CREATE_NEW if exclusive else OPEN_ALWAYS) if create else OPEN_EXISTING
        crt_flags = CRT_O_NOINHERIT | (CRT_O_APPEND if append else 0)
        if not write:
            crt_flags |= CRT_O_RDONLY
        for _ in range(_OPEN_ATTEMPTS):
            before = self._lstat(name)
            if before is not None:
                if is_link_attributes(before.st_file_attributes, before.st_reparse_tag):
                    raise link_refused(name)
                if before.st_file_attributes & FILE_ATTRIBUTE_DIRECTORY:
                    raise IsADirectoryError(errno.EISDIR, "Is a directory", name)
            handle = self.api.create_file(
                name,
                access,
                SHARE_ALL,
                disposition,
                FILE_ATTRIBUTE_NORMAL | FILE_FLAG_OPEN_REPARSE_POINT,
            )
            try:
                attributes, tag = self.api.handle_attributes(handle)
                if is_link_attributes(attributes, tag):
                    # A link planted after the lstat: the handle is the link itself, not its target.
                    raise link_refused(name)
                fd = self.api.open_osfhandle(handle, crt_flags)
            except BaseException:
                self.api.close_handle(handle)
                raise
            try:
                after = self.api.fstat(fd)
            except BaseException:
                os.close(fd)
                raise
            if before is None or self.same_file(before, after):
                return fd
            # Replaced between the lstat and the open (an atomic rename by another process):
            # check the new file as well before trusting it.
            os.close(fd)
        raise OSError(errno.EAGAIN, "the file kept changing while being opened", name)

    def _lstat(self, name: str) -> WinStat | None:
        try:
            return self.api.lstat(name)
        except FileNotFoundError:
            return None

    # -- locking --------------------------------------------------------------------------------

    def lock(self, fd: int, *, shared: bool = False, blocking: bool = True) -> bool:
        flags = (0 if shared else LOCKFILE_EXCLUSIVE_LOCK) | (
            0 if blocking else LOCKFILE_FAIL_IMMEDIATELY
        )
        handle = self.api.get_osfhandle(fd)
        if not self.api.lock_file_ex(handle, flags, LOCK_OFFSET, LOCK_LENGTH):
            return False
        with self._guard:
            self._locked.add(fd)
        return True

    def unlock(self, fd: int) -> None:
        with self._guard:
            self._locked.discard(fd)
        self.api.unlock_file_ex(self.api.get_osfhandle(fd), LOCK_OFFSET, LOCK_LENGTH)

    def close(self, fd: int) -> None:
        with self._guard:
            held = fd in self._locked
            self._locked.discard(fd)
        try:
            if held:
                self.api.unlock_file_ex(self.api.get_osfhandle(fd), LOCK_OFFSET, LOCK_LENGTH)
        finally:
            os.close(fd)

    # -- durability -----------------------------------------------------------------------------

    def fsync(self, fd: int) -> None:
        os.fsync(fd)  # FlushFileBuffers through the C runtime's _commit

    def fsync_dir(self, folder: Path) -> None:
        # Nothing to do: see the module docstring (MOVEFILE_WRITE_THROUGH makes renames durable).
        return None

    def replace(self, source: Path, target: Path) -> None:
        flags = MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH
        for attempt in range(_REPLACE_ATTEMPTS):
            try:
                self.api.move_file_ex(str(source), str(target), flags)
                return
            except PermissionError:
                # Another program (a virus scanner, the search indexer, an editor) holds the
                # target open without sharing delete: a moment later it usually has let go.
                if attempt == _REPLACE_ATTEMPTS - 1:
                    raise
                self._sleep(_REPLACE_PAUSE)

    def publish(self, source: Path, target: Path) -> None:
        # A rename without MOVEFILE_REPLACE_EXISTING fails if the target exists (hard links,
        # as POSIX uses, need NTFS; FAT and exFAT drives have none).
        self.api.move_file_ex(str(source), str(target), MOVEFILE_WRITE_THROUGH)

    # -- positioned I/O -------------------------------------------------------------------------

    def pread(self, fd: int, size: int, offset: int) -> bytes:
        os.lseek(fd, offset, os.SEEK_SET)
        return os.read(fd, size)

    def pwrite(self, fd: int, data: bytes, offset: int) -> int:
        os.lseek(fd, offset, os.SEEK_SET)
        return os.write(fd, data)

    # -- kinds ----------------------------------------------------------------------------------

    def kind(self, path: Path) -> Kind:
        st = self._lstat(str(path))
        if st is None:
            return "missing"
        if is_link_attributes(st.st_file_attributes, st.st_reparse_tag) or stat.S_ISLNK(st.st_mode):
            return "link"
        if st.st_file_attributes & FILE_ATTRIBUTE_DIRECTORY:
            return "dir"
        if stat.S_ISREG(st.st_mode):
            return "file"
        return "other"


if sys.platform == "win32":
    import ctypes
    import msvcrt
    from ctypes import wintypes

    class _Overlapped(ctypes.Structure):
        _fields_ = (
            ("Internal", ctypes.c_void_p),  # ULONG_PTR: pointer-sized
            ("InternalHigh", ctypes.c_void_p),
            ("Offset", wintypes.DWORD),
            ("OffsetHigh", wintypes.DWORD),
            ("hEvent", wintypes.HANDLE),
        )

    class _AttributeTagInfo(ctypes.Structure):
        _fields_ = (("FileAttributes", wintypes.DWORD), ("ReparseTag", wintypes.DWORD))

    _FILE_ATTRIBUTE_TAG_INFO = 9  # FILE_INFO_BY_HANDLE_CLASS
    _ERROR_LOCK_VIOLATION = 33
    _ERROR_NOT_LOCKED = 158
    _INVALID_HANDLE = ctypes.c_void_p(-1).value

    class Kernel32Api:
        """The real `Win32Api`: kernel32 through ctypes, msvcrt and os."""

        def __init__(self) -> None:
            k = ctypes.WinDLL("kernel32", use_last_error=True)
            k.CreateFileW.argtypes = (
                wintypes.LPCWSTR,
                wintypes.DWORD,
                wintypes.DWORD,
                wintypes.LPVOID,
                wintypes.DWORD,
                wintypes.DWORD,
                wintypes.HANDLE,
            )
            k.CreateFileW.restype = wintypes.HANDLE
            k.CloseHandle.argtypes = (wintypes.HANDLE,)
            k.CloseHandle.restype = wintypes.BOOL
            k.GetFileInformationByHandleEx.argtypes = (
                wintypes.HANDLE,
                ctypes.c_int,
                wintypes.LPVOID,
                wintypes.DWORD,
            )
            k.GetFileInformationByHandleEx.restype = wintypes.BOOL
            k.LockFileEx.argtypes = (
                wintypes.HANDLE,
                wintypes.DWORD,
                wintypes.DWORD,
                wintypes.DWORD,
                wintypes.DWORD,
                ctypes.POINTER(_Overlapped),
            )
            k.LockFileEx.restype = wintypes.BOOL
            k.UnlockFileEx.argtypes = (
                wintypes.HANDLE,
                wintypes.DWORD,
                wintypes.DWORD,
                wintypes.DWORD,
                ctypes.POINTER(_Overlapped),
            )
            k.UnlockFileEx.restype = wintypes.BOOL
            k.MoveFileExW.argtypes = (wintypes.LPCWSTR, wintypes.LPCWSTR, wintypes.DWORD)
            k.MoveFileExW.restype = wintypes.BOOL
            self._k = k

        @staticmethod
        def _error(code: int, path: str | None = None, path2: str | None = None) -> OSError:
            # With a winerror, OSError derives errno and the subclass (FileNotFoundError, ...).
            return OSError(None, ctypes.FormatError(code).strip(), path, code, path2)

        @staticmethod
        def _overlapped(offset: int) -> _Overlapped:
            overlapped = _Overlapped()
            overlapped.Offset = offset & 0xFFFFFFFF
            overlapped.OffsetHigh = offset >> 32
            return overlapped

        def lstat(self, path: str) -> WinStat:
            return os.lstat(path)

        def fstat(self, fd: int) -> WinStat:
            return os.fstat(fd)

        def create_file(
            self, path: str, access: int, share: int, disposition: int, flags: int
        ) -> int:
            handle = self._k.CreateFileW(path, access, share, None, disposition, flags, None)
            if handle is None or handle == _INVALID_HANDLE:
                raise self._error(ctypes.get_last_error(), path)
            return int(handle)

        def handle_attributes(self, handle: int) -> tuple[int, int]:
            info = _AttributeTagInfo()
            if not self._k.GetFileInformationByHandleEx(
                handle, _FILE_ATTRIBUTE_TAG_INFO, ctypes.byref(info), ctypes.sizeof(info)
            ):
                raise self._error(ctypes.get_last_error())
            return int(info.FileAttributes), int(info.ReparseTag)

        def close_handle(self, handle: int) -> None:
            self._k.CloseHandle(handle)

        def open_osfhandle(self, handle: int, flags: int) -> int:
            return msvcrt.open_osfhandle(handle, flags)

        def get_osfhandle(self, fd: int) -> int:
            return msvcrt.get_osfhandle(fd)

        def lock_file_ex(self, handle: int, flags: int, offset: int, length: int) -> bool:
            overlapped = self._overlapped(offset)
            if self._k.LockFileEx(
                handle, flags, 0, length & 0xFFFFFFFF, length >> 32, ctypes.byref(overlapped)
            ):
                return True
            code = ctypes.get_last_error()
            if code == _ERROR_LOCK_VIOLATION:
                return False
            raise self._error(code)

        def unlock_file_ex(self, handle: int, offset: int, length: int) -> None:
            overlapped = self._overlapped(offset)
            if not self._k.UnlockFileEx(
                handle, 0, length & 0xFFFFFFFF, length >> 32, ctypes.byref(overlapped)
            ):
                code = ctypes.get_last_error()
                if code != _ERROR_NOT_LOCKED:
                    raise self._error(code)

        def move_file_ex(self, source: str, target: str, flags: int) -> None:
            if not self._k.MoveFileExW(source, target, flags):
                raise self._error(ctypes.get_last_error(), source, target)
