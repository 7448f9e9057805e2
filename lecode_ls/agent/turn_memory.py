"""Where memory sits in a chat request, so that a new message only appends (issue 40).

Providers cache a request by its exact prefix (tools, system, messages). A memory section
rebuilt at every request put the facts ranked for each message into the system message, so every
new message changed the first message and the provider re-read everything. The layout now is:

1. the system message: the base prompt, the instruction files, and the session's *stable part*
   of memory (MEMORY.md, the scratchpad, and a facts block chosen once: pinned, anchored, ranked
   for the message that opened it, recent), within `STABLE_SHARE` of `facts_max_bytes`;
2. the history, exactly as earlier requests sent it;
3. each turn's own memory (the facts chosen for that turn's message that nothing before it in
   the request holds: new facts first, then those ranked for the message) in front of that
   turn's user message, within `TURN_SHARE` of `facts_max_bytes`.

Both kinds of block are recorded in the transcript as `memory_block` events when first sent:

    {"kind": "event", "type": "memory_block", "place": "stable" | "turn", "turn_id": ...,
     "user_seq": 12 (turn), "notes": "...", "files": [...], "since": "...Z",
     "notes_digest": "sha256:..." (stable), "facts": [{"fact_id" | "team_id", "revision",
     "reason", "line"}], "digest": "sha256:..."}

and every later request replays them: the same bytes, so the provider's cache holds. Each use
validates them again (I4): a block whose digest does not match its content (edited on disk),
that is malformed or larger than the caps is left out and logged; a fact line whose fact was
forgotten, corrected, retired, or whose evidence no longer validates is left out of its block.
The stable part is chosen again (one counted cache miss, a `cache_miss` event with its reason;
a forget since the last request is one too, `forget`) when MEMORY.md or the scratchpad changed (carrying two versions of a note would mislead the
model and double its bytes), when the turns' blocks have used the facts allocation up, when its
record is bad, and after a compaction or clear (its record is then behind the cutoff). Only the
blocks after the stable part in use are replayed. Over everything replayed the caps hold: all
memory within `max_bytes` (I2), all facts blocks within `facts_max_bytes` (I3).

The team's shared facts (issue 29) are candidates like the person's own (memory/selection.py): in the
stable part or a turn's block, one line each in the same facts block, checked again at every
use (still on the checkout's shelf, the same line). A stable part recorded before, with its
team facts in a block apart, is chosen again once (`older_layout`).

Pure of LSP; blocking (the runner calls `plan` from a worker thread).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Protocol

from lecode_ls.agent import catalog
from lecode_ls.agent.preflight import BYTES_PER_TOKEN
from lecode_ls.memory.canonical import DIGEST_PREFIX, canonical_json
from lecode_ls.memory.injection import (
    MEMORY_HEADING,
    NOTES_FILES,
    TEAM_NOTE,
    InjectedMemory,
    Line,
    MemoryLimits,
    NoteShare,
    ProjectMemory,
    build_memory_section,
    fact_lines,
    facts_text,
    recorded_lines_valid,
)
from lecode_ls.memory.recall import LABEL
from lecode_ls.memory.selection import Candidate, Pick, Selection, candidate_key, candidates
from lecode_ls.memory.team import Shelf

log = logging.getLogger(__name__)

EVENT = "memory_block"
MISS = "cache_miss"
STABLE = "stable"
TURN = "turn"
STABLE_SHARE = 4
"""The stable part's facts take at most 1/STABLE_SHARE of `facts_max_bytes`."""
TURN_SHARE = 8
"""A turn's block takes at most 1/TURN_SHARE of `facts_max_bytes`: about six turns fit
beside the stable part before it is chosen again."""
TURN_HEADING = f"# Durable facts for this message ({LABEL})\n"
TURN_FACTS_HEADER = "One JSON object a line, each source validated for this request.\n"
"""Shorter than the stable part's header, and one heading, not two: a turn's block repeats at
every turn (bench.fact_lines)."""
TURN_TEAM_LINES = (
    f"A line with team_id is a fact {TEAM_NOTE}; support (quote, read, claim) says what its "
    "bundled records show of the text.\n"
)
MIN_SHARE = 720
"""Bytes a turn's block may take at least, however small the window (its heading, 162 bytes,
and two facts of a typical size: 261 bytes a line, bench.fact_lines), as far as the caps leave
them."""
MIN_STABLE = 1000
"""The stable part holds facts only when its share is at least this (its longer header and two
facts): with a small window every fact goes to the turns' blocks."""
MESSAGE_HEADING = "\n# My message\n\n"
"""Between a turn's memory and the person's message, in the same user message (a second user
message in a row is refused by some chat templates)."""


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


@dataclass(frozen=True)
class Block:
    """One recorded memory block, as its record says (`lines` may be fewer once validated)."""

    place: str
    lines: tuple[Line, ...]
    notes: str = ""
    files: tuple[str, ...] = ()
    notes_digest: str = ""
    since: str = ""
    user_seq: int | None = None
    seq: int | None = None
    cut: tuple[tuple[str, int, int], ...] = ()
    """Each note cut to fit: its name, its bytes, the bytes shown (the chat's memory line)."""
    empty_team: bool = False
    """Recorded before team facts joined the facts block, with none (`"team": ""`)."""

    def facts_text(self) -> str:
        if self.place == TURN:
            return facts_text(self.lines, TURN_FACTS_HEADER, TURN_TEAM_LINES)
        return facts_text(self.lines)

    def text(self) -> str:
        if self.place == TURN:  # its one heading, then the block without its blank line
            return TURN_HEADING + self.facts_text()[1:] if self.lines else ""
        body = self.notes + self.facts_text()
        return MEMORY_HEADING + body[1:] if body else ""

    def facts_bytes(self) -> int:
        """What of the block counts against `facts_max_bytes`: a turn's whole block."""
        if self.place == TURN:
            return _size(self.text())
        return _size(self.facts_text())

    def content(self) -> dict[str, Any]:
        value: dict[str, Any] = {
            "place": self.place,
            "facts": [
                {"team_id" if x.team_id else "fact_id": x.team_id or x.fact_id,
                 "revision": x.revision, "reason": x.reason, "line": x.line}
                for x in self.lines
            ],
        }  # fmt: skip
        if self.place == STABLE:
            value.update(
                notes=self.notes,
                cut=[list(note) for note in self.cut],
                files=list(self.files),
                notes_digest=self.notes_digest,
                since=self.since,
            )
            if self.empty_team:
                value["team"] = ""
        else:
            value["user_seq"] = self.user_seq
        return value

    def record(self, turn_id: str) -> dict[str, Any]:
        content = self.content()
        return {"kind": "event", "type": EVENT, "turn_id": turn_id, **content,
                "digest": digest(content)}  # fmt: skip


OLDER = "an older layout (its team facts in a block apart)"


def _line(fact: dict[str, Any]) -> Line:
    revision, reason, line = int(fact["revision"]), str(fact["reason"]), str(fact["line"])
    if "team_id" in fact:
        return Line(0, revision, reason, line, str(fact["team_id"]))
    return Line(int(fact["fact_id"]), revision, reason, line)


def digest(content: dict[str, Any]) -> str:
    return DIGEST_PREFIX + hashlib.sha256(canonical_json(content)).hexdigest()


def parse(record: dict[str, Any]) -> Block | str:
    """The block a `memory_block` event records, or why it cannot be used."""
    try:
        place = record["place"]
        lines = tuple(_line(fact) for fact in record["facts"])
        if place == STABLE:
            if record.get("team", ""):
                return OLDER
            block = Block(
                STABLE,
                lines,
                notes=str(record["notes"]),
                empty_team="team" in record,
                files=tuple(str(name) for name in record["files"]),
                cut=tuple((str(n), int(b), int(s)) for n, b, s in record["cut"]),
                notes_digest=str(record["notes_digest"]),
                since=str(record["since"]),
                seq=record.get("seq"),
            )
        elif place == TURN:
            block = Block(TURN, lines, user_seq=int(record["user_seq"]), seq=record.get("seq"))
        else:
            return "an unknown place"
    except (KeyError, TypeError, ValueError):
        return "a malformed record"
    if block.content() != {k: record.get(k) for k in block.content()}:
        return "a malformed record"
    if record.get("digest") != digest(block.content()):
        return "a digest that does not match its content (edited on disk)"
    return block


def notes_digest(runtime: ProjectMemory) -> str:
    """What the stable part's notes were built from: a change to either file rebuilds it."""
    texts = [runtime.markdown.read(name)[0] for name in NOTES_FILES]
    return digest({"notes": texts})


MEMORY_SHARE = 0.25
"""Memory (every block a request carries) takes at most this share of the prompt budget (the
window less the room kept for the answer), counted as the preflight counts, 3 UTF-8 bytes a
token. The tools take what they take (about 2,100 estimated tokens with memory on). With an
8,192-token window and 1,024 kept for the answer memory gets about 5.2 KiB; with 4,096 and
512, about 2.6 KiB (every fact then goes to the turns' blocks: MIN_STABLE)."""


@dataclass(frozen=True)
class Caps:
    """The caps over all the memory a request carries: `max_bytes` (I2) and the facts'
    allocation within it (I3)."""

    max_bytes: int
    facts_max: int


def window_caps(memory: MemoryLimits, budget_tokens: int | None) -> Caps:
    """The settings' caps, shrunk to MEMORY_SHARE of a known prompt budget."""
    max_bytes = memory.max_bytes
    if budget_tokens is not None:
        max_bytes = min(max_bytes, int(budget_tokens * MEMORY_SHARE * BYTES_PER_TOKEN))
    return Caps(max_bytes, min(memory.facts_max_bytes, max_bytes))


class Budgeted(Protocol):
    """What `caps_for` reads of a turn's options (`runner.TurnOptions` is one)."""

    model: str
    context_window: int | None
    buffer_tokens: int

    def answer_cap(self) -> int: ...


def caps_for(memory: MemoryLimits, options: Budgeted) -> Caps:
    """The caps of a turn's requests: the settings', shrunk with the model's window when it is
    known (the preflight's budget: the window less the room kept for the answer)."""
    window = catalog.context_window(options.model, options.context_window)
    if window is None:
        return window_caps(memory, None)
    reserved = max(options.buffer_tokens, options.answer_cap())
    return window_caps(memory, max(0, window - reserved))


@dataclass
class Plan:
    """A request's memory: the stable part's text, each turn block's text by its user message's
    seq, the records to append before the request (new blocks, cache misses), and what the
    request shows (for the `memory` event)."""

    stable: str
    beside: dict[int, str]
    records: list[dict[str, Any]] = field(default_factory=list)
    shown: InjectedMemory = field(default_factory=lambda: InjectedMemory(""))


def plan(
    runtime: ProjectMemory,
    records: Sequence[dict[str, Any]],
    user_seq: int,
    selection: Selection,
    read_paths: set[str],
    team: Shelf | None,
    turn_id: str,
    caps: Caps | None = None,
) -> Plan:
    """The memory of the next request of the turn whose user message is at `user_seq`, from
    the working view's `records` (those the transcript holds after the summary's cutoff), under
    `caps` (default: the settings' own)."""
    caps = caps or window_caps(runtime.settings.memory, None)
    max_bytes, facts_max = caps.max_bytes, caps.facts_max
    new: list[dict[str, Any]] = []
    stable, turns, why = _recorded(runtime, records)
    turn = next((b for b in turns if b.user_seq == user_seq), None)
    dropped = _validate(runtime, team, stable, turns, caps)
    stable, turns = dropped.stable, dropped.turns
    used = _used(stable, turns)
    share = max(facts_max // TURN_SHARE, MIN_SHARE)
    # No room left for this turn's block: the stable part is chosen again, unless that would
    # only repeat it (no turn block to drop, facts shown already).
    full = (
        stable is not None
        and turn is None
        and (used[1] + share > facts_max or used[0] + share > max_bytes)
        and (bool(turns) or not stable.lines)
    )
    if stable is None or full:
        chosen = _stable(runtime, read_paths, selection, team, caps)
        if stable is None or chosen.text() != stable.text() or turns:
            reason = why or ("memory_full" if full else None) or _without(records, user_seq)
            if reason is not None:
                new.append(_miss(turn_id, reason))
            new.append(chosen.record(turn_id))
            stable, turns, turn = chosen, [], None
            used = _used(stable, [])
    elif dropped.ids and dropped.ids != _last_dropped(records):
        new.append(_miss(turn_id, "fact_invalid", **dropped.ids))
    if turn is None:
        budget = min(share, facts_max - used[1], max_bytes - used[0])
        turn = _turn(runtime, team, stable, turns, read_paths, selection, user_seq, budget)
        if turn.lines:
            new.append(turn.record(turn_id))
            turns.append(turn)
    generation = runtime.facts.generation()
    if _generation_moved(records, generation):
        new.insert(0, _miss(turn_id, "forget"))  # older generated messages left the history
    for record in new:
        record["generation"] = generation  # outside the digest: bookkeeping, not content
    beside = {b.user_seq: b.text() for b in turns if b.user_seq is not None and b.lines}
    return Plan(stable.text(), beside, new, _shown(stable, turns))


def _without(records: Sequence[dict[str, Any]], user_seq: int) -> str | None:
    """`history_without_stable_part` when the history holds earlier messages but no stable
    part: after a compaction moved the cutoff past it, or in a session written before."""
    earlier = any(r.get("kind") == "message" and r.get("seq", user_seq) < user_seq for r in records)
    return "history_without_stable_part" if earlier else None


def _generation_moved(records: Sequence[dict[str, Any]], generation: int) -> bool:
    """Whether a forget happened since the last request recorded its memory: every older
    generated message left the history (E2), a miss the server caused."""
    for record in reversed(records):
        if record.get("kind") == "event" and record.get("type") in (EVENT, MISS):
            stamp = record.get("generation")
            return type(stamp) is int and stamp != generation
    return False


@dataclass
class _Checked:
    stable: Block | None
    turns: list[Block]
    ids: dict[str, list[Any]]
    """The facts whose lines were left out: `fact_ids` (own), `team_ids` (shared)."""


def _recorded(
    runtime: ProjectMemory, records: Sequence[dict[str, Any]]
) -> tuple[Block | None, list[Block], str | None]:
    """The stable part in use and the turn blocks after it, and why a recorded stable part
    cannot be used (None when there is none: a new session, or one compacted or cleared)."""
    stable: Block | None = None
    why: str | None = None
    turns: list[Block] = []
    events = [r for r in records if r.get("kind") == "event" and r.get("type") == EVENT]
    for record in events:
        block = parse(record)
        if isinstance(block, str):
            log.warning("memory block at seq %s left out: %s", record.get("seq"), block)
            if record.get("place") == STABLE:
                stable, why, turns = None, "older_layout" if block == OLDER else "bad_block", []
            continue
        if block.place == STABLE:
            stable, why, turns = block, None, []
        else:
            turns.append(block)
    if stable is not None and stable.notes_digest != notes_digest(runtime):
        return None, [], "notes_changed"
    return stable, turns, why


def _validate(
    runtime: ProjectMemory, team: Shelf | None, stable: Block | None, turns: list[Block], caps: Caps
) -> _Checked:
    """The blocks with every line that no longer validates left out, and blocks past the caps
    (a record grown on disk, or caps lowered since) left out whole."""
    blocks = ([stable] if stable is not None else []) + turns
    every = [line for block in blocks for line in block.lines]
    valid = recorded_lines_valid(runtime, team, every)
    left = [every[i] for i in range(len(every)) if i not in valid]
    gone: dict[str, list[Any]] = {}
    if own := sorted({x.fact_id for x in left if not x.team_id}):
        gone["fact_ids"] = own
    if shared := sorted({x.team_id for x in left if x.team_id}):
        gone["team_ids"] = shared
    kept: list[Block] = []
    index = 0
    for block in blocks:
        lines = []
        for line in block.lines:
            if index in valid:
                lines.append(line)
            index += 1
        kept.append(_with_lines(block, lines))
    checked = _Checked(None, [], gone)
    total, facts = 0, 0
    facts_max = caps.facts_max
    for block in kept:
        size, facts_size = _size(block.text()), block.facts_bytes()
        if total + size > caps.max_bytes or facts + facts_size > facts_max:
            log.warning("memory block at seq %s left out: larger than the caps", block.seq)
            if block.place == STABLE:
                return _Checked(None, [], gone)
            continue
        total, facts = total + size, facts + facts_size
        if block.place == STABLE:
            checked.stable = block
        else:
            checked.turns.append(block)
    return checked


def _with_lines(block: Block, lines: list[Line]) -> Block:
    return replace(block, lines=tuple(lines))


def _used(stable: Block | None, turns: Sequence[Block]) -> tuple[int, int]:
    """(bytes of memory, bytes of facts) the replayed blocks carry."""
    blocks = ([stable] if stable is not None else []) + list(turns)
    return sum(_size(b.text()) for b in blocks), sum(b.facts_bytes() for b in blocks)


def _stable(
    runtime: ProjectMemory,
    read_paths: set[str],
    selection: Selection,
    team: Shelf | None,
    caps: Caps,
) -> Block:
    share = caps.facts_max // STABLE_SHARE
    share = share if share >= MIN_STABLE else 0
    section = build_memory_section(
        runtime, read_paths, selection, team, facts_share=share, max_bytes=caps.max_bytes
    )
    return Block(
        STABLE,
        tuple(section.lines),
        notes=section.notes_text,
        files=tuple(section.files),
        cut=tuple((n.name, n.bytes, n.shown) for n in section.notes if n.cut),
        notes_digest=notes_digest(runtime),
        since=utc_now(),
    )


def _turn(
    runtime: ProjectMemory,
    team: Shelf | None,
    stable: Block,
    turns: Sequence[Block],
    read_paths: set[str],
    selection: Selection,
    user_seq: int,
    budget: int,
) -> Block:
    """The turn's block: the facts (own and shared) chosen for its message that no replayed
    block holds, the own facts written since the stable part was chosen first (newest first),
    within `budget` bytes."""
    held = {line.team_id or line.fact_id for b in (stable, *turns) for line in b.lines}
    picks = [
        p for p in candidates(runtime, selection, read_paths, team) if candidate_key(p) not in held
    ]
    overhead = _size(TURN_HEADING) - 1  # fact_lines counts the blank line `text` leaves out
    if not picks or budget <= overhead + _size("\n" + TURN_FACTS_HEADER):
        return Block(TURN, (), user_seq=user_seq)
    found = runtime.facts.get_many(p.fact_id for p in picks if isinstance(p, Pick))
    fresh = [
        p for p in picks
        if isinstance(p, Pick) and (f := found.get(p.fact_id)) and f.created_at >= stable.since
    ]  # fmt: skip
    fresh.sort(key=lambda p: found[p.fact_id].created_at, reverse=True)
    ordered: list[Candidate] = [*fresh, *(p for p in picks if p not in fresh)]
    lines = fact_lines(
        runtime, ordered, team, budget - overhead, TURN_FACTS_HEADER, TURN_TEAM_LINES
    )
    return Block(TURN, tuple(lines), user_seq=user_seq)


def _shown(stable: Block, turns: Sequence[Block]) -> InjectedMemory:
    blocks = [stable, *turns]
    lines = [line for block in blocks for line in block.lines]
    own = [line for line in lines if not line.team_id]
    return InjectedMemory(
        stable.text(),
        [(x.fact_id, x.revision) for x in own],
        list(stable.files),
        sum(_size(b.text()) for b in blocks),
        {x.fact_id: x.reason for x in own},
        [NoteShare(name, size, shown) for name, size, shown in stable.cut],
        [x.team_id for x in lines if x.team_id],
    )


def _miss(turn_id: str, reason: str, **fields: Any) -> dict[str, Any]:
    """A cache miss the server causes itself, recorded with its reason (issue 40 item 4)."""
    return {"kind": "event", "type": MISS, "turn_id": turn_id, "reason": reason, **fields}


def _last_dropped(records: Sequence[dict[str, Any]]) -> dict[str, list[Any]]:
    """The facts the last `fact_invalid` miss left out: the same ones again are no new miss."""
    for record in reversed(records):
        if record.get("type") == MISS and record.get("reason") == "fact_invalid":
            return {key: record[key] for key in ("fact_ids", "team_ids") if key in record}
    return {}


def beside(block: str, message: str) -> str:
    """A user message's content with its turn's memory in front of it."""
    return block + MESSAGE_HEADING + message if block else message


def with_memory(
    history: Sequence[dict[str, Any]], user_seqs: Sequence[int], placed: dict[int, str]
) -> list[dict[str, Any]]:
    """The history with each turn's memory block in front of its user message; `user_seqs`
    are the seqs of the history's user messages, in order (each user record replays as one)."""
    out: list[dict[str, Any]] = []
    users = iter(user_seqs)
    for message in history:
        if message.get("role") == "user":
            block = placed.get(next(users, -1))
            if block and isinstance(message.get("content"), str):
                message = {**message, "content": beside(block, message["content"])}
        out.append(message)
    return out


def utc_now() -> str:
    """Now, as the fact store writes `created_at` (memory/facts/schema.py): the two are compared."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
