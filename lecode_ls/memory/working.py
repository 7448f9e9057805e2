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

Cost: compact events have an index code of their own, so the view finds them without parsing,
and reads (parses) only the records after the summary's cutoff. Validating the summary means
parsing and hashing everything it covers; that verdict (and the event) is remembered against a
sha256 of the transcript's raw bytes through the event, the generation, and the undone, cleared
and excluded positions before it. Any change to those bytes or that state (an edit, an undo, a
clear, a forget) makes the next view validate in full again. The digest itself is remembered by
the transcript while this process only appends to it (sessions/transcript.py, `prefix_digest`), so a turn
start after a summary costs what follows the summary, whatever the summary covers
(bench/compaction.py); a new process, or any other change to the file, pays one sha256 pass.

Everything here is blocking and pure of LSP; the runner calls it from worker threads.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from lecode_ls.errors import LecodeError
from lecode_ls.memory.canonical import records_digest
from lecode_ls.memory.facts import FactStore
from lecode_ls.memory.sessions import (
    COMPACT,
    MAX_POSITIONS,
    SessionStore,
    SourceRef,
    Visibility,
    judge_source,
)

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
    by_seq: dict[int, dict[str, Any]]
    """Every record after the cutoff by seq, participating or not (digests cover them all)."""
    cited: tuple[int, ...] = ()
    """The message seqs the summary's lineage cites (those it covers)."""

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


_Verdict = tuple[Any, dict[str, Any] | None, tuple[int, ...] | None]


class SummaryVerdicts:
    """What the working view found of each compaction summary it judged, kept while the bytes
    and exclusions it depends on stay the same: a turn rebuilds the view before every request,
    and re-validating a long lineage each time would re-read the transcript. One per runtime.

    Small: a valid entry holds its event, whose cumulative lineage grows with the session.
    """

    MAX = 32

    def __init__(self) -> None:
        # (session, compact seq) -> (fingerprint, the event if valid, the seqs it cites or None)
        self._known: dict[tuple[str, int], _Verdict] = {}
        self._lock = threading.Lock()  # runtimes are served from worker threads

    def get(self, key: tuple[str, int]) -> _Verdict | None:
        with self._lock:
            return self._known.get(key)

    def put(self, key: tuple[str, int], verdict: _Verdict) -> None:
        with self._lock:
            if len(self._known) >= self.MAX:
                self._known.clear()
            self._known[key] = verdict


def working_view(
    sessions: SessionStore,
    facts: FactStore,
    session_id: str,
    verdicts: SummaryVerdicts | None = None,
) -> WorkingView:
    """The session's working context: its valid summary, and what follows it. Blocking.

    `verdicts` (the runtime's) spares re-judging a summary whose inputs did not change; without
    it every summary is judged afresh."""
    verdicts = SummaryVerdicts() if verdicts is None else verdicts
    generation = facts.generation()
    length = sessions.length(session_id)
    if length <= 1:
        return WorkingView(session_id, generation, None, (), {})
    visibility = sessions.visibility(session_id)
    excluded = facts.excluded_seqs(session_id)
    summary: dict[str, Any] | None = None
    cited: tuple[int, ...] = ()
    for seq in reversed(sessions.seqs_of_kind(session_id, COMPACT)):
        if not visibility.visible(seq) or seq in excluded:
            continue
        # Everything a verdict depends on: the bytes through the event (its lineage, prior and
        # covered records all lie before it; the digest is remembered while the transcript is
        # only appended to), the generation, and the undone, cleared and excluded positions.
        fingerprint = (
            sessions.prefix_digest(session_id, seq),
            generation,
            frozenset(hidden for hidden in visibility.hidden if hidden <= seq),
            visibility.cleared_before,
            frozenset(gone for gone in excluded if gone <= seq),
        )
        key = (session_id, seq)
        known = verdicts.get(key)
        if known is not None and known[0] == fingerprint:
            _, event, found = known
        else:
            event = sessions.read(session_id, seq, seq)[0]
            found = (
                _valid_lineage(sessions, session_id, event, visibility, excluded, generation)
                if event.get("generation") == generation  # else inert after a forget (E5)
                else None
            )
            # An invalid verdict keeps no event: only the summary in use is held in memory.
            verdicts.put(key, (fingerprint, event if found is not None else None, found))
        if found is not None and event is not None:
            summary, cited = event, found
            break
    cutoff = int(summary["covered_through"]) if summary else 0
    if cutoff + 1 > length - 1:
        return WorkingView(session_id, generation, summary, (), {}, cited)
    # The summary's own event usually follows its cutoff: it is not parsed a second time.
    parsed = {summary["seq"]: summary} if summary is not None else None
    tail = sessions.read_range(session_id, cutoff + 1, length - 1, known=parsed)
    records = tuple(
        r
        for r in tail.records
        if r is not summary
        and r["seq"] != (summary or {}).get("seq")
        and participates(r, tail.visibility, excluded, generation)
    )
    return WorkingView(
        session_id, generation, summary, records, {r["seq"]: r for r in tail.records}, cited
    )


def _valid_lineage(
    sessions: SessionStore,
    session_id: str,
    event: dict[str, Any],
    visibility: Visibility,
    excluded: frozenset[int],
    generation: int,
) -> tuple[int, ...] | None:
    """The seqs a compact event's lineage cites if the event is valid now (C7), else None."""
    try:
        through = event["covered_through"]
        lineage = [SourceRef.from_json(chunk) for chunk in event["lineage"]]
        cited = tuple(seq for ref in lineage for seq in ref.seqs)
        if (
            type(through) is not int
            or not cited
            or any(ref.session_id != session_id for ref in lineage)
        ):
            return None
        # The prior summary may lie after `through` (written during the exchange still in
        # progress then): what is read reaches it too.
        prior = event.get("prior")
        end = max(through, prior["seq"]) if prior is not None else through
        covered = sessions.read_range(session_id, 1, end)
        by_seq = {r["seq"]: r for r in covered.records}
        kept = [r for r in covered.records if participates(r, visibility, excluded, generation)]
        if list(cited) != covered_messages(kept, through):
            return None
        if prior is not None:
            record = by_seq.get(prior["seq"])
            if record is None or records_digest([record]) != prior["digest"]:
                return None
        valid = all(
            judge_source(
                ref, [by_seq[seq] for seq in range(ref.first, ref.last + 1)], visibility, excluded
            ).valid
            for ref in lineage
        )
    except (KeyError, TypeError, ValueError, AttributeError, LecodeError):
        return None  # a hand-made or damaged event is inert, never an error
    return cited if valid else None


def covered_messages(records: Iterable[dict[str, Any]], through: int) -> list[int]:
    """The seqs of the participating messages a summary through `through` must cover."""
    return [r["seq"] for r in records if r["kind"] == "message" and r["seq"] <= through]


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
