"""Memory hygiene (issue 26): the doctor and the use record as the fact count grows.

In-process, on the stores of bench/corpus.py (1,000, 10,000 and 100,000 facts, kept in the temp
folder). Timed, interleaved:

- the doctor (`diagnose`, what `lecode/memory/doctor` runs in a worker thread): every fact's
  status (each distinct source validated once, each session read once), drift, retirement
  proposals, the latest learning, the notes' shares; its first run (cold caches) is reported
  apart;
- the use record a turn adds: `record_use` of the 20 facts a turn showed, one transaction;
- the floor: `changes()` (one read of facts.sqlite3, what every turn's request already makes).

Over LSP, on the real server with the largest store: `lecode/ping` round trips sent while a
`lecode/memory/doctor` request is being answered, against plain ping round trips on the same
server (the doctor runs in a worker thread, so the event loop keeps answering).

Targets: the doctor's p50 under 200 ms at 100,000 facts; the use record under 1 ms p50; a ping
during the doctor within 5x the plain ping (a few ms: it shares the GIL with the doctor).
"""

from __future__ import annotations

import asyncio
import random
import tempfile
from pathlib import Path

from bench import corpus
from bench.common import (
    LECODE,
    compile_bytecode,
    make_repo,
    markdown_table,
    now,
    percentile,
    ratio,
    run_bench,
    running,
    server_env,
)
from lecode_ls.config import Settings
from lecode_ls.memory.doctor import diagnose
from lecode_ls.runtime import Runtime, Runtimes

DOCTOR_TARGET_MS = 200.0
USE_TARGET_MS = 1.0
PING_TARGET_RATIO = 5.0
SHOWN = 20  # the facts a turn shows, about (facts_max_bytes 8,192)


def _rounds(runtime: Runtime, count: int, doctors: int, uses: int) -> dict[str, list[float]]:
    rng = random.Random(26)
    times: dict[str, list[float]] = {"cold": [], "doctor": [], "use": [], "floor": []}
    started = now()
    diagnose(runtime, runtime.sessions)
    times["cold"].append(now() - started)
    for _ in range(doctors):
        started = now()
        diagnose(runtime, runtime.sessions)
        times["doctor"].append(now() - started)
        started = now()
        runtime.facts.ranking.changes()
        times["floor"].append(now() - started)
    for _ in range(uses):
        shown = rng.sample(range(1, count + 1), SHOWN)
        started = now()
        runtime.facts.ranking.record_use(shown)
        times["use"].append(now() - started)
        started = now()
        runtime.facts.ranking.changes()
        times["floor"].append(now() - started)
    return times


def _measure(quick: bool) -> str:
    sizes = (1_000, 2_000) if quick else (1_000, 10_000, 100_000)
    doctors, uses = (3, 30) if quick else (5, 300)
    results: dict[int, dict[str, list[float]]] = {}
    for count in sizes:
        with tempfile.TemporaryDirectory(prefix="lecode-bench-") as tmp:
            folder = Path(tmp) / "project"
            folder.mkdir()
            corpus.install(Path(tmp) / "config", folder, count)
            runtime = Runtimes(Path(tmp, "config").resolve(), Settings()).for_folder(
                folder.resolve()
            )
            try:
                results[count] = _rounds(runtime, count, doctors, uses)
            finally:
                runtime.close()
    small, large = sizes[0], sizes[-1]
    labels = {
        "cold": "doctor, first run (no verdict remembered)",
        "doctor": "doctor (lecode/memory/doctor's work)",
        "use": f"use record of a turn ({SHOWN} facts, one transaction)",
        "floor": "changes() read (floor)",
    }
    rows: list[list[object]] = []
    for count in sizes:
        times = results[count]
        floor = percentile(times["floor"], 50)
        for key, label in labels.items():
            p50 = percentile(times[key], 50)
            target = ""
            if key == "doctor" and count == large:
                met = p50 * 1e3 < DOCTOR_TARGET_MS
                target = f"< {DOCTOR_TARGET_MS:g} ms: " + ("met" if met else "MISSED")
            if key == "use" and count == large:
                met = p50 * 1e3 < USE_TARGET_MS
                target = f"< {USE_TARGET_MS:g} ms: " + ("met" if met else "MISSED")
            rows.append(
                [
                    f"{count:,}",
                    label,
                    len(times[key]),
                    f"{p50 * 1e3:.3f}",
                    f"{percentile(times[key], 99) * 1e3:.3f}",
                    ratio(p50, floor),
                    target,
                ]
            )
    return markdown_table(
        f"Memory hygiene by fact count (in-process; ratio against the floor at the same count; "
        f"targets at {large:,})",
        ["facts", "call", "n", "p50 ms", "p99 ms", "p50 / floor", "target"],
        rows,
        note=(
            f"Stores of bench/corpus.py (built once and kept, as for bench.ranking; {small:,} is "
            "the smallest). The doctor runs where the server runs it: off the request thread."
        ),
    )


async def _pings(count: int, doctors: int) -> tuple[list[float], list[float], list[float]]:
    """Plain pings, doctors over LSP, and the pings sent while each doctor ran."""
    compile_bytecode()
    with tempfile.TemporaryDirectory(prefix="lecode-bench-") as tmp:
        repo = make_repo(Path(tmp) / "project")
        config = Path(tmp) / "config"
        corpus.install(config, repo, count)
        plain: list[float] = []
        during: list[float] = []
        doctor: list[float] = []
        async with running(LECODE, server_env(config), [repo]) as server:
            await server.request("lecode/memory/doctor", {})  # warm: verdicts remembered
            for _ in range(doctors):
                for _ in range(5):
                    started = now()
                    await server.request("lecode/ping", {})
                    plain.append(now() - started)
                started = now()
                running_doctor = asyncio.ensure_future(server.request("lecode/memory/doctor", {}))
                while not running_doctor.done():
                    ping_started = now()
                    await server.request("lecode/ping", {})
                    if not running_doctor.done():
                        during.append(now() - ping_started)
                await running_doctor
                doctor.append(now() - started)
        return plain, doctor, during


def _ping_table(count: int, plain: list[float], doctor: list[float], during: list[float]) -> str:
    floor = percentile(plain, 50)
    rows: list[list[object]] = []
    for label, times in (
        ("`lecode/ping`, plain (floor)", plain),
        ("`lecode/memory/doctor` over LSP", doctor),
        ("`lecode/ping` while the doctor runs", during),
    ):
        target = ""
        if times is during and times:
            met = percentile(times, 50) <= PING_TARGET_RATIO * floor
            target = f"<= {PING_TARGET_RATIO:g}x floor: " + ("met" if met else "MISSED")
        rows.append(
            [
                label,
                len(times),
                f"{percentile(times, 50) * 1e3:.3f}" if times else "-",
                f"{percentile(times, 99) * 1e3:.3f}" if times else "-",
                ratio(percentile(times, 50), floor) if times else "-",
                target,
            ]
        )
    return markdown_table(
        f"Pings while the doctor runs, over LSP ({count:,} facts, the real server)",
        ["call", "n", "p50 ms", "p99 ms", "p50 / floor", "target"],
        rows,
        note="A ping during the doctor is counted only when the doctor had not answered yet.",
    )


async def measure(quick: bool = False) -> str:
    table = await asyncio.to_thread(_measure, quick)
    count = 2_000 if quick else 100_000
    plain, doctor, during = await _pings(count, 3 if quick else 10)
    return table + "\n\n" + _ping_table(count, plain, doctor, during)


def main() -> None:
    run_bench(measure, __doc__)


if __name__ == "__main__":
    main()
