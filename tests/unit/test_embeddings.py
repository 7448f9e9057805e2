"""Semantic fact ranking, opt-in (issue 25 item 5): the vectors kept in facts.sqlite3, the
`/embeddings` client against the loopback fake (a real HTTP server), the background backfill,
and reciprocal rank fusion in the selection, with a tiny concept model standing in for a real
embedding model (tests/live runs a real one).

# covers I3 (which facts fill the allocation), F7 (forgotten text leaves the vectors too)
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from lecode_ls.agent.embeddings import Embeddings, backfill, query_vector
from lecode_ls.errors import InvalidParams, ProviderError
from lecode_ls.memory.facts.model import Purpose, SourceLike, StoredRef
from lecode_ls.memory.facts.store import FactStore
from lecode_ls.memory.injection import build_memory_section
from lecode_ls.memory.selection import QueryVector, select, turn_query
from lecode_ls.runtime import Runtime
from tests.fakes.concepts import MODEL, concept_vector, concepts
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.unit.stores import chat, remember


def accept(ref: SourceLike, purpose: Purpose) -> None:
    """A source check that accepts everything."""


@pytest.fixture
def store(tmp_path: Path) -> FactStore:
    facts = FactStore(tmp_path / "facts.sqlite3")
    yield facts  # type: ignore[misc]
    assert facts.verify() == []
    facts.close()


class TestTheVectorsInTheStore:
    def test_missing_vectors_are_filled_and_the_nearest_found(self, store: FactStore) -> None:
        ids = [
            store.remember(text, StoredRef("s", (n,), "d"), check=accept)[0]
            for n, text in enumerate(
                ["We ship with Argo CD.", "Prices are integer cents.", "Logs go to Datadog."], 1
            )
        ]
        missing = store.vectors.missing(MODEL, 10)
        assert [m.fact_id for m in missing] == ids[::-1]  # the newest first
        assert store.vectors.put(MODEL, [(m, concept_vector(m.text)) for m in missing]) == 3
        assert store.vectors.missing(MODEL, 10) == []
        assert store.vectors.count(MODEL) == 3 and store.vectors.count("other") == 0
        [(nearest, cosine), *_] = store.vectors.nearest(MODEL, concept_vector("release"), 3)
        assert nearest == ids[0] and 0.9 < cosine < 1.0001  # float32 storage

    def test_a_correction_and_a_forget_drop_the_vector(self, store: FactStore) -> None:
        fact, _ = store.remember("We ship on Fridays.", StoredRef("s", (1,), "d"), check=accept)
        [item] = store.vectors.missing(MODEL, 5)
        store.vectors.put(MODEL, [(item, concept_vector(item.text))])
        store.correct(
            fact, "We ship on Mondays.", expected_revision=1, ref=StoredRef("s", (2,), "e"),
            check=accept, has_authored_text=lambda ref: True,
        )  # fmt: skip
        assert [(m.fact_id, m.revision) for m in store.vectors.missing(MODEL, 5)] == [(fact, 2)]
        assert store.vectors.put(MODEL, [(item, concept_vector(item.text))]) == 0  # stale
        store.forget(fact)
        assert store.vectors.count(MODEL) == 0 and store.vectors.nearest(MODEL, [1.0], 3) == []

    @pytest.mark.parametrize("vector", [[], [math.nan], [0.0, 0.0], [1.0] * 4097, ["1"]])
    def test_a_vector_from_the_provider_is_checked(
        self, store: FactStore, vector: list[object]
    ) -> None:
        store.remember("x", StoredRef("s", (1,), "d"), check=accept)
        [item] = store.vectors.missing(MODEL, 1)
        with pytest.raises(InvalidParams, match="vector"):
            store.vectors.put(MODEL, [(item, vector)])  # type: ignore[list-item]


class TestTheClient:
    async def test_embeds_through_the_providers_endpoint_with_its_key(self) -> None:
        async with FakeOpenAI() as server:
            server.embed = concepts
            client = Embeddings(server.base_url, MODEL, "sk-test")
            try:
                vectors = await client.embed(["ship it", "prices"])
            finally:
                await client.aclose()
        assert vectors == concepts(["ship it", "prices"])
        [request] = server.requests
        assert (request.path, request.body) == (
            "/v1/embeddings",
            {"model": MODEL, "input": ["ship it", "prices"]},
        )
        assert request.headers["authorization"] == "Bearer sk-test"

    @pytest.mark.parametrize(
        "body",
        [
            {"data": []},
            {"data": [{"index": 0, "embedding": "x"}]},
            {"data": [{"index": 5, "embedding": [1.0]}]},
            {"nothing": True},
        ],
    )
    async def test_an_answer_of_another_shape_is_a_provider_error(self, body: object) -> None:
        async with FakeOpenAI() as server:
            server.routes["POST", "/v1/embeddings"] = Reply(200, body)  # type: ignore[arg-type]
            client = Embeddings(server.base_url, MODEL, None)
            try:
                with pytest.raises(ProviderError, match="embeddings"):
                    await client.embed(["one"])
                # A turn's message without a vector is ranked by BM25 alone: no error.
                assert await query_vector(client, "one") is None
            finally:
                await client.aclose()

    async def test_backfill_stops_at_a_failure_and_goes_on_later(self, runtime: Runtime) -> None:
        session = chat(runtime, *({"role": "user", "content": f"m{n}"} for n in range(40)))
        for n in range(40):
            remember(runtime, session, n + 1, n + 1, f"fact {n} about deploys")
        async with FakeOpenAI() as server:
            client = Embeddings(server.base_url, MODEL, None)
            try:
                assert await backfill(runtime.facts, client) == 0  # a 404: logged, nothing stored
                server.embed = concepts
                assert await backfill(runtime.facts, client) == 40
            finally:
                await client.aclose()
        assert runtime.facts.vectors.missing(MODEL, 5) == []
        assert len([r for r in server.requests if r.path == "/v1/embeddings"]) == 3  # 1 + 32 + 8


class TestFusion:
    def test_a_fact_sharing_no_word_with_the_question_is_found_by_meaning(
        self, runtime: Runtime
    ) -> None:
        texts = [f"The widget-{n} module builds with make." for n in range(60)]
        texts.append("Argo CD does the rollout from the gitops repository.")
        session = chat(runtime, *({"role": "user", "content": t} for t in texts))
        ids = [remember(runtime, session, n + 1, n + 1, t) for n, t in enumerate(texts)]
        facts = runtime.facts
        items = facts.vectors.missing(MODEL, 100)
        facts.vectors.put(MODEL, [(m, concept_vector(m.text)) for m in items])
        question = "How do releases reach production?"
        plain = select(runtime, turn_query(question, [], []))
        assert ids[-1] not in [pick.fact_id for pick in plain.ranked]  # no word in common
        vector = QueryVector(MODEL, tuple(concept_vector(question)))
        fused = select(runtime, turn_query(question, [], [], vector))
        assert fused.ranked[0].fact_id == ids[-1]
        assert fused.ranked[0].reason == "similar in meaning"
        section = build_memory_section(runtime, (), fused)
        [line] = [
            json.loads(line)
            for line in section.text.splitlines()
            if f'"fact_id":{ids[-1]},' in line
        ]
        assert line["reason"] == "similar in meaning"
