"""Paths and file URIs the same way on every platform: drive letters, UNC shares, and folders
whose names the file system compares without regard to case.

Three jobs:

- `uri_to_path` / `path_to_uri`: `file://` URIs as editors send them. VS Code writes a Windows
  folder as `file:///c%3A/Users/me/proj` (lower-case drive letter, colon escaped) and a share as
  `file://server/share/proj`; other clients write `file:///C:/...` or `file:////server/share`.
- `canonical`: one spelling per folder. Windows and macOS (by default) compare names without
  regard to case (and macOS without regard to Unicode normalization), so `~/Proj` and `~/proj`
  can be one folder; `os.path.realpath` resolves links but, on macOS and Linux, keeps the case
  it was given. `canonical` also takes each name's stored spelling from its folder wherever that
  folder turns out to ignore case, so project identity, workspace containment and the store's
  slug see one path per folder.
- All of it takes the path flavour as an argument (`windows=`), so each platform's rules run and
  are tested on any platform with `PureWindowsPath` and `PurePosixPath`.
"""

from __future__ import annotations

import functools
import os
import re
import sys
import unicodedata
import urllib.parse
from pathlib import Path, PurePath, PurePosixPath, PureWindowsPath
from typing import Protocol

from lecode_ls.platform.base import HasIdentity

WINDOWS = sys.platform == "win32"

_DRIVE_PATH = re.compile(r"/[A-Za-z]:(?:/|$)")  # "/c:/Users" in a URI's path
_LEGACY_DRIVE = re.compile(r"/[A-Za-z]\|(?:/|$)")  # "/c|/Users": old browsers' spelling


MAX_PATH_CHARS = 4096
MAX_NAME_BYTES = 255


def path_problem(path: str) -> str | None:
    """Why no file system here could name `path`, as the end of a sentence; None when one could.

    A path from a client or a model may hold anything, and the OS calls that meet it raise
    (ValueError for a NUL, UnicodeEncodeError for a lone surrogate, OSError for a name past the
    file system's 255 bytes): each caller turns this answer into its own refusal instead.
    """
    if len(path) > MAX_PATH_CHARS:
        return f"is longer than {MAX_PATH_CHARS:,} characters"
    if "\x00" in path:
        return "holds a NUL character"
    try:
        encoded = os.fsencode(path)
    except UnicodeEncodeError:
        return "holds a character no file name can hold (a lone surrogate)"
    if any(len(name) > MAX_NAME_BYTES for name in re.split(rb"[/\\]", encoded)):
        return f"has a name longer than {MAX_NAME_BYTES} bytes"
    return None


# -- URIs -------------------------------------------------------------------------------------------


def uri_to_path(uri: str, *, windows: bool = WINDOWS) -> str | None:
    """The file system path of a `file://` URI, or None if it names none on this platform.

    Windows (`windows=True`): `file:///c%3A/x`, `file:///C:/x` and `file://localhost/c:/x` give
    `C:\\x` (the drive letter upper-cased: one spelling); `file://server/share/x` and
    `file:////server/share/x` give `\\\\server\\share\\x`; a path without a drive or share is None.
    POSIX: `file:///x` and `file://localhost/x` give `/x`; another host is None (no remote files).
    Percent-escapes are decoded as UTF-8 (on POSIX, bytes that are not UTF-8 come back as the
    surrogate escapes `os.fsdecode` uses). A NUL character, a query or a fragment gives None: a
    folder name holding `?` or `#` arrives escaped (`%3F`, `%23`) from every editor.
    """
    try:
        parts = urllib.parse.urlsplit(uri)
    except ValueError:
        return None
    if parts.scheme.lower() != "file" or parts.query or parts.fragment:
        return None
    try:
        host = urllib.parse.unquote(parts.netloc, errors="strict")
        path = urllib.parse.unquote(parts.path, errors="strict" if windows else "surrogateescape")
    except UnicodeDecodeError:
        return None
    if "\x00" in host or "\x00" in path:
        return None
    local = host == "" or host.lower() == "localhost"
    if not windows:
        return path if local and path.startswith("/") else None
    if not local:
        if not path.strip("/"):
            return None  # a server without a share
        return _windows_text(PureWindowsPath(f"//{host}{path}"))
    if _DRIVE_PATH.match(path) or _LEGACY_DRIVE.match(path):
        path = f"{path[1]}:{path[3:] or '/'}"  # `file:///c%3A` alone: the drive's root
    elif not path.startswith("//"):  # four slashes: a share
        return None
    windows_path = PureWindowsPath(path)
    if not windows_path.is_absolute():
        return None
    return _windows_text(windows_path)


def _windows_text(path: PureWindowsPath) -> str | None:
    """`path` spelled with an upper-case drive letter; None unless it has a drive or a share."""
    if not path.is_absolute():
        return None
    drive = path.drive
    if len(drive) == 2 and drive[1] == ":":
        return drive.upper() + str(path)[2:]
    host, _, share = drive[2:].partition("\\")
    if not drive.startswith("\\\\") or host in ("", "?", ".") or not share.strip("\\"):
        return None  # `\\server\` without a share, or a device path (`\\?\`, `\\.\pipe`)
    return str(path)


def path_to_uri(path: str | PurePath, *, windows: bool = WINDOWS) -> str:
    """The `file://` URI of an absolute path, spelled as VS Code spells it.

    `C:\\Users\\me` gives `file:///c%3A/Users/me`; `\\\\Server\\share\\x` gives
    `file://server/share/x`; `/home/me/a b` gives `file:///home/me/a%20b`. Every character but
    ASCII letters, digits, `-._~` and `/` is percent-encoded (UTF-8), as VS Code's `Uri.toString()`
    does, so a notification's URI equals, as a string, the one the editor sent.
    """
    if not windows:
        raw = (
            os.fsencode(str(path))
            if not isinstance(path, str)
            else path.encode("utf-8", "surrogateescape")
        )
        return "file://" + urllib.parse.quote(raw, safe="/")
    windows_path = PureWindowsPath(path)
    drive = windows_path.drive
    rest = "/".join(windows_path.parts[1:])
    if drive.startswith("\\\\"):  # \\server\share
        host, _, share = drive[2:].partition("\\")
        tail = f"/{share}" + (f"/{rest}" if rest else "/")
        return f"file://{urllib.parse.quote(host.lower())}{urllib.parse.quote(tail, safe='/')}"
    if len(drive) == 2 and drive[1] == ":":
        tail = f"/{drive[0].lower()}:/{rest}"
        return "file://" + urllib.parse.quote(tail, safe="/")
    return "file://" + urllib.parse.quote(windows_path.as_posix(), safe="/")


# -- one spelling per folder ------------------------------------------------------------------------


class CaseProbe(Protocol):
    """The two questions `true_case` asks the file system."""

    def lstat(self, path: PurePath) -> HasIdentity | None:
        """The file's identity, without following a link; None if nothing is there."""
        ...

    def listdir(self, path: PurePath) -> list[str]:
        """The names in a folder as stored."""
        ...


class OsProbe:
    """`CaseProbe` on the real file system. Unreadable entries count as absent."""

    def lstat(self, path: PurePath) -> HasIdentity | None:
        try:
            return os.lstat(path)
        except (OSError, ValueError):
            return None

    def listdir(self, path: PurePath) -> list[str]:
        try:
            with os.scandir(path) as entries:
                return [entry.name for entry in entries]
        except OSError:
            return []


def _fold(name: str) -> str:
    """What a case- and normalization-insensitive file system compares."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFD", name).casefold())


def _variants(name: str) -> set[str]:
    """Other spellings of `name` that a case- or normalization-insensitive folder would accept."""
    spellings = {
        name.swapcase(),
        unicodedata.normalize("NFC", name),
        unicodedata.normalize("NFD", name),
    }
    spellings.discard(name)
    return spellings


def canonical_anchor(path: PurePath) -> str:
    """The anchor spelled one way: a drive letter upper-cased, a share's `\\\\server\\share`
    lower-cased (SMB compares both without regard to case)."""
    anchor = path.anchor
    if isinstance(path, PureWindowsPath):
        if anchor.startswith("\\\\"):
            return anchor.lower()
        if len(anchor) >= 2 and anchor[1] == ":":
            return anchor[0].upper() + anchor[1:]
    return anchor


def true_case(path: PurePath, probe: CaseProbe) -> PurePath:
    """`path` with each existing name spelled as its folder stores it, where that folder ignores
    case or Unicode normalization; elsewhere unchanged.

    `path` must be absolute and free of `.`/`..` (a resolved path). A folder is found to ignore
    case when another spelling of the name (case swapped, or the other Unicode normal form) names
    the same file; only then is it listed, to find the stored spelling. On a case-sensitive file
    system this costs one failed lookup per name with letters. Names from the first missing one
    on are kept as given.
    """
    flavour = type(path)
    current = flavour(canonical_anchor(path))
    names = path.parts[1:] if path.anchor else path.parts
    for index, name in enumerate(names):
        found = probe.lstat(current / name)
        if found is None:
            return current.joinpath(*names[index:])
        if any(_same(found, probe.lstat(current / other)) for other in _variants(name)):
            name = _stored_name(current, name, found, probe)
        current = current / name
    return current


def _same(a: HasIdentity, b: HasIdentity | None) -> bool:
    return b is not None and (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _stored_name(folder: PurePath, name: str, found: HasIdentity, probe: CaseProbe) -> str:
    key = _fold(name)
    candidates = [entry for entry in probe.listdir(folder) if _fold(entry) == key]
    if name in candidates:
        return name
    for entry in sorted(candidates):
        if _same(found, probe.lstat(folder / entry)):
            return entry
    return name


def canonical(path: Path | str) -> Path:
    """The one spelling of a path: every link resolved (`os.path.realpath`), then `true_case`.

    A path that does not exist is resolved as far as it exists. Windows' realpath already takes
    the stored case from the file system where it can; `true_case` makes macOS and Linux do the
    same on folders that ignore case, and gives every platform one spelling of drive letters and
    shares. Results are remembered per resolved path (listing folders on every request would cost
    milliseconds on macOS): a folder renamed to another case while the server runs keeps the
    spelling it was first seen with, so its store does not move under a running session.
    """
    return Path(_true_case_of(os.path.realpath(path)))


@functools.lru_cache(maxsize=1024)
def _true_case_of(real: str) -> str:
    return str(true_case(PurePath(real), OsProbe()))


def is_within(path: PurePath, folder: PurePath) -> bool:
    """Whether `path` is `folder` or lies under it, comparing as the path's flavour does (Windows
    paths without regard to case). Both should be `canonical` (or resolved the same way)."""
    return path.is_relative_to(folder)


__all__ = [
    "CaseProbe",
    "OsProbe",
    "PurePosixPath",
    "PureWindowsPath",
    "canonical",
    "canonical_anchor",
    "is_within",
    "path_to_uri",
    "true_case",
    "uri_to_path",
]
