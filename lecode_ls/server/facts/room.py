"""What the facts feature brings to the server (rooms.py): what it last saw of each project's
facts database, the poll that notices another process's changes, and the first sight of a new
runtime's facts (watch.py)."""

from __future__ import annotations

from lecode_ls.runtime import Runtime
from lecode_ls.server.facts.watch import FactsSeen, opened, watch_facts
from lecode_ls.server.rooms import Room
from lecode_ls.server.server import LecodeServer


def room(ls: LecodeServer) -> Room:
    async def on_open(runtime: Runtime) -> None:
        await opened(ls, runtime)

    return Room(
        "facts",
        state=FactsSeen(),
        tasks={"watch-facts": lambda: watch_facts(ls)},
        opened=on_open,
    )
