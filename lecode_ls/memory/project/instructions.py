"""Other agents' instruction files read beside AGENTS.md (`[agent] instruction_files`, L7).

A project may keep its conventions in CLAUDE.md, .github/copilot-instructions.md,
.cursor/rules/*.mdc or GEMINI.md. The person names those files; they are read under AGENTS.md's
rules: from the active working folder only, never copied into the store, a link followed only
when it stays inside the folder, anything but a regular file refused, and every byte counted
against one budget shared with AGENTS.md (INSTRUCTIONS_MAX_BYTES), so naming more files never
makes the prompt larger than AGENTS.md alone may be. A glob is allowed in the last component
only, and bounded: at most MAX_ENTRIES_SCANNED names of its folder are looked at and
MAX_MATCHES of them read, in name order.
"""

from __future__ import annotations

import fnmatch
import logging
import os
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from lecode_ls.memory.files import NotRegularFile, read_regular
from lecode_ls.memory.project.agents import AGENTS_FILE, AGENTS_MAX_BYTES, cut_utf8
from lecode_ls.platform.paths import canonical

log = logging.getLogger(__name__)

GLOB_CHARS = frozenset("*?[")


def instruction_pattern_problem(pattern: str) -> str | None:
    """Why `pattern` is not a working-folder-relative file name or last-component glob, or None."""
    if "\\" in pattern or "\x00" in pattern:
        return "use / between folders, and no NUL"
    if pattern.startswith(("/", "~")) or (len(pattern) > 1 and pattern[1] == ":"):
        return "must be relative to the working folder"
    parts = pattern.split("/")
    if any(part in ("", ".", "..") for part in parts):
        return 'must not contain "..", "." or an empty folder name'
    if any(GLOB_CHARS & set(part) for part in parts[:-1]):
        return "a glob (* ? [) is allowed in the file name only, not in a folder"
    return None


INSTRUCTIONS_MAX_BYTES = AGENTS_MAX_BYTES
"""One budget for AGENTS.md and every instruction file together, AGENTS.md first."""

MAX_MATCHES = 20
"""Files one glob may bring in, the first in name order."""

MAX_ENTRIES_SCANNED = 10_000
"""Names of a glob's folder looked at, at most: a folder of 100,000 files costs no more."""


@dataclass(frozen=True)
class Instruction:
    """One instruction file read (`text`), or refused (`refused` says why, `text` is empty)."""

    path: str
    """Relative to the working folder, with "/" separators."""
    text: str = ""
    truncated: bool = False
    refused: str | None = None


def _inside(folder: Path, path: Path) -> Path | None:
    """`path` with its links resolved if that stays inside `folder`, else None."""
    try:
        target = canonical(path.resolve(strict=True))
    except (OSError, RuntimeError):
        return None
    return target if target.is_relative_to(canonical(folder)) else None


def _expand(folder: Path, pattern: str) -> tuple[list[str], str | None]:
    """The relative paths `pattern` names (a plain name: itself), and a note if the glob was cut."""
    name = pattern.rsplit("/", 1)[-1]
    if not GLOB_CHARS & set(name):
        return [pattern], None
    parent = pattern.rpartition("/")[0]
    directory = folder / parent if parent else folder
    if parent and _inside(folder, directory) is None:
        return [], None  # a missing folder, or one that leads outside: nothing matches
    found: list[str] = []
    cut = None
    try:
        with os.scandir(directory) as entries:
            for scanned, entry in enumerate(entries):
                if scanned >= MAX_ENTRIES_SCANNED:
                    cut = f"{pattern}: only the first {MAX_ENTRIES_SCANNED} names were looked at"
                    break
                if fnmatch.fnmatchcase(entry.name, name):
                    found.append(f"{parent}/{entry.name}" if parent else entry.name)
    except OSError:
        return [], None
    found.sort()
    if len(found) > MAX_MATCHES:
        cut = f"{pattern}: {len(found)} files match; the first {MAX_MATCHES} by name were read"
        found = found[:MAX_MATCHES]
    return found, cut


def _read_one(folder: Path, relative: str, budget: int) -> tuple[Instruction, int] | None:
    """The file read within `budget` bytes and the bytes it took; None if it is missing."""
    path = folder / relative
    if not path.exists():  # follows links: a dangling one is a missing file, as AGENTS.md's
        return None
    target = _inside(folder, path)  # every link on the way resolved
    if target is None:
        return Instruction(relative, refused="a symbolic link that leads outside the folder"), 0
    try:
        data = read_regular(target, budget + 1)
    except NotRegularFile:
        return Instruction(relative, refused="not a regular file"), 0
    except OSError as exc:
        return Instruction(relative, refused=f"could not be read ({exc.strerror})"), 0
    if data is None:
        return None
    if len(data) <= budget:
        return Instruction(relative, data.decode("utf-8", errors="replace")), len(data)
    kept = cut_utf8(data, budget)
    return Instruction(relative, kept.decode("utf-8", errors="replace"), truncated=True), len(kept)


def read_instructions(
    folder: Path, patterns: Sequence[str], *, used: int = 0, skip: Collection[str] = ()
) -> tuple[list[Instruction], list[str]]:
    """The instruction files `patterns` name in `folder`, and notes on globs that were cut.

    `used` is what AGENTS.md already took of INSTRUCTIONS_MAX_BYTES. A file named twice is read
    once; AGENTS.md itself is never read again here, nor a path in `skip` (the file an agent
    reads natively, for `lecode-ls context`). A pattern that `instruction_pattern_problem` refuses
    (config validation keeps them out; this is the second fence) and a missing file are skipped;
    a refused file is returned with its reason. Once the budget is spent, later files are
    refused with "over the size budget".
    """
    seen = {AGENTS_FILE, *skip}
    read: list[Instruction] = []
    notes: list[str] = []
    budget = max(0, INSTRUCTIONS_MAX_BYTES - used)
    for pattern in patterns:
        if instruction_pattern_problem(pattern) is not None:
            continue
        paths, cut = _expand(folder, pattern)
        if cut is not None:
            notes.append(cut)
        for relative in paths:
            if relative in seen:
                continue
            seen.add(relative)
            if budget <= 0:
                read.append(Instruction(relative, refused="over the size budget"))
                continue
            result = _read_one(folder, relative, budget)
            if result is not None:
                read.append(result[0])
                budget -= result[1]
    return read, notes


INSTRUCTION_HEADING = (
    "# {path} (the project's instructions for coding agents, read beside AGENTS.md as "
    "[agent] instruction_files names it)\n\n"
)
INSTRUCTION_CUT = "[... {path} cut: AGENTS.md and the instruction files share {cap} bytes]"


def instruction_parts(
    folder: Path, patterns: Sequence[str], *, used: int, skip: Collection[str] = ()
) -> list[str]:
    """The system prompt's parts for `patterns`, each under its labelled heading (L7).

    A refused file and a cut glob are logged (the server log names no content), never shown.
    """
    if not patterns:
        return []
    items, notes = read_instructions(folder, patterns, used=used, skip=skip)
    parts = []
    for item in items:
        if item.refused is not None:
            log.warning("instruction file %s not read: %s", item.path, item.refused)
        elif item.text.strip():
            text = item.text if item.text.endswith("\n") else item.text + "\n"
            if item.truncated:
                text += INSTRUCTION_CUT.format(path=item.path, cap=INSTRUCTIONS_MAX_BYTES) + "\n"
            parts.append(INSTRUCTION_HEADING.format(path=item.path) + text)
    for note in notes:
        log.warning("instruction files: %s", note)
    return parts
