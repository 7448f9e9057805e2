"""A long chat over LSP: 200 turns with automatic compactions, remembered and forgotten facts,
and undos; after every turn, what the model was sent is checked against the spec.

The model is the loopback OpenAI-compatible server, answering from what it is asked. The checks
read the project's store directly (a second reader, as another process would) and compute what
the working context must be with their own small oracle, independent of lecode_ls.memory.working:
- the working summary in use is the newest compact event of the current generation whose lineage
  lists exactly the participating messages it covers, each chunk's digest matching the records;
- the request carried exactly that summary, then exactly the participating messages after it;
- a remembered fact is injected while valid; once forgotten, it is not, its evidence can never be
  remembered again, and no generated message from before the forget reaches the model (E2).

# covers C1, C3, C5, C7, C8, E1, E2, E5, I1, I3, S5
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from lecode_ls.agent.turn_memory import MESSAGE_HEADING, TURN_HEADING
from lecode_ls.memory.canonical import records_digest
from lecode_ls.memory.facts.store import FactStore
from lecode_ls.memory.sessions.store import SessionStore
from tests.e2e.conftest import Start, call
from tests.fakes.openai_server import FakeOpenAI, Stream, text_chunks

TURNS = 200
FILLER = " ".join(f"word{n}" for n in range(60))  # ~500 bytes a question: compaction comes often


def model(body: dict[str, Any]) -> Stream:
    system = body["messages"][0]["content"]
    if system.startswith("You maintain the working summary"):
        return Stream(
            text_chunks(f"summary {len(body['messages'][1]['content'])}", usage=(900, 20))
        )
    last = body["messages"][-1]["content"]
    return Stream(text_chunks(f"answer to {last.split(' ', 2)[1]}", usage=(1500, 10)))


def participating(
    records: list[dict[str, Any]], sessions: SessionStore, facts: FactStore, sid: str
) -> list[dict[str, Any]]:
    """The oracle's predicate: visible for work, not excluded, generated ones of this epoch."""
    visibility = sessions.visibility(sid)
    excluded = facts.excluded_seqs(sid)
    generation = facts.generation()
    kept = []
    for record in records:
        seq = record["seq"]
        if not visibility.visible(seq, "working") or seq in excluded:
            continue
        generated = record["kind"] == "message" and record["role"] != "user"
        if generated and record.get("meta", {}).get("generation", 0) != generation:
            continue
        kept.append(record)
    return kept


def working_summary(
    records: list[dict[str, Any]], kept: list[dict[str, Any]], generation: int
) -> dict[str, Any] | None:
    by_seq = {r["seq"]: r for r in records}
    for event in reversed([r for r in kept if r["kind"] == "event" and r["type"] == "compact"]):
        covered = [
            r["seq"]
            for r in kept
            if r["kind"] == "message" and r["seq"] <= event["covered_through"]
        ]
        lineage = [s for chunk in event["lineage"] for s in chunk["seqs"]]
        digests_ok = all(
            chunk["digest"]
            == records_digest([by_seq[s] for s in range(chunk["seqs"][0], chunk["seqs"][-1] + 1)])
            for chunk in event["lineage"]
        )
        if event["generation"] == generation and lineage == covered and digests_ok:
            return event
    return None


def without_memory(message: dict[str, Any]) -> dict[str, Any]:
    """A sent message without the turn's memory block in front of a user's text."""
    content = message.get("content")
    if message["role"] == "user" and isinstance(content, str) and content.startswith(TURN_HEADING):
        return {**message, "content": content.split(MESSAGE_HEADING, 1)[1]}
    return message


class TestLongSession:
    @pytest.mark.timeout(300)
    async def test_two_hundred_turns_with_compactions_forgets_and_undos(
        self, start: Start, repo: Path
    ) -> None:
        async with FakeOpenAI(respond=model) as server:
            options = {
                "provider": {
                    "base_url": server.base_url,
                    "model": "local-model",
                    "api_key_env": "",
                },
                "agent": {"context_window": 8192},
                "compaction": {"buffer_tokens": 1024, "mid_turn_threshold": 0.5},
            }
            client = await start(repo, options=options)
            store = Path((await call(client, "lecode/project/info", {}))["storePath"])
            sid = (await call(client, "lecode/session/new", {}))["sessionId"]
            sessions = SessionStore(store)
            facts = FactStore(store / "facts.sqlite3", root=store)
            remembered: dict[str, Any] | None = None
            compactions = forgets = undos = 0
            try:
                for turn in range(TURNS):
                    sent_before = len(server.requests)
                    result = await call(
                        client,
                        "lecode/chat/send",
                        {"sessionId": sid, "text": f"question {turn} {FILLER}"},
                    )
                    assert result["stopReason"] == "stop", (turn, result)
                    chat_requests = [
                        r.body
                        for r in server.requests[sent_before:]
                        if not r.body["messages"][0]["content"].startswith("You maintain")
                    ]
                    compactions += len(server.requests[sent_before:]) - len(chat_requests)
                    sent = chat_requests[-1]["messages"]

                    sessions = SessionStore(store)  # read afresh, as another process would
                    length = sessions.length(sid)
                    records = sessions.read(sid, 1, length - 1)
                    kept = participating(records, sessions, facts, sid)
                    summary = working_summary(records, kept, facts.generation())
                    # What the request carried: the summary, then the raw participating messages
                    # after it, up to this turn's question (the answer came after the request).
                    cutoff = summary["covered_through"] if summary else 0
                    raw = [
                        {"role": r["role"], "content": r["content"]}
                        for r in kept
                        if r["kind"] == "message" and r["seq"] > cutoff
                    ][:-1]
                    history = sent[1:]
                    if summary is not None:
                        assert (
                            history[0]["role"] == "system"
                            and summary["summary"] in history[0]["content"]
                        )
                        history = history[1:]
                    else:
                        assert not history[0]["content"].startswith("# Working summary"), turn
                    # Each turn's memory block sits in front of its message (issue 40).
                    assert [without_memory(m) for m in history] == raw, turn

                    memory = [sent[0]["content"]] + [
                        m["content"].split(MESSAGE_HEADING, 1)[0]
                        for m in sent
                        if m["role"] == "user" and m["content"].startswith(TURN_HEADING)
                    ]
                    if remembered is not None:
                        assert any(remembered["text"] in part for part in memory), turn

                    if turn % 25 == 10:  # remember the latest question as a fact
                        seq = max(
                            r["seq"] for r in kept if r["kind"] == "message" and r["role"] == "user"
                        )
                        source = await call(
                            client,
                            "lecode/session/snapshot",
                            {"sessionId": sid, "startSeq": seq, "endSeq": seq},
                        )
                        text = f"fact from turn {turn}"
                        fact = await call(
                            client, "lecode/facts/remember", {"text": text, "source": source}
                        )
                        remembered = {
                            "id": fact["factId"],
                            "text": text,
                            "source": source,
                            "turn": turn,
                        }
                    elif remembered is not None and turn == remembered["turn"] + 7:  # forget it
                        await call(client, "lecode/facts/forget", {"factId": remembered["id"]})
                        forgets += 1
                        with pytest.raises(JsonRpcException) as gone_error:  # content-free
                            await call(client, "lecode/facts/recall", {"factId": remembered["id"]})
                        assert gone_error.value.data["code"] == "fact_not_found"
                        with pytest.raises(JsonRpcException) as refused:
                            await call(
                                client,
                                "lecode/facts/remember",
                                {"text": "again", "source": remembered["source"]},
                            )
                        assert "excluded" in str(refused.value.data)
                        gone, remembered = remembered, None
                        # E2: the next request carries no generated message from before the forget.
                        before = len(server.requests)
                        after = await call(
                            client,
                            "lecode/chat/send",
                            {"sessionId": sid, "text": f"after {turn} {FILLER}"},
                        )
                        assert after["stopReason"] == "stop", (after, str(store))
                        nxt = [
                            r.body["messages"]
                            for r in server.requests[before:]
                            if not r.body["messages"][0]["content"].startswith("You maintain")
                        ][-1]
                        assert gone["text"] not in nxt[0]["content"]
                        assert [m["role"] for m in nxt[1:]].count("assistant") == 0
                    elif turn % 30 == 29:
                        await call(client, "lecode/session/undo", {"sessionId": sid})
                        undos += 1
            finally:
                sessions.close()
                facts.close()
        assert compactions >= 10 and forgets >= 5 and undos >= 5, (compactions, forgets, undos)
        compacts = [r for r in records if r["kind"] == "event" and r["type"] == "compact"]
        assert all(
            chunk["seqs"][-1] - chunk["seqs"][0] < 200 for c in compacts for chunk in c["lineage"]
        )
        json.dumps(compacts)  # every event is plain JSON
