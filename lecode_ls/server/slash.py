"""One `/memory` line from the editor (`lecode.memory`) or from chat (`lecode/command`, a chat
message): the slash command of tools/slash.py, with the server's questions and change news."""

from __future__ import annotations

import asyncio
from datetime import date

from lecode_ls.server.asking import ask_person
from lecode_ls.server.server import LecodeServer
from lecode_ls.tools.permissions import PermissionPolicy, ThreadAsk
from lecode_ls.tools.slash import Invocation, run_memory_command


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
        policy=PermissionPolicy.from_settings(settings).asking(asker),
        readonly=settings.agent.readonly,
        session_id=session_id,
    )

    def work() -> tuple[str, bool]:
        before = runtime.facts.ranking.changes()
        # The local calendar day: "today's log" is the person's today, not UTC's.
        output = run_memory_command(runtime, text, date.today(), run)
        return output, runtime.facts.ranking.changes() != before

    try:
        output, facts_written = await asyncio.to_thread(work)
    except asyncio.CancelledError:  # a question still open is answered "deny"
        asker.cancel()
        raise
    if facts_written:  # /memory correct, forget, pin or unpin changed the facts
        await ls.facts_changed(runtime)
    return output
