"""Making code anchors: from lines of a text, and from a verified project fact's evidence (A5).

A verified project fact reads `<path> contains "<JSON-escaped line>"`, where `path` is relative to
the workspace folder the `read` tool ran in, and its evidence holds that read: an assistant call
of `read` on `path` and its result showing the line numbered (`{number:>6}\\t{line}`, the read
tool's documented shape). The anchor is that line, hashed as the read showed it: if the file has
changed since, the fact is flagged at once rather than anchored to text it never saw.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lecode_ls.errors import LecodeError
from lecode_ls.memory.anchors.text import lines_digest
from lecode_ls.memory.facts import NewAnchor, SourceLike
from lecode_ls.memory.project import checkout_root, head_commit, relative
from lecode_ls.memory.sessions import SessionStore, well_formed_calls
from lecode_ls.platform.paths import canonical, path_problem

FACT_TEXT = re.compile(r'^(?P<path>[^\s"]+) contains (?P<line>".*")$', re.DOTALL)
"""A verified project fact's text (A5): a relative path, ` contains `, the line as JSON."""
_NUMBERED = re.compile(r" *(\d+)\t(.*)", re.DOTALL)


def make_anchor(lines: Sequence[str], start: int, path: str, commit: str | None) -> NewAnchor:
    """An anchor of `lines`, which are lines `start`.. (1-based) of `path`."""
    return NewAnchor(
        path=path,
        start_line=start,
        end_line=start + len(lines) - 1,
        sha256=lines_digest(lines),
        first_sha256=lines_digest(lines[:1]),
        commit=commit,
    )


def locate_file(folders: Sequence[Path], path: str) -> tuple[Path, str] | None:
    """The checkout root and checkout-relative path of a folder-relative `path`: in the first
    workspace folder where the file exists, else in the first folder; None when it leads out
    of every folder (`..`, an absolute path, a link out)."""
    if not folders or path.startswith(("/", "\\")) or ":" in path.split("/")[0]:
        return None
    if path_problem(path) is not None:  # a model's `read` may ask for anything
        return None
    candidates = [canonical(folder / path) for folder in folders]
    chosen = next((c for c in candidates if c.is_file()), candidates[0])
    root = checkout_root(chosen, folders)
    rel = relative(chosen, root) if root is not None else None
    return (root, rel) if root is not None and rel is not None else None


def read_line_number(records: Sequence[dict[str, Any]], path: str, line: str) -> int | None:
    """The number a `read` of `path` in `records` showed `line` at (the first such), or None."""
    reads: set[str] = set()
    for record in records:
        if record.get("kind") != "message":
            continue
        if record.get("role") == "assistant":
            for call in well_formed_calls(record):
                if call["function"]["name"] == "read" and _read_path(call) == path:
                    reads.add(call["id"])
        elif record.get("role") == "tool" and record.get("tool_call_id") in reads:
            for shown in str(record.get("content", "")).split("\n"):
                match = _NUMBERED.fullmatch(shown)
                if match and match[2] == line and int(match[1]) >= 1:
                    return int(match[1])
    return None


def _read_path(call: dict[str, Any]) -> str | None:
    raw = call["function"].get("arguments")
    try:
        arguments = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        return None
    path = arguments.get("path") if isinstance(arguments, dict) else None
    return path if isinstance(path, str) else None


def fact_path_line(text: str) -> tuple[str, str] | None:
    """The path and the line of a verified project fact's text, `path contains "<JSON string>"`
    (A5); None for any other text."""
    match = FACT_TEXT.match(text)
    if match is None:
        return None
    try:
        line = json.loads(match["line"])
    except ValueError:
        return None
    return (match["path"], line) if isinstance(line, str) else None


def verified_fact_anchor(
    text: str, ref: SourceLike, sessions: SessionStore, folders: Sequence[Path]
) -> NewAnchor | None:
    """The anchor of a verified project fact (`path contains "line"`) whose evidence `ref`
    shows a read of that line, or None (other facts, or no such read in the evidence). Reads the
    cited transcript records unvalidated: the fact's evidence is validated where it is stored."""
    parsed = fact_path_line(text)
    if parsed is None:
        return None
    path, line = parsed
    if "\n" in line or "\r" in line or not ref.seqs:
        return None
    try:
        records = sessions.read(ref.session_id, ref.seqs[0], ref.seqs[-1])
    except LecodeError:  # an unreadable transcript: no anchor; storing validates the evidence
        return None
    number = read_line_number(records, path, line)
    where = locate_file(folders, path) if number is not None else None
    if number is None or where is None:
        return None
    root, rel = where
    return make_anchor([line], number, rel, head_commit(root))


def read_paths(
    records: Sequence[dict[str, Any]], folder: Path, located: dict[str, str | None] | None = None
) -> set[str]:
    """The checkout-relative paths of the files the `read` calls in `records` asked for (the
    conversation's reads, run in `folder`): injection prefers the facts anchored in them.

    `located` remembers each asked path's answer across calls: a chat turn passes its own, so
    the rounds of one turn resolve each path once (20 ms for 200 paths) rather than at every
    provider request. Only the order facts are inspected in depends on it."""
    located = {} if located is None else located
    found: set[str] = set()
    asked = {
        path
        for record in records
        if record.get("kind", "message") == "message" and record.get("role") == "assistant"
        for call in well_formed_calls(record)
        if call["function"]["name"] == "read" and (path := _read_path(call)) is not None
    }
    for path in sorted(asked)[:200]:  # bounded: a long conversation may read many files
        if path not in located:
            where = locate_file([folder], path)
            located[path] = where[1] if where is not None else None
        if (rel := located[path]) is not None:
            found.add(rel)
    return found
