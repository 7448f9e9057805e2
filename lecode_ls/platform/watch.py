"""Which store files changed since the last look: Linux inotify, drained synchronously.

The note index must never answer from stale text, and a stat of every file before each search
costs ~2-20 us a file (20-200 ms at 10,000 notes). The kernel queues an inotify event inside the
very write() or rename() that changes a file, so reading the queue before a search sees every
change that completed before it, made by this process, an editor or another server.

`FolderWatch.changes()` returns the names (relative to the store root) that changed since the last
call, or None when the caller must rescan everything: the first call, a queue overflow, or a
watched folder that was created, removed or replaced. Elsewhere than Linux there is no such queue
(FSEvents and ReadDirectoryChangesW deliver later, on their own thread), so `changes()` always
returns None and the caller rescans: correct, and slower.
"""

from __future__ import annotations

import ctypes
import logging
import os
import struct
import sys
from pathlib import Path

log = logging.getLogger(__name__)

_IN_MODIFY = 0x002
_IN_ATTRIB = 0x004
_IN_CLOSE_WRITE = 0x008
_IN_MOVED_FROM = 0x040
_IN_MOVED_TO = 0x080
_IN_CREATE = 0x100
_IN_DELETE = 0x200
_IN_DELETE_SELF = 0x400
_IN_MOVE_SELF = 0x800
_IN_Q_OVERFLOW = 0x4000
_IN_IGNORED = 0x8000
_IN_ONLYDIR = 0x01000000
_IN_DONT_FOLLOW = 0x02000000
_IN_NONBLOCK = 0o4000
_IN_CLOEXEC = 0o2000000
_MASK = (
    _IN_MODIFY
    | _IN_ATTRIB
    | _IN_CLOSE_WRITE
    | _IN_MOVED_FROM
    | _IN_MOVED_TO
    | _IN_CREATE
    | _IN_DELETE
    | _IN_DELETE_SELF
    | _IN_MOVE_SELF
    | _IN_ONLYDIR
    | _IN_DONT_FOLLOW  # a folder replaced by a link is not followed; the rescan refuses it
)
_RESCAN = _IN_Q_OVERFLOW | _IN_IGNORED | _IN_DELETE_SELF | _IN_MOVE_SELF
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, len; then len bytes of NUL-padded name


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)  # glibc's stable soname
    except OSError:  # another C library (musl): ask the loader's search (slower: ~20 ms)
        from ctypes import util

        try:
            libc = ctypes.CDLL(util.find_library("c"), use_errno=True)
        except OSError:
            return None
    try:
        libc.inotify_init1.argtypes = [ctypes.c_int]
        libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
    except AttributeError:  # no inotify in this C library
        return None
    return libc


class FolderWatch:
    """Changes under `root` and its `subfolders` (one level: the store's layout)."""

    def __init__(self, root: Path, subfolders: tuple[str, ...]) -> None:
        self.root = root
        self.subfolders = subfolders
        self._libc = _libc()
        self._fd = -1
        self._folders: dict[int, str] = {}  # watch descriptor -> "" (the root) or a subfolder

    def changes(self) -> set[str] | None:
        """Store-relative names changed since the last call, or None: rescan everything."""
        if self._fd < 0:
            self._start()
            return None
        changed: set[str] = set()
        while True:
            try:
                data = os.read(self._fd, 65536)
            except BlockingIOError:
                return changed
            except OSError:
                self._restart()
                return None
            offset = 0
            while offset < len(data):
                wd, mask, _, size = _EVENT.unpack_from(data, offset)
                raw = data[offset + _EVENT.size : offset + _EVENT.size + size]
                offset += _EVENT.size + size
                name = os.fsdecode(raw.rstrip(b"\0"))
                folder = self._folders.get(wd)
                if mask & _RESCAN or folder is None or (folder == "" and name in self.subfolders):
                    # An overflow, a watched folder gone, or a subfolder that came, went or was
                    # replaced: watch afresh, and the caller compares every file.
                    self._restart()
                    return None
                changed.add(f"{folder}/{name}" if folder else name)

    def _start(self) -> None:
        """Watch the folders that exist now (before the caller's rescan, so that nothing written
        during it is missed); without inotify or a store folder, stay unwatched."""
        if self._libc is None:
            return
        fd = self._libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        if fd < 0:
            log.info(
                "inotify unavailable (errno %d): searches rescan the store", ctypes.get_errno()
            )
            return None
        folders: dict[int, str] = {}
        for folder in ("", *self.subfolders):
            path = self.root / folder if folder else self.root
            wd = self._libc.inotify_add_watch(fd, os.fsencode(path), _MASK)
            if wd >= 0:
                folders[wd] = folder
            elif folder == "":  # no store yet (or not a folder): nothing to watch; rescan each time
                os.close(fd)
                return
        self._fd, self._folders = fd, folders

    def _restart(self) -> None:
        self.close()
        self._start()

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
        self._fd, self._folders = -1, {}
