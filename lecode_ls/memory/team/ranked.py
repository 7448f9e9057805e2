"""The texts of a shelf's injectable shared facts, ranked for a turn's words as the person's own
facts are (facts.TextIndex: the store's words, tokenizer and bounds).

Indexing a text costs about 50 µs, and up to 2 ms for a 4 KiB one: a crafted clone's 10,000
texts would hold the first ranked request for seconds. So a request spends at most
INDEX_SECONDS indexing, and the next requests index the rest; until then, the facts not yet
indexed are found by their anchors and by ID only, as they were before ranking. The index has
its own lock: a listing, a refresh or a forget never waits on indexing.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence

from lecode_ls.memory.facts import TextIndex

INDEX_SECONDS = 0.5
"""Time one request may spend indexing texts."""
CHUNK = 64
"""Texts written to the index in one transaction (the deadline is checked between them)."""


class SharedRanking:
    """Team ID -> text, indexed as far as each request's time allowed. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._index = TextIndex()
        self._keys: dict[str, tuple[int, str]] = {}  # team ID -> (its key, the text indexed)
        self._ids: dict[int, str] = {}  # key -> team ID
        self._next_key = 1
        self._caught_up: object = None  # the generation of texts the index fully holds
        self.behind = 0
        """Texts the last request had no time to index."""

    def search(
        self,
        generation: object,
        texts: Mapping[str, str],
        queries: Sequence[str],
        most: int,
        seconds: float = INDEX_SECONDS,
    ) -> list[list[tuple[str, tuple[str, ...]]]]:
        """For each of `queries`, the team IDs that rank first (at most `most`), each with the
        words it matched, after indexing what changed in `texts` (team ID -> text) for at most
        `seconds`. `generation` changes whenever `texts` does: the same generation, fully
        indexed, costs no walk."""
        with self._lock:
            if generation != self._caught_up and self._catch_up(texts, time.monotonic() + seconds):
                self._caught_up = generation
            return [
                [(self._ids[hit.fact_id], hit.matched) for hit in self._index.search(query, most)]
                if query.strip()
                else []
                for query in queries
            ]

    def _catch_up(self, texts: Mapping[str, str], deadline: float) -> bool:
        """Write what changed; True when the index holds every text. The maps change only after
        the index did, so a failed write is tried again by the next request."""
        gone = [key for team_id, (key, _) in self._keys.items() if team_id not in texts]
        if gone:
            self._index.update((), gone)
            for key in gone:
                del self._keys[self._ids.pop(key)]
        todo = [(i, text) for i, text in texts.items() if self._keys.get(i, (0, None))[1] != text]
        self.behind = len(todo)
        for start in range(0, len(todo), CHUNK):
            if start and time.monotonic() > deadline:  # each request indexes one chunk at least
                return False
            chunk = todo[start : start + CHUNK]
            keys = [self._keys[i][0] if i in self._keys else self._next_key + n
                    for n, (i, _) in enumerate(chunk)]  # fmt: skip
            self._index.update(zip(keys, (text for _, text in chunk), strict=True), ())
            for key, (team_id, text) in zip(keys, chunk, strict=True):
                self._keys[team_id] = (key, text)
                self._ids[key] = team_id
            self._next_key = max(self._next_key, max(keys) + 1)
            self.behind -= len(chunk)
        return True
