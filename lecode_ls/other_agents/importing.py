"""The file of `lecode/session/import`'s `path` and of `lecode-ls import`: an exported lecode
transcript or OpenAI-style messages (one JSON object a line), or a Claude Code session or Codex
CLI rollout, converted (transcripts.py). Bounded (MAX_IMPORT_BYTES), never a FIFO or device."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from lecode_ls.errors import InvalidParams, NotFound
from lecode_ls.memory.files import NotRegularFile, read_regular
from lecode_ls.other_agents.transcripts import Agent, convert, cwd_within, detect

log = logging.getLogger(__name__)

MAX_IMPORT_BYTES = 64 * 1024 * 1024


def read_import_file(path: Path, folders: list[Path]) -> tuple[list[dict[str, Any]], str | None]:
    """The records of the file at `path` (resolved), and a title for them; another agent's
    records whose folder is outside `folders` are left out. Raises InvalidParams / NotFound
    naming `path`."""
    try:
        # read_regular: a FIFO or device planted in the workspace must not hold a worker thread.
        data = read_regular(path, MAX_IMPORT_BYTES + 1)
    except NotRegularFile:
        raise InvalidParams("path: not a regular file", field="path") from None
    except OSError as exc:
        raise InvalidParams(f"path: cannot be read ({exc.strerror})", field="path") from None
    if data is None:
        raise NotFound("path: no such file", field="path")
    if len(data) > MAX_IMPORT_BYTES:
        raise InvalidParams("path: the file is larger than 64 MiB", field="path")
    lines = data.split(b"\n")
    agent = detect(lines[:200])
    if agent is not None:
        return _converted(path, lines, agent, folders)
    records: list[dict[str, Any]] = []
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):  # RecursionError: nested too deeply
            raise InvalidParams(f"path: line {number} is not JSON", field="path") from None
        if not isinstance(record, dict):
            raise InvalidParams(f"path: line {number} is not a JSON object", field="path")
        records.append(record)
    return records, None


def _converted(
    path: Path, lines: list[bytes], agent: Agent, folders: list[Path]
) -> tuple[list[dict[str, Any]], str]:
    """Another agent's transcript as records: records whose folder is outside every workspace
    folder are left out (a record claiming another project), as are the rest
    `transcripts.convert` skips; the reasons are logged."""

    def within(cwd: str) -> bool:
        return cwd_within(cwd, folders)

    converted = convert(enumerate(lines, start=1), agent, path.name, within=within)
    if converted.skipped:
        log.info("import of %s: skipped %s", path.name, dict(converted.skipped))
    if not converted.records:
        raise InvalidParams(
            f"path: no message of this project in the {agent} transcript", field="path"
        )
    name = "Claude Code" if agent == "claude-code" else "Codex"
    return converted.records, f"{name} session {converted.session or path.stem}"
