"""Memory that keeps the prompt cache (issue 40), black-box over LSP: with 300 facts, each new
message of a session only appends to the request the provider has already read, while each
turn is still shown the fact its question needs, and a fact remembered between turns reaches
the next turn.

# covers I1-I5 (what a request carries, over every block of it), E1 (forgetting reaches every
# later request), C (the history replayed as sent), T (the same tools at every turn)
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.chat import Deltas, new_session
from tests.e2e.conftest import Start, call
from tests.e2e.facts import remember
from tests.e2e.test_ranked_memory import KINDS, SERVICES, stored
from tests.fakes.openai_server import FakeOpenAI, Stream, text_chunks

FACTS = 300


def chat_requests(bodies: list[Any]) -> list[dict[str, Any]]:
    """The chat requests among what the provider received (not learning's or compaction's)."""
    return [
        b
        for b in bodies
        if b.get("tools") and str(b["messages"][0]["content"]).startswith("You are lecode")
    ]


def fact_lines(body: dict[str, Any]) -> list[dict[str, Any]]:
    """Every fact line the request carries, in the system message or beside a user message."""
    lines = []
    for message in body["messages"]:
        content = message.get("content")
        if message["role"] in ("system", "user") and isinstance(content, str):
            lines += [json.loads(x) for x in content.splitlines() if x.startswith('{"fact_id"')]
    return lines


def encoded(body: dict[str, Any]) -> list[bytes]:
    return [json.dumps(m, ensure_ascii=False).encode() for m in body["messages"]]


async def options_for(server: FakeOpenAI) -> dict[str, Any]:
    return {"provider": {"base_url": server.base_url, "model": "gpt-4o", "api_key_env": ""}}


class TestANewMessageOnlyAppends:
    async def test_five_questions_each_extend_the_previous_request(
        self, start: Start, repo: Path, isolated_config_dir: Path
    ) -> None:
        texts = stored(repo, isolated_config_dir, FACTS)
        # Five questions about five different facts (services, numbers and kinds apart).
        asked = [(KINDS[i], SERVICES[(i * 3) % 8], 1 + (i * 3) % 7) for i in range(5)]
        async with FakeOpenAI(respond=lambda body: Stream(text_chunks("ok"))) as server:
            client = await start(repo, options=await options_for(server))
            session = await new_session(client)
            previous: dict[str, Any] | None = None
            for turn, ((fact, question), service, n) in enumerate(asked):
                if turn == 3:
                    # Told and remembered between turns 3 and 4: it reaches turn 4.
                    told = "Remember: the ledger-9 cache is flushed at midnight."
                    await call(client, "lecode/chat/send", {"sessionId": session, "text": told})
                    history = await call(client, "lecode/chat/history", {"sessionId": session})
                    [seq] = [i["seq"] for i in history["items"] if i.get("text") == told]
                    remembered = await remember(client, session, seq, told)
                    previous = chat_requests(server.bodies)[-1]
                before = len(server.bodies)
                text = question.format(s=service, n=n)
                await call(client, "lecode/chat/send", {"sessionId": session, "text": text})
                first = chat_requests(server.bodies[before:])[0]
                wanted = fact.format(s=service, n=n)
                assert wanted in texts
                assert wanted in [line["text"] for line in fact_lines(first)], turn
                if previous is not None:
                    # covers I1: the memory is read afresh, and the cache keeps the prefix.
                    assert encoded(first)[: len(previous["messages"])] == encoded(previous)
                    assert first["tools"] == previous["tools"]
                if turn == 3:
                    ids = [line["fact_id"] for line in fact_lines(first)]
                    assert remembered["factId"] in ids
                    # After the history: in front of the new message, not in the system prompt.
                    assert "ledger-9 cache" not in first["messages"][0]["content"]
                    assert "ledger-9 cache is flushed" in first["messages"][-1]["content"]
                previous = chat_requests(server.bodies)[-1]
            # covers I2, I3: everything a request carries stays within the caps.
            last = chat_requests(server.bodies)[-1]
            facts_bytes = sum(len(json.dumps(x, ensure_ascii=False)) for x in fact_lines(last))
            assert facts_bytes <= 8192
            history = await call(client, "lecode/chat/history", {"sessionId": session})
            assert history["items"]


class TestTheCacheIsVisible:
    async def test_the_providers_cached_tokens_are_in_the_turns_usage_and_its_delta(
        self, start: Start, repo: Path
    ) -> None:
        # covers V: what the provider said of its cache, per call and per turn (issue 40 item 4)
        def answer(body: Any) -> Stream:
            steps = text_chunks("ok", usage=(1500, 3))
            steps[-1]["usage"]["prompt_tokens_details"] = {"cached_tokens": 1280}
            return Stream(steps)

        async with FakeOpenAI(respond=answer) as server:
            client = await start(repo, options=await options_for(server))
            deltas = Deltas(client)
            session = await new_session(client)
            result = await call(client, "lecode/chat/send", {"sessionId": session, "text": "Hi"})
            assert result["usage"]["cachedTokens"] == 1280
            assert "evaluatedTokens" not in result["usage"]
            usage = await deltas.wait_for("usage")
            assert usage["usage"]["cachedTokens"] == 1280
            # Never sent to a server that is not OpenAI's API.
            assert "prompt_cache_key" not in server.bodies[-1]


def small_model(body: dict[str, Any]) -> Stream:
    """A local model's server: answers the summariser's request with a summary, else briefly."""
    if str(body["messages"][0]["content"]).startswith("You maintain the working summary"):
        named = sorted(set(re.findall(r"\b[a-z]+-\d+\b", body["messages"][1]["content"])))
        return Stream(text_chunks("The person asked about " + ", ".join(named) + "."))
    return Stream(text_chunks("It is in the memory above."))


class TestSmallWindows:
    @pytest.mark.parametrize(("window", "buffer"), [(8192, 1024), (4096, 512)])
    async def test_twenty_short_turns_with_210_facts_never_pause(
        self, start: Start, repo: Path, isolated_config_dir: Path, window: int, buffer: int
    ) -> None:
        # covers I2, I3, C8 (issue 40 item 5): memory takes a bounded share of the window, so
        # a small model's window holds memory, the tools and a short conversation.
        stored(repo, isolated_config_dir, 210)
        async with FakeOpenAI(respond=small_model) as server:
            options = {
                "provider": {"base_url": server.base_url, "model": "local", "api_key_env": ""},
                "agent": {"context_window": window},
                "compaction": {"buffer_tokens": buffer},
            }
            client = await start(repo, options=options)
            session = await new_session(client)
            stops = []
            for turn in range(20):
                (_, question), service = KINDS[turn % 5], SERVICES[turn % 8]
                text = question.format(s=service, n=1 + turn % 7)
                result = await call(
                    client, "lecode/chat/send", {"sessionId": session, "text": text}
                )
                stops.append(result["stopReason"])
            assert stops == ["stop"] * 20
            shown = [fact_lines(b) for b in chat_requests(server.bodies)]
            assert all(shown)  # every request still carries facts
