"""The provider's prompt cache made visible (issue 40 item 4): what an OpenAI-compatible server
(`usage.prompt_tokens_details.cached_tokens`) or llama-server (`timings.cache_n`, `prompt_n`)
reports reaches the call's usage, and `prompt_cache_key` goes only where it is taken.

# covers V (usage accounting), C10
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from lecode_ls.agent.openai import OpenAICompatible
from lecode_ls.agent.provider import ChatRequest, Event, Finish, Usage
from lecode_ls.memory.sessions import UsageTotal
from tests.fakes.openai_server import FakeOpenAI, Stream, text_chunks, usage_chunk

HELLO = ChatRequest([{"role": "user", "content": "hi"}], cache_key="20261204T000000-abcd")


@pytest.fixture
async def server() -> AsyncIterator[FakeOpenAI]:
    async with FakeOpenAI() as fake:
        yield fake


async def finish(server: FakeOpenAI, last: dict[str, Any]) -> Finish:
    server.push(Stream([*text_chunks("hi"), last]))
    model = OpenAICompatible(server.base_url, "gpt-4o", None)
    try:
        async with contextlib.aclosing(model.stream(HELLO)) as stream:
            events: list[Event] = [event async for event in stream]
    finally:
        await model.aclose()
    assert isinstance(events[-1], Finish)
    return events[-1]


class TestWhatTheProviderSays:
    async def test_cached_tokens_of_an_openai_compatible_server_reach_the_usage(
        self, server: FakeOpenAI
    ) -> None:
        last = usage_chunk(1200, 5)
        last["usage"]["prompt_tokens_details"] = {"cached_tokens": 1024}
        found = await finish(server, last)
        assert found.usage == Usage(1200, 5, 1205, cached_tokens=1024)
        assert found.usage.to_json()["cached_tokens"] == 1024

    async def test_llama_server_timings_give_the_cached_and_evaluated_tokens(
        self, server: FakeOpenAI
    ) -> None:
        last = usage_chunk(7260, 3)
        last["timings"] = {"cache_n": 7227, "prompt_n": 33, "prompt_ms": 900.5}
        found = await finish(server, last)
        assert found.usage == Usage(7260, 3, 7263, cached_tokens=7227, evaluated_tokens=33)

    async def test_no_cache_report_leaves_the_usage_as_before(self, server: FakeOpenAI) -> None:
        found = await finish(server, usage_chunk(10, 2))
        assert found.usage is not None
        assert found.usage.to_json() == {
            "prompt_tokens": 10,
            "completion_tokens": 2,
            "total_tokens": 12,
        }


class TestTheCacheKey:
    async def test_a_local_server_is_never_sent_prompt_cache_key(self, server: FakeOpenAI) -> None:
        # llama-server and other OpenAI-compatible servers may refuse a field they do not know.
        await finish(server, usage_chunk(1, 1))
        assert "prompt_cache_key" not in server.requests[0].body

    async def test_openais_api_is_sent_the_session_as_prompt_cache_key(self) -> None:
        model = OpenAICompatible("https://api.openai.com/v1", "gpt-4o", None)
        try:
            assert model.body(HELLO)["prompt_cache_key"] == HELLO.cache_key
            assert "prompt_cache_key" not in model.body(ChatRequest(HELLO.messages))
        finally:
            await model.aclose()


class TestTotals:
    def test_the_cache_counts_add_up_and_are_absent_when_never_reported(self) -> None:
        total = UsageTotal()
        total.add_json({"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11})
        assert "cached_tokens" not in total.to_json()
        total.add_json(Usage(100, 1, 101, cached_tokens=90, evaluated_tokens=10).to_json())
        total.add_json(Usage(120, 1, 121, cached_tokens=100).to_json())
        total.add_json(None)
        assert total.to_json() == {
            "calls": 4,
            "prompt_tokens": 230,
            "completion_tokens": 3,
            "total_tokens": 233,
            "unknown_usage_calls": 1,
            "cached_tokens": 190,
            "evaluated_tokens": 10,
        }
