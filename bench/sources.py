"""Source validation against transcript length: a 200-record range at the end of 1,000 records
against the same range at the end of 1,000,000 records.

`validate_source` and `source_snapshot` promise a cost that grows with the cited range, not with
the transcript (the store seeks through its offset index). The short transcript is the floor: the
same 200 records (same contents, only their seqs differ), the same store, calls interleaved.

Both transcripts are written straight to disk in the store's own format (canonical JSON lines,
header first, checked against `canonical_json` for every record shape); the store then rebuilds
each index once with a full scan, untimed. One `SessionStore` serves every call, as in the server,
with a `FactStore` (an existing, empty facts.sqlite3) as the exclusion reader, as the server
passes it.
"""

from __future__ import annotations

import asyncio
import os
import random
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.common import markdown_table, now, percentile, ratio, run_bench
from lecode_ls.memory.canonical import canonical_json
from lecode_ls.memory.facts import FactStore
from lecode_ls.memory.files import FILE_MODE, make_dirs
from lecode_ls.memory.sessions import (
    MAX_POSITIONS,
    SessionStore,
    SourceRef,
    new_session_id,
    source_snapshot,
    validate_source,
)

TARGET = 2.0
RANGE = MAX_POSITIONS  # 200 records, the largest source there is
SHAPES = 100  # record s uses shape s % 100; 100 divides every length, so both ranges match
CREATED = "2026-01-01T00:00:00Z"
WORDS = (
    *("build", "test", "tabs", "lint", "import", "module", "cache", "config", "server", "client"),
    *("request", "index", "transcript", "session", "fact", "source", "digest", "range"),
    *("visible", "undo", "redo", "clear", "memory", "project", "folder", "path"),
)


def _shapes() -> list[bytes]:
    """Line prefixes, everything before the seq's digits, for 100 message shapes.

    Keys sort content < kind < meta < role < seq, so `seq` is the last key of the canonical form
    and a line is `prefix + digits + b"}\\n"`; checked against `canonical_json` below.
    """
    rng = random.Random(1)
    prefixes = []
    for index in range(SHAPES):
        role = "user" if index % 2 == 0 else "assistant"
        words = rng.choices(WORDS, k=rng.randint(15, 110))
        record: dict[str, Any] = {"kind": "message", "role": role, "content": " ".join(words)}
        if role == "assistant":
            record["meta"] = {
                "model": "bench-model",
                "usage": {"input_tokens": rng.randint(100, 9000), "output_tokens": len(words)},
            }
        encoded = canonical_json(record)
        prefix = encoded[:-1] + b',"seq":'
        if canonical_json({**record, "seq": 123456}) != prefix + b"123456}":
            raise AssertionError("seq is not the last key of the canonical form")
        prefixes.append(prefix)
    return prefixes


def write_transcript(folder: Path, records: int) -> tuple[str, int]:
    """A transcript of `records` records (the header and messages), written directly.

    Returns (session ID, bytes written).
    """
    session_id = new_session_id(CREATED)
    header = {
        "seq": 0,
        "kind": "session",
        "title": f"bench {records}",
        "created": CREATED,
        "id": session_id,
    }
    prefixes = _shapes()
    path = folder / f"{session_id}.jsonl"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    size = 0
    try:
        size += os.write(fd, canonical_json(header) + b"\n")
        for start in range(1, records, 50_000):
            chunk = b"".join(
                prefixes[seq % SHAPES] + b"%d}\n" % seq
                for seq in range(start, min(start + 50_000, records))
            )
            view = memoryview(chunk)
            while view:
                written = os.write(fd, view)
                size += written
                view = view[written:]
        os.fsync(fd)
    finally:
        os.close(fd)
    return session_id, size


def _row(label: str, small: list[float], big: list[float], target: bool) -> list[object]:
    s50, b50 = percentile(small, 50), percentile(big, 50)
    verdict = f"≤ {TARGET}: {'met' if b50 / s50 <= TARGET else 'MISSED'}" if target else ""
    return [
        label,
        len(big),
        f"{s50 * 1e3:.3f}",
        f"{percentile(small, 99) * 1e3:.3f}",
        f"{b50 * 1e3:.3f}",
        f"{percentile(big, 99) * 1e3:.3f}",
        ratio(b50, s50),
        verdict,
    ]


def _measure(quick: bool) -> str:
    small_n, big_n = 1_000, (100_000 if quick else 1_000_000)
    warmup, n, fresh_n = (5, 30, 5) if quick else (30, 400, 30)
    with tempfile.TemporaryDirectory(prefix="lecode-bench-") as tmp:
        root = Path(tmp) / "store"
        make_dirs(root / "sessions")
        built = now()
        small_id, small_bytes = write_transcript(root / "sessions", small_n)
        big_id, big_bytes = write_transcript(root / "sessions", big_n)
        written = now() - built
        store = SessionStore(root)
        exclusions = FactStore(root / "facts.sqlite3", root=root)
        exclusions.add("makes the database exist, so excluded_seqs runs its query")
        indexed = now()
        for session_id, length in ((small_id, small_n), (big_id, big_n)):
            if store.length(session_id) != length:  # the store rebuilds the index: a full scan
                raise AssertionError("the store does not read the written transcript")
        indexed = now() - indexed

        def snapshot(session_id: str, length: int) -> SourceRef:
            return source_snapshot(
                store, session_id, length - RANGE, length - 1, exclusions=exclusions
            )

        refs = {small_id: snapshot(small_id, small_n), big_id: snapshot(big_id, big_n)}
        if len(refs[big_id].seqs) != RANGE or refs[small_id].digest == refs[big_id].digest:
            raise AssertionError("the ranges are not 200 messages each")

        def validate(session_id: str) -> None:
            if not validate_source(store, refs[session_id], exclusions=exclusions).valid:
                raise AssertionError("the source does not validate")

        def fresh(session_id: str) -> None:
            # A new store, as after a server restart: the first use loads the session's index.
            if not validate_source(SessionStore(root), refs[session_id]).valid:
                raise AssertionError("the source does not validate")

        def snap(session_id: str) -> None:
            snapshot(session_id, small_n if session_id == small_id else big_n)

        calls: dict[str, Callable[[str], object]] = {
            "validate": validate,
            "snapshot": snap,
            "fresh": fresh,
        }
        times: dict[tuple[str, str], list[float]] = {
            (name, sid): [] for name in calls for sid in (small_id, big_id)
        }
        for i in range(warmup + n):
            # Alternate which transcript goes first, so neither always follows the other.
            order = (small_id, big_id) if i % 2 else (big_id, small_id)
            for name, call in calls.items():
                if name == "fresh" and i >= warmup + fresh_n:
                    continue
                for sid in order:
                    start = now()
                    call(sid)
                    elapsed = now() - start
                    if i >= warmup:
                        times[(name, sid)].append(elapsed)
        exclusions.close()

    def pair(name: str) -> tuple[list[float], list[float]]:
        return times[(name, small_id)], times[(name, big_id)]

    rows = [
        _row("`validate_source` (200 records)", *pair("validate"), target=True),
        _row("`source_snapshot` (200 records)", *pair("snapshot"), target=True),
        _row("`validate_source`, first use in a new `SessionStore`", *pair("fresh"), False),
    ]
    big_label = f"{big_n:,}"
    return markdown_table(
        f"Source validation: the last 200 records of {small_n:,} (floor) against {big_label}",
        [
            "call",
            "n",
            f"{small_n:,}: p50 ms",
            "p99 ms",
            f"{big_label}: p50 ms",
            "p99 ms",
            "p50 / floor",
            "target",
        ],
        rows,
        note=(
            f"Transcripts written directly in the store's format ({small_bytes / 1e6:.1f} MB and "
            f"{big_bytes / 1e6:.0f} MB, {written:.1f} s), then each index rebuilt once by the "
            f"store's full scan, untimed ({indexed:.1f} s). {warmup} warm-up rounds, calls "
            "interleaved. The last row builds a new `SessionStore` per call: it pays the one "
            "index load (8 bytes a record) that a restarted server pays once per session."
        ),
    )


async def measure(quick: bool = False) -> str:
    return await asyncio.to_thread(_measure, quick)


def main() -> None:
    run_bench(measure, __doc__)


if __name__ == "__main__":
    main()
