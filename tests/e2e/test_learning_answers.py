"""Automatic learning over LSP, on its side paths: what an extraction answer that is not quite
JSON, or not quite Unicode, does to the candidates, as `lecode/facts/list` reports it.

# covers A3, A9 (issue 10, item 12)
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pytest_lsp import LanguageClient

from tests.e2e.chat import new_session
from tests.e2e.conftest import Start, call
from tests.fakes.openai_server import FakeOpenAI, Stream, text_chunks

PREFERENCE = "We use tabs for indentation in this repo."

Extraction = Callable[[int], str]
"""The extraction answer, given the seq of the message holding the preference."""


def responder(extraction: Extraction) -> Callable[[dict[str, Any]], Stream]:
    """A model that summarises, extracts with `extraction`, and answers every chat with Done."""

    def respond(body: dict[str, Any]) -> Stream:
        system = body["messages"][0]["content"]
        if system.startswith("You maintain the working summary"):
            return Stream(text_chunks("summary of the work so far"))
        if system.startswith("You extract durable project facts"):
            payload = body["messages"][1]["content"]
            match = re.search(r"\[seq (\d+)\] user: Fix the build", payload)
            assert match
            return Stream(text_chunks(extraction(int(match[1]))))
        return Stream(text_chunks("Done."))

    return respond


async def learn_once(start: Start, repo: Path, server: FakeOpenAI) -> tuple[LanguageClient, str]:
    """A session with the preference in its first message, compacted once (one extraction)."""
    options = {
        "provider": {"base_url": server.base_url, "model": "gpt-4o", "api_key_env": ""},
        "memory": {"auto_learn": True},
        "agent": {"permissions": {"memory_write": "allow"}},
    }
    client = await start(repo, options=options)
    session = await new_session(client)
    for text in (f"Fix the build.\n{PREFERENCE}\nThanks.", "q1", "q2"):
        await call(client, "lecode/chat/send", {"sessionId": session, "text": text})
    result = await call(client, "lecode/session/compact", {"sessionId": session})
    assert result["status"] == "compacted"
    return client, session


def candidate(text: str, seq: int) -> dict[str, Any]:
    return {
        "text": text,
        "source_seqs": [seq],
        "kind": "explicit_user_preference",
        "quote": text,
        "conflicts": [],
        "proposal": False,
    }


class TestAnswerParsing:
    @pytest.mark.parametrize("ensure_ascii", [True, False], ids=["escaped", "raw"])
    async def test_a_lone_surrogate_rejects_only_its_candidate(
        self, start: Start, repo: Path, ensure_ascii: bool
    ) -> None:
        def extraction(seq: int) -> str:
            bad = candidate("We use \ud800 for indentation.", seq)
            return json.dumps(
                {"candidates": [bad, candidate(PREFERENCE, seq)]}, ensure_ascii=ensure_ascii
            )

        async with FakeOpenAI(respond=responder(extraction)) as server:
            client, session = await learn_once(start, repo, server)
            listed = await call(client, "lecode/facts/list", {"sessionId": session})
        assert [f["text"] for f in listed["facts"]] == [PREFERENCE]
        assert listed["learning"]["status"] == "learned"
        assert listed["learning"]["reasonCounts"] == {"invalid_text": 1}

    @pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
    async def test_nan_and_infinity_are_not_json(
        self, start: Start, repo: Path, constant: str
    ) -> None:
        def extraction(seq: int) -> str:
            good = json.dumps(candidate(PREFERENCE, seq))
            return '{"candidates": [' + good[:-1] + ', "score": ' + constant + "}]}"

        async with FakeOpenAI(respond=responder(extraction)) as server:
            client, session = await learn_once(start, repo, server)
            listed = await call(client, "lecode/facts/list", {"sessionId": session})
        assert listed["facts"] == []
        assert listed["learning"]["status"] == "failed"
        assert listed["learning"]["reasonCounts"] == {"invalid_json": 1}
