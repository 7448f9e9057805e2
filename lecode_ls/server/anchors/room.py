"""What the code anchors bring to the server (rooms.py): their state between messages
(state.py), the poll of each checkout's Git state, and the re-check of the open documents when
a project's facts change (lsp.py)."""

from __future__ import annotations

from lecode_ls.runtime import Runtime
from lecode_ls.server.anchors import lsp
from lecode_ls.server.anchors.state import AnchorView
from lecode_ls.server.rooms import Room
from lecode_ls.server.server import LecodeServer


def room(ls: LecodeServer) -> Room:
    async def recheck(runtime: Runtime) -> None:
        await lsp.facts_changed(ls, runtime)

    return Room(
        "anchors",
        state=AnchorView(),
        tasks={"watch-checkouts": lambda: lsp.watch_checkouts(ls)},
        facts_changed=recheck,
    )
