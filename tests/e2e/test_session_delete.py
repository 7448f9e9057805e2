"""`lecode/session/delete` (S6): a person deletes a session; the facts citing it become `missing`;
deletion is refused while a turn runs in it, here or in another window's server.

# covers S6, R7 (issue 11, item 6)
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.e2e.chat import Deltas, chat_client, hanging, running_turn
from tests.e2e.conftest import Start, call
from tests.e2e.facts import error_of, imported, remember
from tests.fakes.openai_server import FakeOpenAI


async def stop_turn(client: LanguageClient, turn: asyncio.Future[Any]) -> None:
    client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="turn"))
    assert (await asyncio.wait_for(turn, 10))["stopReason"] == "cancelled"


async def listed(client: LanguageClient) -> dict[str, int]:
    sessions = (await call(client, "lecode/session/list"))["sessions"]
    return {s["sessionId"]: s["citingFacts"] for s in sessions}


class TestDelete:
    async def test_the_facts_citing_a_deleted_session_become_missing(
        self, start: Start, repo: Path
    ) -> None:
        client = await start(repo)
        cited, other = await imported(client), await imported(client)
        first = await remember(client, cited, 3, "We use tabs.")
        await remember(client, cited, 1, "The build was fixed.")
        assert await listed(client) == {cited: 2, other: 0}

        changed = client.protocol.wait_for_notification_async("lecode/facts/didChange")
        result = await call(client, "lecode/session/delete", {"sessionId": cited})
        assert result == {"citingFacts": 2}
        await asyncio.wait_for(changed, 10)
        assert await listed(client) == {other: 0}
        recalled = await call(client, "lecode/facts/recall", {"factId": first["factId"]})
        assert recalled["status"] == "missing"
        error = await error_of(call(client, "lecode/session/delete", {"sessionId": cited}))
        assert error.data["code"] == "session_not_found"

    async def test_a_session_with_a_turn_running_is_not_deleted(
        self, start: Start, repo: Path
    ) -> None:
        async with FakeOpenAI() as server:
            server.push(hanging())
            client = await chat_client(start, repo, server)
            deltas = Deltas(client)
            session = await imported(client)
            turn = await running_turn(client, deltas, session)
            error = await error_of(call(client, "lecode/session/delete", {"sessionId": session}))
            assert error.data["code"] == "session_busy"
            await stop_turn(client, turn)
            assert session in await listed(client)

    async def test_a_session_attached_by_another_window_is_not_deleted(
        self, start: Start, repo: Path
    ) -> None:
        async with FakeOpenAI() as server:
            server.push(hanging())
            window = await chat_client(start, repo, server)
            deltas = Deltas(window)
            session = await imported(window)
            turn = await running_turn(window, deltas, session)
            other = await start(repo)  # a second editor window: its own server process
            error = await error_of(call(other, "lecode/session/delete", {"sessionId": session}))
            assert error.data["code"] == "session_attached"
            await stop_turn(window, turn)
            assert session in await listed(other)
