"""What automatic learning left for people to review (A6, A9, R8): the latest `learning` event of
a session, with the proposals that still validate, and the dismissals of proposals.

Read by every listing of facts (`memory_list`, `/memory facts`, `lecode/facts/list`) and written
by agent/learning.py; it sits in the core below both, reading the transcripts and the fact store
only. A learning event holds fixed reason codes and counts, never rejected text.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any, Literal, get_args

from lecode_ls.errors import InvalidParams, LecodeError
from lecode_ls.memory.facts import FactStore
from lecode_ls.memory.sessions import DISMISSED, LEARNING, SessionStore, SourceRef, validate_source

log = logging.getLogger(__name__)

Status = Literal["no_candidates", "rejected", "learned", "proposed", "failed", "stale"]

KINDS = ("explicit_user_preference", "verified_project_fact")

REASON_CODES = (
    "response_schema",
    "invalid_json",
    "output_too_large",
    "unexpected_tool_calls",
    "incomplete_response",
    "candidate_schema",
    "invalid_text",
    "invalid_source",
    "invalid_preference_source",
    "temporary_preference",
    "exact_text_mismatch",
    "reported_preference",
    "invalid_preference",
    "invalid_conflicts",
    "unverified_project_evidence",
    "stale_context",
    "extraction_error",
    "shared_by_team",
    # the rules' verdicts (issue 41: agent/learning_rules.py)
    "unsupported_script",
    "one_off_request",
    "hypothetical",
    "past_practice",
    "observation",
    "task_scoped",
    "no_lasting_scope",
    "retracted_preference",
)

RECENT_SESSIONS = 20
"""Without a session, the latest learning status is looked for in this many newest sessions."""

MAX_STATUS_BYTES = 8192
"""What a learning status may take of a 16,384-byte fact listing (R8), in JSON: proposals that
do not fit are left out and counted in `omitted_proposals`, so a listing always has room for
its facts (a fact entry takes at most about 5,000 bytes)."""


def latest_learning(
    sessions: SessionStore, facts: FactStore, session_id: str | None = None
) -> dict[str, Any] | None:
    """The latest `learning` event of `session_id` (the session a request or tool call belongs
    to), or without one, of the newest sessions that have one; with only the proposals that
    still validate: same generation as when they were made, the source valid now, the conflicting
    facts at the same revision; within MAX_STATUS_BYTES. Blocking."""
    if session_id is not None:
        candidates = [session_id]
    else:
        candidates = [info.session_id for info in reversed(sessions.list()) if not info.corrupt]
        candidates = candidates[:RECENT_SESSIONS]
    generation = facts.generation()
    for sid in candidates:
        # From the index: a session without learning events costs no parsing at all.
        learned = sessions.seqs_of_kind(sid, LEARNING)
        if not learned:
            continue
        visibility = sessions.visibility(sid)
        dismissed = {
            (r.get("learning_seq"), r.get("index"))
            for seq in sessions.seqs_of_kind(sid, DISMISSED)
            for r in sessions.read(sid, seq, seq)
        }
        for seq in reversed(learned):
            if not visibility.visible(seq):
                continue
            record = sessions.read(sid, seq, seq)[0]
            try:
                status = _status(sessions, facts, sid, record, generation, dismissed)
            except (KeyError, TypeError, ValueError, AttributeError, LecodeError):
                log.warning("session %s: learning event %s is malformed; skipped", sid, seq)
                continue
            return _bounded(status)
    return None


def _bounded(status: dict[str, Any]) -> dict[str, Any]:
    """`status` within MAX_STATUS_BYTES (as JSON, measured as recall measures its answers):
    proposals are left out from the end until it fits."""
    while status["proposals"]:
        if len(json.dumps(status, ensure_ascii=False).encode("utf-8")) <= MAX_STATUS_BYTES:
            break
        status["proposals"].pop()
        status["omitted_proposals"] = status.get("omitted_proposals", 0) + 1
    return status


def _status(
    sessions: SessionStore,
    facts: FactStore,
    session_id: str,
    record: dict[str, Any],
    generation: int,
    dismissed: set[tuple[Any, Any]],
) -> dict[str, Any]:
    """One learning event as `latest_learning` reports it, its shape checked (a hand-edited or
    imported event raises ValueError, TypeError or KeyError, and is skipped)."""
    if record["status"] not in get_args(Status):
        raise ValueError("status")
    proposals = []
    for index, proposal in enumerate(record.get("proposals", [])):
        if (record["seq"], index) in dismissed or record.get("generation") != generation:
            continue
        if not _proposal_valid(sessions, facts, proposal):
            continue
        if not isinstance(proposal["text"], str) or proposal["kind"] not in KINDS:
            raise ValueError("proposal")
        proposals.append(
            {
                "index": index,
                "text": proposal["text"],
                "kind": proposal["kind"],
                "source": SourceRef.from_json(proposal["source"]).to_json(),
                "conflicts": [_fact_ref(c) for c in proposal.get("conflicts", [])],
                "why": _why(proposal),
            }
        )
    return {
        "session_id": session_id,
        "seq": record["seq"],
        "status": record["status"],
        "reason_counts": {
            code: int(n)
            for code, n in record.get("reason_counts", {}).items()
            if code in REASON_CODES
        },
        "learned": [_fact_ref(f) for f in record.get("learned", [])],
        "proposals": proposals,
    }


MAX_WHY_CHARS = 200


def _why(proposal: dict[str, Any]) -> str:
    """A proposal's reason as recorded; an event from before issue 26 gets one from its
    conflicts."""
    why = proposal.get("why")
    if isinstance(why, str) and why:
        return why[:MAX_WHY_CHARS]
    conflicts = [c.get("fact_id") for c in proposal.get("conflicts", []) if isinstance(c, dict)]
    if conflicts:
        return "conflicts with " + ", ".join(f"#{c}" for c in conflicts)
    return "left for review by learning"


def _fact_ref(value: Any) -> dict[str, int]:
    fact_id, revision = value["fact_id"], value["revision"]
    if type(fact_id) is not int or type(revision) is not int:
        raise TypeError("fact reference")
    return {"fact_id": fact_id, "revision": revision}


def current_revision(facts: FactStore, fact_id: int) -> int | None:
    """The fact's current revision; None when it is gone or suppressed."""
    fact = facts.get(fact_id)
    return None if fact is None or fact.suppressed else fact.revision


def _proposal_valid(sessions: SessionStore, facts: FactStore, proposal: dict[str, Any]) -> bool:
    try:
        ref = SourceRef.from_json(proposal["source"])
    except (LecodeError, KeyError, TypeError):
        return False
    if not isinstance(proposal.get("conflicts", []), list):
        return False
    valid = validate_source(sessions, ref, purpose="working", exclusions=facts)
    return valid.valid and all(
        current_revision(facts, c["fact_id"]) == c["revision"]
        for c in proposal.get("conflicts", [])
    )


def _learning_event(
    sessions: SessionStore, session_id: str, learning_seq: int, index: int
) -> dict[str, Any]:
    record = sessions.read(session_id, learning_seq, learning_seq)[0]
    if record.get("kind") != "event" or record.get("type") != "learning":
        raise InvalidParams(f"seq: {learning_seq} is not a learning event", field="seq")
    if not 0 <= index < len(record.get("proposals", [])):
        raise InvalidParams(f"index: the learning event has no proposal {index}", field="index")
    return record


def dismiss(sessions: SessionStore, session_id: str, learning_seq: int, index: int) -> None:
    """Record that the person dismissed proposal `index` of the learning event at
    `learning_seq`; `latest_learning` no longer shows it. Blocking."""
    _learning_event(sessions, session_id, learning_seq, index)
    sessions.append(
        session_id,
        {
            "kind": "event",
            "type": "proposal_dismissed",
            "learning_seq": learning_seq,
            "index": index,
        },
    )


def accept(
    sessions: SessionStore,
    facts: FactStore,
    session_id: str,
    learning_seq: int,
    index: int,
    remember: Callable[[str, SourceRef], tuple[int, int]],
) -> tuple[int, int]:
    """Accept proposal `index` of the learning event at `learning_seq` in one step (issue 41):
    remember its text with its recorded evidence (`remember(text, source)`, the fact store's
    checks in its transaction), then dismiss it, so it is listed no more. Only a proposal that
    is still listed can be accepted, and not one that corrects a fact: that is a correction
    of the fact (`/memory correct`), which this does not guess. Returns (fact ID, revision),
    an existing fact's when it says the same already. Blocking."""
    record = _learning_event(sessions, session_id, learning_seq, index)
    dismissed = {
        (r.get("learning_seq"), r.get("index"))
        for seq in sessions.seqs_of_kind(session_id, DISMISSED)
        for r in sessions.read(session_id, seq, seq)
    }
    status = _status(sessions, facts, session_id, record, facts.generation(), dismissed)
    listed = next((p for p in status["proposals"] if p["index"] == index), None)
    if listed is None:
        raise InvalidParams(
            f"index: proposal {index} is no longer listed (dismissed, accepted, or its "
            "evidence changed)",
            field="index",
        )
    if listed["conflicts"]:
        ids = ", ".join(f"#{c['fact_id']}" for c in listed["conflicts"])
        raise InvalidParams(
            f"index: proposal {index} corrects fact {ids}: correct that fact instead",
            field="index",
        )
    answer = remember(listed["text"], SourceRef.from_json(record["proposals"][index]["source"]))
    dismiss(sessions, session_id, learning_seq, index)
    return answer


def describe(learning: dict[str, Any] | None) -> str:
    """The learning status as `/memory facts` prints it (no rejected text, only codes)."""
    if learning is None:
        return "Learning: no automatic learning has run."
    line = f"Learning ({learning['session_id']}, seq {learning['seq']}): {learning['status']}"
    if learning["reason_counts"]:
        reasons = ", ".join(f"{code} {n}" for code, n in sorted(learning["reason_counts"].items()))
        line += f"; reasons: {reasons}"
    if learning["learned"]:
        line += "; learned " + ", ".join(f"#{f['fact_id']}" for f in learning["learned"])
    lines = [line]
    for proposal in learning["proposals"]:
        index = proposal["index"]
        seqs = proposal["source"]["seqs"]
        conflicts = ", ".join(f"#{c['fact_id']} r{c['revision']}" for c in proposal["conflicts"])
        lines.append(
            f"  proposal {index} ({proposal['kind']}, {proposal['source']['session_id']} "
            f"{seqs[0]}-{seqs[-1]}{', conflicts ' + conflicts if conflicts else ''}): "
            f"{proposal['text']}"
        )
        lines.append(f"    why: {proposal['why']}")
    if learning.get("omitted_proposals"):
        lines.append(
            f"  [{learning['omitted_proposals']} more proposal(s): accept or dismiss these first]"
        )
    return "\n".join(lines)
