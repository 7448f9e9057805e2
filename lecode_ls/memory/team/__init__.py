"""Team memory through Git (issue 29): facts shared as files in the repository, with their
evidence bundled, verified on every teammate's machine against the code they are anchored to.

format.py is the file (version 1, its JSON Schema and every bound), shelf.py one checkout's
shared facts read and verified, share.py the writing and removing of a file. `Team` holds the
shelves of one project, one a checkout (each worktree reads its own branch's).

Code outside this part imports only the names `__all__` lists (a test keeps it so).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from lecode_ls.memory.facts import FactStore, canonical_text
from lecode_ls.memory.team.format import BOUNDS, FOLDER, MAX_DIAGNOSTICS, SCHEMA, SharedDoc
from lecode_ls.memory.team.share import build, refuse_secrets, remove, shared_id, succeed, write
from lecode_ls.memory.team.shelf import Shelf, TeamFact, TextOf


class Team:
    """The shelves of one project's checkouts, made as they are asked for."""

    def __init__(self, facts: FactStore) -> None:
        self._facts = facts
        self._lock = threading.Lock()
        self._shelves: dict[Path, Shelf] = {}
        self.buffers: Callable[[Path, str], str | None] = lambda checkout, rel: None
        """The editor's open buffer of a checkout's file, by (checkout, relative path): the
        server sets it, and each shelf checks anchors against it."""

    def shelf(self, checkout: Path) -> Shelf:
        """The checkout's shelf, refreshed (cheap when nothing changed). Blocking."""
        shelf = self._shelf(checkout)
        shelf.refresh()
        return shelf

    def current(self, checkout: Path) -> Shelf:
        """The checkout's shelf as the last refresh left it (the server's poll refreshes every
        second), loaded first if it never was: what each provider request reads. Blocking."""
        shelf = self._shelf(checkout)
        if not shelf.loaded:
            shelf.refresh()
        return shelf

    def refresh(self, checkout: Path) -> bool:
        """Refresh the checkout's shelf; whether its listing changed. Blocking."""
        return self._shelf(checkout).refresh()

    def _shelf(self, checkout: Path) -> Shelf:
        with self._lock:
            shelf = self._shelves.get(checkout)
            if shelf is None:
                shelf = self._shelves[checkout] = Shelf(checkout, self._facts)
                shelf.buffer_text = lambda rel: self.buffers(checkout, rel)
            return shelf

    def shelves(self) -> list[Shelf]:
        with self._lock:
            return list(self._shelves.values())

    def shared_keys(self) -> set[str]:
        """The deduplication keys (`canonical_text`) of every valid shared fact of the shelves
        loaded: what learning must not propose again (the team already shares it)."""
        return {
            canonical_text(fact.doc.text)
            for shelf in self.shelves()
            for fact in shelf.facts()
            if fact.status == "valid" and fact.doc is not None
        }


__all__ = [
    "BOUNDS",
    "FOLDER",
    "MAX_DIAGNOSTICS",
    "SCHEMA",
    "SharedDoc",
    "Shelf",
    "Team",
    "TeamFact",
    "TextOf",
    "build",
    "refuse_secrets",
    "remove",
    "shared_id",
    "succeed",
    "write",
]
