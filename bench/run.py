"""Run every benchmark and print its table: `uv run python -m bench.run [--quick] [--peer]`.

`--peer` adds the side-by-side run against basic-memory (bench.peer: its own environment, and
tens of minutes at 10,000 notes); it is never part of `--quick`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
from importlib.metadata import version

from bench import (
    anchors,
    chat,
    compaction,
    context,
    durability,
    fact_lines,
    facts,
    hygiene,
    injection,
    learning_rules,
    mcp,
    memory_rss,
    notes_search,
    peer,
    poisoning,
    ranking,
    retrieval,
    roundtrip,
    secrets,
    sources,
    startup,
    team,
)
from bench.common import now
from bench.compare import harness as compare

BENCHES = (
    startup,
    context,
    roundtrip,
    notes_search,
    memory_rss,
    sources,
    facts,
    durability,
    injection,
    fact_lines,
    ranking,
    hygiene,
    retrieval,
    anchors,
    chat,
    compaction,
    learning_rules,
    secrets,
    team,
    mcp,
    poisoning,
    compare,
)


async def run_all(quick: bool, with_peer: bool) -> None:
    began = now()
    mode = " (--quick: a smoke run, not a measurement)" if quick else ""
    print(
        f"lecode-ls {version('lecode-ls')} benchmarks{mode}: Python {platform.python_version()}, "
        f"pygls {version('pygls')}, {platform.system()} {platform.machine()}, "
        f"{os.cpu_count()} CPUs\n"
    )
    for bench in BENCHES:
        print(await bench.measure(quick), end="\n\n", flush=True)
    if quick or not with_peer:
        why = "never part of --quick" if quick else "add --peer to run it"
        print(f"### {peer.TITLE}\n\nNot run: {why}.", end="\n\n")
    else:
        print(await peer.measure(quick), end="\n\n", flush=True)
    print(f"Total: {now() - began:.0f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument(
        "--quick", action="store_true", help="few iterations: a smoke run (CI), not a measurement"
    )
    parser.add_argument(
        "--peer",
        action="store_true",
        help="also run bench.peer, side by side with basic-memory (not with --quick)",
    )
    args = parser.parse_args()
    if args.quick and args.peer:
        parser.error("--peer is never part of --quick: run `python -m bench.peer --quick`")
    asyncio.run(run_all(args.quick, args.peer))


if __name__ == "__main__":
    main()
