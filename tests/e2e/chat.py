"""Helpers of the chat tests: a client whose provider is a loopback FakeOpenAI, sessions, and the
`lecode/chat/delta` notifications collected as plain JSON."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.e2e.conftest import Start, call
from tests.fakes.openai_server import FakeOpenAI, Stream, Wait, chunk

KEY = "sk-test-0123456789abcdef"


def tool_chunks(name: str, arguments: dict[str, Any], call_id: str = "call-1") -> list[Any]:
    call_chunk = chunk(
        tool_calls=[
            {
                "index": 0,
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        ]
    )
    return [call_chunk, chunk(finish="tool_calls")]


def as_dict(value: Any) -> Any:
    """Notification params as plain JSON values (pygls hands unknown params over as objects)."""
    if isinstance(value, list | tuple) and not hasattr(value, "_fields"):
        return [as_dict(v) for v in value]
    if hasattr(value, "_asdict"):
        return {k: as_dict(v) for k, v in value._asdict().items()}
    return value


class Deltas:
    """Collects `lecode/chat/delta` notifications; `wait_for(kind)` waits for the first of a kind."""

    def __init__(self, client: LanguageClient) -> None:
        self.items: list[dict[str, Any]] = []
        self.changed = asyncio.Event()

        @client.feature("lecode/chat/delta")
        def on_delta(params: Any) -> None:
            self.items.append(as_dict(params))
            self.changed.set()

    async def wait_for(self, kind: str) -> dict[str, Any]:
        while True:
            for item in self.items:
                if item["kind"] == kind:
                    return item
            self.changed.clear()
            await self.changed.wait()

    def text(self) -> str:
        return "".join(item["text"] for item in self.items if item["kind"] == "text")


def hanging() -> Stream:
    """A model that starts to answer and then never goes on."""
    return Stream([chunk(content="Thinking"), Wait(asyncio.Event())])


async def running_turn(client: LanguageClient, deltas: Deltas, session: str) -> asyncio.Future[Any]:
    """A chat turn sent under the ID "turn" (so a test can cancel it by that ID), returned once
    its first text has streamed: with `hanging`, a turn in flight."""
    sent = client.protocol.send_request_async(
        "lecode/chat/send", {"sessionId": session, "text": "Go."}, msg_id="turn"
    )
    turn = asyncio.ensure_future(sent)
    await asyncio.wait_for(deltas.wait_for("text"), 10)
    return turn


async def chat_client(
    start: Start,
    repo: Path,
    server: FakeOpenAI,
    capabilities: types.ClientCapabilities | None = None,
    **agent: Any,
) -> LanguageClient:
    options = {
        "provider": {
            "base_url": server.base_url,
            "model": "gpt-4o",
            "api_key_env": "LECODE_TEST_KEY",
        },
        "agent": agent,
    }
    return await start(
        repo, options=options, env={"LECODE_TEST_KEY": KEY}, capabilities=capabilities
    )


async def new_session(client: LanguageClient) -> str:
    return (await call(client, "lecode/session/new", {"title": "chat"}))["sessionId"]
