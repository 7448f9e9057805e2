"""The text side of code anchors: lines, their hash, and where anchored lines are now.

Pure functions over strings; nothing here reads a file or a database.

Lines are LSP's: a text splits at `\\r\\n`, `\\n` and `\\r` (never at the other characters
`str.splitlines` knows, such as U+2028, which editors do not count as line breaks), and line N
(1-based) is the N-th piece. A text ending in a line break has an empty last line, as an editor
shows it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

Status = Literal["current", "moved", "changed", "deleted", "unchecked"]
DRIFTED: frozenset[str] = frozenset({"changed", "deleted"})

_BREAK = re.compile(r"\r\n|\r|\n")
MAX_CANDIDATES = 1000  # places a moved anchor is looked for, nearest first
NEAR_LINES = 32  # a moved anchor is first looked for this far around its old place, line by line


def split_lines(text: str) -> list[str]:
    """The text's lines without their line breaks (see the module docstring)."""
    if "\r" not in text:  # the common case, ten times faster than the regular expression
        return text.split("\n")
    return _BREAK.split(text)


def lines_digest(lines: Sequence[str]) -> str:
    """`sha256:` + hex of the lines joined with `\\n`, UTF-8 (a lone surrogate as U+FFFD).

    A versioned contract: every stored anchor holds this digest of its lines, so changing it
    makes every anchor `changed`. Joining with `\\n` whatever the file used makes a checkout with
    CRLF line endings and one with LF agree.
    """
    data = "\n".join(lines).encode("utf-8", "replace")
    return "sha256:" + hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class Located:
    """Where an anchor's lines are in a text now."""

    status: Status
    start_line: int | None = None  # 1-based, inclusive; None when changed or deleted
    end_line: int | None = None


class Text:
    """One version of a file's text, split once, for locating any number of anchors in it.

    The digest of every line is computed only when some anchor is not at its old place, and
    then once for all of them.
    """

    def __init__(self, text: str) -> None:
        self.lines = split_lines(text)
        self._by_first: dict[str, list[int]] | None = None

    def places(self, first: str) -> list[int]:
        """The 0-based indexes of the lines whose digest is `first`, ascending."""
        if self._by_first is None:
            by_first: dict[str, list[int]] = {}
            for index, line in enumerate(self.lines):
                by_first.setdefault(lines_digest((line,)), []).append(index)
            self._by_first = by_first
        return self._by_first.get(first, [])

    def locate(self, start: int, end: int, digest: str, first: str) -> Located:
        """The status of an anchor of lines `start`..`end` (1-based, inclusive) whose lines hash
        to `digest` and whose first line hashes to `first`.

        `current` when they are still there; `moved` when the same lines are elsewhere (the
        place nearest the old one wins; at most MAX_CANDIDATES places are tried); `deleted` when
        the text ends before `start`; `changed` otherwise.
        """
        lines = self.lines
        count = end - start + 1
        if end <= len(lines) and lines_digest(lines[start - 1 : end]) == digest:
            return Located("current", start, end)
        if self._by_first is None:  # most moves are small: look nearby before hashing every line
            last = len(lines) - count
            for offset in range(1, NEAR_LINES + 1):
                for index in (start - 1 - offset, start - 1 + offset):
                    if (
                        0 <= index <= last
                        and lines_digest(lines[index : index + 1]) == first
                        and lines_digest(lines[index : index + count]) == digest
                    ):
                        return Located("moved", index + 1, index + count)
        candidates = [i for i in self.places(first) if i + count <= len(lines)]
        candidates.sort(key=lambda i: (abs(i - (start - 1)), i))
        for index in candidates[:MAX_CANDIDATES]:
            if lines_digest(lines[index : index + count]) == digest:
                return Located("moved", index + 1, index + count)
        return Located("deleted" if len(lines) < start else "changed")
