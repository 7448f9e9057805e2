"""Small local models against compaction, learning and turn endings (issue 31), measured on
llama-server, this tree against an older lecode-ls tree.

    scripts/test-live --collect-only -q   # once: fetches the model and builds llama-server
    LECODE_LLAMA_SERVER=~/.cache/lecode-live/build/bin/llama-server \\
    LECODE_LIVE_MODEL=~/.cache/lecode-live/models/qwen2.5-coder-0.5b-instruct-q4.gguf \\
        uv run python -m bench.small_models [--tree before=DIR] [--turns N]

One trial (in a child process whose `lecode_ls` is the arm's tree, in-process: stores on a
temporary folder, the OpenAI-compatible adapter against the server): the small session of
bench/small_session.py (six conventions, four one-off requests, a colleague's and a temporary
preference, two fillers) appended a few exchanges at a time and compacted after exchanges 6, 10
and 14, with automatic learning on (memory writing allowed; this tree: `[memory] learning` as
`--learning`, default its default); then `--turns` chat turns in a fresh session of the same
project ("What does MEMORY.md say?" and the like, which small models answer by calling tools),
with `[agent] max_output_tokens` as `--max-output-tokens`. It reports for each compaction its
status and reason, the conventions the working summary keeps; the facts learned (conventions,
and anything else), learning's statuses and reason codes; and how the turns ended. The server:
the live suite's settings (seed 42, temperature 0, one slot, an 8,192-token window, the fenced
tool-call template). Nothing here asserts; the tables are read by people.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import ROOT
from bench.small_session import COMPACT_AFTER, CONVENTIONS, conventions_kept, records

MODEL = "qwen2.5-coder-0.5b-instruct"
TURNS = (
    "What does MEMORY.md say?",
    "Which Python version does pyproject.toml require?",
    "List the facts you remember about this project.",
    "What is in the scratchpad?",
    "Read pyproject.toml and tell me the project's name.",
    "Search the memory for tabs.",
)


async def child(base_url: str, learning: str | None, turns: int, max_output: int) -> dict[str, Any]:
    """One trial with the `lecode_ls` this process imports (the arm's tree)."""
    from lecode_ls.agent.compaction import compact_session
    from lecode_ls.agent.openai import OpenAICompatible
    from lecode_ls.agent.runner import ChatTurn, TurnOptions
    from lecode_ls.config import AgentSettings, MemorySettings, Settings
    from lecode_ls.memory.project.identity import Project
    from lecode_ls.memory.working import working_view
    from lecode_ls.runtime import Runtime
    from lecode_ls.tools.permissions import PermissionPolicy

    folder = Path(tempfile.mkdtemp(prefix="small-models-"))
    project = folder / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[project]\nname = "demo"\nversion = "0.1.0"\nrequires-python = ">=3.11"\n'
    )
    memory: dict[str, Any] = {"auto_learn": True}
    if learning is not None and "learning" in MemorySettings.model_fields:
        memory["learning"] = learning
    if "rules_learn" in MemorySettings.model_fields:  # the facts the rules learn are measured
        memory["rules_learn"] = "remember"
    settings = Settings(
        memory=MemorySettings(**memory), agent=AgentSettings(max_output_tokens=max_output)
    )
    runtime = Runtime(Project(root=project, slug="small-000000000000"), folder / "config", settings)
    provider = OpenAICompatible(base_url, MODEL, None, read_timeout=900.0)
    policy = PermissionPolicy({"memory_write": "allow"})
    import lecode_ls

    package = str(Path(lecode_ls.__file__).parent)
    result: dict[str, Any] = {"package": package, "compactions": [], "turns": []}
    try:
        session = runtime.sessions.create("small")
        done = 0
        for after in COMPACT_AFTER:
            for record in records(done, after):
                extra = {"meta": {"generation": 0}} if record["role"] != "user" else {}
                runtime.sessions.append(session, {"kind": "message", **record, **extra})
            done = after
            outcome = await compact_session(
                runtime, session, provider, model=MODEL, window=8192, policy=policy
            )
            view = working_view(runtime.sessions, runtime.facts, session)
            summary = view.summary["summary"] if view.summary else ""
            learning_record = outcome.learning
            print(f"small_models: compaction {outcome.status} {outcome.reason}", file=sys.stderr)
            result["compactions"].append(
                {
                    "status": outcome.status,
                    "reason": outcome.reason,
                    "lost": list(getattr(outcome, "lost", ())),
                    "kept": conventions_kept(summary),
                    "summary": summary[:400],
                    "learning": None
                    if learning_record is None
                    else {
                        "status": learning_record.status,
                        "reasons": dict(learning_record.reason_counts),
                    },
                }
            )
        result["facts"] = [f.text for f in runtime.facts.list()[0]]
        options = TurnOptions(
            model=MODEL, context_window=8192, policy=policy, max_output_tokens=max_output
        )
        chat = runtime.sessions.create("turns")
        for text in TURNS[:turns]:
            deltas: list[tuple[str, dict[str, Any]]] = []

            def emit(kind: str, fields: dict[str, Any], into: list[Any] = deltas) -> None:
                into.append((kind, fields))

            turn = ChatTurn(runtime, chat, provider, options, folder=project, emit=emit)
            ended = await turn.run(text)
            answer = "".join(f.get("text", "") for k, f in deltas if k == "text").strip()
            codes = [f.get("code") for k, f in deltas if k == "error"]
            result["turns"].append(
                {"stop": ended.stop_reason, "answered": bool(answer), "errors": codes}
            )
            print(f"small_models: turn {result['turns'][-1]}", file=sys.stderr)
    finally:
        await provider.aclose()
        runtime.close()
    return result


def run_arm(source: Path, base_url: str, args: argparse.Namespace) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=f"{source}{os.pathsep}{ROOT}")
    command = [
        sys.executable, "-m", "bench.small_models", "--child", base_url,
        "--turns", str(args.turns), "--max-output-tokens", str(args.max_output_tokens),
    ]  # fmt: skip
    if args.learning:
        command += ["--learning", args.learning]
    # `python -m` puts the working folder first on sys.path: the arm's tree, not this one
    done = subprocess.run(
        command, env=env, cwd=source, stdout=subprocess.PIPE, text=True, check=False
    )
    if done.returncode != 0:  # its traceback went to stderr, with its progress
        return {"error": f"the trial exited with {done.returncode}"}
    trial = dict(json.loads(done.stdout.strip().splitlines()[-1]))
    if Path(trial["package"]).resolve() != (source / "lecode_ls").resolve():
        return {"error": f"the trial imported {trial['package']}, not {source}'s lecode_ls"}
    return trial


def row(arm: str, trial: dict[str, Any]) -> str:
    if "error" in trial:
        return f"| {arm} | failed: {trial['error'].splitlines()[-1][:120]} | | | | |"
    compactions = trial["compactions"]
    accepted = sum(c["status"] == "compacted" for c in compactions)
    rejected = [c["reason"] for c in compactions if c["status"] == "rejected"]
    outcomes = "; ".join(
        f"#{n}: {c['status']}" + (f" ({c['reason']})" if c["reason"] else "")
        for n, c in enumerate(compactions, 1)
    )
    kept = len(compactions[-1]["kept"]) if compactions else 0
    facts = trial["facts"]
    real = sum(f in CONVENTIONS for f in facts)
    reasons: Counter[str] = Counter()
    for c in compactions:
        if c["learning"]:
            reasons.update(c["learning"]["reasons"])
    turns = trial["turns"]
    ended = Counter(t["stop"] for t in turns)
    answered = sum(t["answered"] for t in turns)
    turn_text = (
        f"{answered} of {len(turns)} answered; " + ", ".join(f"{k} {v}" for k, v in ended.items())
        if turns
        else "not run"
    )
    return (
        f"| {arm} | {accepted} / {len(rejected)} | {outcomes} | {kept} of {len(CONVENTIONS)} | "
        f"{len(facts)} ({real} conventions, {len(facts) - real} other) | "
        f"{', '.join(f'`{k}` x{v}' for k, v in sorted(reasons.items())) or 'none'} | {turn_text} |"
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--child", metavar="BASE_URL")
    parser.add_argument("--tree", action="append", default=[], metavar="NAME=DIR")
    parser.add_argument("--learning", choices=("model", "rules", "both"))
    parser.add_argument("--turns", type=int, default=4)
    parser.add_argument("--max-output-tokens", type=int, default=200)
    parser.add_argument("--base-url")
    args = parser.parse_args(argv)
    if args.child:
        trial = asyncio.run(child(args.child, args.learning, args.turns, args.max_output_tokens))
        print(json.dumps(trial))
        return
    arms = {"this tree": ROOT}
    for spec in args.tree:
        name, _, folder = spec.partition("=")
        arms[name] = Path(folder)
    from bench.prompt_cache import llama_server

    def measure(base_url: str) -> None:
        print("| arm | compactions accepted / rejected | each | conventions the last summary "
              "keeps | facts learned | learning rejections | turns |")  # fmt: skip
        print("|---|---|---|---|---|---|---|")
        for arm, source in arms.items():
            trial = run_arm(source, base_url, args)
            print(f"small_models: {arm}: {json.dumps(trial)}", file=sys.stderr, flush=True)
            print(row(arm, trial), flush=True)

    if args.base_url:
        measure(args.base_url.rstrip("/"))
    else:
        with llama_server(()) as url:
            measure(url + "/v1")


if __name__ == "__main__":
    main()
