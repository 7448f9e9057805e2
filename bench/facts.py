"""Fact reads as the fact count grows: `lecode/facts/list` and `lecode/facts/recall` over LSP,
and `FactStore.search` in-process, with 1,000, 10,000 and 100,000 facts.

A real lecode-ls serves the requests. It imports one transcript of 1,000 messages
(`lecode/session/import`) and takes 300 snapshots of 4-position ranges of it
(`lecode/session/snapshot`); the facts cite those snapshots in turn, each with its own text.
They are created in this process through the project's own `Runtime`: `FactStore.remember` with
`Runtime.check_source` as its check, exactly what `lecode/facts/remember` runs, minus JSON-RPC.
That is one validated, fsynced transaction per fact; its time is reported. No SQL is written
behind the store.

`lecode/ping` is the floor of the LSP rows. There is no LSP method for search, so
`FactStore.search` is timed in this process, against the same database.
"""

from __future__ import annotations

import asyncio
import random
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import (
    LECODE,
    Server,
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
from lecode_ls.memory.sessions import SourceRef
from lecode_ls.runtime import Runtime, Runtimes

TARGET_MS = 10.0
MESSAGES = 1_000
RANGES = 300
SPAN = 4  # positions per cited range
PAGE = 20
TOPICS = (
    "the build runs with `make check` before every commit",
    "indentation in this repository is tabs, never spaces",
    "the integration tests need a running Postgres on port 5433",
    "release notes are written in CHANGES.md under an Unreleased heading",
    "the CLI entry point lives in src/app/cli.py and uses argparse",
    "generated files under gen/ must never be edited by hand",
    "the team prefers small commits with imperative subject lines",
    "the config loader merges defaults, the user file, then the editor",
)


def _transcript() -> list[dict[str, Any]]:
    """1,000 OpenAI-style messages, alternating user and assistant, 100 to 700 characters."""
    rng = random.Random(7)
    words = " ".join(TOPICS).split()
    return [
        {
            "role": "user" if i % 2 == 0 else "assistant",
            "content": " ".join(rng.choices(words, k=rng.randint(15, 110))),
        }
        for i in range(MESSAGES)
    ]


def _text(number: int) -> str:
    """Fact `number`'s text: unique (`fact-000123`), so nothing is deduplicated."""
    return f"fact-{number:06d}: {TOPICS[number % len(TOPICS)]} (noted in round {number % 97})"


def _populate(runtime: Runtime, refs: Sequence[SourceRef], first: int, last: int) -> float:
    """Remember facts `first` .. `last` the way `lecode/facts/remember` does; returns seconds."""
    start = now()
    for number in range(first, last + 1):
        fact_id, _ = runtime.facts.remember(
            _text(number), refs[number % len(refs)], check=runtime.check_source
        )
        if fact_id != number:
            raise AssertionError(f"fact {number} got ID {fact_id}")
    return now() - start


async def _lsp_rounds(
    server: Server, count: int, warmup: int, n: int, rng: random.Random
) -> dict[str, list[float]]:
    deep = max(count - PAGE, 0)
    calls: list[tuple[str, str, Any]] = [
        ("ping", "lecode/ping", {}),
        ("list0", "lecode/facts/list", {"offset": 0}),
        ("listdeep", "lecode/facts/list", {"offset": deep}),
        ("recall", "lecode/facts/recall", None),  # a random fact each time
    ]
    first = await server.request("lecode/facts/list", {"offset": deep})
    if len(first["facts"]) != min(PAGE, count) or {f["status"] for f in first["facts"]} != {
        "valid"
    }:
        raise AssertionError(f"unexpected list page: {first}")
    times: dict[str, list[float]] = {key: [] for key, _, _ in calls}
    for i in range(warmup + n):
        shift = i % len(calls)  # rotate: no request always follows the same one
        for key, method, params in calls[shift:] + calls[:shift]:
            if params is None:
                params = {"factId": rng.randint(1, count)}
            start = now()
            answer = await server.request(method, params)
            elapsed = now() - start
            if key == "recall" and answer["status"] != "valid":
                raise AssertionError(f"recall: {answer}")
            if i >= warmup:
                times[key].append(elapsed)
    return times


def _search_rounds(runtime: Runtime, count: int, warmup: int, n: int) -> dict[str, list[float]]:
    literals = {
        "rare": (f"fact-{count // 2:06d}", 1),  # in one fact, found through the trigram index
        "every": ("fact-", PAGE),  # in every fact: the index matches all, one page returned
        "short": ("zq", 0),  # 2 characters in no fact: the index of characters and pairs
        "char": ("Ω", 0),  # 1 character in no fact
        "shortevery": ("ct", PAGE),  # 2 characters in every fact ("fact-"): one page
    }
    times: dict[str, list[float]] = {key: [] for key in literals}
    for i in range(warmup + n):
        for key, (literal, expected) in literals.items():
            start = now()
            found = runtime.facts.search(literal)
            elapsed = now() - start
            if len(found) != expected:
                raise AssertionError(f"search {literal!r}: {len(found)} facts")
            if i >= warmup:
                times[key].append(elapsed)
    return times


_IN_PROCESS = ("rare", "every", "short", "char", "shortevery")

LABELS = {
    "ping": "`lecode/ping` (floor)",
    "list0": "`lecode/facts/list`, first page",
    "listdeep": "`lecode/facts/list`, last page (offset count - 20)",
    "recall": "`lecode/facts/recall`, a random fact",
    "rare": "`FactStore.search` in-process: literal in 1 fact",
    "every": "`FactStore.search` in-process: literal in every fact (first 20)",
    "short": "`FactStore.search` in-process: 2-character literal in no fact",
    "char": "`FactStore.search` in-process: 1-character literal in no fact",
    "shortevery": "`FactStore.search` in-process: 2-character literal in every fact (first 20)",
}


def _rows(count: int, times: dict[str, list[float]], floor50: float) -> list[list[object]]:
    rows: list[list[object]] = []
    for key, values in times.items():
        p50 = percentile(values, 50)
        in_process = key in _IN_PROCESS
        target = "" if key == "ping" else f"< {TARGET_MS:g} ms: "
        if target:
            target += "met" if p50 * 1e3 < TARGET_MS else "MISSED"
        rows.append(
            [
                f"{count:,}",
                LABELS[key],
                len(values),
                f"{p50 * 1e3:.3f}",
                f"{percentile(values, 99) * 1e3:.3f}",
                "—" if in_process else ratio(p50, floor50),
                target,
            ]
        )
    return rows


async def measure(quick: bool = False) -> str:
    sizes = (1_000,) if quick else (1_000, 10_000, 100_000)
    warmup, n, search_n = (5, 30, 30) if quick else (20, 200, 100)
    rng = random.Random(11)
    rows: list[list[object]] = []
    populated: list[str] = []
    with tempfile.TemporaryDirectory(prefix="lecode-bench-") as tmp:
        repo = make_repo(Path(tmp) / "repo")
        config = Path(tmp) / "config"
        async with running(LECODE, server_env(config), [repo]) as server:
            imported = await server.request(
                "lecode/session/import", {"records": _transcript(), "title": "bench"}
            )
            session_id = imported["sessionId"]
            refs = []
            for index in range(RANGES):
                start = 1 + (index * 3) % (MESSAGES - SPAN)
                snap = await server.request(
                    "lecode/session/snapshot",
                    {"sessionId": session_id, "startSeq": start, "endSeq": start + SPAN - 1},
                )
                refs.append(SourceRef(snap["sessionId"], tuple(snap["seqs"]), snap["digest"]))
            # The project's runtime in this process: the same store folder the server uses.
            runtimes = Runtimes(config.resolve(), Settings())
            try:
                runtime = runtimes.for_folder(repo.resolve())
                done = 0
                for count in sizes:
                    seconds = await asyncio.to_thread(_populate, runtime, refs, done + 1, count)
                    populated.append(
                        f"{count - done:,} in {seconds:.1f} s "
                        f"({seconds / (count - done) * 1e3:.2f} ms a fact)"
                    )
                    done = count
                    times = await _lsp_rounds(server, count, warmup, n, rng)
                    times.update(
                        await asyncio.to_thread(_search_rounds, runtime, count, warmup, search_n)
                    )
                    rows += _rows(count, times, percentile(times["ping"], 50))
                size = sum(
                    p.stat().st_size for p in runtime.facts_path.parent.glob("facts.sqlite3*")
                )
            finally:
                runtimes.close_all()

    return markdown_table(
        "Fact reads by fact count (LSP rows against `lecode/ping`; search in-process)",
        ["facts", "call", "n", "p50 ms", "p99 ms", "p50 / ping", "target"],
        rows,
        note=(
            "Populated in-process with `FactStore.remember` + `Runtime.check_source` (one "
            "validated, fsynced transaction a fact, as `lecode/facts/remember` runs it): "
            f"{'; then '.join(populated)}. facts.sqlite3 and its WAL: {size / 1e6:.1f} MB. "
            f"Facts cite {RANGES} snapshots of {SPAN}-position ranges of one imported "
            f"{MESSAGES:,}-message transcript. {warmup} warm-up rounds, requests rotated; each "
            "list page validates its 20 facts' sources, each recall one."
        ),
    )


def main() -> None:
    run_bench(measure, __doc__)


if __name__ == "__main__":
    main()
