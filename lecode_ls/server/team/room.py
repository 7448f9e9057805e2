"""What the team's facts bring to the server (rooms.py): the poll that reads a pull or a branch
switch (watch.py), and a new runtime's shared facts checked against the open buffers."""

from __future__ import annotations

from urllib.parse import unquote

from lecode_ls.platform.paths import path_to_uri
from lecode_ls.runtime import Runtime
from lecode_ls.server.rooms import Room
from lecode_ls.server.server import LecodeServer
from lecode_ls.server.team.watch import watch_team


def room(ls: LecodeServer) -> Room:
    async def opened(runtime: Runtime) -> None:
        # Shared facts' anchors are checked against the open buffers (memory/team).
        runtime.team.buffers = lambda checkout, rel: ls.buffers.text(
            unquote(path_to_uri(checkout / rel))
        )

    return Room("team", tasks={"watch-team": lambda: watch_team(ls)}, opened=opened)
