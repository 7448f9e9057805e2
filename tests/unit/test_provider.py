"""The OpenAI-compatible provider against a real loopback server, and the scripted provider.

Every HTTP test talks to `tests.fakes.openai_server.FakeOpenAI` over a real socket; retries wait
through an injected sleep that records the delays instead of sleeping.
"""

# covers K2, C10

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
from collections.abc import AsyncIterator

import httpx
import pytest

from lecode_ls.agent.openai import OpenAICompatible
from lecode_ls.agent.provider import ChatRequest, Event, Finish, TextDelta, ToolCall, Usage
from lecode_ls.errors import (
    ContextOverflow,
    ProviderAuth,
    ProviderError,
    ProviderIncomplete,
    ProviderModel,
    ProviderTimeout,
    ProviderUnreachable,
)
from tests.fakes.openai_server import (
    FakeOpenAI,
    Reply,
    Stream,
    Wait,
    chunk,
    text_chunks,
    usage_chunk,
)
from tests.fakes.scripted_provider import ScriptedProvider, text_turn, tool_turn

KEY = "sk-test-very-secret-key-0123456789"
HELLO = ChatRequest(messages=[{"role": "user", "content": "hello"}])
READ_TOOL = {
    "type": "function",
    "function": {
        "name": "read",
        "description": "Read a file.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
    },
}


class Sleeps:
    """An injected sleep: records each delay and returns at once."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


@pytest.fixture
async def server() -> AsyncIterator[FakeOpenAI]:
    async with FakeOpenAI() as fake:
        yield fake


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
async def provider(server: FakeOpenAI, sleeps: Sleeps) -> AsyncIterator[OpenAICompatible]:
    model = OpenAICompatible(server.base_url, "gpt-4o", KEY, backoff_base=0.0, sleep=sleeps)
    yield model
    await model.aclose()


async def collect(
    provider: OpenAICompatible | ScriptedProvider, request: ChatRequest = HELLO
) -> list[Event]:
    async with contextlib.aclosing(provider.stream(request)) as events:
        return [event async for event in events]


def text_of(events: list[Event]) -> str:
    return "".join(event.text for event in events if isinstance(event, TextDelta))


class TestStreaming:
    async def test_text_streams_as_deltas_then_one_finish(
        self, server: FakeOpenAI, provider: OpenAICompatible
    ) -> None:
        server.push(Stream(text_chunks("Hel", "lo", " there")))
        events = await collect(provider)
        assert events == [TextDelta("Hel"), TextDelta("lo"), TextDelta(" there"), Finish("stop")]

    async def test_tool_calls_are_assembled_from_split_deltas_in_index_order(
        self, server: FakeOpenAI, provider: OpenAICompatible
    ) -> None:
        def call(index: int, **fields: object) -> list[dict[str, object]]:
            return [{"index": index, **fields}]

        server.push(
            Stream(
                [
                    chunk(content="Let me look."),
                    chunk(
                        tool_calls=call(
                            0,
                            id="call_a",
                            type="function",
                            function={"name": "read", "arguments": ""},
                        )
                    ),
                    chunk(tool_calls=call(0, function={"arguments": '{"pa'})),
                    chunk(
                        tool_calls=call(
                            1,
                            id="call_b",
                            type="function",
                            function={"name": "grep", "arguments": '{"q":'},
                        )
                    ),
                    chunk(tool_calls=call(0, function={"arguments": 'th": "a.py"}'})),
                    chunk(tool_calls=call(1, function={"arguments": ' "x"}'})),
                    chunk(finish="tool_calls"),
                    usage_chunk(20, 7),
                ]
            )
        )
        events = await collect(provider)
        assert events == [
            TextDelta("Let me look."),
            ToolCall("call_a", "read", '{"path": "a.py"}'),
            ToolCall("call_b", "grep", '{"q": "x"}'),
            Finish("tool_calls", Usage(20, 7, 27)),
        ]

    async def test_streamed_usage_is_reported_once_on_the_finish(
        self, server: FakeOpenAI, provider: OpenAICompatible
    ) -> None:
        server.push(Stream(text_chunks("hi", usage=(11, 2))))
        events = await collect(provider)
        finishes = [event for event in events if isinstance(event, Finish)]
        assert finishes == [Finish("stop", Usage(11, 2, 13))]
        assert events[-1] == finishes[0]

    async def test_missing_usage_is_none(
        self, server: FakeOpenAI, provider: OpenAICompatible
    ) -> None:
        server.push(Stream(text_chunks("hi")))
        assert (await collect(provider))[-1] == Finish("stop", None)

    @pytest.mark.parametrize("reason", ["stop", "length", "tool_calls", "content_filter"])
    async def test_finish_reasons_pass_through(
        self, server: FakeOpenAI, provider: OpenAICompatible, reason: str
    ) -> None:
        server.push(Stream(text_chunks("x", finish=reason)))
        assert (await collect(provider))[-1] == Finish(reason)

    async def test_a_finished_stream_without_done_is_still_complete(
        self, server: FakeOpenAI, provider: OpenAICompatible
    ) -> None:
        server.push(Stream(text_chunks("x"), done=False))
        assert await collect(provider) == [TextDelta("x"), Finish("stop")]


class TestRequestBody:
    async def test_the_body_asks_for_a_stream_with_usage_and_carries_messages_and_tools(
        self, server: FakeOpenAI, provider: OpenAICompatible
    ) -> None:
        server.push(Stream(text_chunks("ok")))
        request = ChatRequest(
            messages=[{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}],
            tools=[READ_TOOL],
            max_tokens=256,
        )
        await collect(provider, request)
        [received] = server.requests
        assert (received.method, received.path) == ("POST", "/v1/chat/completions")
        assert received.body == {
            "model": "gpt-4o",
            "messages": [
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": "hi"},
            ],
            "stream": True,
            "stream_options": {"include_usage": True},
            "tools": [READ_TOOL],
            "tool_choice": "auto",
            "max_tokens": 256,
        }
        assert received.headers["authorization"] == f"Bearer {KEY}"

    async def test_a_request_model_overrides_and_thinking_is_sent_as_reasoning_effort(
        self, server: FakeOpenAI
    ) -> None:
        server.push(Stream(text_chunks("ok")))
        provider = OpenAICompatible(server.base_url, "gpt-4o", None, thinking="low")
        try:
            await collect(provider, ChatRequest(messages=HELLO.messages, model="o3-mini"))
        finally:
            await provider.aclose()
        [received] = server.requests
        assert received.body["model"] == "o3-mini"
        assert received.body["reasoning_effort"] == "low"
        assert "tools" not in received.body and "max_tokens" not in received.body
        assert "tool_choice" not in received.body  # no tools offered: no choice to make
        assert "authorization" not in received.headers


class TestRetries:
    async def test_429_is_retried_after_the_retry_after_delay(
        self, server: FakeOpenAI, provider: OpenAICompatible, sleeps: Sleeps
    ) -> None:
        server.push(
            Reply(429, {"error": {"message": "slow down"}}, {"Retry-After": "7"}),
            Stream(text_chunks("ok")),
        )
        assert await collect(provider) == [TextDelta("ok"), Finish("stop")]
        assert sleeps.delays == [7.0]
        assert len(server.requests) == 2

    async def test_5xx_is_retried_with_backoff_then_fails_with_the_providers_message(
        self, server: FakeOpenAI, sleeps: Sleeps
    ) -> None:
        server.push(*[Reply(500, {"error": {"message": "upstream exploded"}})] * 3)
        provider = OpenAICompatible(
            server.base_url, "gpt-4o", KEY, max_retries=2, backoff_base=0.1, sleep=sleeps
        )
        with pytest.raises(ProviderError) as raised:
            await collect(provider)
        await provider.aclose()
        assert raised.value.code == "provider_error"
        assert raised.value.message == "the provider answered HTTP 500: upstream exploded"
        assert len(server.requests) == 3
        # Exponential with jitter below one base: 0.1 * 2**n + [0, 0.1).
        assert len(sleeps.delays) == 2
        assert 0.1 <= sleeps.delays[0] < 0.2 and 0.2 <= sleeps.delays[1] < 0.3

    async def test_a_retry_after_beyond_a_minute_is_not_waited_out(
        self, server: FakeOpenAI, provider: OpenAICompatible, sleeps: Sleeps
    ) -> None:
        server.push(Reply(429, {"error": {"message": "quota"}}, {"Retry-After": "3600"}))
        with pytest.raises(ProviderError, match="rate limiting"):
            await collect(provider)
        assert sleeps.delays == []

    async def test_errors_after_the_first_chunk_are_not_retried(
        self, server: FakeOpenAI, provider: OpenAICompatible, sleeps: Sleeps
    ) -> None:
        server.push(Stream([chunk(content="par")], truncate=True), Stream(text_chunks("again")))
        seen: list[Event] = []
        with pytest.raises(ProviderIncomplete):
            async with contextlib.aclosing(provider.stream(HELLO)) as events:
                async for event in events:
                    seen.append(event)
        assert seen == [TextDelta("par")]
        assert len(server.requests) == 1 and sleeps.delays == []


class TestErrors:
    async def test_a_rejected_key_names_its_variable_and_never_the_key(
        self, server: FakeOpenAI, caplog: pytest.LogCaptureFixture
    ) -> None:
        caplog.set_level(logging.DEBUG)
        server.push(Reply(401, {"error": {"message": f"Incorrect API key provided: {KEY}"}}))
        provider = OpenAICompatible(server.base_url, "gpt-4o", KEY, key_variable="MY_KEY")
        try:
            with pytest.raises(ProviderAuth) as raised:
                await collect(provider)
        finally:
            await provider.aclose()
        assert raised.value.code == "provider_auth"
        assert raised.value.message == "the provider rejected the API key from MY_KEY (HTTP 401)"
        assert len(server.requests) == 1  # a bad key is not retried
        seen = [str(raised.value), repr(raised.value), repr(provider), caplog.text]
        assert not [text for text in seen if KEY in text]

    @pytest.mark.parametrize(
        ("variable", "message"),
        [
            (
                "OPENAI_API_KEY",
                "the provider refused the request (HTTP 401): no API key was sent, because the "
                "environment variable OPENAI_API_KEY is not set",
            ),
            (
                "",
                "the provider refused the request (HTTP 401): no API key was sent, because "
                "[provider] api_key_env is empty",
            ),
        ],
    )
    async def test_a_401_without_a_key_says_that_the_variable_is_unset_and_sends_no_header(
        self, server: FakeOpenAI, variable: str, message: str
    ) -> None:
        # covers K2
        server.push(Reply(401, {"error": {"message": "You didn't provide an API key."}}))
        provider = OpenAICompatible(server.base_url, "gpt-4o", None, key_variable=variable)
        try:
            with pytest.raises(ProviderAuth) as raised:
                await collect(provider)
        finally:
            await provider.aclose()
        assert raised.value.message == message
        [received] = server.requests
        assert "authorization" not in received.headers

    async def test_the_key_is_cut_out_of_any_quoted_provider_message(
        self, server: FakeOpenAI, provider: OpenAICompatible, caplog: pytest.LogCaptureFixture
    ) -> None:
        caplog.set_level(logging.DEBUG)
        server.push(*[Reply(503, {"error": {"message": f"echo {KEY}"}})] * 4)
        with pytest.raises(ProviderError) as raised:
            await collect(provider)
        assert KEY not in str(raised.value) and KEY not in caplog.text
        assert "[secret:api-key]" in str(raised.value)

    async def test_an_unreachable_url_says_cannot_reach(self, sleeps: Sleeps) -> None:
        with socket.socket() as probe:  # a port that nothing listens on once closed
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        url = f"http://127.0.0.1:{port}/v1"
        provider = OpenAICompatible(url, "gpt-4o", KEY, max_retries=1, sleep=sleeps)
        with pytest.raises(ProviderUnreachable) as raised:
            await collect(provider)
        await provider.aclose()
        assert raised.value.message.startswith(f"cannot reach {url}")
        assert len(sleeps.delays) == 1

    async def test_an_unknown_model_is_said_plainly(
        self, server: FakeOpenAI, provider: OpenAICompatible
    ) -> None:
        server.push(
            Reply(
                404,
                {
                    "error": {
                        "message": "The model `gpt-nope` does not exist",
                        "code": "model_not_found",
                    }
                },
            )
        )
        with pytest.raises(ProviderModel) as raised:
            await collect(provider, ChatRequest(messages=HELLO.messages, model="gpt-nope"))
        assert raised.value.code == "provider_model"
        assert raised.value.message.startswith("the provider does not know the model gpt-nope")

    async def test_a_truncated_stream_is_an_incomplete_answer_not_a_success(
        self, server: FakeOpenAI, provider: OpenAICompatible
    ) -> None:
        server.push(Stream([chunk(content="Half an ans")], truncate=True))
        with pytest.raises(ProviderIncomplete) as raised:
            await collect(provider)
        assert raised.value.code == "provider_incomplete"
        assert "before the answer was complete" in raised.value.message

    async def test_a_cleanly_closed_stream_without_finish_or_done_is_incomplete(
        self, server: FakeOpenAI, provider: OpenAICompatible
    ) -> None:
        server.push(Stream([chunk(content="Half")], done=False))
        with pytest.raises(ProviderIncomplete, match="no finish reason"):
            await collect(provider)

    async def test_an_error_chunk_mid_stream_is_raised(
        self, server: FakeOpenAI, provider: OpenAICompatible
    ) -> None:
        server.push(Stream([chunk(content="a"), {"error": {"message": "overloaded"}}]))
        with pytest.raises(ProviderError, match="the provider failed mid-answer: overloaded"):
            await collect(provider)

    async def test_a_non_sse_answer_is_explained(
        self, server: FakeOpenAI, provider: OpenAICompatible
    ) -> None:
        server.push(Stream([chunk(content="a")], content_type="application/json"))
        with pytest.raises(ProviderError, match="did not answer with an event stream"):
            await collect(provider)

    async def test_an_endless_event_line_is_refused_past_16_mib(
        self, server: FakeOpenAI, provider: OpenAICompatible
    ) -> None:
        # covers C9 (issue 10: a network peer): one line that never ends must not grow memory
        server.push(Stream([chunk(content="a"), "x" * (17 << 20)]))
        with pytest.raises(ProviderError, match="sent more than lecode-ls reads for one answer"):
            await collect(provider)

    async def test_a_huge_error_body_is_read_only_in_part(
        self, server: FakeOpenAI, provider: OpenAICompatible
    ) -> None:
        server.push(Reply(400, "<html>" + "x" * (8 << 20)))
        with pytest.raises(ProviderError) as caught:
            await collect(provider)
        assert caught.value.message.startswith("the provider answered HTTP 400: <html>xxx")
        assert len(caught.value.message) < 400

    async def test_a_silent_gap_longer_than_the_read_timeout_times_out(
        self, server: FakeOpenAI
    ) -> None:
        never = asyncio.Event()
        server.push(Stream([chunk(content="a"), Wait(never)]))
        provider = OpenAICompatible(server.base_url, "gpt-4o", KEY, read_timeout=0.05)
        with pytest.raises(ProviderTimeout, match="read timeout"):
            await collect(provider)
        await provider.aclose()


class TestCancellation:
    async def test_cancelling_the_consumer_closes_the_connection(
        self, server: FakeOpenAI, provider: OpenAICompatible
    ) -> None:
        release = asyncio.Event()
        server.push(Stream([chunk(content="first"), Wait(release), *text_chunks("never")]))
        first = asyncio.Event()

        async def consume() -> None:
            async with contextlib.aclosing(provider.stream(HELLO)) as events:
                async for _ in events:
                    first.set()

        task = asyncio.create_task(consume())
        await first.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.wait_for(server.disconnected.wait(), 5)
        assert server.disconnects == 1
        assert not release.is_set()

    async def test_a_slow_stream_continues_when_released(
        self, server: FakeOpenAI, provider: OpenAICompatible
    ) -> None:
        release = asyncio.Event()
        server.push(Stream([chunk(content="a"), Wait(release), *text_chunks("b")]))
        events: list[Event] = []
        async with contextlib.aclosing(provider.stream(HELLO)) as stream:
            async for event in stream:
                events.append(event)
                release.set()
        assert text_of(events) == "ab" and events[-1] == Finish("stop")


class TestOwnClient:
    async def test_a_given_client_is_used_and_left_open(self, server: FakeOpenAI) -> None:
        server.push(Stream(text_chunks("ok")))
        async with httpx.AsyncClient() as client:
            provider = OpenAICompatible(server.base_url, "gpt-4o", KEY, client=client)
            assert text_of(await collect(provider)) == "ok"
            await provider.aclose()
            assert not client.is_closed


class TestScriptedProvider:
    async def test_turns_play_in_order_and_requests_are_recorded(self) -> None:
        calls = [ToolCall("c1", "read", json.dumps({"path": "a"}))]
        scripted = ScriptedProvider().add(
            tool_turn(calls, usage=Usage(5, 1, 6)), text_turn("do", "ne")
        )
        first = await collect(scripted)
        second = await collect(scripted, ChatRequest(messages=[{"role": "user", "content": "2"}]))
        assert first == [calls[0], Finish("tool_calls", Usage(5, 1, 6))]
        assert second == [TextDelta("do"), TextDelta("ne"), Finish("stop")]
        assert [len(r.messages) for r in scripted.requests] == [1, 1]

    async def test_a_turn_without_finish_gets_one(self) -> None:
        scripted = ScriptedProvider([[TextDelta("x")]])
        assert await collect(scripted) == [TextDelta("x"), Finish("stop")]

    async def test_a_scripted_error_is_raised(self) -> None:
        scripted = ScriptedProvider([ProviderAuth("the provider rejected the API key")])
        with pytest.raises(ProviderAuth):
            await collect(scripted)

    async def test_running_out_of_turns_fails_loudly(self) -> None:
        with pytest.raises(ProviderError, match="no turn left"):
            await collect(ScriptedProvider())


# What each server answers to a request longer than the model's window, as they send it.
OVERFLOWS = {
    "llama.cpp": {
        "error": {
            "code": 400,
            "message": "request (5000 tokens) exceeds the available context size (4096 tokens), "
            "try increasing it",
            "type": "exceed_context_size_error",
            "n_prompt_tokens": 5000,
            "n_ctx": 4096,
        }
    },
    "openai": {
        "error": {
            "message": "This model's maximum context length is 128000 tokens. However, your "
            "messages resulted in 130017 tokens. Please reduce the length of the messages.",
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }
    },
    "vllm": {
        "object": "error",
        "message": "This model's maximum context length is 4096 tokens. However, you requested "
        "5000 tokens (4000 in the messages, 1000 in the completion). Please reduce the length "
        "of the messages or completion.",
        "type": "BadRequestError",
        "param": None,
        "code": 400,
    },
    "ollama": {
        "error": {
            "message": "the input length exceeds the context length",
            "type": "api_error",
            "param": None,
            "code": None,
        }
    },
}


class TestContextOverflow:
    """A request longer than the window is told apart from other failures (C8, C9)."""

    @pytest.mark.parametrize("server_kind", sorted(OVERFLOWS))
    async def test_each_servers_overflow_answer_is_a_context_overflow(
        self, server: FakeOpenAI, provider: OpenAICompatible, server_kind: str
    ) -> None:
        server.push(Reply(400, OVERFLOWS[server_kind]))
        with pytest.raises(ContextOverflow) as raised:
            await collect(provider)
        assert raised.value.code == "context_overflow"
        assert raised.value.message.startswith(
            "the request is longer than the model's context window"
        )
        assert len(server.requests) == 1  # not retried: the same request would fail again

    async def test_an_overflow_reported_mid_stream_is_a_context_overflow(
        self, server: FakeOpenAI, provider: OpenAICompatible
    ) -> None:
        server.push(Stream([chunk(content=""), OVERFLOWS["llama.cpp"]]))
        with pytest.raises(ContextOverflow):
            await collect(provider)

    async def test_another_bad_request_stays_a_provider_error(
        self, server: FakeOpenAI, provider: OpenAICompatible
    ) -> None:
        server.push(Reply(400, {"error": {"message": "tools[0].function.name is invalid"}}))
        with pytest.raises(ProviderError) as raised:
            await collect(provider)
        assert type(raised.value) is ProviderError
