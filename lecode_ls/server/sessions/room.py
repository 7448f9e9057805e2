"""What the sessions feature brings to the server (rooms.py): following other agents'
transcripts (follow.py) and what it has done per project (state.py)."""

from __future__ import annotations

from lecode_ls.server.rooms import Room
from lecode_ls.server.server import LecodeServer
from lecode_ls.server.sessions.follow import follow_agents
from lecode_ls.server.sessions.state import Followed


def room(ls: LecodeServer) -> Room:
    return Room("sessions", state=Followed(), tasks={"follow-agents": lambda: follow_agents(ls)})
