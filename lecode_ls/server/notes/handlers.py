"""Handlers of the project and Markdown-memory methods.

Each handler takes validated params, runs the blocking core work in a worker thread, and returns
a result model. Errors are core `LecodeError`s; the boundary in `wiring` converts them.
"""

from __future__ import annotations

import asyncio
from datetime import date
from pathlib import Path

from lecode_ls.agent.permissions import ThreadAsk
from lecode_ls.commands import Invocation, run_memory_command
from lecode_ls.memory.project import read_agents
from lecode_ls.server.asking import ask_person, settings_policy
from lecode_ls.server.notes import messages as p
from lecode_ls.server.server import LecodeServer, facts_stamp


async def ping(ls: LecodeServer, params: p.PingParams) -> p.PingResult:
    return p.PingResult()


async def project_info(ls: LecodeServer, params: p.ProjectInfoParams) -> p.ProjectInfoResult:
    runtime, _ = await ls.runtime(params.workspace_uri)
    return p.ProjectInfoResult(
        project_root=str(runtime.project.root),
        slug=runtime.project.slug,
        store_path=str(runtime.store_path),
        memory_enabled=ls.settings.memory.enabled,
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
    store = runtime.require_memory()
    name = store.validate(params.file)
    size = await asyncio.to_thread(store.write, name, params.content, params.mode)
    changed(ls, runtime.project.root, folder_uri, [name])
    return p.MemoryWriteResult(file=name, bytes=size)


async def memory_edit(ls: LecodeServer, params: p.MemoryEditParams) -> p.MemoryEditResult:
    runtime, folder_uri = await ls.runtime(params.workspace_uri)
    store = runtime.require_memory()
    name = store.validate(params.file)
    count = await asyncio.to_thread(store.edit, name, params.search, params.replace)
    changed(ls, runtime.project.root, folder_uri, [name])
    return p.MemoryEditResult(file=name, replacements=count)


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
    content, exists = await asyncio.to_thread(read_agents, folder)
    return p.AgentsReadResult(content=content, exists=exists)


async def memory_command(ls: LecodeServer, params: p.MemoryCommandArgs) -> str:
    return await run_command(ls, params.workspace_uri, params.text)


async def run_command(
    ls: LecodeServer, workspace_uri: str | None, text: str, session_id: str | None = None
) -> str:
    """Run one `/memory` line (with or without the prefix) for the `lecode.memory` command,
    `lecode/command` and chat alike: the changes it makes obey `[agent] readonly` and
    `permissions`, asking the person where they say ask (T2, T4). `session_id` is the chat
    session it belongs to, if any."""
    runtime, _ = await ls.runtime(workspace_uri)
    settings = ls.settings

    async def ask(tool: str, summary: str) -> bool:
        return await ask_person(ls, "/memory", tool, summary)

    asker = ThreadAsk(ask, asyncio.get_running_loop())
    run = Invocation(
        policy=settings_policy(settings).asking(asker),
        readonly=settings.agent.readonly,
        session_id=session_id,
    )

    def work() -> tuple[str, bool]:
        before = facts_stamp(runtime)
        # The local calendar day: "today's log" is the person's today, not UTC's.
        output = run_memory_command(runtime, text, date.today(), run)
        return output, facts_stamp(runtime) != before

    try:
        output, facts_written = await asyncio.to_thread(work)
    except asyncio.CancelledError:  # a question still open is answered "deny"
        asker.cancel()
        raise
    if facts_written:  # /memory correct or forget changed the database
        await ls.facts_changed(runtime)
    return output


def changed(ls: LecodeServer, root: Path, folder_uri: str, files: list[str]) -> None:
    ls.send(
        "lecode/memory/didChange",
        p.MemoryDidChangeParams(workspace_uri=folder_uri, project_root=str(root), files=files),
    )
