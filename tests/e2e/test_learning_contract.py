"""The seed's extraction contract over LSP (memory.md, "Evidence contract"): its literal example
answer is learned as written, whatever name the server's own prompt gives the conflicts field.

# covers A3, A6, A9 (issue 41, item 2)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.e2e.chat import new_session
from tests.e2e.conftest import Start, call
from tests.fakes.openai_server import FakeOpenAI, Stream, text_chunks

PREFERENCE = "For this project, I prefer tabs for indentation."
SEED_EXAMPLE = """\
{
  "candidates": [{
    "text": "For this project, I prefer tabs for indentation.",
    "source_seqs": [1],
    "kind": "explicit_user_preference",
    "quote": "For this project, I prefer tabs for indentation.",
    "conflicts": [],
    "proposal": false
  }]
}"""
"""memory.md's example, byte for byte (its `conflicts` is the prompt's `supersedes`)."""


def responder(extraction: str, seen: list[str]) -> Callable[[dict[str, Any]], Stream]:
    """A model that summarises, answers the extraction with `extraction` (keeping the payload it
    was shown in `seen`), and answers every chat with Done."""

    def respond(body: dict[str, Any]) -> Stream:
        system = body["messages"][0]["content"]
        if system.startswith("You maintain the working summary"):
            return Stream(text_chunks("So far: tabs for indentation were asked for."))
        if system.startswith("You extract durable project facts"):
            seen.append(body["messages"][1]["content"])
            return Stream(text_chunks(extraction))
        return Stream(text_chunks("Done."))

    return respond


async def learned(start: Start, repo: Path, extraction: str) -> tuple[dict[str, Any], list[str]]:
    """A session whose first message is the seed's preference, compacted once with `extraction`
    as the model's answer (learning by the model alone, so the answer is what is judged); the
    fact listing after it, and the extraction payloads the model was shown."""
    seen: list[str] = []
    async with FakeOpenAI(respond=responder(extraction, seen)) as server:
        options = {
            "provider": {"base_url": server.base_url, "model": "gpt-4o", "api_key_env": ""},
            "memory": {"auto_learn": True, "learning": "model"},
            "agent": {"permissions": {"memory_write": "allow"}},
        }
        client = await start(repo, options=options)
        session = await new_session(client)
        for text in (PREFERENCE, "q1", "q2"):
            await call(client, "lecode/chat/send", {"sessionId": session, "text": text})
        result = await call(client, "lecode/session/compact", {"sessionId": session})
        assert result["status"] == "compacted"
        listed = await call(client, "lecode/facts/list", {"sessionId": session})
    return listed, seen


class TestTheSeedsExample:
    async def test_the_literal_example_is_learned(self, start: Start, repo: Path) -> None:
        # covers A3: `"conflicts": []` as memory.md writes it (refused as candidate_schema before)
        listed, seen = await learned(start, repo, SEED_EXAMPLE)
        assert f"[seq 1] user: {PREFERENCE}" in seen[0]  # the example's seq is the message's
        assert [f["text"] for f in listed["facts"]] == [PREFERENCE]
        assert listed["learning"]["status"] == "learned"
        assert listed["learning"]["reasonCounts"] == {}

    async def test_the_prompts_supersedes_is_accepted_too(self, start: Start, repo: Path) -> None:
        answer = SEED_EXAMPLE.replace('"conflicts"', '"supersedes"')
        listed, _ = await learned(start, repo, answer)
        assert [f["text"] for f in listed["facts"]] == [PREFERENCE]

    async def test_a_candidate_naming_both_is_refused(self, start: Start, repo: Path) -> None:
        candidate = json.loads(SEED_EXAMPLE)["candidates"][0]
        answer = json.dumps({"candidates": [{**candidate, "supersedes": []}]})
        listed, _ = await learned(start, repo, answer)
        assert listed["facts"] == []
        assert listed["learning"]["status"] == "rejected"
        assert listed["learning"]["reasonCounts"] == {"candidate_schema": 1}
