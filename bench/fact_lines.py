"""What a fact's line in the prompt costs, and how many lines a small window's blocks hold
(issue 40, item 5).

The 210 facts of bench/retrieval_set.py are remembered as bench.retrieval remembers them (each
from its own user message, one session), then each of its 60 questions is a turn: its
candidates (selection.py) are written by injection's own code into a turn's block and into a
session's stable part under the caps a model's window leaves (agent/turn_memory.py's shares).
Measured: the bytes of a line, of its text and of the rest (ID, revision, reason, source
reference, JSON), in UTF-8 bytes and in tokens as the preflight estimates them (3 bytes a
token), and how many facts a turn's block and the stable part hold, on average, with an 8,192-
and a 4,096-token window. Not timed: a size, the same on every machine.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
from pathlib import Path

from bench.common import markdown_table
from bench.retrieval import _runtime
from bench.retrieval_set import QUESTIONS
from lecode_ls.agent.preflight import BYTES_PER_TOKEN
from lecode_ls.agent.turn_memory import (
    MIN_SHARE,
    MIN_STABLE,
    STABLE_SHARE,
    TURN_FACTS_HEADER,
    TURN_HEADING,
    TURN_SHARE,
    TURN_TEAM_LINES,
    window_caps,
)
from lecode_ls.memory.injection import fact_lines
from lecode_ls.memory.selection import candidates, select, turn_query
from lecode_ls.runtime import Runtime

WINDOWS = ((8192, 1024), (4096, 512))
"""(window, tokens kept for the answer): the live suite's window and common servers' default."""


def _lines(runtime: Runtime) -> list[tuple[int, int]]:
    """(line bytes, text bytes) of every fact's line, as the first question's block shows them."""
    selection = select(runtime, turn_query(QUESTIONS[0][0], [], []))
    lines = fact_lines(runtime, candidates(runtime, selection, ()), None, 1 << 20)
    return [
        (len(line.line.encode()), len(json.loads(line.line)["text"].encode())) for line in lines
    ]


def _held(runtime: Runtime, window: int, kept: int) -> tuple[float, float]:
    """The mean number of facts a turn's block and a stable part hold over the questions."""
    caps = window_caps(runtime.settings.memory, window - kept)
    turn_budget = max(caps.facts_max // TURN_SHARE, MIN_SHARE) - len(TURN_HEADING.encode())
    stable_budget = caps.facts_max // STABLE_SHARE
    stable_budget = stable_budget if stable_budget >= MIN_STABLE else 0
    turns, stables = [], []
    for question, _ in QUESTIONS:
        picks = candidates(runtime, select(runtime, turn_query(question, [], [])), ())
        turn = fact_lines(runtime, picks, None, turn_budget, TURN_FACTS_HEADER, TURN_TEAM_LINES)
        turns.append(len(turn))
        stables.append(len(fact_lines(runtime, picks, None, stable_budget)))
    return statistics.mean(turns), statistics.mean(stables)


def _measure() -> str:
    with tempfile.TemporaryDirectory() as tmp:
        runtime = _runtime(Path(tmp))
        try:
            sizes = _lines(runtime)
            held = {window: _held(runtime, window, kept) for window, kept in WINDOWS}
        finally:
            runtime.close()
    line = statistics.mean(size for size, _ in sizes)
    text = statistics.mean(text for _, text in sizes)
    rest = line - text
    rows = [
        ["a fact's line", f"{line:.0f}", f"{line / BYTES_PER_TOKEN:.0f}"],
        ["its text", f"{text:.0f}", f"{text / BYTES_PER_TOKEN:.0f}"],
        [
            "the rest (ID, revision, reason, source, JSON)",
            f"{rest:.0f} ({rest / line:.0%})",
            f"{rest / BYTES_PER_TOKEN:.0f}",
        ],
    ]
    table = markdown_table(
        "What a fact's line in the prompt costs (bench.fact_lines)",
        [f"per line, mean of {len(sizes)}", "bytes", "est. tokens"],
        rows,
    )
    fits = markdown_table(
        "Facts a small window's blocks hold (mean of the 60 questions)",
        ["window", "facts in a turn's block", "facts in the stable part"],
        [[f"{w:,}", f"{held[w][0]:.1f}", f"{held[w][1]:.1f}"] for w, _ in WINDOWS],
    )
    return table + "\n\n" + fits


async def measure(quick: bool = False) -> str:
    return await asyncio.to_thread(_measure)


def main() -> None:
    sys.stdout.write(asyncio.run(measure()) + "\n")


if __name__ == "__main__":
    main()
