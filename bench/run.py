"""Run every benchmark and print its table: `uv run python -m bench.run [--quick]`."""

from __future__ import annotations

import asyncio
import os
import platform
from importlib.metadata import version

from bench import (
    anchors,
    chat,
    compaction,
    compare,
    durability,
    facts,
    injection,
    memory_rss,
    notes_search,
    roundtrip,
    sources,
    startup,
)
from bench.common import now, parse_args

BENCHES = (
    startup,
    roundtrip,
    notes_search,
    memory_rss,
    sources,
    facts,
    durability,
    injection,
    anchors,
    chat,
    compaction,
    compare,
)


async def run_all(quick: bool) -> None:
    began = now()
    mode = " (--quick: a smoke run, not a measurement)" if quick else ""
    print(
        f"lecode-ls {version('lecode-ls')} benchmarks{mode}: Python {platform.python_version()}, "
        f"pygls {version('pygls')}, {platform.system()} {platform.machine()}, "
        f"{os.cpu_count()} CPUs\n"
    )
    for bench in BENCHES:
        print(await bench.measure(quick), end="\n\n", flush=True)
    print(f"Total: {now() - began:.0f} s")


def main() -> None:
    args = parse_args(__doc__.splitlines()[0] if __doc__ else "")
    asyncio.run(run_all(args.quick))


if __name__ == "__main__":
    main()
