"""The open documents' text, exactly as the client holds it, for code anchors' drift.

The client sends each edit as a range in its own terms: a line, and a column counted in the
position encoding the two agreed on at `initialize` (UTF-16 code units unless the client offered
UTF-8 or UTF-32). LSP breaks lines at `\\n`, `\\r\\n` and `\\r` only. Python's `str.splitlines`
also breaks at U+2028, U+0085, U+000C, U+001E and others, so a copy kept with it (as pygls' is)
no longer matches the editor's once an edit lands below such a character; the lines here are
LSP's.

Cost: one `didChange` splits the document once, applies each edit to the lines it touches only
(a re-split of those lines, with the line before, since a `\\r` there may join a `\\n` the edit
brings), and joins once: one pass over the document for the whole message, however many edits
it holds, plus the size of the edits.

Bounds: a document longer than MAX_BUFFER_CHARS (drift checks no larger file), or one that would
take the kept documents past MAX_BUFFERS or MAX_BUFFERS_CHARS, is not kept (its file is read
from disk when drift needs it) and its changes are ignored. The sum of the kept lengths is
counted as documents change, never recomputed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

Position = tuple[int, int]
"""(line, character): 0-based, the character counted in the agreed position encoding."""

_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def split_keepends(text: str) -> list[str]:
    """The text's LSP lines, each with its line break (the last may have none)."""
    return _LINES.findall(text)


def _content(line: str) -> str:
    """A line without its line break."""
    return line.rstrip("\r\n") if line.endswith(("\n", "\r")) else line


def column(line: str, character: int, encoding: str) -> int:
    """The index into `line` (its content, without the break) of a client's `character`, in
    `encoding` ("utf-16", "utf-8" or "utf-32"); past the end means the end (LSP)."""
    content = _content(line)
    if character <= 0:
        return 0
    if encoding == "utf-32" or content.isascii():
        return min(character, len(content))
    width = 2 if encoding == "utf-16" else 1
    units = 0
    for index, char in enumerate(content):
        if units >= character:
            return index
        code = ord(char)
        if width == 2:
            units += 2 if code > 0xFFFF else 1
        else:
            units += 1 if code < 0x80 else 2 if code < 0x800 else 3 if code < 0x10000 else 4
    return len(content)


@dataclass(frozen=True)
class Edit:
    """One content change: `text` replaces `range` (start, end), or the whole document when
    `range` is None."""

    text: str
    range: tuple[Position, Position] | None = None


def apply_edits(text: str, edits: Iterable[Edit], encoding: str = "utf-16") -> str:
    """`text` after `edits`, applied in order as LSP says (see the module docstring)."""
    lines: list[str] | None = None
    for edit in edits:
        if edit.range is None:
            lines = split_keepends(edit.text)
            continue
        if lines is None:
            lines = split_keepends(text)
        _apply(lines, edit, encoding)
    return text if lines is None else "".join(lines)


def _apply(lines: list[str], edit: Edit, encoding: str) -> None:
    """Replace the edit's range in `lines`, re-splitting only the lines it touches."""
    assert edit.range is not None
    (start_line, start_char), (end_line, end_char) = sorted(edit.range)  # LSP: start first
    count = len(lines)
    if start_line >= count:  # past the last line: the end of the document
        first, prefix = count, ""
    else:
        line = lines[start_line]
        first, prefix = start_line, line[: column(line, start_char, encoding)]
    if end_line >= count:
        last, suffix = count - 1, ""
    else:
        line = lines[end_line]
        last, suffix = end_line, line[column(line, end_char, encoding) :]
    # The line before joins the re-split when the edit appends to it (a last line with no break
    # takes the text), or when it ends in `\r`: that and a `\n` the edit brings are one break.
    if first > 0 and (first == count or lines[first - 1].endswith("\r")):
        first -= 1
        prefix = lines[first] + prefix
    lines[first : last + 1] = split_keepends(prefix + edit.text + suffix)


class Buffers:
    """The documents the client has open and this server keeps (see the module docstring)."""

    MAX_BUFFER_CHARS = 1024 * 1024
    MAX_BUFFERS = 1000
    MAX_BUFFERS_CHARS = 64 * 1024 * 1024

    def __init__(self) -> None:
        self._texts: dict[str, str] = {}
        self._chars = 0  # the sum of the kept texts' lengths

    def _fits(self, extra_documents: int, extra_chars: int) -> bool:
        return (
            len(self._texts) + extra_documents <= self.MAX_BUFFERS
            and self._chars + extra_chars <= self.MAX_BUFFERS_CHARS
        )

    def open(self, uri: str, text: str) -> bool:
        """Keep `text` as the document's (a second open replaces the first); whether it is kept."""
        self.close(uri)
        if len(text) > self.MAX_BUFFER_CHARS or not self._fits(1, len(text)):
            return False
        self._texts[uri] = text
        self._chars += len(text)
        return True

    def change(self, uri: str, edits: Iterable[Edit], encoding: str = "utf-16") -> bool:
        """Apply the edits of one `didChange`; whether the document is still kept (a document
        not kept, or never opened, stays so)."""
        before = self._texts.get(uri)
        if before is None:
            return False
        after = apply_edits(before, edits, encoding)
        growth = len(after) - len(before)
        if len(after) > self.MAX_BUFFER_CHARS or not self._fits(0, growth):
            self.close(uri)
            return False
        self._texts[uri] = after
        self._chars += growth
        return True

    def close(self, uri: str) -> None:
        text = self._texts.pop(uri, None)
        if text is not None:
            self._chars -= len(text)

    def text(self, uri: str) -> str | None:
        """The document's text as the client holds it, or None when it is not kept."""
        return self._texts.get(uri)

    def uris(self) -> Iterator[str]:
        yield from list(self._texts)

    @property
    def chars(self) -> int:
        return self._chars
