"""The platform layer: the only place lecode-ls touches an operating-system-specific API.

Everything here is one `Files` implementation chosen at import (posix.py on Linux and macOS,
windows.py on Windows) behind plain functions, plus paths.py for URIs and path spellings. No
other module of lecode_ls imports `fcntl`, `msvcrt` or ctypes' Windows parts, or uses POSIX-only
`os` flags or functions (tests/unit/test_architecture.py checks it); mypy checks every module
for Linux, macOS and Windows (scripts/test).

Tests may run the store on another implementation with `use()`, for example `WindowsFiles` over a
stand-in of the Win32 calls.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path

from lecode_ls.platform.base import FILE_MODE, Files, Kind, is_read_only_error, link_refused


def _native() -> Files:
    if sys.platform == "win32":
        from lecode_ls.platform.windows import Kernel32Api, WindowsFiles

        return WindowsFiles(Kernel32Api())
    else:
        from lecode_ls.platform.posix import darwin_files

        return darwin_files()


_files: Files = _native()


def current() -> Files:
    """The implementation in use."""
    return _files


@contextlib.contextmanager
def use(files: Files) -> Iterator[Files]:
    """Run the body on another implementation (tests); the previous one is restored after."""
    global _files
    previous, _files = _files, files
    try:
        yield files
    finally:
        _files = previous


def open_file(
    path: Path,
    *,
    write: bool = False,
    create: bool = False,
    exclusive: bool = False,
    append: bool = False,
) -> int:
    """Open without following a link at the last component (see `Files.open`)."""
    return _files.open(path, write=write, create=create, exclusive=exclusive, append=append)


def lock(fd: int, *, shared: bool = False, blocking: bool = True) -> bool:
    """Lock the whole file of `fd` (see `Files.lock`); False only when not blocking and held."""
    return _files.lock(fd, shared=shared, blocking=blocking)


def unlock(fd: int) -> None:
    _files.unlock(fd)


def close(fd: int) -> None:
    """Release `fd`'s lock, if any, and close it."""
    _files.close(fd)


def fsync(fd: int) -> None:
    _files.fsync(fd)


def fsync_dir(folder: Path) -> None:
    _files.fsync_dir(folder)


def replace(source: Path, target: Path) -> None:
    """Atomic rename over `target` (durable after `fsync_dir(target.parent)`)."""
    _files.replace(source, target)


def publish(source: Path, target: Path) -> None:
    """Make `source`'s file appear at `target`; FileExistsError if `target` exists."""
    _files.publish(source, target)


def pread(fd: int, size: int, offset: int) -> bytes:
    return _files.pread(fd, size, offset)


def pwrite(fd: int, data: bytes, offset: int) -> int:
    return _files.pwrite(fd, data, offset)


def kind(path: Path) -> Kind:
    """What `path` names without following a link there (see `Kind`)."""
    return _files.kind(path)


def is_link(path: Path) -> bool:
    """Whether `path` is a symbolic link, junction or other name-surrogate reparse point."""
    return _files.is_link(path)


__all__ = [
    "FILE_MODE",
    "Files",
    "Kind",
    "close",
    "current",
    "fsync",
    "fsync_dir",
    "is_link",
    "is_read_only_error",
    "kind",
    "link_refused",
    "lock",
    "open_file",
    "pread",
    "publish",
    "pwrite",
    "replace",
    "unlock",
    "use",
]
