"""What the questions bring to the server (rooms.py): those waiting for an answer (state.py),
each a no when the server shuts down."""

from __future__ import annotations

from lecode_ls.server.questions.state import Questions
from lecode_ls.server.rooms import Room
from lecode_ls.server.server import LecodeServer


def room(ls: LecodeServer) -> Room:
    questions = Questions()

    async def shutdown() -> None:
        questions.close_all()

    return Room("questions", state=questions, shutdown=shutdown)
