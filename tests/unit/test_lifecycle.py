"""Closing (K3): a closed runtime's stores refuse every later call, and chat's state cancels the
turns of the projects it is told to stop and closes its provider clients.

# covers K3
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from lecode_ls.config import ProviderSettings
from lecode_ls.errors import StoreError
from lecode_ls.memory.sessions.sources import source_snapshot
from lecode_ls.runtime import Runtime
from lecode_ls.server.chat.state import Chat
from tests.unit.stores import chat

CALLS: dict[str, Callable[[Runtime, str], Any]] = {
    "sessions.append": lambda r, s: r.sessions.append(
        s, {"kind": "message", "role": "user", "content": "late"}
    ),
    "sessions.read": lambda r, s: r.sessions.read(s, 0, 0),
    "sessions.list": lambda r, s: r.sessions.list(),
    "sessions.create": lambda r, s: r.sessions.create("late"),
    "markdown.write": lambda r, s: r.markdown.write("MEMORY.md", "late", "append"),
    "markdown.read": lambda r, s: r.markdown.read("MEMORY.md"),
    "markdown.list": lambda r, s: r.markdown.list(),
    "facts.list": lambda r, s: r.facts.list(),
    "facts.remember": lambda r, s: r.facts.remember(
        "late", source_snapshot(r.sessions, s, 1, 1), check=r.check_source
    ),
}


class TestAClosedRuntime:
    @pytest.mark.parametrize("name", list(CALLS))
    def test_refuses_every_later_call(self, runtime: Runtime, name: str) -> None:
        session = chat(runtime, {"role": "user", "content": "hi"})
        runtime.facts.add("a fact")
        runtime.close()
        with pytest.raises(StoreError, match="closed"):
            CALLS[name](runtime, session)

    def test_closing_twice_is_harmless(self, runtime: Runtime) -> None:
        runtime.close()
        runtime.close()
        assert runtime.closed


class TestChatState:
    async def test_stop_cancels_only_the_projects_named_and_waits_for_them(self) -> None:
        state = Chat()
        ended: list[str] = []
        started = {"/a": asyncio.Event(), "/b": asyncio.Event()}

        async def turn(root: str) -> None:
            with state.running((root, "s"), "busy"):
                try:
                    started[root].set()
                    await asyncio.Event().wait()
                finally:
                    ended.append(root)

        a, b = asyncio.ensure_future(turn("/a")), asyncio.ensure_future(turn("/b"))
        await asyncio.gather(*(event.wait() for event in started.values()))
        await state.stop({"/a"})
        assert ended == ["/a"] and a.cancelled() and not b.done()
        assert not state.busy(("/a", "s")) and state.busy(("/b", "s"))
        await state.stop()
        assert b.cancelled() and not state.busy(("/b", "s"))

    async def test_the_read_timeout_setting_reaches_the_provider(self) -> None:
        state = Chat()
        base = {"base_url": "http://127.0.0.1:9/v1", "api_key_env": ""}
        default = state.provider(ProviderSettings(**base))
        slow = state.provider(ProviderSettings(**base, read_timeout_seconds=600))
        assert (default.read_timeout, slow.read_timeout) == (60.0, 600.0)
        assert slow is not default  # a changed setting makes a new client
        await state.close()

    async def test_close_closes_every_provider_client(self) -> None:
        state = Chat()
        first = state.provider(ProviderSettings(base_url="http://127.0.0.1:9/v1", api_key_env=""))
        second = state.provider(ProviderSettings(base_url="http://127.0.0.1:8/v1", api_key_env=""))
        await state.close()
        assert first._client.is_closed and second._client.is_closed
