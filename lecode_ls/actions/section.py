"""What a prompt carries of the project besides its facts and notes: the instruction files, as
lecode's own chat and other agents' hooks both show them (L7).

The memory section itself is `memory.injection.build_memory_section`, which both call too: the
chat through its layout (agent/turn_memory.py: the section is the session's stable part), a
hook directly for each prompt (other_agents/context.py). Read-only, blocking; this module is
imported by a hook at every prompt, so it imports neither the settings model nor the runtime.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from pathlib import Path

from lecode_ls.errors import LecodeError
from lecode_ls.memory.project import AGENTS_FILE, AGENTS_HEADING, instruction_parts, read_agents

log = logging.getLogger(__name__)


def instructions(folder: Path, patterns: Sequence[str], *, skip: Collection[str] = ()) -> list[str]:
    """AGENTS.md of `folder` under its heading, then the files `patterns` (`[agent]
    instruction_files`) name, each under its labelled heading, within their shared cap: the
    parts a prompt shows before the memory. `skip` names files the agent reads itself (Claude
    Code's CLAUDE.md, Codex's AGENTS.md): never sent twice. A file that cannot be read is
    logged and left out."""
    parts: list[str] = []
    used = 0
    if AGENTS_FILE not in skip:
        try:
            text, exists = read_agents(folder)
        except LecodeError as error:
            log.warning("AGENTS.md not read: %s", error)
            text, exists = "", False
        if exists and text.strip():
            parts.append(AGENTS_HEADING + text)
        used = len(text.encode("utf-8")) if exists else 0
    parts.extend(instruction_parts(folder, patterns, used=used, skip=skip))
    return parts
