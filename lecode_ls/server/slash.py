"""One `/memory` line from the editor (`lecode.memory`) or from chat (`lecode/command`, a chat
message): the slash command of tools/slash.py, with the server's questions and change news."""

from __future__ import annotations

import asyncio
from datetime import date
from typing import Any

from lecode_ls.server.act import tell
from lecode_ls.server.asking import ask_person, show_outcome
from lecode_ls.server.questions.state import Question
from lecode_ls.server.server import LecodeServer
from lecode_ls.tools.permissions import PermissionPolicy, ThreadAsk
from lecode_ls.tools.slash import Invocation, run_memory_command


async def run_command(
    ls: LecodeServer,
    workspace_uri: str | None,
    text: str,
    session_id: str | None = None,
    *,
    wait: bool = True,
) -> str:
    """Run one `/memory` line (with or without the prefix) for the `lecode.memory` command,
    `lecode/command` and chat alike: the changes it makes obey `[agent] readonly` and
    `permissions`, asking the person where they say ask (T2, T4). `session_id` is the chat
    session it belongs to, if any.

    With `wait` false (the `lecode.memory` command, whose client may time it out) a line that
    has to ask answers at once with the question; the line goes on when the answer comes and
    its output is shown then (`window/showMessage`)."""
    runtime, folder_uri = await ls.runtime(workspace_uri)
    settings = ls.settings
    asked: asyncio.Future[Question] = asyncio.get_running_loop().create_future()

    async def ask(tool: str, summary: str) -> bool:
        def opened(question: Question) -> None:
            if not asked.done():
                asked.set_result(question)

        return await ask_person(ls, "/memory", tool, summary, opened=None if wait else opened)

    asker = ThreadAsk(ask, asyncio.get_running_loop())
    run = Invocation(
        policy=PermissionPolicy.from_settings(settings).asking(asker),
        readonly=settings.agent.readonly,
        session_id=session_id,
    )

    async def finish() -> str:
        try:
            # The local calendar day: "today's log" is the person's today, not UTC's.
            output = await asyncio.to_thread(run_memory_command, runtime, text, date.today(), run)
        except asyncio.CancelledError:  # a question still open is answered "deny"
            asker.cancel()
            raise
        await tell(ls, runtime, run.changed, folder_uri=folder_uri)
        return output

    if wait:
        return await finish()
    task = asyncio.get_running_loop().create_task(finish())
    try:
        pending: list[asyncio.Future[Any]] = [task, asked]
        await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        task.cancel()
        raise
    if task.done():  # done without a question: the output is the command's result
        asked.cancel()
        return task.result()
    ls.run_task(
        show_outcome(ls, task, "lecode: /memory", "a /memory line"), "memory-command"
    )  # holds the task from now on
    question = asked.result()
    how = (
        "in the editor's prompt"
        if question.in_editor
        else f'with the code action "{question.yes_title}" or "{question.no_title}"'
    )
    return (
        f"{question.message}\nAnswer {how}: the command goes on then, and its output is "
        "shown as a message."
    )
