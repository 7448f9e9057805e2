"""`lecode-ls context` (a hook's memory section, issue 28) against a bare `python -c pass`.

An agent's hook runs `lecode-ls context` at every prompt, as a new process: the cost is the
interpreter's start, the imports, opening the store read-only, ranking and validating. The
floor is the interpreter starting and doing nothing, measured in the same run, alternating with
the measured command so drift on the machine falls on both. The store holds 10,000 facts
(bench/corpus.py, built once and kept in the temp folder); the prompt is a question about one
of them. Also reported: whether the path imports pygls, httpx or the MCP SDK (`-X importtime`).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.common import (
    BYTECODE_NOTE,
    ROOT,
    compile_bytecode,
    make_repo,
    markdown_table,
    now,
    percentile,
    ratio,
    run_bench,
    server_env,
)
from bench.corpus import install, question

FACTS = 10_000
TARGET_RATIO = 1.5
TARGET_EXTRA_MS = 100.0
HEAVY = ("pygls", "lsprotocol", "httpx", "mcp", "pydantic")


def _timed(command: list[str], env: dict[str, str]) -> float:
    start = now()
    subprocess.run(command, cwd=ROOT, env=env, check=True, capture_output=True)
    return now() - start


def _heavy_imports(command: list[str], env: dict[str, str]) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *command],
        cwd=ROOT, env=env, check=True, capture_output=True, text=True,
    )  # fmt: skip
    names = {line.rsplit("|", 1)[-1].strip().split(".")[0] for line in done.stderr.splitlines()}
    return sorted(name for name in HEAVY if name in names)


async def measure(quick: bool = False) -> str:
    compile_bytecode()
    runs = 3 if quick else 30
    with tempfile.TemporaryDirectory(prefix="lecode-bench-context-") as tmp:
        config = Path(tmp) / "config"
        repo = make_repo(Path(tmp) / "repo")
        install(config, repo, FACTS)
        env = server_env(config)
        floor_cmd = [sys.executable, "-c", "pass"]
        # The console script a hook runs (not `python -m`, which adds runpy's imports).
        script = Path(sys.executable).with_name("lecode-ls")
        context_cmd = [
            str(script), "context", "--prompt", question(4321),
            "--cwd", str(repo), "--format", "claude",
        ]  # fmt: skip
        shown = subprocess.run(context_cmd, cwd=ROOT, env=env, check=True, capture_output=True)
        assert b"fact_id" in shown.stdout, "the section holds no fact: the bench measures nothing"
        floor: list[float] = []
        context: list[float] = []
        for i in range(runs):
            pair = [(floor, floor_cmd), (context, context_cmd)]
            for values, command in pair if i % 2 == 0 else pair[::-1]:
                values.append(_timed(command, env))
        heavy = _heavy_imports(context_cmd, env)
    f50, f95 = percentile(floor, 50) * 1000, percentile(floor, 95) * 1000
    c50, c95 = percentile(context, 50) * 1000, percentile(context, 95) * 1000
    target = TARGET_RATIO * f50 + TARGET_EXTRA_MS
    rows = [
        ["`python -c pass` (floor)", f"{f50:.1f}", f"{f95:.1f}", "1.00", ""],
        [
            f"`lecode-ls context --format claude`, {FACTS:,} facts",
            f"{c50:.1f}",
            f"{c95:.1f}",
            ratio(c50, f50),
            f"p50 ≤ 1.5x floor + 100 ms = {target:.0f} ms: "
            + ("met" if c50 <= target else "MISSED"),
        ],
    ]
    note = (
        f"{runs} runs each, alternating; ms. Heavy modules imported on the path: "
        f"{', '.join(heavy) or 'none'} (of {', '.join(HEAVY)}). {BYTECODE_NOTE} "
        f"{os.cpu_count()} CPUs."
    )
    return markdown_table(
        "context: a hook's memory section", ["command", "p50", "p95", "ratio", "target"], rows, note
    )


def main() -> None:
    run_bench(measure, __doc__)


if __name__ == "__main__":
    main()
