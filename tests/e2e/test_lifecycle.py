"""Shutdown and a workspace folder's removal stop the work in flight (K3): running turns and
compactions are cancelled as `$/cancelRequest` would cancel them, and recorded as cancelled; the
provider's stream is closed; requests that come after are refused.

# covers K3 (issue 11, item 5)
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from tests.e2e.chat import Deltas, chat_client, hanging, new_session, running_turn
from tests.e2e.conftest import Start, call, uri
from tests.fakes.openai_server import FakeOpenAI, Stream, text_chunks


def transcript(client_store: Path, session: str) -> list[dict[str, Any]]:
    lines = (client_store / "sessions" / f"{session}.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


async def store_of(client: LanguageClient) -> Path:
    return Path((await call(client, "lecode/project/info"))["storePath"])


async def stopped(client: LanguageClient) -> None:
    """End the session after a shutdown the test sent itself."""
    client.exit(None)
    await client.stop()


class TestShutdown:
    async def test_a_running_turn_is_cancelled_and_recorded(self, start: Start, repo: Path) -> None:
        async with FakeOpenAI() as server:
            server.push(hanging())
            client = await chat_client(start, repo, server)
            deltas = Deltas(client)
            store = await store_of(client)
            session = await new_session(client)
            turn = await running_turn(client, deltas, session)

            shutdown = asyncio.ensure_future(client.shutdown_async(None))
            # Sent after shutdown: refused (the LSP spec's InvalidRequest), not served.
            late = asyncio.ensure_future(call(client, "lecode/session/list"))
            assert (await asyncio.wait_for(turn, 10))["stopReason"] == "cancelled"
            await asyncio.wait_for(shutdown, 10)
            with pytest.raises(JsonRpcException) as refused:
                await asyncio.wait_for(late, 10)
            assert (refused.value.code, refused.value.data["code"]) == (-32600, "shut_down")
            await asyncio.wait_for(server.disconnected.wait(), 10)  # the stream was closed
            await stopped(client)
        kinds = [(r["kind"], r.get("type")) for r in transcript(store, session)]
        assert kinds[-1] == ("event", "cancelled")

    async def test_a_running_compaction_is_cancelled_and_its_call_recorded(
        self, start: Start, repo: Path
    ) -> None:
        asked = asyncio.Event()

        def respond(body: dict[str, Any]) -> Stream:
            if body["messages"][0]["content"].startswith("You maintain the working summary"):
                asked.set()
                return hanging()
            return Stream(text_chunks("ok"))

        async with FakeOpenAI(respond=respond) as server:
            client = await chat_client(start, repo, server)
            store = await store_of(client)
            session = await new_session(client)
            for text in ("one", "two", "three"):
                await call(client, "lecode/chat/send", {"sessionId": session, "text": text})
            compacting = asyncio.ensure_future(
                call(client, "lecode/session/compact", {"sessionId": session})
            )
            await asyncio.wait_for(asked.wait(), 10)
            shutdown = asyncio.ensure_future(client.shutdown_async(None))
            with pytest.raises(JsonRpcException) as cancelled:
                await asyncio.wait_for(compacting, 10)
            assert cancelled.value.code == -32800  # as $/cancelRequest answers
            await asyncio.wait_for(shutdown, 10)
            await stopped(client)
        usage = [r for r in transcript(store, session) if r.get("type") == "memory_usage"]
        assert [(u["purpose"], u["outcome"]) for u in usage] == [("compaction", "cancelled")]


class TestFolderRemoval:
    async def test_removing_the_folder_cancels_its_turn(
        self, start: Start, repo: Path, tmp_path: Path
    ) -> None:
        async with FakeOpenAI() as server:
            server.push(hanging())
            client = await chat_client(start, repo, server)
            deltas = Deltas(client)
            store = await store_of(client)
            session = await new_session(client)
            turn = await running_turn(client, deltas, session)
            client.workspace_did_change_workspace_folders(
                types.DidChangeWorkspaceFoldersParams(
                    event=types.WorkspaceFoldersChangeEvent(
                        added=[],
                        removed=[types.WorkspaceFolder(uri=uri(repo), name=repo.name)],
                    )
                )
            )
            assert (await asyncio.wait_for(turn, 10))["stopReason"] == "cancelled"
            await asyncio.wait_for(server.disconnected.wait(), 10)
        kinds = [(r["kind"], r.get("type")) for r in transcript(store, session)]
        assert kinds[-1] == ("event", "cancelled")
