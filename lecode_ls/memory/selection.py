"""Which facts a provider request's memory section considers, in which order, and why (I3).

The facts allocation (`facts_max_bytes`) is filled greedily from this list; only which facts
are considered is decided here, never how much is shown (injection.py keeps the caps, the label,
whole facts only and validation at every use). The order, each fact once, under its first
reason:

1. `pinned`: the facts the person pinned (`lecode/facts/pin`, `/memory pin`), by ID;
2. `anchored in <path>`: facts anchored in a file open in the editor or read by the
   conversation (or in a file Git says was renamed to it), by ID;
3. `matched: <words>`: the facts that rank highest (BM25, facts/ranked.py) for the turn's user
   message (fused by reciprocal rank with the facts nearest its embedding when
   `[memory] embeddings_model` is set: those found only so are `similar in meaning`), then for
   the conversation's earlier user messages and the paths of the open and read files together;
4. `recent`: the facts most recently shown to a model, learned or corrected, newest first;
5. `shared in the repository`: the rest of the team's shared facts (issue 29), by team ID.

The team's shared facts (a checkout's `Shelf`, memory/team) go through the same tiers as the
person's own: those anchored in the same files join tier 2, and for each query the shared texts'
ranking (the same words, tokenizer and BM25 over their own index) is fused with the store's by
reciprocal rank, as the embeddings' list is. One selection, one ranking, one place to change it
(issue 40): a shared fact is a `SharedPick`, named by its team ID.

Each tier holds at most MAX_PER_TIER facts. A turn computes its `Selection` (tiers 1, 3 and 4:
what needs the store) once and keeps it for every provider request it makes, until the store's
changes counter moves (a fact written, corrected, forgotten, pinned or unpinned, here or in
another process): the same facts in the same order keep the prompt's prefix cacheable within
the turn. Tier 2 is recomputed at every request from the drift tracker (in memory, no query),
since a file read during the turn is new context. The reasons carry untrusted text (a person's
words, a path): they are shown as data, inside each fact's JSON line.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from lecode_ls.memory.anchors import DriftTracker
from lecode_ls.memory.facts import FactStore
from lecode_ls.memory.team import Shelf, TeamFact

log = logging.getLogger(__name__)

MAX_PER_TIER = 50
PINNED = "pinned"
RECENT = "recent"
SIMILAR = "similar in meaning"  # found by its embedding only (`[memory] embeddings_model`)
SHARED = "shared in the repository"  # a teammate's shared fact no other tier chose
MAX_REASON_PATH = 200  # characters of a path a reason names
RECENT_MESSAGES = 3  # earlier user messages of the conversation that join the second query


class Selecting(Protocol):
    """What selection reads of a project (`Runtime` is one)."""

    @property
    def facts(self) -> FactStore: ...
    @property
    def drift(self) -> DriftTracker: ...


@dataclass(frozen=True)
class Pick:
    """One candidate fact and why it was chosen."""

    fact_id: int
    reason: str


@dataclass(frozen=True)
class SharedPick:
    """One candidate shared fact of the team (memory/team), by its team ID, and why."""

    team_id: str
    reason: str


Candidate = Pick | SharedPick


@dataclass(frozen=True)
class QueryVector:
    """The embedding of a turn's message (`[memory] embeddings_model`, agent/embeddings.py)."""

    model: str
    values: tuple[float, ...]


@dataclass(frozen=True)
class TurnQuery:
    """What a turn ranks facts for."""

    message: str = ""
    """The turn's user message."""
    earlier: tuple[str, ...] = ()
    """The conversation's earlier user messages, newest first (at most RECENT_MESSAGES)."""
    paths: tuple[str, ...] = ()
    """The checkout-relative paths of the files open or read when the turn began."""
    vector: QueryVector | None = None
    """The message's embedding, when embeddings are on and the provider gave it in time."""


@dataclass(frozen=True)
class Selection:
    """The part of a turn's selection that needs the store (see the module docstring)."""

    changes: int
    """The store's changes counter when it was computed: stale once that moves."""
    pinned: tuple[Pick, ...] = ()
    ranked: tuple[Pick, ...] = ()
    recent: tuple[Pick, ...] = ()
    queries: tuple[str, ...] = ()
    """The texts the facts were ranked for, in order (the message, then the earlier messages
    with the paths): what the team's shared facts are ranked for too."""
    message_hits: int = 0
    """How many of `ranked` the first query (the message) found: the rest the second found."""


def select(memory: Selecting, query: TurnQuery) -> Selection:
    """The pinned, ranked and recent candidates for a turn. Blocking."""
    ranking = memory.facts.ranking
    changes = ranking.changes()  # first: a write meanwhile makes the next request recompute
    ranked: dict[int, Pick] = {}
    second = " ".join((*query.earlier[:RECENT_MESSAGES], *query.paths))
    queries = (query.message, second)
    message_hits = 0
    for number, text in enumerate(queries):
        if len(ranked) < MAX_PER_TIER and text.strip():
            hits = ranking.search(text, MAX_PER_TIER)
            picks: list[Candidate] = [Pick(hit.fact_id, _matched(hit.matched)) for hit in hits]
            if number == 0 and query.vector is not None:
                near = memory.facts.vectors.nearest(
                    query.vector.model, query.vector.values, MAX_PER_TIER
                )
                picks = fused(picks, [Pick(fact_id, SIMILAR) for fact_id, _ in near])
            for pick in picks:
                if isinstance(pick, Pick):
                    ranked.setdefault(pick.fact_id, pick)
        if number == 0:
            message_hits = min(len(ranked), MAX_PER_TIER)
    return Selection(
        changes,
        pinned=tuple(Pick(i, PINNED) for i in ranking.pinned(MAX_PER_TIER)),
        ranked=tuple(ranked.values())[:MAX_PER_TIER],
        recent=tuple(Pick(i, RECENT) for i in ranking.recent(MAX_PER_TIER)),
        queries=queries,
        message_hits=message_hits,
    )


RRF_K = 60
"""Reciprocal rank fusion's constant (Cormack et al. 2009): a fact's score is the sum over the
lists of 1 / (RRF_K + its rank there)."""


def fused(lexical: Sequence[Candidate], semantic: Sequence[Candidate]) -> list[Candidate]:
    """Two ranked lists as one, by reciprocal rank fusion (the BM25 list and the nearest-vector
    list, or the store's and the team's); a candidate in both keeps its first list's reason."""
    score: dict[Candidate, float] = {}
    first: dict[int | str, Candidate] = {}
    for ranking in (lexical, semantic):
        for rank, pick in enumerate(ranking, start=1):
            kept = first.setdefault(candidate_key(pick), pick)
            score[kept] = score.get(kept, 0.0) + 1.0 / (RRF_K + rank)
    return sorted(score, key=lambda pick: -score[pick])


def candidate_key(pick: Candidate) -> int | str:
    """What names a candidate: an own fact's ID, a shared fact's team ID."""
    return pick.fact_id if isinstance(pick, Pick) else pick.team_id


def _matched(words: Sequence[str]) -> str:
    return "matched: " + ", ".join(words) if words else "matched"


def current(memory: Selecting, selection: Selection | None, query: TurnQuery) -> Selection:
    """`selection` while the store has not changed since it was computed, else a new one."""
    if selection is not None and selection.changes == memory.facts.ranking.changes():
        return selection
    return select(memory, query)


def anchored(memory: Selecting, read_paths: Iterable[str]) -> list[Pick]:
    """The facts anchored in files open in the editor or read by the conversation (or renamed
    to one of them, as Git tells), by ID, each with the first such file."""
    drift = memory.drift
    renamed = drift.renamed_into()
    where: dict[int, str] = {}
    for path in sorted(drift.open_paths() | set(read_paths)):
        for anchored_path in (path, *renamed.get(path, ())):
            for anchor in drift.anchors_in(anchored_path):
                where.setdefault(anchor.fact_id, path)
    return [
        Pick(fact_id, "anchored in " + _clip(where[fact_id]))
        for fact_id in sorted(where)[:MAX_PER_TIER]
    ]


def candidates(
    memory: Selecting,
    selection: Selection,
    read_paths: Iterable[str],
    shelf: Shelf | None = None,
) -> list[Candidate]:
    """Every candidate of one request, in order, each fact once under its first reason: the
    person's own facts and, with a `shelf`, the team's shared ones (the module docstring)."""
    split = selection.message_hits
    own_ranked = (selection.ranked[:split], selection.ranked[split:])
    tiers: list[Sequence[Candidate]] = [selection.pinned, anchored(memory, read_paths)]
    shared = _shared(memory, selection, read_paths, shelf) if shelf is not None else None
    if shared is None:
        tiers += [*own_ranked, selection.recent]
    else:
        anchored_shared, ranked_shared, rest = shared
        tiers.append(anchored_shared)
        for own, team in zip(own_ranked, ranked_shared, strict=True):
            tiers.append(fused(own, team)[:MAX_PER_TIER])
        tiers += [selection.recent, rest]
    seen: dict[int | str, Candidate] = {}
    for tier in tiers:
        for pick in tier:
            seen.setdefault(candidate_key(pick), pick)
    return list(seen.values())


def _shared(
    memory: Selecting, selection: Selection, read_paths: Iterable[str], shelf: Shelf
) -> tuple[list[SharedPick], list[list[SharedPick]], list[SharedPick]] | None:
    """The team's candidates: anchored, ranked for each of the two queries, and the rest; None
    when the shelf fails (files from a clone: whatever they hold, one's own are chosen)."""
    try:
        paths = memory.drift.open_paths() | set(read_paths)
        near = [
            SharedPick(f.id, "anchored in " + _clip(_first_anchored(f, paths)))
            for f in shelf.anchored_in(paths, MAX_PER_TIER)
        ]
        found = [*shelf.ranked(selection.queries, MAX_PER_TIER), [], []][:2]
        ranked = [[SharedPick(fact.id, _matched(words)) for fact, words in hits] for hits in found]
        rest = [SharedPick(f.id, SHARED) for f in shelf.injectable(MAX_PER_TIER)]
    except Exception:
        log.exception("the team's shared facts could not be chosen")
        return None
    return near, ranked, rest


def _first_anchored(fact: TeamFact, paths: set[str]) -> str:
    """The first of `paths` (sorted) that `fact` is anchored in."""
    mine = {anchor.path for anchor in fact.doc.anchors} if fact.doc is not None else set()
    return min(mine & paths, default="")


def turn_query(
    message: str,
    earlier: Sequence[str],
    paths: Iterable[str],
    vector: QueryVector | None = None,
) -> TurnQuery:
    """A turn's query: its message, the newest earlier user messages, the files' paths, and
    the message's embedding when there is one."""
    return TurnQuery(
        message,
        tuple(reversed(earlier[-RECENT_MESSAGES:])),
        tuple(sorted(set(paths)))[:200],
        vector,
    )


def _clip(path: str) -> str:
    return path if len(path) <= MAX_REASON_PATH else path[: MAX_REASON_PATH - 1] + "…"


@dataclass
class TurnSelection:
    """A turn's selection as it goes: computed at the first request, kept while the store is
    unchanged (`refresh`), and the facts it showed (recorded as used when the turn ends)."""

    query: TurnQuery | None = None
    selection: Selection | None = None
    shown: set[int] = field(default_factory=set)

    def refresh(self, memory: Selecting, query: TurnQuery) -> Selection:
        if self.query is None:
            self.query = query
        self.selection = current(memory, self.selection, self.query)
        return self.selection
