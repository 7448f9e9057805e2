"""Working memory: what of a session the model sees, and what the next compaction may cover.

One visibility predicate serves replay, lineage validation and compaction (E2, C7): a record
takes part when it is not undone, comes after the last clear, is not excluded by a forget, and,
for generated messages (assistant, tool, system), carries the project's current exclusion
generation. A forget advances the generation, so every older generated message drops out of the
working context project-wide (E2), legacy ones without a stamp included; user messages stay.

A compact event (C5) is a transcript event:

    {"kind": "event", "type": "compact", "summary": "...", "covered_through": 41,
     "lineage": [{"session_id", "seqs": [...], "digest"}, ...],   # cumulative, <= 200 positions each
     "prior": {"seq": 30, "digest": "sha256:..."} | null,
     "generation": 3, "model": "...", "usage": {...} | null}

It is valid (C7) only while its generation is the current one (a forget makes every summary
inert, E5), every lineage chunk still validates (digest, not undone, not cleared, not excluded),
its lineage covers exactly the participating messages up to `covered_through`, and its prior is
the record it names, unchanged. The working summary is the latest valid compact event; when the
latest ones are inert, an older valid one is used, or none: raw history is replayed and the next
compaction rebuilds lazily.

Everything here is blocking and pure of LSP; the runner calls it from worker threads.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from lecode_ls.errors import LecodeError
from lecode_ls.memory.canonical import records_digest
from lecode_ls.memory.facts import FactStore
from lecode_ls.memory.sessions import SessionStore, Visibility
from lecode_ls.memory.sources import MAX_POSITIONS, SourceRef, judge_source

MIN_RAW_MESSAGES = 4
"""Messages that always stay raw after the cutoff (C3)."""


@dataclass(frozen=True)
class WorkingView:
    """A session as the next provider request sees it."""

    session_id: str
    generation: int
    summary: dict[str, Any] | None
    """The valid compact event in use, or None."""
    records: tuple[dict[str, Any], ...]
    """Every participating record after the summary's cutoff (messages and events), in order."""
    all_records: tuple[dict[str, Any], ...]
    """Every participating record of the session (after the last clear)."""
    by_seq: dict[int, dict[str, Any]]
    """Every record of the session by seq, participating or not (digests cover them all)."""

    @property
    def covered_through(self) -> int:
        return int(self.summary["covered_through"]) if self.summary else 0

    @property
    def messages(self) -> list[dict[str, Any]]:
        return [r for r in self.records if r["kind"] == "message"]


def participates(
    record: dict[str, Any], visibility: Visibility, excluded: frozenset[int], generation: int
) -> bool:
    """The one visibility predicate of the working context (see the module docstring)."""
    seq = record["seq"]
    if not visibility.visible(seq, "working") or seq in excluded:
        return False
    if record["kind"] != "message" or record["role"] == "user":
        return True
    meta = record.get("meta")
    stamp = meta.get("generation") if isinstance(meta, dict) else None
    if stamp is None:  # legacy or imported: valid until the project's first forget
        return generation == 0
    # Equal, not "at least": an honest stamp is never ahead of the store, and one that is (an
    # import from another project, a hand edit) must not outlive every forget.
    return type(stamp) is int and stamp == generation


def working_view(sessions: SessionStore, facts: FactStore, session_id: str) -> WorkingView:
    """Read the session once and find its working summary. Blocking."""
    generation = facts.generation()
    length = sessions.length(session_id)
    if length <= 1:
        return WorkingView(session_id, generation, None, (), (), {})
    read = sessions.read_range(session_id, 1, length - 1)
    excluded = facts.excluded_seqs(session_id)
    records = tuple(
        r for r in read.records if participates(r, read.visibility, excluded, generation)
    )
    by_seq = {r["seq"]: r for r in read.records}
    summary = None
    for record in reversed(records):
        if (
            record["kind"] == "event"
            and record["type"] == "compact"
            and valid_compact(
                session_id, record, records, by_seq, generation, read.visibility, excluded
            )
        ):
            summary = record
            break
    cutoff = int(summary["covered_through"]) if summary else 0
    after = tuple(r for r in records if r["seq"] > cutoff and r is not summary)
    return WorkingView(session_id, generation, summary, after, records, by_seq)


def covered_messages(records: Iterable[dict[str, Any]], through: int) -> list[int]:
    """The seqs of the participating messages a summary through `through` must cover."""
    return [r["seq"] for r in records if r["kind"] == "message" and r["seq"] <= through]


def valid_compact(
    session_id: str,
    event: dict[str, Any],
    records: Sequence[dict[str, Any]],
    by_seq: dict[int, dict[str, Any]],
    generation: int,
    visibility: Visibility,
    excluded: frozenset[int],
) -> bool:
    """Whether a compact event may be used now (C7, E5); see the module docstring."""
    try:
        if event.get("generation") != generation or not isinstance(event.get("summary"), str):
            return False
        through = event["covered_through"]
        lineage = [SourceRef.from_json(chunk) for chunk in event["lineage"]]
        if any(ref.session_id != session_id for ref in lineage):
            return False
        cited = [seq for ref in lineage for seq in ref.seqs]
        if cited != covered_messages(records, through) or not cited:
            return False
        prior = event.get("prior")
        if prior is not None:
            record = by_seq.get(prior["seq"])
            if record is None or records_digest([record]) != prior["digest"]:
                return False
        # The transcript is already in memory: each chunk is judged on it, not read again.
        return all(
            judge_source(
                ref, [by_seq[seq] for seq in range(ref.first, ref.last + 1)], visibility, excluded
            ).valid
            for ref in lineage
        )
    except (KeyError, TypeError, ValueError, AttributeError, LecodeError):
        return False  # a hand-made or damaged event is inert, never an error


def lineage_chunks(
    session_id: str, seqs: Sequence[int], by_seq: dict[int, dict[str, Any]]
) -> list[SourceRef]:
    """`seqs` (increasing) as SourceRefs spanning at most 200 positions each (C5)."""
    chunks: list[list[int]] = []
    for seq in seqs:
        if chunks and seq - chunks[-1][0] < MAX_POSITIONS:
            chunks[-1].append(seq)
        else:
            chunks.append([seq])
    return [
        SourceRef(
            session_id,
            tuple(chunk),
            records_digest([by_seq[s] for s in range(chunk[0], chunk[-1] + 1)]),
        )
        for chunk in chunks
    ]


def exchanges(records: Sequence[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Records split at each user message: one exchange each (records before the first user
    message form one of their own)."""
    groups: list[list[dict[str, Any]]] = []
    for record in records:
        starts = record["kind"] == "message" and record["role"] == "user"
        if starts or not groups:
            groups.append([])
        groups[-1].append(record)
    return groups


def well_formed_calls(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool calls of an assistant record that have an ID and a function name; a hand-edited
    or imported record may hold anything, and what is malformed is left out, not fatal."""
    calls = record.get("tool_calls")
    if not isinstance(calls, list):
        return []
    return [
        call
        for call in calls
        if isinstance(call, dict)
        and isinstance(call.get("id"), str)
        and isinstance(call.get("function"), dict)
        and isinstance(call["function"].get("name"), str)
    ]


def coverable(view: WorkingView) -> list[list[dict[str, Any]]]:
    """The exchanges after the cutoff that the next compaction may cover, oldest first (C3).

    Never the last exchange: it may still be running (a turn compacts before its next request).
    Every earlier one is history once the person has moved on, even one a turn was stopped in or
    one whose answer a forget took out of the working context (E2): neither is an answer still to
    come. Coverage ends at an exchange boundary, so no tool call is separated from its result,
    and at least MIN_RAW_MESSAGES messages stay raw after it.
    """
    groups = exchanges(view.records)[:-1]
    chosen: list[list[dict[str, Any]]] = []
    remaining = len(view.messages)
    for group in groups:
        size = sum(1 for r in group if r["kind"] == "message")
        if remaining - size < MIN_RAW_MESSAGES:
            break
        chosen.append(group)
        remaining -= size
    return chosen
