"""Spawn to `initialize` result: lecode-ls against a bare pygls server (the floor).

Runs alternate between the two servers so drift on the machine (other load, CPU frequency)
falls on both alike. The clock starts before the process is spawned and stops when the
`initialize` result arrives; the request is written at once and waits in the pipe.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path

from bench.common import (
    BARE,
    BYTECODE_NOTE,
    LECODE,
    Server,
    compile_bytecode,
    make_repo,
    markdown_table,
    now,
    percentile,
    ratio,
    run_bench,
    server_env,
    verdict,
)

TARGET = 1.3


async def spawn_to_initialize(command: Sequence[str], env: dict[str, str], repo: Path) -> float:
    start = now()
    server = await Server.spawn(command, env)
    try:
        await server.initialize([repo])
        return now() - start
    finally:
        await server.close()


async def measure(quick: bool = False) -> str:
    runs = 3 if quick else 15
    compile_bytecode()
    with tempfile.TemporaryDirectory(prefix="lecode-bench-") as tmp:
        repo = make_repo(Path(tmp) / "repo")
        env = server_env(Path(tmp) / "config")
        # Unmeasured: writes the .pyc files of everything both servers import.
        for command in (BARE, LECODE):
            await spawn_to_initialize(command, env, repo)
        times: dict[str, list[float]] = {"bare": [], "lecode": []}
        for _ in range(runs):
            times["bare"].append(await spawn_to_initialize(BARE, env, repo))
            times["lecode"].append(await spawn_to_initialize(LECODE, env, repo))

    floor50, floor90 = percentile(times["bare"], 50), percentile(times["bare"], 90)
    p50, p90 = percentile(times["lecode"], 50), percentile(times["lecode"], 90)
    rows = [
        ["bare pygls (floor)", runs, f"{floor50 * 1e3:.0f}", f"{floor90 * 1e3:.0f}", "1.00", ""],
        [
            "lecode-ls",
            runs,
            f"{p50 * 1e3:.0f}",
            f"{p90 * 1e3:.0f}",
            ratio(p50, floor50),
            verdict(p50, floor50, TARGET),
        ],
    ]
    return markdown_table(
        "Spawn to `initialize` result (runs alternate between the servers)",
        ["server", "runs", "p50 ms", "p90 ms", "p50 / floor", "target"],
        rows,
        BYTECODE_NOTE,
    )


def main() -> None:
    run_bench(measure, __doc__)


if __name__ == "__main__":
    main()
