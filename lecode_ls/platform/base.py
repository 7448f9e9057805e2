"""What the memory store needs from the operating system, once for every platform.

`Files` is the whole contract: no-follow opens, advisory whole-file locks (shared and exclusive,
blocking and not), fsync of files and folders, durable renames, positioned reads and
writes, and telling links from files. posix.py implements it for Linux and macOS, windows.py for
Windows; `lecode_ls.platform` picks one and is the only door the rest of lecode-ls uses.
"""

from __future__ import annotations

import abc
import errno
from pathlib import Path
from typing import Literal, Protocol

FILE_MODE = 0o600
"""Mode of every file the store creates (owner only). Windows ignores it: files under the
profile's application-data folder inherit an ACL that already gives only the user access."""

Kind = Literal["missing", "link", "file", "dir", "other"]
"""What a path names, without following a link at its last component. `link` is a symbolic
link anywhere, and on Windows also a junction or any other reparse point that names another path
(a "name surrogate"); `other` is a FIFO, socket or device."""

READ_ONLY_ERRNOS = frozenset({errno.EROFS, errno.EACCES, errno.EPERM})


def is_read_only_error(error: OSError) -> bool:
    """Whether `error` says the file or its file system cannot be written (not that it is absent).

    A read-only mount (EROFS) and missing write permission (EACCES, EPERM) look alike to a reader:
    the store can still be read, nothing can be written.
    """
    return error.errno in READ_ONLY_ERRNOS


def link_refused(path: Path | str) -> OSError:
    """The error every platform raises for a link met where a file was expected (ELOOP, as
    POSIX's O_NOFOLLOW gives)."""
    return OSError(errno.ELOOP, "Too many levels of symbolic links", str(path))


class HasIdentity(Protocol):
    """What names a file across renames: its device and file ID (`os.stat_result` has both)."""

    @property
    def st_dev(self) -> int: ...
    @property
    def st_ino(self) -> int: ...


class Files(abc.ABC):
    """One platform's implementation of the file operations the store relies on."""

    name: str
    """"posix", "darwin" or "windows": which implementation this is (logs, tests)."""

    @abc.abstractmethod
    def open(
        self,
        path: Path,
        *,
        write: bool = False,
        create: bool = False,
        exclusive: bool = False,
        append: bool = False,
    ) -> int:
        """Open a file and return its descriptor, refusing a link at the last component.

        `write` opens for reading and writing (else reading only); `create` creates a missing file
        with FILE_MODE; `exclusive` (with `create`) fails with FileExistsError if it exists;
        `append` makes every write go to the end. A symbolic link (on Windows: a symlink or
        junction) at `path` raises OSError(ELOOP) and is never followed, whatever it points at;
        a folder raises IsADirectoryError or PermissionError. The descriptor is not inherited by
        child processes, and on Windows its file may be renamed or deleted while it is open, as on
        POSIX. Close it with `close`, which also releases a lock taken with `lock`.
        """

    @abc.abstractmethod
    def lock(self, fd: int, *, shared: bool = False, blocking: bool = True) -> bool:
        """Lock the whole file open as `fd`: shared (many holders) or exclusive (one holder).

        Blocking waits for as long as it takes; non-blocking returns False at once if another
        holder's lock conflicts. Returns True once held. The lock belongs to this descriptor, not
        to the process: two descriptors of one file exclude each other even in one process (so
        threads that each open the file are serialized like processes). It is advisory: it never
        stops a read or write of the file's bytes. Released by `unlock`, by `close`, and by the
        holder's death (a kill -9 included). No upgrade or downgrade: unlock first.
        """

    @abc.abstractmethod
    def unlock(self, fd: int) -> None:
        """Release this descriptor's lock; nothing happens if it holds none."""

    @abc.abstractmethod
    def close(self, fd: int) -> None:
        """Release this descriptor's lock, if any, and close it."""

    @abc.abstractmethod
    def fsync(self, fd: int) -> None:
        """Make the file's data and size reach stable storage before returning."""

    @abc.abstractmethod
    def fsync_dir(self, folder: Path) -> None:
        """Make the names created, renamed or removed in `folder` survive a power loss (a no-op
        where renames are durable by themselves)."""

    @abc.abstractmethod
    def replace(self, source: Path, target: Path) -> None:
        """Rename `source` over `target` atomically: readers see the old file or the new one.

        Durable once `fsync_dir(target.parent)` returns (on Windows, once this returns).
        """

    @abc.abstractmethod
    def publish(self, source: Path, target: Path) -> None:
        """Make the file at `source` appear at `target`, or raise FileExistsError if `target`
        exists (never replacing it). Afterwards `source` may still name the file (POSIX makes a
        hard link) or not (Windows renames): the caller removes `source`, ignoring
        FileNotFoundError. A descriptor open on `source`, and its lock, stay with the file."""

    @abc.abstractmethod
    def pread(self, fd: int, size: int, offset: int) -> bytes:
        """Up to `size` bytes from `offset` (fewer only at the end of the file).

        On Windows this moves the descriptor's position: never share one descriptor between
        threads (the store never does: every operation opens its own).
        """

    @abc.abstractmethod
    def pwrite(self, fd: int, data: bytes, offset: int) -> int:
        """Write `data` at `offset` of a descriptor opened without `append`; returns the count."""

    @abc.abstractmethod
    def kind(self, path: Path) -> Kind:
        """What `path` names, without following a link at its last component (see `Kind`).

        Raises OSError for anything but a missing path (a permission error, a component that is
        a file).
        """

    def is_link(self, path: Path) -> bool:
        """Whether `path` is a link (see `Kind`); False when it does not exist."""
        return self.kind(path) == "link"

    @staticmethod
    def same_file(a: HasIdentity, b: HasIdentity) -> bool:
        """Whether two stats are of one file (device and file ID; the ID is 128 bits on ReFS)."""
        return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)
