"""Fact listings with the learning status, on every path: `lecode/facts/list`, the model's
`memory_list` and `/memory facts`. The status counts inside the 16,384-byte cap (R8), and it is
the one of the session the request or the tool call belongs to; the newest session's only where
none is given (A6).

# covers R8, A6 (issue 11, item 2)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_lsp import LanguageClient

from lecode_ls.agent.turn_memory import MESSAGE_HEADING
from tests.e2e.chat import Deltas, new_session, tool_chunks
from tests.e2e.conftest import Start, call, command
from tests.e2e.facts import candidate, imported, remember, seq_of
from tests.fakes.openai_server import FakeOpenAI, Stream, text_chunks

CAP = 16_384
LIST_FACTS = "Please list the facts."

Extraction = Callable[[str], list[dict[str, Any]]]
"""The candidates an extraction answers, given its payload."""


def size(value: Any) -> int:
    if isinstance(value, str):
        return len(value.encode("utf-8"))
    return len(json.dumps(value, ensure_ascii=False).encode("utf-8"))


def model(extraction: Extraction) -> Callable[[dict[str, Any]], Stream]:
    """Summarises; extracts with `extraction`; calls memory_list when asked to list the facts,
    answers "ok" to its result, and "Done." to anything else."""

    def respond(body: dict[str, Any]) -> Stream:
        messages = body["messages"]
        system, last = messages[0]["content"], messages[-1]
        if system.startswith("You maintain the working summary"):
            return Stream(text_chunks("So far: the style numbers (abc)."))
        if system.startswith("You extract durable project facts"):
            return Stream(
                text_chunks(json.dumps({"candidates": extraction(messages[1]["content"])}))
            )
        # The person's text follows the turn's memory block, when there is one (issue 40).
        if last["role"] == "user" and last["content"].endswith(MESSAGE_HEADING + LIST_FACTS):
            return Stream(tool_chunks("memory_list", {}))
        if last["role"] == "user" and last["content"] == LIST_FACTS:
            return Stream(tool_chunks("memory_list", {}))
        return Stream(text_chunks("ok" if last["role"] == "tool" else "Done."))

    return respond


async def learning_client(start: Start, repo: Path, server: FakeOpenAI) -> LanguageClient:
    options = {
        "provider": {"base_url": server.base_url, "model": "gpt-4o", "api_key_env": ""},
        "memory": {"auto_learn": True},
        "agent": {"permissions": {"memory_write": "allow"}},
    }
    return await start(repo, options=options)


async def compacted(client: LanguageClient, *texts: str) -> str:
    """A new session holding `texts` (and two more messages), compacted once."""
    session = await new_session(client)
    for text in (*texts, "q1", "q2"):
        await call(client, "lecode/chat/send", {"sessionId": session, "text": text})
    assert (await call(client, "lecode/session/compact", {"sessionId": session}))[
        "status"
    ] == "compacted"
    return session


async def memory_list_result(client: LanguageClient, server: FakeOpenAI, session: str) -> Any:
    """What the model's memory_list returned in a chat turn of `session`."""
    await call(client, "lecode/chat/send", {"sessionId": session, "text": LIST_FACTS})
    tool = server.requests[-1].body["messages"][-1]
    assert tool["role"] == "tool"
    return tool["content"]


class TestTheCap:
    async def test_the_learning_status_counts_inside_16384_bytes(
        self, start: Start, repo: Path
    ) -> None:
        # Four proposals of about 500 bytes each, and facts of 512 four-byte characters: alone
        # the facts fill a page; with the status added after the check, every path passed
        # 16,384 bytes.
        wishes = [f"Prefer the style number {n} " + "abc " * 118 for n in range(4)]

        def extraction(payload: str) -> list[dict[str, Any]]:
            return [candidate(w, seq_of(payload, w), proposal=True) for w in wishes]

        async with FakeOpenAI(respond=model(extraction)) as server:
            client = await learning_client(start, repo, server)
            evidence = await imported(client)
            for n in range(10):
                await remember(client, evidence, 3, f"{n} " + "🦀" * 512)
            session = await compacted(client, *wishes)

            listed = await call(client, "lecode/facts/list", {"sessionId": session})
            assert len(listed["learning"]["proposals"]) == 4
            assert 0 < len(listed["facts"]) < 10 and listed["nextOffset"] == len(listed["facts"])
            assert size(listed) <= CAP

            tool = await memory_list_result(client, server, session)
            assert len(json.loads(tool)["learning"]["proposals"]) == 4
            assert size(tool) <= CAP

            text = (
                await call(
                    client, "lecode/command", {"line": "/memory facts", "sessionId": session}
                )
            )["output"]
            assert "proposal 3 " in text and "[more: /memory facts " in text
            assert size(text) <= CAP


class TestTheCurrentSession:
    async def test_each_path_reports_the_learning_of_its_own_session(
        self, start: Start, repo: Path
    ) -> None:
        def extraction(payload: str) -> list[dict[str, Any]]:
            if "session B" not in payload:
                return []  # session A: no_candidates
            return [candidate("not said by anyone", seq_of(payload, "session B"), proposal=True)]

        async with FakeOpenAI(respond=model(extraction)) as server:
            client = await learning_client(start, repo, server)
            a = await compacted(client, "session A")
            b = await compacted(client, "session B")
            status = {a: "no_candidates", b: "rejected"}
            # Sessions made in the same second sort by their random part: the server's newest
            # is the greater ID. The paths are asked about the other one.
            given, newest = sorted((a, b))

            listed = await call(client, "lecode/facts/list", {"sessionId": given})
            assert listed["learning"]["sessionId"] == given

            tool = json.loads(await memory_list_result(client, server, given))
            learning = tool["learning"]
            assert (learning["session_id"], learning["status"]) == (given, status[given])

            deltas = Deltas(client)
            await call(client, "lecode/chat/send", {"sessionId": given, "text": "/memory facts"})
            line = f"Learning ({given}, seq"
            assert line in deltas.text() and status[given] in deltas.text()
            params = {"line": "/memory facts", "sessionId": given}
            sent = (await call(client, "lecode/command", params))["output"]
            assert line in sent and status[given] in sent

            # No session given: the newest session that has a learning event.
            shown = await command(client, "facts")
            assert f"Learning ({newest}, seq" in shown and status[newest] in shown


class TestRecallPages:
    async def test_recall_and_read_print_within_16384_bytes(self, start: Start, repo: Path) -> None:
        # covers R2 on the /memory side path: the page was capped as compact JSON, then printed
        # indented, which passed the cap.
        client = await start(repo)
        # Found by trying: a first page of 16,377 bytes as compact JSON (16,425 indented).
        records = [{"role": "user", "content": "🦀" * 3912 + "é" * 184}]
        session = (await call(client, "lecode/session/import", {"records": records}))["sessionId"]
        output = (await call(client, "lecode/command", {"line": f"/memory read {session} 1 1"}))[
            "output"
        ]
        assert json.loads(output)["status"] == "valid"
        assert 16_300 < size(output) <= CAP
