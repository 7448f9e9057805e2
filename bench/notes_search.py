"""`lecode/memory/search` against the number of notes: the indexed search stays flat (issue 16).

Each store holds N notes of a few lines each (written straight into the store folder, as another
program would); one of them holds a rare word. Measured on one running server: the first search
(it builds the index: once per store, and a comparison of every file once per process), then the
p50/p99 of searching the rare word, and of a pattern with no literal the index can use (every
file's text is matched: the bounded worst case). `lecode/ping` on the same server is the floor.
Target: the rare word at most 5 ms p50 at 1,000 and 10,000 notes. BENCH_NOTES=1000,10000 picks
the sizes.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from bench.common import (
    LECODE,
    make_repo,
    markdown_table,
    now,
    percentile,
    run_bench,
    running,
    server_env,
)

TARGET_MS = 5.0
NOTE = "# Note {n}\n\nRun the build with make, then the tests.\nOwner: team {m}.\n"


def fill(store: Path, count: int) -> None:
    notes = store / "notes"
    notes.mkdir(parents=True, exist_ok=True)
    for n in range(count):
        text = NOTE.format(n=n, m=n % 7)
        if n == count // 2:
            text += "The deploy key rotates every quokka moon.\n"
        (notes / f"n{n:05}.md").write_text(text)


async def measure(quick: bool = False) -> str:
    sizes, repeats = ((100, 1000), 20) if quick else ((100, 1000, 10_000), 200)
    sizes = tuple(int(s) for s in os.environ.get("BENCH_NOTES", "").split(",") if s) or sizes
    rows = []
    for size in sizes:
        with tempfile.TemporaryDirectory(prefix="lecode-bench-") as tmp:
            repo = make_repo(Path(tmp) / "repo")
            async with running(LECODE, server_env(Path(tmp) / "config"), [repo]) as server:
                await server.request("lecode/memory/write", {"file": "MEMORY.md", "content": "x"})
                store = Path((await server.request("lecode/project/info", {}))["storePath"])
                fill(store, size)
                start = now()
                first = await server.request("lecode/memory/search", {"pattern": "quokka"})
                cold = now() - start
                assert len(first["hits"]) == 1, first
                times: dict[str, list[float]] = {"ping": [], "word": [], "scan": []}
                calls = [
                    ("ping", "lecode/ping", {}),
                    ("word", "lecode/memory/search", {"pattern": "quokka"}),
                    ("scan", "lecode/memory/search", {"pattern": r"^\d\d:"}),
                ]
                for i in range(repeats):
                    for key, method, params in calls if i % 2 else reversed(calls):
                        start = now()
                        await server.request(method, params)
                        times[key].append(now() - start)
        word50 = percentile(times["word"], 50) * 1e3
        met = "met" if word50 <= TARGET_MS or size < 1000 else "MISSED"
        rows.append(
            [
                f"{size:,}",
                f"{cold * 1e3:.1f}",
                f"{word50:.2f} / {percentile(times['word'], 99) * 1e3:.2f}",
                f"{percentile(times['scan'], 50) * 1e3:.1f}",
                f"{percentile(times['ping'], 50) * 1e3:.2f}",
                f"≤ {TARGET_MS:g} ms: {met}" if size >= 1000 else "",
            ]
        )
    return markdown_table(
        "Note search against the number of notes (`lecode/memory/search`, ms)",
        [
            "notes",
            "first search (builds the index)",
            "a rare word, p50 / p99",
            "no usable literal (every file's text), p50",
            "ping floor, p50",
            "target",
        ],
        rows,
        note=f"{repeats} searches of each kind per size, alternating with ping.",
    )


if __name__ == "__main__":
    run_bench(measure, __doc__)
