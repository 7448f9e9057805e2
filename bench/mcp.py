"""`lecode-ls mcp` driven by the MCP SDK's own client: spawn to the `initialize` result, and one
request at a time on a running server (`memory_read`, `memory_recall` of a fact) against `ping`.

Floors: for start-up, the SDK's bare low-level server (bench/bare_mcp.py) over the same stdio
transport, so the ratio is what lecode-ls adds to the SDK; for round trips, `ping` on the same
connection (the same transport and SDK dispatch, no memory work). Requests alternate, the order
swapped each round.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from mcp import ClientSession, StdioServerParameters, stdio_client

from bench.common import (
    compile_bytecode,
    make_repo,
    markdown_table,
    now,
    percentile,
    ratio,
    run_bench,
    server_env,
)

LECODE_MCP = [sys.executable, "-m", "lecode_ls", "mcp"]
BARE_MCP = [sys.executable, "-m", "bench.bare_mcp"]
ROOT = Path(__file__).resolve().parents[1]


def params(command: list[str], cwd: Path, env: dict[str, str]) -> StdioServerParameters:
    return StdioServerParameters(command=command[0], args=command[1:], cwd=str(cwd), env=env)


async def start_up(command: list[str], cwd: Path, env: dict[str, str]) -> float:
    with Path(os.devnull).open("w") as quiet:
        start = now()
        async with (
            stdio_client(params(command, cwd, env), errlog=quiet) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return now() - start


async def measure(quick: bool = False) -> str:
    compile_bytecode()
    runs, warmup, n = (2, 20, 50) if quick else (7, 100, 500)
    with tempfile.TemporaryDirectory(prefix="lecode-bench-") as tmp:
        repo = make_repo(Path(tmp) / "repo")
        (repo / "app.py").write_text("PORT = 8080\n")
        config = Path(tmp) / "config"
        config.mkdir()
        (config / "config.toml").write_text('[mcp]\nallow = ["memory_write", "memory_remember"]\n')
        env = server_env(config)
        env["PYTHONPATH"] = str(ROOT)  # bench.bare_mcp from any cwd
        bare = [await start_up(BARE_MCP, repo, env) for _ in range(runs)]
        lecode = [await start_up(LECODE_MCP, repo, env) for _ in range(runs)]
        with Path(os.devnull).open("w") as quiet:
            async with (
                stdio_client(params(LECODE_MCP, repo, env), errlog=quiet) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                note = {"file": "notes/bench.md", "content": "Run `make`.\n", "mode": "append"}
                await session.call_tool("memory_write", note)
                await session.call_tool(
                    "memory_remember", {"path": "app.py", "line": "PORT = 8080"}
                )
                calls = {
                    "ping": lambda: session.send_ping(),
                    "memory_read": lambda: session.call_tool(
                        "memory_read", {"file": "notes/bench.md"}
                    ),
                    "memory_recall": lambda: session.call_tool("memory_recall", {"fact_id": 1}),
                }
                times: dict[str, list[float]] = {name: [] for name in calls}
                for i in range(warmup + n):
                    order = list(calls) if i % 2 else list(reversed(calls))
                    for name in order:
                        start = now()
                        await calls[name]()
                        if i >= warmup:
                            times[name].append(now() - start)

    floor = percentile(bare, 50)
    ping = percentile(times["ping"], 50)
    rows = [
        [
            "spawn to `initialize` result: bare SDK server (floor)",
            runs,
            f"{floor * 1e3:.0f}",
            "1.00",
        ],
        [
            "spawn to `initialize` result: `lecode-ls mcp`",
            runs,
            f"{percentile(lecode, 50) * 1e3:.0f}",
            ratio(percentile(lecode, 50), floor),
        ],
        ["`ping` round trip (floor)", n, f"{ping * 1e3:.3f}", "1.00"],
    ]
    for name in ("memory_read", "memory_recall"):
        p50 = percentile(times[name], 50)
        rows.append([f"`{name}` round trip", n, f"{p50 * 1e3:.3f}", ratio(p50, ping)])
    return markdown_table(
        "lecode-ls over MCP, with the SDK's own client (p50)",
        ["measure", "n", "p50 ms", "ratio to floor"],
        rows,
        "No target is set yet; the ratios are reported to follow the trend.",
    )


def main() -> None:
    run_bench(measure, __doc__)


if __name__ == "__main__":
    main()
