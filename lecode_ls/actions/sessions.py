"""The operations on chat sessions (transcripts) a person asks for: new, rename, clear, undo,
redo, delete, import, which work with memory disabled too (transcripts are chat's own record,
K1); and the reads of evidence, which need the memory: a validated page, a snapshot. A chat turn, a compaction, learning and the following of other agents' transcripts
append their records to the store themselves: recording is theirs, not an operation.
Blocking: call from a worker thread.
"""

from __future__ import annotations

from typing import Any

from lecode_ls.actions.changes import FACTS, NOTHING, Done
from lecode_ls.memory.recall import recall_session
from lecode_ls.memory.sessions import SessionInfo, SourceRef, check_session_id, source_snapshot
from lecode_ls.runtime import Runtime


def read(
    runtime: Runtime,
    session_id: str,
    start: int,
    end: int,
    offset: int = 0,
    limit: int | None = None,
) -> dict[str, Any]:
    """A validated page of the records `start`..`end` (R3): what a fact's evidence shows."""
    sessions, facts = runtime.require_facts()
    return recall_session(sessions, facts, session_id, start, end, offset, limit)


def listing(runtime: Runtime) -> list[tuple[SessionInfo, int]]:
    """Every session, oldest first, with how many facts' current revisions cite it."""
    infos = runtime.sessions.list()
    citing = runtime.facts.citing(i.session_id for i in infos)
    return [(info, citing.get(info.session_id, 0)) for info in infos]


def snapshot(runtime: Runtime, session_id: str, start: int, end: int) -> SourceRef:
    """The exact reference to the visible records `start`..`end`, with their digest (S2): the
    evidence a remember or a correction cites."""
    sessions, facts = runtime.require_facts()
    return source_snapshot(sessions, session_id, start, end, exclusions=facts)


def new(runtime: Runtime, title: str = "") -> Done[str]:
    return Done(runtime.sessions.create(title))


def rename(runtime: Runtime, session_id: str, title: str) -> Done[str]:
    return Done(runtime.sessions.rename(check_session_id(session_id), title))


def clear(runtime: Runtime, session_id: str) -> Done[int]:
    """A clear marker: later requests start after it. Its seq."""
    return Done(runtime.sessions.clear(session_id))


def undo(runtime: Runtime, session_id: str) -> Done[list[int]]:
    """Hide the last exchange; facts citing its records turn hidden."""
    return Done(runtime.sessions.undo(session_id), FACTS)


def redo(runtime: Runtime, session_id: str) -> Done[list[int]]:
    return Done(runtime.sessions.redo(session_id), FACTS)


def delete(runtime: Runtime, session_id: str) -> Done[int]:
    """Delete a transcript (S6); the facts citing it become missing. How many cite it. The
    door keeps turns out of the session meanwhile."""
    session_id = check_session_id(session_id)
    citing = runtime.facts.citing([session_id]).get(session_id, 0)
    runtime.sessions.delete(session_id)
    return Done(citing, FACTS if citing else NOTHING)


def import_records(
    runtime: Runtime, records: list[dict[str, Any]], title: str | None
) -> Done[tuple[str, str | None]]:
    """A new session of `records` (a lecode export, or converted from another agent's
    transcript): its ID, and the ID the export named when that one was taken."""
    return Done(runtime.sessions.import_records(records, title))
