"""The poll that brings a pull, a merge or a branch switch to the team's facts without a restart.

Every second, each project's checkouts (one a workspace folder's) have their shelf refreshed: a
listing of `.lecode/facts/` and a stat of each file, and a file read again only when it changed
(memory/team/shelf.py). When any listing changed, `lecode/facts/didChange` goes out, so fact
views refresh and the next provider request shows the new team facts.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from lecode_ls.memory.project import checkout_root
from lecode_ls.runtime import Runtime
from lecode_ls.server.facts.watch import facts_changed
from lecode_ls.server.server import LecodeServer

log = logging.getLogger(__name__)


def checkouts(runtime: Runtime) -> list[Path]:
    """The checkouts of the project's open folders (each linked worktree its own)."""
    folders = runtime.drift.folders
    found = {checkout_root(folder, folders) for folder in folders}
    return sorted(c for c in found if c is not None)


def poll(runtime: Runtime) -> bool:
    """Refresh every checkout's shelf; whether any listing changed. Blocking."""
    changed = False
    for checkout in checkouts(runtime):
        changed |= runtime.team.refresh(checkout)
    return changed


async def watch_team(ls: LecodeServer, interval: float = 1.0) -> None:
    while True:
        await asyncio.sleep(interval)
        for runtime in ls.runtimes.all():
            if not runtime.settings.memory.enabled or runtime.closed:
                continue
            try:
                changed = await asyncio.to_thread(poll, runtime)
            except Exception as exc:  # one unreadable checkout must not end the watch
                log.warning("shared facts not re-read: %s", type(exc).__name__)
                continue
            if changed:
                await facts_changed(ls, runtime)
