"""Durable writes against the disk's floor: a fact remembered (SQLite WAL, synchronous=FULL) and a
transcript record appended (write + fsync), against a bare `os.write` + `os.fsync`.

The floor appends a 120-byte record to a file kept open, in the same temporary folder (the same
file system) as the store, and fsyncs it: the least any acknowledged-durable write can cost
there. The store's calls go through the project's own `Runtime`: `FactStore.remember` with
`Runtime.check_source`, as `lecode/facts/remember` runs it (a second row skips the check, to show
the transaction alone), and `SessionStore.append`. The calls are interleaved, order rotated.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from bench.common import make_repo, markdown_table, now, percentile, ratio, run_bench
from lecode_ls.config import Settings
from lecode_ls.memory.sessions import SourceRef, source_snapshot
from lecode_ls.runtime import Runtimes

RECORD = b'{"content":"' + b"x" * 80 + b'","kind":"message","seq":0}\n'  # 120 bytes
MESSAGE = {"kind": "message", "role": "assistant", "content": "y" * 64}  # a ~120-byte line


def _measure(quick: bool) -> str:
    warmup, n = (5, 30) if quick else (30, 400)
    with tempfile.TemporaryDirectory(prefix="lecode-bench-") as tmp:
        repo = make_repo(Path(tmp) / "repo")
        runtimes = Runtimes(Path(tmp, "config").resolve(), Settings())
        floor_fd = os.open(Path(tmp) / "floor.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            runtime = runtimes.for_folder(repo.resolve())
            sessions, facts = runtime.sessions, runtime.facts
            cited, _ = sessions.import_records(
                [
                    {"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i}"}
                    for i in range(40)
                ],
                "evidence",
            )
            refs: list[SourceRef] = [
                source_snapshot(sessions, cited, start, start + 1, exclusions=facts)
                for start in range(1, 39, 2)
            ]
            appended = sessions.create("appends")
            counter = iter(range(1, 1_000_000))

            def floor() -> None:
                os.write(floor_fd, RECORD)
                os.fsync(floor_fd)

            def remember() -> None:
                i = next(counter)
                facts.remember(f"durable fact {i}", refs[i % len(refs)], check=runtime.check_source)

            def remember_unchecked() -> None:
                i = next(counter)
                facts.remember(f"durable fact {i}", refs[i % len(refs)], check=lambda r, p: None)

            def append() -> None:
                sessions.append(appended, MESSAGE)

            calls: dict[str, Callable[[], None]] = {
                "floor": floor,
                "remember": remember,
                "unchecked": remember_unchecked,
                "append": append,
            }
            times: dict[str, list[float]] = {key: [] for key in calls}
            order = list(calls.items())
            for i in range(warmup + n):
                shift = i % len(order)
                for key, call in order[shift:] + order[:shift]:
                    start = now()
                    call()
                    elapsed = now() - start
                    if i >= warmup:
                        times[key].append(elapsed)
            transcript = sessions.folder / f"{appended}.jsonl"
            record_bytes = transcript.stat().st_size // sessions.length(appended)
        finally:
            os.close(floor_fd)
            runtimes.close_all()

    floor50 = percentile(times["floor"], 50)
    labels = {
        "floor": f"`os.write` + `os.fsync`, {len(RECORD)} bytes (floor)",
        "remember": "`FactStore.remember` + `Runtime.check_source` (WAL, synchronous=FULL)",
        "unchecked": "`FactStore.remember`, check skipped: the transaction alone",
        "append": f"`SessionStore.append`, a ~{record_bytes}-byte line (write + fsync)",
    }
    rows = [
        [
            labels[key],
            len(values),
            f"{percentile(values, 50) * 1e3:.3f}",
            f"{percentile(values, 99) * 1e3:.3f}",
            ratio(percentile(values, 50), floor50),
        ]
        for key, values in times.items()
    ]
    return markdown_table(
        f"Durable writes against a bare write + fsync ({warmup} warm-up rounds, interleaved)",
        ["write", "n", "p50 ms", "p99 ms", "p50 / floor"],
        rows,
        note=(
            "Same file system for all (one temporary folder). Every remember has new text and "
            "cites a 2-message snapshot of an imported transcript; appends go to another session."
        ),
    )


async def measure(quick: bool = False) -> str:
    return await asyncio.to_thread(_measure, quick)


def main() -> None:
    run_bench(measure, __doc__)


if __name__ == "__main__":
    main()
