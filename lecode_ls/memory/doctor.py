"""The memory's health (issue 26): every number with the fact IDs behind it.

`diagnose` reads the facts (statuses validated as listings validate them: each distinct source
reference once, each session read once, one already known valid not again), their code anchors'
drift, the retirement proposals, the latest learning's proposed corrections, and the share each
Markdown file gets of the injected memory. Blocking: callers run it off the request thread. A damaged facts.sqlite3 raises StoreError.

What it reads of the settings is a Protocol (`DoctorSettings`), not the settings model: config.py
sits above the core and validates with the core's checks.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from lecode_ls.errors import LecodeError
from lecode_ls.memory.injection import MemoryLimits, ProjectMemory, build_memory_section
from lecode_ls.memory.learning_status import latest_learning
from lecode_ls.memory.recall import listed_status
from lecode_ls.memory.sessions import SessionStore, SourceRef, SourceVerdicts

MAX_IDS = 50  # IDs listed for each number (the number itself counts them all)
MAX_GROUP_IDS = 10  # IDs listed for each group of duplicates (the first, by ID)
STATUSES = ("valid", "retired", "missing", "stale", "hidden", "unverified")


class RetireLimits(MemoryLimits, Protocol):
    """What the doctor reads of `[memory]` (`config.MemorySettings` is one): the injection's
    limits and what retirement proposals wait for."""

    def retire_after(self) -> tuple[int, int]: ...


class DoctorSettings(Protocol):
    """Settings with such a `[memory]` section (`config.Settings` is one)."""

    @property
    def memory(self) -> RetireLimits: ...


class DoctorMemory(ProjectMemory, Protocol):
    """What the doctor reads of a project (`lecode_ls.runtime.Runtime` is one): the injection's
    view, with the retirement settings and the runtime's remembered verdicts."""

    @property
    def settings(self) -> DoctorSettings: ...
    @property
    def verdicts(self) -> SourceVerdicts: ...


def _counted(ids: Iterable[int]) -> dict[str, Any]:
    found = sorted(set(ids))
    return {"count": len(found), "ids": found[:MAX_IDS]}


def diagnose(memory: DoctorMemory, sessions: SessionStore) -> dict[str, Any]:
    """The doctor's answer (snake_case JSON; see `lecode/memory/doctor` in protocol.md)."""
    facts = memory.facts
    census = facts.retirement.census()
    by_status: dict[str, list[int]] = {status: [] for status in STATUSES}
    by_status["hidden"] = list(census.hidden)
    by_status["unverified"] = list(census.unverified)
    refs: list[SourceRef] = []
    cited: list[list[int]] = []
    for (session_id, seqs, digest), fact_ids in census.sources.items():
        try:
            refs.append(SourceRef(session_id, seqs, digest))
        except LecodeError:  # a reference no SourceRef holds: judged fact by fact, as listed
            for fact in facts.get_many(fact_ids).values():
                by_status[listed_status(fact, sessions, facts, None, 0)[0]].append(fact.id)
            continue
        cited.append(fact_ids)
    # Each reference validated once, each session read once (and a reference already known valid
    # not read again): the verdicts `validate_source` gives every fact citing it one by one
    # (what lecode/facts/list shows).
    statuses = memory.verdicts.statuses(refs, facts, facts.generation())
    for status, fact_ids in zip(statuses, cited, strict=True):
        for fact_id in fact_ids:
            shown = "retired" if status == "valid" and fact_id in census.retired else status
            by_status[shown].append(fact_id)
    drifted: list[int] = []
    deleted: list[int] = []
    for fact_id, states in memory.drift.fact_states().items():
        kinds = {state.located.status for state in states}
        if kinds & {"changed", "deleted"}:
            drifted.append(fact_id)
        if kinds == {"deleted"}:
            deleted.append(fact_id)
    retirements = facts.retirement.proposals(
        *memory.settings.memory.retire_after(), limit=census.count or 1
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
        "facts": census.count,
        "by_status": {status: _counted(ids) for status, ids in by_status.items()},
        "drifted": _counted(drifted),
        "anchors_deleted": _counted(deleted),
        "duplicates": {
            "count": len(census.duplicates),
            "groups": [list(group[:MAX_GROUP_IDS]) for group in census.duplicates[:MAX_IDS]],
        },
        "never_used": {"count": census.never_used[0], "ids": list(census.never_used[1])},
        "proposed_retirements": _counted(p.fact_id for p in retirements),
        "proposed_corrections": _counted(corrections),
        "notes": notes,
    }
