"""The LSP door's one place of news: run an operation (lecode_ls/actions) in a worker thread and
tell the client what it changed (`lecode/facts/didChange` after every room's facts listener,
`lecode/memory/didChange` with the notes written)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TypeVar

from lecode_ls.actions import Changed, Done
from lecode_ls.platform.paths import path_to_uri
from lecode_ls.runtime import Runtime
from lecode_ls.server.facts.watch import facts_changed
from lecode_ls.server.notes.changes import notes_changed
from lecode_ls.server.server import LecodeServer

T = TypeVar("T")


async def act(
    ls: LecodeServer,
    runtime: Runtime,
    operation: Callable[[], Done[T]],
    *,
    folder_uri: str | None = None,
) -> T:
    """`operation()`'s value, once the client has heard what it changed. `folder_uri` is the
    request's folder (the notes' news names it; the project's root otherwise)."""
    done = await asyncio.to_thread(operation)
    await tell(ls, runtime, done.changed, folder_uri=folder_uri)
    return done.value


async def tell(
    ls: LecodeServer, runtime: Runtime, changed: Changed, *, folder_uri: str | None = None
) -> None:
    """The news of `changed`, for an operation run elsewhere (a chat tool, a `/memory` line)."""
    root = runtime.project.root
    if changed.notes:
        notes_changed(ls, root, folder_uri or path_to_uri(root), list(changed.notes))
    if changed.facts:
        await facts_changed(ls, runtime)
