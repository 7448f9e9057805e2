"""Compaction against session length, and the preflight estimate against reported usage.

1. In-process, for a session of 1,000 and one of 100,000 records, each with a valid working
   summary covering everything but the same 10 new exchanges (20 messages): the time to assemble
   the next compaction's input from the working view (`compaction.plan`: pick the coverable
   exchanges, render them with the prior summary, size them against the window), which must
   follow the new exchanges, not the history; and, reported beside it, the time to build the
   working view itself (`working.working_view`: find the summary by its index code, check it, and
   parse what follows it; once its verdict is remembered, and while the process only appends,
   the check costs a lookup: target within 2x of the short session). The transcripts are written
   directly in the store's format (bench.sources) and their summaries appended, untimed.
2. The preflight estimate's error over a scripted 60-turn session whose provider reports usage
   from a stand-in tokenizer (one token per word piece, `\\w+` or one other non-space
   character): the relative error |estimate - reported| / reported at chosen turns, as the
   per-model calibration learns from each report. No real model's tokenizer is available
   offline: with a real endpoint, bench.compare records real usage.
"""

from __future__ import annotations

import asyncio
import re
import tempfile
from collections.abc import AsyncGenerator
from pathlib import Path

from bench.common import markdown_table, now, percentile, run_bench
from bench.sources import write_transcript
from lecode_ls.agent.compaction import plan
from lecode_ls.agent.preflight import Calibration, estimate_tokens
from lecode_ls.agent.provider import ChatRequest, Event, Finish, TextDelta, Usage
from lecode_ls.agent.runner import ChatTurn, TurnOptions
from lecode_ls.config import Settings
from lecode_ls.memory.canonical import canonical_json, records_digest
from lecode_ls.memory.project import Project
from lecode_ls.memory.sessions import MAX_POSITIONS
from lecode_ls.memory.working import working_view
from lecode_ls.runtime import Runtime
from lecode_ls.tools.permissions import PermissionPolicy

NEW_EXCHANGES = 10
PIECE = re.compile(r"\w+|[^\w\s]")


def _runtime(tmp: Path, name: str) -> Runtime:
    project = Project(root=tmp / name, slug=f"{name}-000000000000")
    return Runtime(project, tmp / "config", Settings())


def _summarised(tmp: Path, records: int) -> tuple[Runtime, str]:
    """A session of `records` records whose last 20 messages are new after a valid summary."""
    runtime = _runtime(tmp, f"bench{records}")
    folder = runtime.sessions.folder
    folder.mkdir(parents=True, exist_ok=True)
    covered = records - 2 * NEW_EXCHANGES
    session_id, _ = write_transcript(folder, covered)
    sessions = runtime.sessions
    assert sessions.length(session_id) == covered  # the store indexes it: untimed
    seqs = list(range(1, covered))
    lineage = []
    for start in range(0, len(seqs), MAX_POSITIONS):
        chunk = seqs[start : start + MAX_POSITIONS]
        got = sessions.read(session_id, chunk[0], chunk[-1])
        lineage.append({"session_id": session_id, "seqs": chunk, "digest": records_digest(got)})
    sessions.append(
        session_id,
        {
            "kind": "event",
            "type": "compact",
            "summary": "The person and the assistant worked through the build. " * 20,
            "covered_through": covered - 1,
            "lineage": lineage,
            "prior": None,
            "generation": 0,
            "model": "bench-model",
            "usage": None,
        },
    )
    for n in range(NEW_EXCHANGES):
        sessions.append(
            session_id, {"kind": "message", "role": "user", "content": f"new question {n} " * 20}
        )
        sessions.append(
            session_id,
            {
                "kind": "message",
                "role": "assistant",
                "content": f"new answer {n} " * 30,
                "meta": {"generation": 0},
            },
        )
    return runtime, session_id


def _assembly(quick: bool) -> str:
    warmup, n = (2, 10) if quick else (5, 60)
    sizes = (1_000, 100_000) if not quick else (1_000, 20_000)
    rows: list[list[object]] = []
    with tempfile.TemporaryDirectory(prefix="lecode-bench-") as tmp:
        built: dict[int, tuple[Runtime, str]] = {
            size: _summarised(Path(tmp), size) for size in sizes
        }
        views = {
            size: working_view(rt.sessions, rt.facts, sid) for size, (rt, sid) in built.items()
        }
        for view in views.values():
            assert view.summary is not None, "the bench summary must be valid"
            assert len(view.messages) == 2 * NEW_EXCHANGES
        assembly: dict[int, list[float]] = {size: [] for size in sizes}
        viewing: dict[int, list[float]] = {size: [] for size in sizes}
        for i in range(warmup + n):
            for size in sizes:
                runtime, session_id = built[size]
                start = now()
                planned = plan(views[size], "gpt-4o", 128_000)
                assembled = now() - start
                assert not isinstance(planned, str)
                start = now()
                working_view(runtime.sessions, runtime.facts, session_id)
                viewed = now() - start
                if i >= warmup:
                    assembly[size].append(assembled)
                    viewing[size].append(viewed)
        for runtime, _ in built.values():
            runtime.close()
    small, big = sizes
    for label, data in (
        ("assemble the input (`plan`)", assembly),
        ("build the working view", viewing),
    ):
        p_small, p_big = percentile(data[small], 50), percentile(data[big], 50)
        rows.append([label, f"{p_small * 1e3:.2f}", f"{p_big * 1e3:.2f}", f"{p_big / p_small:.2f}"])
    return markdown_table(
        f"Compaction input against session length ({NEW_EXCHANGES} new exchanges after a valid "
        f"summary; {n} runs after {warmup} warm-up, interleaved)",
        ["step", f"p50 ms at {small:,} records", f"p50 ms at {big:,} records", "ratio"],
        rows,
        "The input's assembly follows the new exchanges. Building the view parses only what "
        "follows the summary; the summary's verdict is remembered against prefix digests the "
        "transcript keeps while this process only appends to it (a full parse and digest the "
        "first time in a process, and after any other change to the file). Target: the view "
        "at the long session within 2x of the short one.",
    )


class StandInModel:
    """Answers every request and reports usage from the stand-in tokenizer; notes, per request,
    the reported count, the uncalibrated estimate and the calibration factor in force."""

    def __init__(self, calibration: Calibration) -> None:
        self.calibration = calibration
        self.seen: list[tuple[int, int, float]] = []

    async def stream(self, request: ChatRequest) -> AsyncGenerator[Event, None]:
        parts = [*request.messages, *request.tools]
        tokens = sum(len(PIECE.findall(canonical_json(dict(p)).decode())) + 4 for p in parts)
        self.seen.append((tokens, estimate_tokens(request), self.calibration.factor("gpt-4o")))
        yield TextDelta("Noted; the build uses make and the tests run with pytest.")
        yield Finish("stop", Usage(tokens, 12, tokens + 12))


async def _estimates(quick: bool) -> str:
    turns = 15 if quick else 60
    with tempfile.TemporaryDirectory(prefix="lecode-bench-") as tmp:
        runtime = _runtime(Path(tmp), "estimate")
        session = runtime.sessions.create("estimate")
        calibration = Calibration()
        model = StandInModel(calibration)
        options = TurnOptions(model="gpt-4o", policy=PermissionPolicy(), calibration=calibration)
        for turn in range(1, turns + 1):
            text = f"Turn {turn}: look at src/module_{turn}.py and explain the function `f{turn}`."
            chat = ChatTurn(
                runtime, session, model, options, folder=Path(tmp), emit=lambda k, f: None
            )
            await chat.run(text)
        runtime.close()
    rows: list[list[object]] = []
    for turn in sorted({1, 2, 5, 10, turns // 2, turns}):
        reported, raw, factor = model.seen[turn - 1]
        calibrated = raw * factor
        rows.append(
            [
                turn,
                reported,
                raw,
                f"{abs(raw - reported) / reported:.1%}",
                round(calibrated),
                f"{abs(calibrated - reported) / reported:.1%}",
            ]
        )
    return markdown_table(
        f"Preflight estimate against reported prompt tokens ({turns}-turn scripted session)",
        ["turn", "reported", "uncalibrated estimate", "error", "calibrated estimate", "error"],
        rows,
        "Reported counts come from a stand-in tokenizer (word pieces), not a real model's; the "
        "calibrated estimate uses the factor learned from the reports before that request.",
    )


async def measure(quick: bool = False) -> str:
    first = await asyncio.to_thread(_assembly, quick)
    return first + "\n\n" + await _estimates(quick)


def main() -> None:
    run_bench(measure, __doc__)


if __name__ == "__main__":
    main()
