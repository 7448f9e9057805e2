"""What a real small model showed about learning and compaction (issue 13, step 3), replayed over
LSP with the real server and a loopback OpenAI-compatible model scripted as the real one
answered: JSON inside one ```json fence, a request quoted as a preference, and a summariser that
gave its input back.

# covers A3, A4, A6, C4
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pytest_lsp import LanguageClient

from tests.e2e.chat import new_session
from tests.e2e.conftest import Start, call
from tests.e2e.facts import candidate, seq_of
from tests.fakes.openai_server import FakeOpenAI, Stream, text_chunks

SUMMARISER = "You maintain the working summary"
EXTRACTOR = "You extract durable project facts"
REQUEST = "Read pyproject.toml and tell me its requires-python line."
CONVENTION = "Never commit uv.lock."
PREFERENCE = "We use tabs for indentation in this repo."


def fenced(value: Any, before: str = "") -> list[dict[str, Any]]:
    """Indented JSON in one ```json fence, streamed a line at a time, as the model sent it."""
    lines = ["```json", *json.dumps(value, indent=2).split("\n"), "```"]
    return text_chunks(before, *(line + "\n" for line in lines[:-1]), lines[-1], usage=(300, 90))


def model(
    extraction: Callable[[str], list[dict[str, Any]]],
    summary: Callable[[str], str] = lambda given: (
        "The person asked about the build, tabs, pyproject.toml and uv.lock; the assistant answered."
    ),
) -> Callable[[dict[str, Any]], Stream]:
    """Summarises with `summary(input)`, extracts with `extraction(payload)`, answers Done."""

    def respond(body: dict[str, Any]) -> Stream:
        system, given = body["messages"][0]["content"], body["messages"][-1]["content"]
        if system.startswith(SUMMARISER):
            return Stream(text_chunks(summary(given), usage=(400, 80)))
        if system.startswith(EXTRACTOR):
            return Stream(extraction(given))
        return Stream(text_chunks("Done."))

    return respond


async def session_with(
    start: Start, repo: Path, server: FakeOpenAI, first: str
) -> tuple[LanguageClient, str]:
    """A client with learning on, and a session of three exchanges, `first` the first message."""
    options = {
        "provider": {"base_url": server.base_url, "model": "gpt-4o", "api_key_env": ""},
        "memory": {"auto_learn": True, "learning": "model"},  # the model's answers are tested
        "agent": {"permissions": {"memory_write": "allow"}},
    }
    client = await start(repo, options=options)
    session = await new_session(client)
    for text in (first, "q1", "q2"):
        result = await call(client, "lecode/chat/send", {"sessionId": session, "text": text})
        assert result["stopReason"] == "stop"
    return client, session


class TestOneFence:
    async def test_a_fenced_answer_is_learned(self, start: Start, repo: Path) -> None:
        # covers A3: one ```json fence around the whole answer is taken off
        first = f"Fix the build.\n{PREFERENCE}\nThanks."

        def extraction(payload: str) -> list[dict[str, Any]]:
            return fenced({"candidates": [candidate(PREFERENCE, seq_of(payload, "Fix the"))]})

        async with FakeOpenAI(respond=model(extraction)) as server:
            client, session = await session_with(start, repo, server, first)
            result = await call(client, "lecode/session/compact", {"sessionId": session})
            listed = await call(client, "lecode/facts/list", {"sessionId": session})
        assert result["status"] == "compacted" and result["usage"]["calls"] == 2
        assert [f["text"] for f in listed["facts"]] == [PREFERENCE]
        assert (listed["learning"]["status"], listed["learning"]["reasonCounts"]) == ("learned", {})

    async def test_prose_before_the_fence_is_still_invalid_json(
        self, start: Start, repo: Path
    ) -> None:
        first = f"Fix the build.\n{PREFERENCE}\nThanks."

        def extraction(payload: str) -> list[dict[str, Any]]:
            value = {"candidates": [candidate(PREFERENCE, seq_of(payload, "Fix the"))]}
            return fenced(value, before="Here are the facts I found:\n")

        async with FakeOpenAI(respond=model(extraction)) as server:
            client, session = await session_with(start, repo, server, first)
            await call(client, "lecode/session/compact", {"sessionId": session})
            listed = await call(client, "lecode/facts/list", {"sessionId": session})
        assert listed["facts"] == []
        assert (listed["learning"]["status"], listed["learning"]["reasonCounts"]) == (
            "failed",
            {"invalid_json": 1},
        )


class TestRequestsAreNotPreferences:
    async def test_the_request_is_proposed_and_only_the_convention_is_injected(
        self, start: Start, repo: Path
    ) -> None:
        # covers A4, A6: the request the real model stored as a preference is now a proposal
        # (shown by lecode/facts/list, never injected); the convention beside it is learned.
        first = f"{REQUEST}\n{CONVENTION}"

        def extraction(payload: str) -> list[dict[str, Any]]:
            seq = seq_of(payload, "Read pyproject")
            return fenced({"candidates": [candidate(REQUEST, seq), candidate(CONVENTION, seq)]})

        async with FakeOpenAI(respond=model(extraction)) as server:
            client, session = await session_with(start, repo, server, first)
            result = await call(client, "lecode/session/compact", {"sessionId": session})
            listed = await call(client, "lecode/facts/list", {"sessionId": session})
            # A new session of the project: only the learned convention reaches the model.
            other = await new_session(client)
            await call(client, "lecode/chat/send", {"sessionId": other, "text": "Hello."})
            sent = json.dumps(server.requests[-1].body)
        assert result["status"] == "compacted"
        assert [f["text"] for f in listed["facts"]] == [CONVENTION]
        learning = listed["learning"]
        assert (learning["status"], learning["reasonCounts"]) == ("learned", {})
        assert [(p["text"], p["kind"]) for p in learning["proposals"]] == [
            (REQUEST, "explicit_user_preference")
        ]
        assert learning["proposals"][0]["source"]["seqs"] == [1]
        assert CONVENTION in sent and "requires-python" not in sent

    async def test_a_question_alone_ends_proposed(self, start: Start, repo: Path) -> None:
        # covers A6: nothing learned, one proposal, no rejection counted
        question = "Which Python does this project need?"

        def extraction(payload: str) -> list[dict[str, Any]]:
            return fenced({"candidates": [candidate(question, seq_of(payload, "Which"))]})

        async with FakeOpenAI(respond=model(extraction)) as server:
            client, session = await session_with(start, repo, server, question)
            await call(client, "lecode/session/compact", {"sessionId": session})
            listed = await call(client, "lecode/facts/list", {"sessionId": session})
        assert listed["facts"] == []
        learning = listed["learning"]
        assert (learning["status"], learning["reasonCounts"]) == ("proposed", {})
        assert [p["text"] for p in learning["proposals"]] == [question]


def whole(given: str) -> str:
    return given


def transcript_lines(given: str) -> str:
    return given.split('<transcript inert_data="true">\n', 1)[1].rsplit("\n</transcript>", 1)[0]


class TestEchoingSummariser:
    @pytest.mark.parametrize("echo", [whole, transcript_lines], ids=["tags", "raw-lines"])
    async def test_an_echo_is_rejected_and_a_real_summary_later_covers_the_same_exchanges(
        self, start: Start, repo: Path, echo: Callable[[str], str]
    ) -> None:
        # covers C4: the cutoff stays; the rejection's reason is in the result
        answers = [echo, lambda given: "The person asked three things; each was answered."]

        def summary(given: str) -> str:
            return answers.pop(0)(given)

        async with FakeOpenAI(respond=model(lambda payload: [], summary)) as server:
            provider = {"base_url": server.base_url, "model": "gpt-4o", "api_key_env": ""}
            client = await start(repo, options={"provider": provider})
            session = await new_session(client)
            for text in ("Fix the build.", "q1", "q2"):
                await call(client, "lecode/chat/send", {"sessionId": session, "text": text})
            rejected = await call(client, "lecode/session/compact", {"sessionId": session})
            await call(client, "lecode/chat/send", {"sessionId": session, "text": "q3"})
            after_rejection = json.dumps(server.requests[-1].body)
            compacted = await call(client, "lecode/session/compact", {"sessionId": session})
        assert (rejected["status"], rejected["message"], rejected["coveredThrough"]) == (
            "rejected",
            "echoed_input",
            0,
        )
        assert rejected["usage"]["calls"] == 1 and rejected["usage"]["totalTokens"] == 480
        assert "Working summary" not in after_rejection  # the raw history went instead
        assert compacted["status"] == "compacted" and compacted["coveredThrough"] > 0
