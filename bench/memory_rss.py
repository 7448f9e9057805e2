"""Resident memory of lecode-ls with three and with ten projects open, one of them at 100,000
facts, against a bare pygls server with three.

The bare server and the three-project lecode-ls are initialized with the same three Git
repositories as workspace folders; lecode-ls then gets one `lecode/memory/read` per folder, so a
memory runtime exists for each project. The ten-project runs open ten repositories and read a
note and a page of facts in each: with no facts; with 20 facts in every project; and with the
first project at 100,000 facts (bench/corpus.py). The last two ask the first project a ranked
`lecode/facts/list` query, so its index and caches are in use. RSS is VmRSS from /proc/<pid>/status (Linux only), read once the last answer has arrived.

Targets (issue 25): three projects at most 1.5x the bare server; each further project, and the
100,000 facts, under 2 MiB more.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path

from bench import corpus
from bench.common import (
    BARE,
    LECODE,
    Server,
    compile_bytecode,
    make_repo,
    markdown_table,
    ratio,
    run_bench,
    running,
    server_env,
)

RATIO_TARGET = 1.5
SMALL = 20  # facts in each project of the rows with facts
MIB_TARGET = 2.0
QUERY = "Quick question about billing-12: what do we use for its signing key?"


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


async def _use(server: Server, repos: list[Path], *, facts: bool) -> None:
    for repo in repos:
        params = {"workspaceUri": repo.as_uri()}
        await server.request("lecode/memory/read", {"file": "MEMORY.md", **params})
        if facts:
            await server.request("lecode/facts/list", params)


async def measure(quick: bool = False) -> str:
    if not sys.platform.startswith("linux"):
        return "### Server RSS\n\nSkipped: reads /proc/<pid>/status, which only Linux has."
    runs = 1 if quick else 3
    count = 1_000 if quick else 100_000
    compile_bytecode()
    keys = ("bare", "lecode-init", "lecode-3", "lecode-10", "lecode-10-small", "lecode-10-big")
    rss: dict[str, list[int]] = {key: [] for key in keys}
    built = None
    with tempfile.TemporaryDirectory(prefix="lecode-bench-") as tmp:
        repos = [make_repo(Path(tmp) / f"repo-{n}") for n in range(10)]
        env = server_env(Path(tmp) / "config")
        # Ten projects of SMALL facts each, then the same with the first at `count`: the
        # difference is the facts' (every project has opened its database either way).
        small_config, big_config = Path(tmp) / "config-small", Path(tmp) / "config-big"
        for index, repo in enumerate(repos):
            corpus.install(small_config, repo, SMALL)
            if index:
                corpus.install(big_config, repo, SMALL)
        built = corpus.install(big_config, repos[0], count)
        small_env, big_env = server_env(small_config), server_env(big_config)
        for _ in range(runs):
            async with running(BARE, env, repos[:3]) as bare:
                rss["bare"].append(rss_kib(bare.pid))
            async with running(LECODE, env, repos[:3]) as lecode:
                rss["lecode-init"].append(rss_kib(lecode.pid))
                await _use(lecode, repos[:3], facts=False)
                rss["lecode-3"].append(rss_kib(lecode.pid))
            async with running(LECODE, env, repos) as lecode:
                await _use(lecode, repos, facts=True)
                rss["lecode-10"].append(rss_kib(lecode.pid))
            for key, facts_env in (("lecode-10-small", small_env), ("lecode-10-big", big_env)):
                async with running(LECODE, facts_env, repos) as lecode:
                    await _use(lecode, repos, facts=True)
                    params = {"workspaceUri": repos[0].as_uri(), "query": QUERY}
                    found = await lecode.request("lecode/facts/list", params)
                    if not found["facts"]:
                        raise AssertionError("the ranked query found nothing")
                    rss[key].append(rss_kib(lecode.pid))

    median = {key: statistics.median(values) for key, values in rss.items()}
    floor = median["bare"]
    per_project = (median["lecode-10"] - median["lecode-3"]) / 7 / 1024
    big = (median["lecode-10-big"] - median["lecode-10-small"]) / 1024
    # Conservative: the 3 had no fact database open; this charges opening one to each project.
    with_facts = (median["lecode-10-small"] - median["lecode-3"]) / 7 / 1024

    def row(label: str, key: str, target: str = "") -> list[object]:
        value = median[key]
        return [
            label,
            runs,
            f"{value / 1024:.1f}",
            f"{(value - floor) / 1024:+.1f}",
            ratio(value, floor),
            target,
        ]

    three = median["lecode-3"] / floor
    return markdown_table(
        "Server RSS after `initialize` (median of runs)",
        ["server", "runs", "VmRSS MiB", "vs floor MiB", "ratio", "target"],
        [
            row("bare pygls, three folders (floor)", "bare"),
            row("lecode-ls, three folders, no request yet", "lecode-init"),
            row(
                "lecode-ls, one request per project (3 runtimes)",
                "lecode-3",
                f"≤ {RATIO_TARGET:g}x: " + ("met" if three <= RATIO_TARGET else "MISSED"),
            ),
            row(
                "lecode-ls, 10 projects (a note and a page of facts each)",
                "lecode-10",
                f"{per_project:+.2f} MiB a further project; < {MIB_TARGET:g}: "
                + ("met" if per_project < MIB_TARGET else "MISSED"),
            ),
            row(
                f"10 projects of {SMALL} facts each, asked a ranked query",
                "lecode-10-small",
                f"{with_facts:+.2f} MiB a further project against the 3 without facts; "
                f"< {MIB_TARGET:g}: " + ("met" if with_facts < MIB_TARGET else "MISSED"),
            ),
            row(
                f"the same, the first project at {count:,} facts",
                "lecode-10-big",
                f"{big:+.2f} MiB for {count:,} facts; < {MIB_TARGET:g}: "
                + ("met" if big < MIB_TARGET else "MISSED"),
            ),
        ],
        "Projects are empty Git repositories; in the last two rows each store holds "
        f"{SMALL} facts, and in the last the first holds {count:,}, remembered through the "
        "store's API (bench/corpus.py"
        + (f"; built now in {built:.0f} s" if built is not None else "; kept from a run before")
        + ").",
    )


def main() -> None:
    run_bench(measure, __doc__)


if __name__ == "__main__":
    main()
