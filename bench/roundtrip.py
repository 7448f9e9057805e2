"""Request round trip on one running lecode-ls: `lecode/memory/read` against `lecode/ping`.

`lecode/ping` answers at once through the same boundary (params validation, error mapping), so
it is the floor: the difference is the memory read itself (project lookup, a worker thread, the
file read). Requests are sent one at a time and alternate, so both see the same conditions.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from bench.common import (
    LECODE,
    make_repo,
    markdown_table,
    now,
    percentile,
    ratio,
    run_bench,
    running,
    server_env,
    verdict,
)

TARGET = 1.5
NOTE = {"file": "notes/bench.md"}


async def measure(quick: bool = False) -> str:
    warmup, n = (50, 200) if quick else (200, 2000)
    with tempfile.TemporaryDirectory(prefix="lecode-bench-") as tmp:
        repo = make_repo(Path(tmp) / "repo")
        async with running(LECODE, server_env(Path(tmp) / "config"), [repo]) as server:
            await server.request("lecode/memory/write", {**NOTE, "content": "Run `make`.\n"})
            calls = [("lecode/ping", {}), ("lecode/memory/read", NOTE)]
            times: dict[str, list[float]] = {method: [] for method, _ in calls}
            for i in range(warmup + n):
                # Swap the order every iteration: neither method always follows the other.
                for method, params in calls if i % 2 else reversed(calls):
                    start = now()
                    await server.request(method, params)
                    if i >= warmup:
                        times[method].append(now() - start)

    ping, read = times["lecode/ping"], times["lecode/memory/read"]
    floor50 = percentile(ping, 50)
    rows = [
        [
            "`lecode/ping` (floor)",
            n,
            f"{floor50 * 1e3:.3f}",
            f"{percentile(ping, 99) * 1e3:.3f}",
            "1.00",
            "",
        ],
        [
            "`lecode/memory/read` (12-byte note)",
            n,
            f"{percentile(read, 50) * 1e3:.3f}",
            f"{percentile(read, 99) * 1e3:.3f}",
            ratio(percentile(read, 50), floor50),
            verdict(percentile(read, 50), floor50, TARGET),
        ],
    ]
    return markdown_table(
        f"Round trip on one running server ({warmup} warm-up rounds, then interleaved)",
        ["request", "n", "p50 ms", "p99 ms", "p50 / floor", "target"],
        rows,
    )


def main() -> None:
    run_bench(measure, __doc__)


if __name__ == "__main__":
    main()
