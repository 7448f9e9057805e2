"""The memory's health (issue 26): every number with the fact IDs behind it.

`diagnose` reads the facts (statuses validated as listings validate them, with the runtime's
remembered verdicts), their code anchors' drift, the retirement proposals, the latest learning's
proposed corrections, and the share each Markdown file gets of the injected memory. Blocking:
callers run it off the request thread. A damaged facts.sqlite3 raises StoreError.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from lecode_ls.memory.injection import ProjectMemory, build_memory_section
from lecode_ls.memory.learning_status import latest_learning
from lecode_ls.memory.recall import listed_status
from lecode_ls.memory.sessions import SessionStore

MAX_IDS = 50  # IDs listed for each number (the number itself counts them all)
STATUSES = ("valid", "retired", "missing", "stale", "hidden", "unverified")
CHUNK = 500


def _counted(ids: Iterable[int]) -> dict[str, Any]:
    found = sorted(set(ids))
    return {"count": len(found), "ids": found[:MAX_IDS]}


def diagnose(memory: ProjectMemory, sessions: SessionStore) -> dict[str, Any]:
    """The doctor's answer (snake_case JSON; see `lecode/memory/doctor` in protocol.md)."""
    facts = memory.facts
    census = facts.retirement.census()
    by_status: dict[str, list[int]] = {status: [] for status in STATUSES}
    by_status["hidden"] = list(census.hidden)
    by_status["unverified"] = list(census.unverified)
    generation = facts.generation() if census.sourced else 0
    for start in range(0, len(census.sourced), CHUNK):
        chunk = facts.get_many(census.sourced[start : start + CHUNK])
        for fact in chunk.values():
            status, _ = listed_status(fact, sessions, facts, memory.verdicts, generation)
            if status == "valid" and fact.id in census.retired:
                status = "retired"
            by_status[status].append(fact.id)
    drifted: list[int] = []
    deleted: list[int] = []
    for fact_id, states in memory.drift.fact_states(census.ids).items():
        kinds = {state.located.status for state in states}
        if kinds & {"changed", "deleted"}:
            drifted.append(fact_id)
        if kinds == {"deleted"}:
            deleted.append(fact_id)
    retirements = facts.retirement.proposals(
        memory.settings.memory.retire_after_days, limit=len(census.ids) or 1
    )
    learning = latest_learning(sessions, facts)
    corrections = [
        conflict["fact_id"]
        for proposal in (learning or {}).get("proposals", [])
        for conflict in proposal["conflicts"]
    ]
    section = build_memory_section(memory)
    notes = [
        {"file": note.name, "bytes": note.bytes, "shown": note.shown, "cut": note.cut}
        for note in section.notes
    ]
    return {
        "facts": len(census.ids),
        "by_status": {status: _counted(ids) for status, ids in by_status.items()},
        "drifted": _counted(drifted),
        "anchors_deleted": _counted(deleted),
        "duplicates": {
            "count": len(census.duplicates),
            "groups": [list(group) for group in census.duplicates[:MAX_IDS]],
        },
        "never_used": _counted(census.never_used),
        "proposed_retirements": _counted(p.fact_id for p in retirements),
        "proposed_corrections": _counted(corrections),
        "notes": notes,
    }
