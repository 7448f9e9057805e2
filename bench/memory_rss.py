"""Resident memory of lecode-ls with three projects open, against a bare pygls server.

Both servers are initialized with the same three Git repositories as workspace folders. lecode-ls
then gets one `lecode/memory/read` per folder, so a memory runtime exists for each project. RSS
is VmRSS from /proc/<pid>/status (Linux only), read once the last answer has arrived.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path

from bench.common import (
    BARE,
    LECODE,
    compile_bytecode,
    make_repo,
    markdown_table,
    ratio,
    run_bench,
    running,
    server_env,
)


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


async def measure(quick: bool = False) -> str:
    if not sys.platform.startswith("linux"):
        return "### Server RSS\n\nSkipped: reads /proc/<pid>/status, which only Linux has."
    runs = 1 if quick else 3
    compile_bytecode()
    rss: dict[str, list[int]] = {"bare": [], "lecode-init": [], "lecode-3": []}
    with tempfile.TemporaryDirectory(prefix="lecode-bench-") as tmp:
        repos = [make_repo(Path(tmp) / name) for name in ("alpha", "beta", "gamma")]
        env = server_env(Path(tmp) / "config")
        for _ in range(runs):
            async with running(BARE, env, repos) as bare:
                rss["bare"].append(rss_kib(bare.pid))
            async with running(LECODE, env, repos) as lecode:
                rss["lecode-init"].append(rss_kib(lecode.pid))
                for repo in repos:
                    await lecode.request(
                        "lecode/memory/read", {"file": "MEMORY.md", "workspaceUri": repo.as_uri()}
                    )
                rss["lecode-3"].append(rss_kib(lecode.pid))

    floor = statistics.median(rss["bare"])

    def row(label: str, key: str) -> list[object]:
        value = statistics.median(rss[key])
        return [
            label,
            runs,
            f"{value / 1024:.1f}",
            f"{(value - floor) / 1024:+.1f}",
            ratio(value, floor),
        ]

    return markdown_table(
        "Server RSS after `initialize`, three workspace folders (median of runs)",
        ["server", "runs", "VmRSS MiB", "vs floor MiB", "ratio"],
        [
            row("bare pygls (floor)", "bare"),
            row("lecode-ls, no request yet", "lecode-init"),
            row("lecode-ls, one request per project (3 runtimes)", "lecode-3"),
        ],
        "No target is set yet; the ratio is reported to follow the trend.",
    )


def main() -> None:
    run_bench(measure, __doc__)


if __name__ == "__main__":
    main()
