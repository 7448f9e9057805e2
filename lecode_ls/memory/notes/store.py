"""The Markdown half of a project's memory store: MEMORY.md, scratchpad.md, daily logs and notes.

`MarkdownStore` is the only way the server touches these files (L4). It accepts exactly the
store-relative names of the spec, refuses symbolic links anywhere in the store, writes atomically
with a `.bak` of the previous content (L5), serializes read-modify-write through a lock file, and
searches the Markdown files only (T6). Every method blocks; the server calls them through
`asyncio.to_thread`.
"""

from __future__ import annotations

import builtins
import contextlib
import errno
import json
import os
import re
import stat
import threading
import time
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Literal

from lecode_ls import platform
from lecode_ls.errors import (
    FileTooLarge,
    InvalidName,
    InvalidParams,
    InvalidPattern,
    NoMatch,
    NotFound,
    StoreError,
    SymlinkRefused,
)
from lecode_ls.memory.files import (
    FileLock,
    NotRegularFile,
    atomic_write,
    read_regular,
    refuse_symlinks,
)
from lecode_ls.memory.notes.index import NoteIndex
from lecode_ls.memory.notes.pattern import compile_pattern
from lecode_ls.memory.secrets import Redactor

FIXED_FILES = ("MEMORY.md", "scratchpad.md")
SUBFOLDERS = ("daily", "notes")
NOTE_NAME_MAX_BYTES = 128
MAX_SEARCH_HITS = 50
MAX_HIT_CHARS = 500
MAX_FILE_BYTES = 1 << 20
"""The largest memory file lecode-ls writes, reads or searches (UTF-8 bytes). MEMORY.md is injected
into every request under `[memory] max_bytes` (32 KiB by default); a note a thousand times that is
no longer a note. A write, append or edit whose result would pass it is refused before anything is
written; a larger file put there by another program is refused by read and skipped by search."""
CACHE_MAX_CHARS = 262_144  # larger files are always read from disk
CACHE_MAX_FILES = 256
SEARCH_SECONDS = 2.0  # wall-clock budget of one search
LOCK_NAME = ".lock"

_ALLOWED = "use MEMORY.md, scratchpad.md, daily/YYYY-MM-DD.md or notes/<name>.md"
_DAILY = re.compile(r"daily/([0-9]{4}-[0-9]{2}-[0-9]{2})\.md")  # ASCII digits only
# Control, format (bidi overrides, zero-width), surrogate and line/paragraph separator characters
# can hide what a name really is, or break the one-name-per-line listings clients show.
_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
# A store must move between systems unchanged: Windows refuses these characters in file names,
# and these device names (with any extension, in any case) name no file there.
_NOT_PORTABLE = frozenset('<>:"|?*')
_DEVICES = re.compile(
    r"(?i)(con|prn|aux|nul|com[0-9\u00b9\u00b2\u00b3]|lpt[0-9\u00b9\u00b2\u00b3])(\..*)?"
)
# Look-alikes of "/" and "\" that Unicode compatibility folding (NFKC) leaves alone; fullwidth
# and small forms such as U+FF0F and U+FF0E fold to "/" and "." and are caught through NFKC.
_SLASH_LOOKALIKES = frozenset("\u2044\u2215\u2216\u29f5\u29f8\u29f9\u2571\u2572")


@dataclass(frozen=True)
class MemoryFile:
    """One existing Markdown file of the store."""

    file: str  # store-relative name, e.g. "notes/build.md"
    bytes: int  # size on disk
    modified: datetime  # last modification, timezone-aware UTC


@dataclass(frozen=True)
class SearchHit:
    """One line that matched a search."""

    file: str  # store-relative name
    line: int  # 1-based line number
    text: str  # the line without its end-of-line, cut to MAX_HIT_CHARS characters


def daily_name(day: date) -> str:
    """The store-relative name of a day's log: `daily/2026-11-29.md`."""
    return f"daily/{day.isoformat()}.md"


def _quote(name: str) -> str:
    # JSON quoting escapes control characters, so a hostile name cannot forge message text.
    shown = name if len(name) <= 160 else name[:160] + "..."
    return json.dumps(shown, ensure_ascii=False)


def _invalid(name: str, why: str) -> InvalidName:
    return InvalidName(f"file: {_quote(name)} {why}", field="file")


def _check_note(file: str, note: str) -> None:
    """Apply the note-name rules to `note` (the part between `notes/` and `.md`)."""
    if note == "":
        raise _invalid(file, "has an empty note name; name the note, as in notes/build.md")
    if note in (".", ".."):
        raise _invalid(file, "is not a note name; '.' and '..' name folders")
    if "/" in note or "\\" in note:
        raise _invalid(file, "has a folder inside notes/; note names may not contain / or \\")
    if ".." in note:
        raise _invalid(file, "contains '..'; note names may not contain '..'")
    if note.startswith("."):
        raise _invalid(file, "starts with '.'; hidden note names are not allowed")
    if len(note.encode("utf-8")) > NOTE_NAME_MAX_BYTES:
        raise _invalid(file, f"has a note name over {NOTE_NAME_MAX_BYTES} UTF-8 bytes")
    # What the name looks like, not only its code points: a look-alike of "/", ".." or a
    # Windows device name would be read by a person (or another system) as something else.
    folded = unicodedata.normalize("NFKC", note)
    if any(char in _SLASH_LOOKALIKES for char in note) or any(c in "/\\" for c in folded):
        raise _invalid(file, "contains a character that looks like / or \\; use plain names")
    if ".." in folded or folded.startswith("."):
        raise _invalid(file, "contains a look-alike of '.'; use plain names")
    if bad := sorted({char for char in folded if char in _NOT_PORTABLE}):
        raise _invalid(
            file,
            f"contains {' '.join(bad)}; note names may not contain any of {''.join(sorted(_NOT_PORTABLE))}",
        )
    if folded != folded.rstrip(" ."):
        raise _invalid(file, "ends in a space or '.'; Windows cannot store such a name")
    if _DEVICES.fullmatch(folded):
        raise _invalid(file, "is a Windows device name (CON, PRN, AUX, NUL, COM1, LPT1...)")


def validate_name(file: str) -> str:
    """Return the normalized store-relative name of `file`, or raise `InvalidName`.

    Normalization is Unicode NFC only, so a note typed in decomposed form names the same file.
    """
    if not isinstance(file, str):
        raise InvalidName("file: the memory file name must be a string", field="file")
    for char in file:
        if char == "\0" or unicodedata.category(char) in _REFUSED_CATEGORIES:
            raise _invalid(file, "contains a control or invisible formatting character")
    name = unicodedata.normalize("NFC", file)
    if name.startswith(("/", "\\")) or re.match(r"[A-Za-z]:", name):
        raise _invalid(file, f"is an absolute path; names are relative to the store; {_ALLOWED}")
    if name in FIXED_FILES:
        return name
    if name.startswith("daily/"):
        match = _DAILY.fullmatch(name)
        try:
            date.fromisoformat(match.group(1) if match else "")
        except ValueError:
            raise _invalid(
                file, "is not a daily log; use daily/YYYY-MM-DD.md with a real calendar date"
            ) from None
        return name
    if name.startswith("notes/"):
        if not name.endswith(".md"):
            raise _invalid(file, "is not a note; note files end in .md, as in notes/build.md")
        _check_note(file, name[len("notes/") : -len(".md")])
        return name
    raise _invalid(file, f"is not a memory file; {_ALLOWED}")


def unsafe_name_redacted(name: str, redact: Callable[[str], str]) -> str:
    """`name` with each secret `redact` finds written as `secret-<kind>-<8 hex>` (a marker's
    brackets and colons are no part of a portable name); `name` itself when none is found."""
    redacted = redact(name)
    if redacted == name:
        return name
    return re.sub(r"\[secret:([a-z0-9-]+):([0-9a-f]{8})\]", r"secret-\1-\2", redacted)


def _identity(path: Path) -> tuple[int, int, int, int] | None:
    """What changes whenever the file does (an atomic rename gives a new inode); None if absent."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return None
    except OSError:
        return (-1, -1, -1, -1)  # unreadable metadata: never matches, so read() reports it
    return (info.st_dev, info.st_ino, info.st_mtime_ns, info.st_size)


class MarkdownStore:
    """The Markdown files of one project store folder (`<config_dir>/memory/<slug>/`).

    The folder is created (mode 0700) by the first write, never by a read, list or search.
    """

    def __init__(self, root: Path, redactor: Redactor | None = None) -> None:
        self.root = root
        self.redactor = redactor or Redactor(root)
        """Every text written passes through it first (P5)."""
        self._lock = FileLock(root / LOCK_NAME)
        # name -> (file identity, text). Writes are atomic renames, so a changed file always has
        # a new identity; `cached` can then answer from metadata alone.
        self._texts: dict[str, tuple[tuple[int, int, int, int], str]] = {}
        self._index: NoteIndex | None = None  # made by the first search
        self._search_lock = threading.Lock()
        self._closed = False

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError("the memory store is closed (the server is shutting down)")

    # -- names ---------------------------------------------------------------------------------

    def validate(self, file: str) -> str:
        """Return the normalized store-relative name of `file`, or raise `InvalidName`."""
        return validate_name(file)

    def _path(self, file: str) -> tuple[str, Path]:
        self._check_open()
        name = self.validate(file)
        path = self.root / name
        refuse_symlinks(self.root, path)
        return name, path

    # -- reading -------------------------------------------------------------------------------

    def _load(self, name: str, path: Path) -> str | None:
        """The UTF-8 text of a store file, or None if it does not exist.

        Reads at most one byte past MAX_FILE_BYTES, so a huge file costs no more than the cap.
        """
        try:
            data = read_regular(path, MAX_FILE_BYTES + 1)
        except NotRegularFile:
            raise StoreError(
                f"file: {name} in the store is not a regular file", field="file"
            ) from None
        except OSError as exc:
            if exc.errno == errno.ELOOP:  # a link planted after the refuse_symlinks check
                raise SymlinkRefused(
                    f"file: {name} is a symbolic link in the store; lecode-ls refuses to follow "
                    "links there",
                    field="file",
                ) from None
            raise StoreError(
                f"file: could not read {name} ({exc.strerror})", field="file"
            ) from None
        if data is None:
            return None
        if len(data) > MAX_FILE_BYTES:
            raise FileTooLarge(
                f"file: {name} is larger than the {MAX_FILE_BYTES >> 20} MiB a memory file may "
                "hold; trim it in an editor (lecode/project/info names the store folder)",
                field="file",
            )
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise StoreError(
                f"file: {name} is not valid UTF-8 (bad byte at offset {exc.start}); repair or "
                "replace it by hand (a .bak beside it may hold the previous content)",
                field="file",
            ) from None

    def read(self, file: str) -> tuple[str, bool]:
        """Return `(content, exists)`; a missing file reads as `("", False)`."""
        name, path = self._path(file)
        identity = _identity(path)
        text = self._load(name, path)
        if text is None:
            return "", False
        if identity is not None and len(text) <= CACHE_MAX_CHARS:
            if len(self._texts) >= CACHE_MAX_FILES:
                self._texts.clear()
            self._texts[name] = (identity, text)
        return text, True

    def cached(self, file: str) -> tuple[str, bool] | None:
        """`read(file)` answered from metadata alone (a few lstat calls, no file read), or None.

        Cheap enough for the server's event loop; None means "call read() in a worker thread".
        """
        name, path = self._path(file)
        identity = _identity(path)
        if identity is None:
            return "", False
        entry = self._texts.get(name)
        return (entry[1], True) if entry is not None and entry[0] == identity else None

    def list(self) -> list[MemoryFile]:
        """The store's existing Markdown files, sorted by name.

        Only the allowed names are listed: `.bak` copies, temp files, the lock file and anything
        else are skipped, as are symbolic links (which every read refuses) and names that are
        not in NFC form (they could not be addressed by their listed name).
        """
        self._check_open()
        return [
            MemoryFile(
                file=name,
                bytes=info.st_size,
                modified=datetime.fromtimestamp(info.st_mtime, tz=UTC),
            )
            for name, info in self._entries()
        ]

    def _entries(self) -> builtins.list[tuple[str, os.stat_result]]:
        """`list()`'s files with their lstat results, sorted by name."""
        if platform.is_link(self.root):
            refuse_symlinks(self.root, self.root)
        if not self.root.is_dir():
            return []
        candidates = list(FIXED_FILES)
        for folder in SUBFOLDERS:
            sub = self.root / folder
            if sub.is_dir() and not platform.is_link(sub):
                try:
                    candidates.extend(f"{folder}/{entry.name}" for entry in sub.iterdir())
                except OSError as exc:
                    raise StoreError(
                        f"file: could not list {folder}/ in the memory store ({exc.strerror})",
                        field="file",
                    ) from None
        found = [(name, info) for name in candidates if (info := self._listed(name)) is not None]
        return sorted(found, key=lambda item: item[0])

    def _listed(self, name: str) -> os.stat_result | None:
        """`name`'s lstat result if `list()` shows it: an allowed NFC name of a regular file."""
        try:
            if self.validate(name) != name:
                return None
        except InvalidName:
            return None
        try:
            info = (self.root / name).lstat()
        except OSError:
            return None
        return info if stat.S_ISREG(info.st_mode) else None

    def search(
        self, pattern: str, limit: int = MAX_SEARCH_HITS
    ) -> tuple[builtins.list[SearchHit], bool]:
        """Search the listed Markdown files line by line with a regular expression (RE2 syntax).

        Returns at most `limit` hits (clamped to 50), in `list()` order then line order, and
        whether more hits existed. `.bak` copies and non-Markdown files are never searched, nor
        is a file over MAX_FILE_BYTES (another program put it there; read refuses it too). Lines
        are split on "\\n" only (a trailing "\\r" is dropped), so line numbers match editors.

        Bounded whatever the pattern (see pattern.py): compiling is capped in memory, matching is
        linear in the text, and the whole search stops after SEARCH_SECONDS.
        """
        self._check_open()
        if limit < 1:
            raise InvalidParams(f"limit: must be at least 1, got {limit}", field="limit")
        limit = min(limit, MAX_SEARCH_HITS)
        compiled = compile_pattern(pattern)
        with self._search_lock:
            found = self._note_index().candidates(pattern)
        if found is None:  # no index here: every file is a candidate, read from disk
            found = [(entry.file, None) for entry in self.list() if entry.bytes <= MAX_FILE_BYTES]
        hits: list[SearchHit] = []
        deadline = time.monotonic() + SEARCH_SECONDS
        for name, indexed in found:
            try:
                text = (self._load(name, self.root / name) or "") if indexed is None else indexed
            except FileTooLarge:  # put there by another program; read refuses it too
                continue
            lines = text.split("\n")
            if lines[-1] == "":
                lines.pop()  # the empty "line" after a final newline is not a line
            for number, raw in enumerate(lines, start=1):
                # One line costs at most linear time in MAX_FILE_BYTES, so checking the clock
                # between lines bounds the whole search.
                if time.monotonic() > deadline:
                    raise InvalidPattern(
                        f"pattern: the search took over {SEARCH_SECONDS:g} s and was stopped; "
                        "use a more specific pattern",
                        field="pattern",
                    )
                line = raw.removesuffix("\r")
                if compiled.search(line) is None:
                    continue
                if len(hits) == limit:
                    return hits, True
                hits.append(SearchHit(name, number, line[:MAX_HIT_CHARS]))
        return hits, False

    def _note_index(self) -> NoteIndex:
        if self._index is None:
            self._index = NoteIndex(
                self.root,
                SUBFOLDERS,
                scan=self._entries,
                listed=self._listed,
                load=self._index_text,
            )
        return self._index

    def _index_text(self, name: str) -> str | None:
        """What the index holds of a file: its text, "" when it is over the cap (a search skips
        it), None when it cannot be read as text (a search reports it as a full scan would)."""
        try:
            return self._load(name, self.root / name) or ""
        except FileTooLarge:
            return ""
        except (StoreError, SymlinkRefused):
            return None

    def close(self) -> None:
        """Close the search index and forget the cached texts (the files need no closing);
        every later call raises StoreError (K3). Idempotent."""
        self._closed = True
        self._texts.clear()
        with self._search_lock:
            if self._index is not None:
                self._index.close()
                self._index = None

    # -- writing -------------------------------------------------------------------------------

    def _store(self, name: str, path: Path, text: str) -> int:
        # The one door of every write, append and edit: what is stored (and so its .bak, the
        # index and what a model is shown) is the redacted text (P5). A name cannot hold a
        # marker (a note's name is its address), so one holding a secret is refused.
        if found := self.redactor.find_all(name):
            raise InvalidName(
                f"file: the name holds what looks like a secret ({found[0].kind}); name the "
                "note for what it is about. Nothing was written",
                field="file",
            )
        data = self.redactor.text(text).encode("utf-8")
        if len(data) > MAX_FILE_BYTES:
            raise FileTooLarge(
                f"content: {name} would be {len(data):,} bytes, over the {MAX_FILE_BYTES:,}-byte "
                "limit of a memory file; nothing was written. Split it into notes, or trim it",
                field="content",
            )
        try:
            atomic_write(path, data, backup=True)
        except OSError as exc:
            raise StoreError(
                f"file: could not write {name} ({exc.strerror or type(exc).__name__})",
                field="file",
            ) from None
        return len(data)

    def write(self, file: str, content: str, mode: Literal["replace", "append"]) -> int:
        """Replace or append to a memory file; returns its size in bytes after the write.

        An append to a non-empty file that does not end in a newline first adds one, so the
        appended text always starts on its own line. Either way the previous content is kept
        in `<file>.bak`.
        """
        if mode not in ("replace", "append"):
            raise InvalidParams(f'mode: must be "replace" or "append", got {mode!r}', field="mode")
        try:
            size = len(content.encode("utf-8"))
        except UnicodeEncodeError:
            raise InvalidParams(
                "content: contains characters that cannot be encoded as UTF-8", field="content"
            ) from None
        if size > MAX_FILE_BYTES:  # refused before the file is read or the lock taken
            raise FileTooLarge(
                f"content: {size:,} bytes is over the {MAX_FILE_BYTES:,}-byte limit of a memory "
                "file; nothing was written",
                field="content",
            )
        name, path = self._path(file)
        with self._locked():
            refuse_symlinks(self.root, path)  # again, now that no other writer runs
            if mode == "replace":
                return self._store(name, path, content)
            old = self._load(name, path) or ""
            joint = "\n" if old and not old.endswith("\n") else ""
            return self._store(name, path, old + joint + content)

    def edit(self, file: str, search: str, replace: str) -> int:
        """Replace every occurrence of `search` with `replace`; returns how many there were."""
        if search == "":
            raise InvalidParams("search: the text to search for must not be empty", field="search")
        for label, value in (("search", search), ("replace", replace)):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise InvalidParams(
                    f"{label}: contains characters that cannot be encoded as UTF-8", field=label
                ) from None
        name, path = self._path(file)
        if not path.exists():  # checked first so that a failed edit never creates the store
            raise NotFound(f"file: {name} does not exist in the memory store", field="file")
        with self._locked():
            refuse_symlinks(self.root, path)
            old = self._load(name, path)
            if old is None:
                raise NotFound(f"file: {name} does not exist in the memory store", field="file")
            count = old.count(search)
            if count == 0:
                raise NoMatch(f"search: the text does not occur in {name}", field="search")
            # The result's size is known before it is built: a hostile edit (a short search
            # text replaced many times by a long one) is refused without allocating it.
            grown = len(old.encode("utf-8")) + count * (
                len(replace.encode("utf-8")) - len(search.encode("utf-8"))
            )
            if grown > MAX_FILE_BYTES:
                raise FileTooLarge(
                    f"replace: the edit would make {name} {grown:,} bytes, over the "
                    f"{MAX_FILE_BYTES:,}-byte limit of a memory file; nothing was written",
                    field="replace",
                )
            self._store(name, path, old.replace(search, replace))
            return count

    def scrub(self, redact: Callable[[str], str]) -> builtins.list[str]:
        """Rewrite every Markdown file and `.bak` copy that `redact` changes, each atomically and
        without a new `.bak` (the old text is what must go), then drop the search index, which
        holds the old text (it is rebuilt). Returns the store-relative names rewritten."""
        rewritten: builtins.list[str] = []
        with self._locked():
            for name, _ in self._entries():
                name = self._scrub_name(name, redact, rewritten)
                for each in (name, f"{name}.bak"):
                    path = self.root / each
                    refuse_symlinks(self.root, path)
                    try:
                        data = read_regular(path, MAX_FILE_BYTES + 1)
                    except (OSError, NotRegularFile):
                        continue  # unreadable: the scan reports it, nothing is lost
                    if data is None or len(data) > MAX_FILE_BYTES:
                        continue
                    try:
                        text = data.decode("utf-8")
                    except UnicodeDecodeError:
                        continue  # not text this store wrote: left as it is
                    redacted = redact(text)
                    if redacted == text:
                        continue
                    try:
                        atomic_write(path, redacted.encode("utf-8"), backup=False)
                    except OSError as exc:
                        raise StoreError(
                            f"file: could not rewrite {each} ({exc.strerror or type(exc).__name__})",
                            field="file",
                        ) from None
                    rewritten.append(each)
        self._texts.clear()
        with self._search_lock:
            self._note_index().reset()
            self._index = None
        return rewritten

    def _scrub_name(
        self, name: str, redact: Callable[[str], str], renamed: builtins.list[str]
    ) -> str:
        """A note whose name holds a secret (written before names were checked) renamed, with
        its .bak, to the name with each secret as `secret-<kind>-<8 hex>`; its new name."""
        safe = unsafe_name_redacted(name, redact)
        if safe == name or self._listed(safe) is not None:
            return name  # nothing found, or the safe name is taken: the scan still lists it
        for old, new in ((name, safe), (f"{name}.bak", f"{safe}.bak")):
            with contextlib.suppress(FileNotFoundError):
                refuse_symlinks(self.root, self.root / old)
                (self.root / old).replace(self.root / new)
        renamed.append(safe)
        return safe

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """Hold the store's lock file; this is what makes read-modify-write lose no update."""
        try:
            self._lock.__enter__()
        except OSError as exc:
            raise StoreError(
                f"file: could not lock the memory store ({exc.strerror})", field="file"
            ) from None
        try:
            yield
        finally:
            self._lock.__exit__(None, None, None)
