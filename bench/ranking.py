"""Ranked fact selection as the fact count grows: 1,000, 10,000 and 100,000 facts (issue 25).

In-process, on one project store (bench/corpus.py: facts remembered through the store's own
API, each about one of 50 services numbered 1-100 in one of 20 kinds of statement). Every round
asks about a random stored fact in other words ("Where do the logs of billing-12 end up?") and
times, interleaved:

- a turn's first request: `select` (pinned, ranked for the message, recent) then
  `build_memory_section` with that selection, validation of every shown fact included (the
  verdicts of unchanged sources are remembered, as between a turn's requests);
- a later request of the same turn: `build_memory_section` with the selection kept;
- memory_list with `query` (`run_tool`, what the model calls): the first ranked page;
- the floor: `build_memory_section` without a query (pinned and recent facts only).

Also: how often the fact asked about was in the injected set, and the ranked index's bytes a
fact (`dbstat`). Targets: the first request at most 5 ms at 100,000 facts and at most 2x its
cost at 1,000; memory_list with query at most 10 ms at 100,000.
"""

from __future__ import annotations

import asyncio
import json
import random
import tempfile
from pathlib import Path

from bench import corpus
from bench.common import markdown_table, now, percentile, ratio, run_bench
from lecode_ls.config import Settings
from lecode_ls.memory.injection import build_memory_section
from lecode_ls.memory.selection import TurnQuery, select, turn_query
from lecode_ls.runtime import Runtime, Runtimes
from lecode_ls.tools.memory import run_tool
from lecode_ls.tools.permissions import PermissionPolicy

FIRST_TARGET_MS = 5.0
GROWTH_TARGET = 2.0
LIST_TARGET_MS = 10.0
MEMORY = "".join(
    f"- note {n}: the services are deployed by the release train.\n" for n in range(20)
)


def _turn(runtime: Runtime, query: TurnQuery, target: int, measured: dict[str, float]) -> None:
    started = now()
    selection = select(runtime, query)
    section = build_memory_section(runtime, (), selection)
    measured["first"] = now() - started
    started = now()
    build_memory_section(runtime, (), selection)
    measured["later"] = now() - started
    measured["hit"] = 1.0 if target + 1 in section.fact_ids else 0.0


def _listing(runtime: Runtime, query: TurnQuery, target: int, measured: dict[str, float]) -> None:
    started = now()
    result = run_tool(
        runtime, "memory_list", json.dumps({"query": query.message}),
        policy=PermissionPolicy(default="deny"), readonly=True, child=False,
    )  # fmt: skip
    measured["list"] = now() - started
    if result.is_error or not json.loads(result.content)["facts"]:
        raise AssertionError(f"memory_list: {result.content[:200]}")


def _floor(runtime: Runtime, query: TurnQuery, target: int, measured: dict[str, float]) -> None:
    started = now()
    build_memory_section(runtime)
    measured["floor"] = now() - started


def _rounds(
    runtime: Runtime, count: int, warmup: int, n: int, rng: random.Random
) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"first": [], "later": [], "list": [], "floor": [], "hit": []}
    steps = [_turn, _listing, _floor]
    for i in range(warmup + n):
        target = rng.randrange(count)  # fact IDs are 1 + the corpus index
        query = turn_query(corpus.question(target), [], [])
        measured: dict[str, float] = {}
        shift = i % len(steps)  # rotated: no step always follows the same one
        for step in steps[shift:] + steps[:shift]:
            step(runtime, query, target, measured)
        if i >= warmup:
            for key, value in measured.items():
                times[key].append(value)
    return times


def _measure(quick: bool) -> str:
    sizes = (1_000, 2_000) if quick else (1_000, 10_000, 100_000)
    warmup, n = (5, 30) if quick else (30, 300)
    rng = random.Random(25)
    results: dict[int, dict[str, list[float]]] = {}
    index: dict[int, int] = {}
    built: list[str] = []
    for count in sizes:
        with tempfile.TemporaryDirectory(prefix="lecode-bench-") as tmp:
            folder = Path(tmp) / "project"
            folder.mkdir()
            seconds = corpus.install(Path(tmp) / "config", folder, count)
            if seconds is not None:
                built.append(f"{count:,} in {seconds:.0f} s")
            runtime = Runtimes(Path(tmp, "config").resolve(), Settings()).for_folder(
                folder.resolve()
            )
            try:
                runtime.markdown.write("MEMORY.md", MEMORY, "replace")
                results[count] = _rounds(runtime, count, warmup, n, rng)
                index[count] = corpus.index_bytes(runtime)
            finally:
                runtime.close()

    small = sizes[0]
    rows: list[list[object]] = []
    labels = {
        "first": "a turn's first request: select + build (ranked)",
        "later": "a later request of the turn (selection kept)",
        "list": "memory_list with query (first page)",
        "floor": "build without a query (pinned + recent; floor)",
    }
    for count in sizes:
        times = results[count]
        for key, label in labels.items():
            p50 = percentile(times[key], 50)
            base = percentile(results[small][key], 50)
            target = ""
            if key == "first" and count == sizes[-1]:
                growth = p50 / base
                ok = p50 * 1e3 <= FIRST_TARGET_MS and growth <= GROWTH_TARGET
                target = f"≤ {FIRST_TARGET_MS:g} ms and ≤ {GROWTH_TARGET:g}x {small:,}: " + (
                    "met" if ok else "MISSED"
                )
            if key == "list" and count == sizes[-1]:
                target = f"≤ {LIST_TARGET_MS:g} ms: " + (
                    "met" if p50 * 1e3 <= LIST_TARGET_MS else "MISSED"
                )
            rows.append(
                [
                    f"{count:,}",
                    label,
                    len(times[key]),
                    f"{p50 * 1e3:.3f}",
                    f"{percentile(times[key], 99) * 1e3:.3f}",
                    ratio(p50, base),
                    target,
                ]
            )
        hits = sum(times["hit"])
        rows.append(
            [
                f"{count:,}",
                "the fact asked about was injected",
                len(times["hit"]),
                f"{hits / len(times['hit']):.0%}",
                "",
                "",
                f"index: {index[count] / count:,.0f} bytes a fact",
            ]
        )
    return markdown_table(
        "Ranked fact selection by fact count (in-process; ratio against the same row at "
        f"{small:,} facts)",
        ["facts", "call", "n", "p50 ms", "p99 ms", f"p50 / {small:,}", "target / note"],
        rows,
        note=(
            "Facts remembered through the store's API, untimed (bench/corpus.py keeps each store "
            f"in the temp folder for later runs; built now: {'; '.join(built) or 'none'}). Default "
            "caps (facts_max_bytes 8,192), a 1.2 KB MEMORY.md. Each round asks about a random "
            f"stored fact in other words; steps rotated; {warmup} warm-up rounds. The index "
            "bytes are `facts_rank`'s and `fact_terms`' pages (dbstat): the index and the words it "
            "indexes (no copy of the text itself)."
        ),
    )


async def measure(quick: bool = False) -> str:
    return await asyncio.to_thread(_measure, quick)


def main() -> None:
    run_bench(measure, __doc__)


if __name__ == "__main__":
    main()
