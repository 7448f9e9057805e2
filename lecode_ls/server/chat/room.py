"""What chat brings to the server (rooms.py): its state between turns (state.py), the fact
vectors filled after a facts change, and the turns and compactions stopped when their project
closes or the server shuts down."""

from __future__ import annotations

from lecode_ls.runtime import Runtime
from lecode_ls.server.chat.state import Chat
from lecode_ls.server.rooms import Room
from lecode_ls.server.server import LecodeServer


def room(ls: LecodeServer) -> Room:
    chat = Chat()

    async def vectors(runtime: Runtime) -> None:
        # `[memory] embeddings_model`: a written fact gets its vector soon, in the background.
        if ls.settings.memory.embeddings_model is not None:
            ls.run_task(chat.fill_vectors(runtime, ls.settings), "fact-vectors")

    async def shutdown() -> None:
        await chat.stop()
        await chat.close()

    return Room("chat", state=chat, facts_changed=vectors, closed=chat.stop, shutdown=shutdown)
