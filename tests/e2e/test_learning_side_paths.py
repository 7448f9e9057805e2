"""Automatic learning over LSP, on its side paths: an extraction answer that is not quite JSON
or not quite Unicode, and evidence that changes while a learned fact waits to be written.

# covers A3, A8, A9 (issue 10, item 12; issue 11, item 7)
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import apsw
import pytest
from pytest_lsp import LanguageClient

from lecode_ls.memory.sessions.transcript_files import TranscriptPaths, lock_transcript
from tests.e2e.chat import new_session
from tests.e2e.conftest import Start, call
from tests.e2e.facts import candidate
from tests.fakes.openai_server import FakeOpenAI, Stream, Wait, text_chunks

PREFERENCE = "We use tabs for indentation in this repo."

Extraction = Callable[[int], str]
"""The extraction answer, given the seq of the message holding the preference."""


def responder(
    extraction: Extraction, gate: asyncio.Event | None = None, asked: asyncio.Event | None = None
) -> Callable[[dict[str, Any]], Stream]:
    """A model that summarises, extracts with `extraction` (setting `asked` when asked, and
    holding its answer until `gate` is set), and answers every chat with Done."""

    def respond(body: dict[str, Any]) -> Stream:
        system = body["messages"][0]["content"]
        if system.startswith("You maintain the working summary"):
            return Stream(text_chunks("So far: the build was fixed; tabs for indentation."))
        if system.startswith("You extract durable project facts"):
            payload = body["messages"][1]["content"]
            match = re.search(r"\[seq (\d+)\] user: Fix the build", payload)
            assert match
            if asked is not None:
                asked.set()
            steps = text_chunks(extraction(int(match[1])))
            return Stream([Wait(gate), *steps] if gate is not None else steps)
        return Stream(text_chunks("Done."))

    return respond


async def learning_session(
    start: Start, repo: Path, server: FakeOpenAI
) -> tuple[LanguageClient, str]:
    """A client with learning on, and a session with the preference in its first message, ready
    to be compacted."""
    options = {
        "provider": {"base_url": server.base_url, "model": "gpt-4o", "api_key_env": ""},
        "memory": {"auto_learn": True, "learning": "model"},  # the model's answer is tested
        "agent": {"permissions": {"memory_write": "allow"}},
    }
    client = await start(repo, options=options)
    session = await new_session(client)
    for text in (f"Fix the build.\n{PREFERENCE}\nThanks.", "q1", "q2"):
        await call(client, "lecode/chat/send", {"sessionId": session, "text": text})
    return client, session


async def learn_once(start: Start, repo: Path, server: FakeOpenAI) -> tuple[LanguageClient, str]:
    """`learning_session`, compacted once (one extraction)."""
    client, session = await learning_session(start, repo, server)
    result = await call(client, "lecode/session/compact", {"sessionId": session})
    assert result["status"] == "compacted"
    return client, session


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


def write_lock_held(db: Path, deadline: float) -> bool:
    """Whether another process takes facts.sqlite3's write lock before `deadline`: tried in
    50 ms waits of SQLite's own busy handler (no observable event says when it happens)."""
    while time.monotonic() < deadline:
        connection = apsw.Connection(str(db))
        connection.set_busy_timeout(50)
        try:
            connection.execute("BEGIN IMMEDIATE")
            connection.execute("ROLLBACK")
        except apsw.BusyError:
            return True
        finally:
            connection.close()
    return False


class TestPromotion:
    async def test_the_source_is_checked_inside_the_write_transaction(
        self, start: Start, repo: Path
    ) -> None:
        # covers A8: the test holds the session's transcript when the extraction answer comes.
        # The server must take the facts database's write lock first and only then read the
        # source; the test then changes the preference's bytes, and the fact is not written.
        # (Before: the source was checked without the lock, and nothing could see the change.)
        gate, asked = asyncio.Event(), asyncio.Event()

        def extraction(seq: int) -> str:
            return json.dumps({"candidates": [candidate(PREFERENCE, seq)]})

        async with FakeOpenAI(respond=responder(extraction, gate, asked)) as server:
            client, session = await learning_session(start, repo, server)
            # A fact already there: the database exists, so its lock is what is waited on.
            history = await call(client, "lecode/chat/history", {"sessionId": session})
            seq = next(i["seq"] for i in history["items"] if i.get("text") == "q1")
            snapshot = await call(
                client,
                "lecode/session/snapshot",
                {"sessionId": session, "startSeq": seq, "endSeq": seq},
            )
            await call(
                client, "lecode/facts/remember", {"text": "q1 was asked", "source": snapshot}
            )
            info = await call(client, "lecode/project/info")
            store = Path(info["storePath"])
            paths = TranscriptPaths.of(store / "sessions", session)
            compacting = asyncio.ensure_future(
                call(client, "lecode/session/compact", {"sessionId": session})
            )
            await asyncio.wait_for(asked.wait(), 10)
            with lock_transcript(paths):
                gate.set()
                deadline = time.monotonic() + 10
                held = await asyncio.to_thread(write_lock_held, store / "facts.sqlite3", deadline)
                # The person's words change while the fact waits: "tabs" becomes "TABS" (through
                # a descriptor of its own: the lock's is opened for appending).
                at = paths.jsonl.read_bytes().index(b"We use tabs")
                tamper = os.open(paths.jsonl, os.O_WRONLY)
                try:
                    os.pwrite(tamper, b"We use TABS", at)
                finally:
                    os.close(tamper)
            assert held, "the server read the source before taking the write lock"
            assert (await compacting)["status"] == "compacted"
            listed = await call(client, "lecode/facts/list", {"sessionId": session})
        assert [f["text"] for f in listed["facts"]] == ["q1 was asked"]
        assert listed["learning"]["status"] == "stale"
        assert listed["learning"]["reasonCounts"] == {"stale_context": 1}
