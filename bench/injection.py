"""The memory section of one provider request: 50 facts citing a 100,000-record transcript
against 50 facts citing a 1,000-record one.

`build_memory_section` runs before every provider request and revalidates every revision of every
shown fact, so its cost must grow with the cited ranges, not with the transcripts. Each side is
its own project runtime with one transcript (written directly in the store's format by
`bench.sources.write_transcript`, indexed once by the store, untimed), 50 facts remembered through
`Runtime.check_source`, each citing 4 messages spread over the transcript (the last at its end),
and a 10 KB MEMORY.md and scratchpad.md. `facts_max_bytes` is raised so all 50 facts are shown:
the most validation work one section can do.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from bench.common import markdown_table, now, percentile, ratio, run_bench
from bench.sources import write_transcript
from lecode_ls.config import MemorySettings, Settings
from lecode_ls.memory.files import make_dirs
from lecode_ls.memory.injection import MAX_INSPECTED_FACTS, build_memory_section
from lecode_ls.memory.project import Project
from lecode_ls.memory.sessions import source_snapshot
from lecode_ls.runtime import Runtime

TARGET_MS = 5.0
FACT_SPAN = 4  # messages cited by each fact
SETTINGS = Settings(memory=MemorySettings(max_bytes=98_304, facts_max_bytes=65_536))


def _runtime(tmp: Path, records: int) -> Runtime:
    project = Project(root=tmp / f"project-{records}", slug=f"project-{records:012d}")
    runtime = Runtime(project, tmp / "config", SETTINGS)
    folder = runtime.sessions.folder
    make_dirs(folder)
    session_id, _ = write_transcript(folder, records)
    if runtime.sessions.length(session_id) != records:  # the store rebuilds its index: untimed
        raise AssertionError("the store does not read the written transcript")
    step = (records - 1) // MAX_INSPECTED_FACTS
    for index in range(MAX_INSPECTED_FACTS):
        last = records - 1 - index * step  # fact 0 cites the very end of the transcript
        ref = source_snapshot(
            runtime.sessions, session_id, last - FACT_SPAN + 1, last, exclusions=runtime.facts
        )
        runtime.facts.remember(
            f"fact {index}: the build uses make", ref, check=runtime.check_source
        )
    runtime.markdown.write("MEMORY.md", "memory line\n" * 850, "replace")
    runtime.markdown.write("scratchpad.md", "scratch line\n" * 780, "replace")
    section = build_memory_section(runtime)
    if len(section.fact_ids) != MAX_INSPECTED_FACTS or len(section.files) != 2:
        raise AssertionError("the section does not show every fact and both files")
    return runtime


def _measure(quick: bool) -> str:
    small_n, big_n = 1_000, 100_000
    warmup, n = (3, 20) if quick else (30, 400)
    with tempfile.TemporaryDirectory(prefix="lecode-bench-") as tmp:
        built = now()
        small = _runtime(Path(tmp), small_n)
        big = _runtime(Path(tmp), big_n)
        built = now() - built
        size = build_memory_section(big).bytes
        times: dict[tuple[bool, int], list[float]] = {
            (cold, records): [] for cold in (False, True) for records in (small_n, big_n)
        }
        # Warm rounds first, then cold ones: a cold call forgets the warm calls' verdicts.
        for cold in (False, True):
            for i in range(warmup + n):
                order = (small_n, small), (big_n, big)
                for records, runtime in order if i % 2 else order[::-1]:
                    if cold:  # as after any transcript change or forget: validate everything
                        runtime.verdicts.clear()
                    start = now()
                    build_memory_section(runtime)
                    elapsed = now() - start
                    if i >= warmup:
                        times[(cold, records)].append(elapsed)
        small.close()
        big.close()

    def row(label: str, cold: bool) -> list[object]:
        small_t, big_t = times[(cold, small_n)], times[(cold, big_n)]
        s50, b50 = percentile(small_t, 50), percentile(big_t, 50)
        verdict = f"≤ {TARGET_MS:g} ms: {'met' if b50 * 1e3 <= TARGET_MS else 'MISSED'}"
        return [
            label,
            len(big_t),
            f"{s50 * 1e3:.3f}",
            f"{percentile(small_t, 99) * 1e3:.3f}",
            f"{b50 * 1e3:.3f}",
            f"{percentile(big_t, 99) * 1e3:.3f}",
            ratio(b50, s50),
            verdict if not cold else "",
        ]

    return markdown_table(
        f"Memory section: 50 facts citing a {small_n:,}-record transcript (floor) against "
        f"{big_n:,}",
        [
            "call",
            "n",
            f"{small_n:,}: p50 ms",
            "p99 ms",
            f"{big_n:,}: p50 ms",
            "p99 ms",
            "p50 / floor",
            "target (p50)",
        ],
        [
            row("`build_memory_section`, unchanged stores (50 facts, 2 files)", cold=False),
            row("the same, every reference revalidated in full", cold=True),
        ],
        note=(
            f"Each fact cites {FACT_SPAN} messages; the section is {size:,} bytes. Stores built "
            f"and indexed untimed ({built:.1f} s). {warmup} warm-up rounds, calls interleaved. "
            "Between requests that change nothing, a reference whose transcript identity and "
            "exclusion generation are unchanged is not reread; the second row forgets those "
            "verdicts before every call, as the first request after a transcript change or a "
            "forget pays (no target)."
        ),
    )


async def measure(quick: bool = False) -> str:
    return await asyncio.to_thread(_measure, quick)


def main() -> None:
    run_bench(measure, __doc__)


if __name__ == "__main__":
    main()
