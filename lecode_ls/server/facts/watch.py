"""`lecode/facts/didChange`: the client hears that a project's facts changed, whoever changed
them.

A change made through this server is announced when the operation that made it says so
(server/act.py, from its `Done.changed`).
One made by another lecode-ls process on the same project (another editor window, `lecode-ls
mcp`) is noticed by `watch_facts`, a poll that stats the database and its WAL every second.
Either way every room's facts listener runs first (code anchors re-check the open documents,
fact vectors are filled: rooms.py), then the notification goes out.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path

from lecode_ls.platform.paths import path_to_uri
from lecode_ls.runtime import Runtime
from lecode_ls.server.facts.messages import FactsDidChangeParams
from lecode_ls.server.server import LecodeServer


@dataclass
class FactsSeen:
    """What this server last saw of each project's facts database."""

    stamps: dict[Path, tuple[int, ...]] = field(default_factory=dict)
    """Its file's and its WAL's modification time and size (`FactStore.stamp`)."""
    changes: dict[Path, int] = field(default_factory=dict)
    """Its changes counter (`FactStore.ranking.changes`): a write that only recorded a use
    moves the stamp, not this."""


async def opened(ls: LecodeServer, runtime: Runtime) -> None:
    """From now on, a change to the new runtime's facts by anyone is news."""
    seen = ls.rooms.get(FactsSeen)
    stamp = await asyncio.to_thread(runtime.facts.stamp)
    seen.stamps.setdefault(runtime.project.root, stamp)
    changes = await asyncio.to_thread(runtime.facts.ranking.changes)
    seen.changes.setdefault(runtime.project.root, changes)


async def facts_changed(ls: LecodeServer, runtime: Runtime) -> None:
    """Tell the client that `runtime`'s facts changed (P3), after every room's listener."""
    seen = ls.rooms.get(FactsSeen)
    generation = await asyncio.to_thread(runtime.facts.generation)
    root = runtime.project.root
    seen.stamps[root] = runtime.facts.stamp()
    seen.changes[root] = await asyncio.to_thread(runtime.facts.ranking.changes)
    await ls.rooms.facts_changed(runtime)
    ls.send(
        "lecode/facts/didChange",
        FactsDidChangeParams(
            workspace_uri=path_to_uri(root), project_root=str(root), generation=generation
        ),
    )


async def watch_facts(ls: LecodeServer, interval: float = 1.0) -> None:
    """Notice fact changes made by other lecode-ls processes on the same projects.

    A stat of the database and its WAL every `interval` seconds: every committed write
    changes one of them, and it costs nothing while nothing changes. Then the store's
    changes counter tells whether the facts changed, or only a use was recorded (a chat
    turn in any window records the facts it showed): only the first is news.
    """
    seen = ls.rooms.get(FactsSeen)
    while True:
        await asyncio.sleep(interval)
        for runtime in ls.runtimes.all():
            root = runtime.project.root
            stamp = await asyncio.to_thread(runtime.facts.stamp)
            if stamp == seen.stamps.setdefault(root, stamp):
                continue
            seen.stamps[root] = stamp
            changes = await asyncio.to_thread(runtime.facts.ranking.changes)
            if changes != seen.changes.get(root):
                await facts_changed(ls, runtime)
