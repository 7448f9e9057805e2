"""Retrieval quality: is the fact a question needs in the memory the model is shown? (issue 25)

The set is bench/retrieval_set.py: 210 facts of one project and 60 questions in other words,
each needing one fact. The facts are remembered in order, each from its own user message, into
one project store; each question is then a turn of its own: its selection (selection.py) and
the memory section built from it under the default caps (facts_max_bytes 8,192, so about a
sixth of the facts fit). Measured: the share of questions whose fact is in the injected set, and
where the ranking put it (first, in the first 5, in the first 20).

Rows: the first 50 facts by ID (what injection showed before issue 25; the floor), BM25 alone,
and BM25 fused with embeddings (reciprocal rank fusion) when an embedding endpoint is given:
`--embeddings-url URL --embeddings-model NAME` (an OpenAI-compatible base URL, up to /v1), or
the live suite's embedding model (LECODE_LLAMA_SERVER and LECODE_LIVE_EMBEDDING_MODEL, as
scripts/test-live sets them: a llama-server is started with --embeddings). Without one the
embeddings row says so.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from bench.common import markdown_table
from bench.retrieval_set import FACTS, QUESTIONS
from lecode_ls.config import Settings
from lecode_ls.memory.injection import build_memory_section
from lecode_ls.memory.project import Project
from lecode_ls.memory.selection import QueryVector, Selection, select, turn_query
from lecode_ls.memory.sessions import source_snapshot
from lecode_ls.runtime import Runtime

FIRST_N = 50


def _runtime(tmp: Path) -> Runtime:
    runtime = Runtime(
        Project(root=tmp / "larkspur", slug="larkspur-000000000025"), tmp / "config", Settings()
    )
    sid = runtime.sessions.create("months of work")
    for text in FACTS:
        runtime.sessions.append(sid, {"kind": "message", "role": "user", "content": text})
    for seq, text in enumerate(FACTS, start=1):
        ref = source_snapshot(runtime.sessions, sid, seq, seq, exclusions=runtime.facts)
        runtime.facts.remember(text, ref, check=runtime.check_source)
    return runtime


def _score(runtime: Runtime, selections: Sequence[Selection]) -> list[object]:
    injected = first = top5 = top20 = 0
    for (_, index), selection in zip(QUESTIONS, selections, strict=True):
        fact_id = index + 1
        ranked = [pick.fact_id for pick in selection.ranked]
        first += ranked[:1] == [fact_id]
        top5 += fact_id in ranked[:5]
        top20 += fact_id in ranked[:20]
        injected += fact_id in build_memory_section(runtime, (), selection).fact_ids
    n = len(QUESTIONS)
    return [f"{injected}/{n} ({injected / n:.0%})", f"{first}/{n}", f"{top5}/{n}", f"{top20}/{n}"]


def _first_ids(runtime: Runtime) -> list[object]:
    """What injection showed before issue 25: the first 50 facts by ID, whatever was asked."""
    page, _ = runtime.facts.list(0, FIRST_N)
    shown = {fact.id for fact in page}
    hits = sum(index + 1 in shown for _, index in QUESTIONS)
    n = len(QUESTIONS)
    return [f"{hits}/{n} ({hits / n:.0%})", "n/a", "n/a", "n/a"]


@contextlib.contextmanager
def _endpoint(url: str | None) -> Iterator[str | None]:
    """The embedding endpoint: `url`, or the live suite's model served here, or None."""
    if url:
        yield url
        return
    if not (
        os.environ.get("LECODE_LLAMA_SERVER") and os.environ.get("LECODE_LIVE_EMBEDDING_MODEL")
    ):
        yield None
        return
    from tests.live.conftest import serve_embeddings

    server = serve_embeddings()
    try:
        yield f"{server.url}/v1"
    finally:
        server.stop()


async def _embedded(runtime: Runtime, url: str, model: str) -> tuple[list[Selection], str]:
    from lecode_ls.agent.embeddings import BATCH, Embeddings, backfill

    key = os.environ.get("LECODE_EMBEDDINGS_KEY")
    embeddings = Embeddings(url, model, key, timeout=300.0)  # a CPU server, maybe busy
    try:
        stored = await backfill(runtime.facts, embeddings)
        questions = [question for question, _ in QUESTIONS]
        vectors = [
            vector
            for start in range(0, len(questions), BATCH)
            for vector in await embeddings.embed(questions[start : start + BATCH])
        ]
    finally:
        await embeddings.aclose()
    selections = [
        select(runtime, turn_query(q, [], [], QueryVector(model, tuple(v))))
        for (q, _), v in zip(QUESTIONS, vectors, strict=True)
    ]
    return selections, f"{stored} fact vectors of {model} ({len(vectors[0])} dimensions)"


async def measure(
    quick: bool = False, embeddings_url: str | None = None, model: str = "all-minilm-l6-v2"
) -> str:
    with tempfile.TemporaryDirectory(prefix="lecode-bench-") as tmp:
        runtime = await asyncio.to_thread(_runtime, Path(tmp))
        try:
            rows: list[list[object]] = [
                ["first 50 facts by ID (before; floor)", *_first_ids(runtime)]
            ]
            bm25 = [select(runtime, turn_query(q, [], [])) for q, _ in QUESTIONS]
            rows.append(["BM25 alone", *_score(runtime, bm25)])
            with _endpoint(embeddings_url) as url:
                if url is None:
                    rows.append(
                        ["BM25 + embeddings (RRF)", "not measured: no endpoint", "", "", ""]
                    )
                    note = "No embedding endpoint: see the module docstring."
                else:
                    fused, note = await _embedded(runtime, url, model)
                    rows.append(["BM25 + embeddings (RRF)", *_score(runtime, fused)])
        finally:
            runtime.close()
    return markdown_table(
        f"Retrieval quality: {len(FACTS)} facts, {len(QUESTIONS)} questions in other words "
        "(bench/retrieval_set.py)",
        [
            "selection",
            "fact in the injected memory",
            "ranked first",
            "in the first 5",
            "in the first 20",
        ],
        rows,
        note=(
            "Default caps (facts_max_bytes 8,192); each question a turn of its own, no file "
            f"open or read, nothing pinned. {note}"
        ),
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--embeddings-url", help="an OpenAI-compatible base URL, up to /v1")
    parser.add_argument("--embeddings-model", default="all-minilm-l6-v2")
    args = parser.parse_args(argv)
    table = asyncio.run(measure(args.quick, args.embeddings_url, args.embeddings_model))
    print(table)


if __name__ == "__main__":
    sys.exit(main())
