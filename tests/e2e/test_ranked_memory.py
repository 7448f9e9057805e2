"""Memory that scales (issue 25), black-box over LSP: with 1,000 facts, a turn asking about one
of them is shown it (the provider request the server sends is what the model saw), and the
person pins facts and searches them.

# covers I1, I3, I4 (what fills the facts allocation, labelled, each with its reason), P3, P5
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lecode_ls.config import Settings
from lecode_ls.memory.sessions import source_snapshot
from lecode_ls.runtime import Runtimes
from tests.e2e.chat import Deltas, new_session
from tests.e2e.conftest import Start, call
from tests.e2e.facts import error_of
from tests.fakes.concepts import MODEL, concept_vector, concepts
from tests.fakes.openai_server import FakeOpenAI, Stream, text_chunks

SERVICES = ["billing", "search", "auth", "payments", "ledger", "mailer", "gateway", "catalog"]
# (the fact a person once told, the question asked later in other words)
KINDS = [
    ("The {s}-{n} service reads its signing key from Vault.",
     "Quick question about {s}-{n}: what do we use for its signing key?"),
    ("{s}-{n} writes its logs to Loki with a 14-day retention.",
     "Where do the logs of {s}-{n} end up?"),
    ("Deploys of {s}-{n} go out on Tuesdays after the freeze lifts.",
     "Which weekday is {s}-{n} deployed?"),
    ("The {s}-{n} database is PostgreSQL 16 on the shared cluster.",
     "What database engine backs {s}-{n}?"),
    ("{s}-{n} is owned by the platform team; page them in #ops-{s}.",
     "Who owns {s}-{n} and how do I reach them?"),
]  # fmt: skip
FACTS = 1000


def fact_texts(count: int = FACTS) -> list[str]:
    """`count` (at most 1,000) distinct facts: 8 services x 25 numbers x 5 kinds."""
    return [
        kind.format(s=service, n=n)
        for n in range(1, 26)
        for service in SERVICES
        for kind, _ in KINDS
    ][:count]


def stored(repo: Path, config_dir: Path, count: int = FACTS) -> list[str]:
    """The facts, each remembered from its own user message, as a person using lecode for
    months would have them (populated in-process, before the server starts: 1,000 LSP
    round trips would only slow the test down; the measurement below is black-box)."""
    texts = fact_texts(count)
    runtimes = Runtimes(config_dir, Settings())
    runtime = runtimes.for_folder(repo.resolve())
    session = runtime.sessions.create("months of work")
    for text in texts:
        runtime.sessions.append(session, {"kind": "message", "role": "user", "content": text})
    for seq, text in enumerate(texts, start=1):
        ref = source_snapshot(runtime.sessions, session, seq, seq, exclusions=runtime.facts)
        runtime.facts.remember(text, ref, check=runtime.check_source)
    runtimes.close_all()
    return texts


def injected(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The fact lines a request carries: the session's in the system message, and each turn's
    in front of its user message (issue 40)."""
    lines = []
    for message in body["messages"]:
        content = message.get("content")
        if message["role"] in ("system", "user") and isinstance(content, str):
            lines += [json.loads(x) for x in content.splitlines() if x.startswith('{"fact_id"')]
    return lines


class TestAThousandFacts:
    async def test_a_turn_asking_about_one_fact_is_shown_it(
        self, start: Start, repo: Path, isolated_config_dir: Path
    ) -> None:
        texts = stored(repo, isolated_config_dir)
        # 20 questions, spread over services, numbers and kinds.
        asked = [(KINDS[i % 5], SERVICES[(i * 3) % 8], 1 + (i * 7) % 25) for i in range(20)]
        async with FakeOpenAI(respond=lambda body: Stream(text_chunks("ok"))) as server:
            options = {
                "provider": {"base_url": server.base_url, "model": "gpt-4o", "api_key_env": ""}
            }
            client = await start(repo, options=options)
            session = await new_session(client)
            shown = 0
            for (fact, question), service, n in asked:
                before = len(server.bodies)
                text = question.format(s=service, n=n)
                await call(client, "lecode/chat/send", {"sessionId": session, "text": text})
                wanted = fact.format(s=service, n=n)
                assert wanted in texts
                lines = injected(server.bodies[before])
                if any(line["text"] == wanted for line in lines):
                    shown += 1
                assert all("reason" in line for line in lines)
        assert shown >= 19, f"{shown} of 20 turns were shown the fact they asked about"
        # Without [memory] embeddings_model, no embedding request is ever made.
        assert not any(r.path.endswith("/embeddings") for r in server.requests)


class TestPinsAndSearch:
    async def test_a_pinned_fact_is_injected_first_and_unpinned_again(
        self, start: Start, repo: Path, isolated_config_dir: Path
    ) -> None:
        stored(repo, isolated_config_dir)
        async with FakeOpenAI(respond=lambda body: Stream(text_chunks("ok"))) as server:
            options = {
                "provider": {"base_url": server.base_url, "model": "gpt-4o", "api_key_env": ""}
            }
            client = await start(repo, options=options)
            deltas = Deltas(client)
            pinned = await call(client, "lecode/facts/pin", {"factId": 7})
            assert pinned == {"factId": 7, "pinned": True, "changed": True}
            assert (await call(client, "lecode/facts/pin", {"factId": 7}))["changed"] is False
            session = await new_session(client)
            await call(client, "lecode/chat/send", {"sessionId": session, "text": "Hello"})
            first = injected(server.bodies[-1])[0]
            assert (first["fact_id"], first["reason"]) == (7, "pinned")
            memory = await deltas.wait_for("memory")
            assert memory["facts"][0] == {"factId": 7, "revision": 1, "reason": "pinned"}
            history = await call(client, "lecode/chat/history", {"sessionId": session})
            [event] = [item for item in history["items"] if item["kind"] == "memory"]
            assert event["facts"][0]["reason"] == "pinned"
            listed = await call(client, "lecode/facts/list", {"query": "billing-1 signing key"})
            assert listed["facts"][0]["matched"] == ["billing-1", "signing", "key"]
            await call(client, "lecode/facts/unpin", {"factId": 7})
            await call(client, "lecode/chat/send", {"sessionId": session, "text": "Hello"})
            # The session's stable part is replayed as first sent (issue 40): fact 7 is still
            # there, once, and a new session no longer shows it as pinned.
            again = [line["reason"] for line in injected(server.bodies[-1]) if line["fact_id"] == 7]
            assert again == ["pinned"]
            other = await new_session(client)
            await call(client, "lecode/chat/send", {"sessionId": other, "text": "Hello"})
            again = [line["reason"] for line in injected(server.bodies[-1]) if line["fact_id"] == 7]
            assert again in ([], ["recent"])

    @pytest.mark.parametrize(
        ("method", "params", "field"),
        [
            ("lecode/facts/pin", {}, "factId"),
            ("lecode/facts/pin", {"factId": "7"}, "factId"),
            ("lecode/facts/unpin", {"factId": 0}, "factId"),
            ("lecode/facts/list", {"query": 5}, "query"),
            ("lecode/facts/list", {"query": "x" * 300_000}, "query"),
        ],
    )
    async def test_malformed_params_name_the_field(
        self, start: Start, repo: Path, method: str, params: Any, field: str
    ) -> None:
        client = await start(repo)
        exc = await error_of(call(client, method, params))
        assert (exc.code, exc.data["field"]) == (-32602, field)

    async def test_a_hostile_query_answers_and_an_unknown_fact_is_not_found(
        self, start: Start, repo: Path
    ) -> None:
        client = await start(repo)
        for query in ['"', "*", "NEAR(", "-x", "x " * 51_200]:
            listed = await call(client, "lecode/facts/list", {"query": query})
            assert listed == {"facts": [], "offset": 0, "nextOffset": None}
        exc = await error_of(call(client, "lecode/facts/pin", {"factId": 99}))
        assert exc.data["code"] == "fact_not_found"


class TestEmbeddings:
    async def test_with_embeddings_a_fact_sharing_no_word_with_the_question_is_shown(
        self, start: Start, repo: Path, isolated_config_dir: Path
    ) -> None:
        # covers issue 25 item 5: the turn's message is embedded through the provider and fused
        # with BM25; the fact's vector was computed before (as the background backfill does).
        texts = [f"The widget-{n} module builds with make." for n in range(60)]
        texts.append("Argo CD does the rollout from the gitops repository.")
        runtimes = Runtimes(isolated_config_dir, Settings())
        runtime = runtimes.for_folder(repo.resolve())
        session = runtime.sessions.create("months of work")
        for text in texts:
            runtime.sessions.append(session, {"kind": "message", "role": "user", "content": text})
        for seq, text in enumerate(texts, start=1):
            ref = source_snapshot(runtime.sessions, session, seq, seq, exclusions=runtime.facts)
            runtime.facts.remember(text, ref, check=runtime.check_source)
        items = runtime.facts.vectors.missing(MODEL, 100)
        runtime.facts.vectors.put(MODEL, [(m, concept_vector(m.text)) for m in items])
        runtimes.close_all()
        async with FakeOpenAI(respond=lambda body: Stream(text_chunks("ok"))) as server:
            server.embed = concepts
            options = {
                "provider": {"base_url": server.base_url, "model": "gpt-4o", "api_key_env": ""},
                "memory": {"embeddings_model": MODEL},
            }
            client = await start(repo, options=options)
            session_id = await new_session(client)
            question = "How do releases reach production?"
            await call(client, "lecode/chat/send", {"sessionId": session_id, "text": question})
            lines = injected(server.bodies[-1])
        [argo] = [line for line in lines if line["text"].startswith("Argo CD")]
        assert argo["reason"] == "similar in meaning"
        embedded = [r.body["input"] for r in server.requests if r.path == "/v1/embeddings"]
        assert [question] in embedded
