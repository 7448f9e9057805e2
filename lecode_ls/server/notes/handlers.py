"""Handlers of the project and Markdown-memory methods.

Each handler takes validated params, runs the blocking core work in a worker thread, and returns
a result model. Errors are core `LecodeError`s; the boundary in `wiring` converts them.
"""

from __future__ import annotations

import asyncio
from typing import Any

from lecode_ls.actions import notes
from lecode_ls.memory.project import read_agents, read_instructions
from lecode_ls.server.act import act
from lecode_ls.server.notes import messages as p
from lecode_ls.server.server import LecodeServer
from lecode_ls.server.sessions.state import Followed
from lecode_ls.server.slash import run_command


async def ping(ls: LecodeServer, params: p.PingParams) -> p.PingResult:
    return p.PingResult()


async def project_info(ls: LecodeServer, params: p.ProjectInfoParams) -> p.ProjectInfoResult:
    runtime, _ = await ls.runtime(params.workspace_uri)
    info: dict[str, Any] = {}
    following = ls.rooms.get(Followed).get(runtime.project.root)
    if following is not None:
        info["following"] = p.FollowingStatus(
            agents=list(following.agents),
            polls=following.polls,
            appended=following.appended,
            last_poll=following.last_poll,
            compactions=following.compactions,
        )
    return p.ProjectInfoResult(
        project_root=str(runtime.project.root),
        slug=runtime.project.slug,
        store_path=str(runtime.store_path),
        memory_enabled=ls.settings.memory.enabled,
        **info,
    )


async def memory_list(ls: LecodeServer, params: p.MemoryListParams) -> p.MemoryListResult:
    runtime, _ = await ls.runtime(params.workspace_uri)
    files = await asyncio.to_thread(lambda: runtime.require_memory().list())
    return p.MemoryListResult(
        files=[p.MemoryFileInfo(file=f.file, bytes=f.bytes, modified=f.modified) for f in files]
    )


async def memory_read(ls: LecodeServer, params: p.MemoryReadParams) -> p.MemoryReadResult:
    runtime, _ = await ls.runtime(params.workspace_uri)
    store = runtime.require_memory()
    name = store.validate(params.file)
    known = store.cached(name)  # metadata only; the read itself goes to a worker thread
    if known is None:
        known = await asyncio.to_thread(store.read, name)
    content, exists = known
    return p.MemoryReadResult(file=name, content=content, exists=exists)


async def memory_write(ls: LecodeServer, params: p.MemoryWriteParams) -> p.MemoryWriteResult:
    runtime, folder_uri = await ls.runtime(params.workspace_uri)
    runtime.require_memory()
    written = await act(
        ls,
        runtime,
        lambda: notes.write(runtime, params.file, params.content, params.mode),
        folder_uri=folder_uri,
    )
    return p.MemoryWriteResult(file=written.file, bytes=written.count)


async def memory_edit(ls: LecodeServer, params: p.MemoryEditParams) -> p.MemoryEditResult:
    runtime, folder_uri = await ls.runtime(params.workspace_uri)
    runtime.require_memory()
    edited = await act(
        ls,
        runtime,
        lambda: notes.edit(runtime, params.file, params.search, params.replace),
        folder_uri=folder_uri,
    )
    return p.MemoryEditResult(file=edited.file, replacements=edited.count)


async def memory_search(ls: LecodeServer, params: p.MemorySearchParams) -> p.MemorySearchResult:
    runtime, _ = await ls.runtime(params.workspace_uri)
    store = runtime.require_memory()
    hits, truncated = await asyncio.to_thread(store.search, params.pattern)
    return p.MemorySearchResult(
        hits=[p.SearchHit(file=h.file, line=h.line, text=h.text) for h in hits],
        truncated=truncated,
    )


async def agents_read(ls: LecodeServer, params: p.AgentsReadParams) -> p.AgentsReadResult:
    folder = ls.folder_for(params.workspace_uri)
    runtime, _ = await ls.runtime(params.workspace_uri)
    content, exists = await asyncio.to_thread(read_agents, folder)
    used = len(content.encode("utf-8")) if exists else 0
    patterns = runtime.settings.agent.instruction_files
    items, problems = await asyncio.to_thread(read_instructions, folder, patterns, used=used)
    files = [
        p.InstructionFile(
            path=item.path, content=item.text, truncated=item.truncated, refused=item.refused
        )
        for item in items
    ]
    return p.AgentsReadResult(content=content, exists=exists, instructions=files, notes=problems)


async def memory_command(ls: LecodeServer, params: p.MemoryCommandArgs) -> str:
    return await run_command(ls, params.workspace_uri, params.text, wait=False)
