"""Spawn to `initialize` result, and spawn to the first answered request: lecode-ls against a bare
pygls server (the floor).

lecode-ls answers `initialize` before it imports its handlers, models and runtime (routes.py);
it imports them when `initialized` arrives. The second measure shows what that defers: from spawn
to the result of the first `lecode/memory/read` (a store created, MEMORY.md read), against the
bare server's first answered request after `initialized` (`shutdown`, the only one it has).

Runs alternate between the two servers so drift on the machine (other load, CPU frequency)
falls on both alike. The clock starts before the process is spawned and stops when the
`initialize` result arrives; the request is written at once and waits in the pipe.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

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


async def spawn_to_first_answer(
    command: Sequence[str], env: dict[str, str], repo: Path, method: str, params: Any
) -> float:
    start = now()
    server = await Server.spawn(command, env)
    try:
        await server.initialize([repo])
        await server.request(method, params)
        return now() - start
    finally:
        await server.close()


FIRST = {
    "bare": ("shutdown", None),
    "lecode": ("lecode/memory/read", {"file": "MEMORY.md"}),
}


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
        first: dict[str, list[float]] = {"bare": [], "lecode": []}
        for _ in range(runs):
            times["bare"].append(await spawn_to_initialize(BARE, env, repo))
            times["lecode"].append(await spawn_to_initialize(LECODE, env, repo))
            for name, command in (("bare", BARE), ("lecode", LECODE)):
                method, params = FIRST[name]
                first[name].append(await spawn_to_first_answer(command, env, repo, method, params))

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
    first50 = percentile(first["bare"], 50)
    rows.append(
        [
            "bare pygls: first answer after `initialized` (floor)",
            runs,
            f"{first50 * 1e3:.0f}",
            f"{percentile(first['bare'], 90) * 1e3:.0f}",
            "1.00",
            "",
        ]
    )
    lecode50 = percentile(first["lecode"], 50)
    rows.append(
        [
            "lecode-ls: first `lecode/memory/read` result",
            runs,
            f"{lecode50 * 1e3:.0f}",
            f"{percentile(first['lecode'], 90) * 1e3:.0f}",
            ratio(lecode50, first50),
            "none",
        ]
    )
    return markdown_table(
        "Spawn to `initialize` result, then spawn to the first answered request "
        "(runs alternate between the servers)",
        ["server", "runs", "p50 ms", "p90 ms", "p50 / floor", "target"],
        rows,
        BYTECODE_NOTE,
    )


def main() -> None:
    run_bench(measure, __doc__)


if __name__ == "__main__":
    main()
