"""Real project stores for unit tests: a Runtime on tmp_path, transcripts and remembered facts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lecode_ls.config import Settings
from lecode_ls.memory.project.identity import Project
from lecode_ls.memory.sessions.sources import source_snapshot
from lecode_ls.runtime import Runtime


def make_runtime(tmp_path: Path, settings: Settings | None = None) -> Runtime:
    project = Project(root=tmp_path / "project", slug="project-000000000000")
    return Runtime(project, tmp_path / "config", settings or Settings())


def chat(runtime: Runtime, *messages: dict[str, Any]) -> str:
    """A new session holding `messages` (seqs 1, 2, ...; seq 0 is the header)."""
    session = runtime.sessions.create("test")
    for message in messages:
        runtime.sessions.append(session, {"kind": "message", **message})
    return session


def remember(runtime: Runtime, session: str, start: int, end: int, text: str) -> int:
    """A fact citing the visible messages of `start`..`end` of `session`."""
    ref = source_snapshot(runtime.sessions, session, start, end, exclusions=runtime.facts)
    fact_id, _ = runtime.facts.remember(text, ref, check=runtime.check_source)
    return fact_id
