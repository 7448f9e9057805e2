"""Rule-based learning over LSP at its defaults (issue 41): a person who opts in to learning
(`auto_learn = true`, `learning = "both"`, `rules_learn = "propose"`) with a model that proposes
nothing, as small local models mostly do. The issue's session stores no fact and proposes
nothing; a lasting convention is proposed, never stored unasked, and accepted in one step.

# covers A1, A4, A6, A9
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_lsp import LanguageClient

from tests.e2e.chat import new_session
from tests.e2e.conftest import Start, call
from tests.e2e.facts import error_of
from tests.fakes.openai_server import FakeOpenAI, Stream, text_chunks

ISSUE = (
    "The demo crashes on login.\nUse the staging database to reproduce the crash.\n"
    "Keep the fix small."
)
CONVENTION = "We always squash commits before merging in this repo."


def responder(summary: str) -> Callable[[dict[str, Any]], Stream]:
    """A model that summarises with `summary`, extracts nothing, and answers chats with Done."""

    def respond(body: dict[str, Any]) -> Stream:
        system = body["messages"][0]["content"]
        if system.startswith("You maintain the working summary"):
            return Stream(text_chunks(summary))
        if system.startswith("You extract durable project facts"):
            return Stream(text_chunks('{"candidates": []}'))
        return Stream(text_chunks("Done."))

    return respond


async def compacted(start: Start, repo: Path, server: FakeOpenAI, first: str) -> LanguageClient:
    """A client at the learning defaults, whose session (`first`, then three fillers) was
    compacted once."""
    options = {
        "provider": {"base_url": server.base_url, "model": "gpt-4o", "api_key_env": ""},
        "memory": {"auto_learn": True},  # learning = "both", rules_learn = "propose"
        "agent": {"permissions": {"memory_write": "allow"}},
    }
    client = await start(repo, options=options)
    session = await new_session(client)
    for text in (first, "Thanks, go on.", "Looks good to me.", "Okay, I see."):
        await call(client, "lecode/chat/send", {"sessionId": session, "text": text})
    result = await call(client, "lecode/session/compact", {"sessionId": session})
    assert result["status"] == "compacted"
    return client


class TestDefaults:
    async def test_the_issues_requests_become_neither_facts_nor_proposals(
        self, start: Start, repo: Path
    ) -> None:
        summary = (
            "So far: the demo crashes on login; use the staging database to reproduce the "
            "crash; keep the fix small."
        )
        async with FakeOpenAI(respond=responder(summary)) as server:
            client = await compacted(start, repo, server, ISSUE)
            listed = await call(client, "lecode/facts/list", {})
        assert listed["facts"] == []
        learning = listed["learning"]
        assert learning["proposals"] == [] and learning["learned"] == []
        assert learning["status"] != "learned"
        assert learning["reasonCounts"] == {"task_scoped": 2}

    async def test_a_lasting_convention_is_proposed_not_stored(
        self, start: Start, repo: Path
    ) -> None:
        summary = "So far: we always squash commits before merging in this repo."
        async with FakeOpenAI(respond=responder(summary)) as server:
            client = await compacted(start, repo, server, CONVENTION)
            listed = await call(client, "lecode/facts/list", {})
            assert listed["facts"] == []
            learning = listed["learning"]
            assert learning["status"] == "proposed"
            assert [(p["text"], p["why"]) for p in learning["proposals"]] == [
                (CONVENTION, "a rule found a lasting convention and no model affirmed it")
            ]
            # accepted in one step: remembered with its recorded evidence, listed no more
            target = {"sessionId": learning["sessionId"], "seq": learning["seq"], "index": 0}
            wrong = await error_of(
                call(client, "lecode/facts/acceptProposal", {**target, "index": 3})
            )
            assert wrong.code == -32602 and "index" in wrong.message
            accepted = await call(client, "lecode/facts/acceptProposal", target)
            assert accepted == {"factId": 1, "revision": 1}
            listed = await call(client, "lecode/facts/list", {})
            assert [(f["text"], f["status"]) for f in listed["facts"]] == [(CONVENTION, "valid")]
            assert listed["facts"][0]["source"] == learning["proposals"][0]["source"]
            assert listed["learning"]["proposals"] == []
            again = await error_of(call(client, "lecode/facts/acceptProposal", target))
            assert "no longer listed" in again.message
