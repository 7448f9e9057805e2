"""What a comparison runs with: the plan and its command line, the two arms and the config.toml
each gets, session 1's steps, and what a run may claim.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import bench.compare
from bench.compare.fixture import (
    FILLERS,
    PROMPT_PASTED,
    PROMPT_PREFERENCE,
    PROMPT_READ,
    PROMPT_VENDOR,
)

NO_CLAIMS = (
    "Scripted run: every answer, summary and learning output comes from the harness's scripted "
    "model (FakeOpenAI), so this run makes no savings or quality claim; it only shows that the "
    "protocol runs end to end."
)
LIVE_CAVEAT = (
    "Live run: {repeats} repeat(s) of one fixed scenario with one model; report the repeat count and "
    "the settings above with any aggregate. No claim beyond this sample."
)
ARMS = (("baseline", False), ("hybrid", True))
PERMISSIONS = {
    "memory_write": "allow",
    "memory_edit": "allow",
    "memory_correct": "deny",
    "memory_forget": "deny",
}
"""Both arms: memory writing allowed without asking (learning needs it); no corrections or
forgetting during a trial."""


@dataclass(frozen=True)
class Plan:
    base_url: str
    model: str
    api_key_env: str = "OPENAI_API_KEY"
    context_window: int | None = None
    buffer_tokens: int = 4096
    threshold: float = 0.8
    thinking: str | None = None
    repeats: int = 1
    budget_tokens: int = 200_000
    fillers: int = 12
    compact_every: int = 2
    price_in: float | None = None
    price_out: float | None = None
    step_timeout: float = 300.0
    scripted: bool = False
    max_output_tokens: int | None = None
    """`[agent] max_output_tokens` (None: lecode-ls's default cap)."""
    read_timeout: int | None = None
    """`[provider] read_timeout_seconds` (None: lecode-ls's default, 60 s)."""


SCRIPTED = Plan(
    base_url="(FakeOpenAI, in-process)",
    model="scripted-model",
    api_key_env="",
    context_window=8192,
    buffer_tokens=512,
    threshold=0.3,
    budget_tokens=1_000_000,
    step_timeout=60.0,
    scripted=True,
)


def scripted_plan(quick: bool) -> Plan:
    return replace(SCRIPTED, fillers=4) if quick else SCRIPTED


def config_toml(plan: Plan, base_url: str, auto_learn: bool) -> str:
    provider = [
        f"base_url = {json.dumps(base_url)}",
        f"model = {json.dumps(plan.model)}",
        f"api_key_env = {json.dumps(plan.api_key_env)}",
    ]
    if plan.thinking:
        provider.append(f"thinking = {json.dumps(plan.thinking)}")
    if plan.read_timeout is not None:
        provider.append(f"read_timeout_seconds = {plan.read_timeout}")
    agent = [
        "permissions = { "
        + ", ".join(f"{tool} = {json.dumps(d)}" for tool, d in PERMISSIONS.items())
        + " }"
    ]
    if plan.context_window is not None:
        agent.append(f"context_window = {plan.context_window}")
    if plan.max_output_tokens is not None:
        agent.append(f"max_output_tokens = {plan.max_output_tokens}")
    sections = {
        "provider": provider,
        "agent": agent,
        "compaction": [
            f"buffer_tokens = {plan.buffer_tokens}",
            f"mid_turn_threshold = {plan.threshold}",
        ],
        "memory": ["enabled = true", f"auto_learn = {'true' if auto_learn else 'false'}"],
    }
    return "\n".join(f"[{name}]\n" + "\n".join(lines) + "\n" for name, lines in sections.items())


def phase1(plan: Plan) -> list[tuple[str, str, bool]]:
    """(step, prompt, compact after it) of session 1."""
    steps = [
        ("preference+transient", PROMPT_PREFERENCE, False),
        ("verified read", PROMPT_READ, False),
        ("third-party in tool output", PROMPT_VENDOR, False),
        ("third-party pasted", PROMPT_PASTED, False),
    ]
    every = plan.compact_every
    for i in range(plan.fillers):
        compact = every > 0 and (i + 1) % every == 0
        steps.append((f"filler {i + 1}", FILLERS[i % len(FILLERS)], compact))
    return steps


def parse(argv: Sequence[str] | None = None) -> tuple[Plan, Path | None]:
    # The usage line names the program as it did before bench/compare/ was a package (argparse
    # would take "__main__.py" from sys.argv[0]).
    parser = argparse.ArgumentParser(
        prog="compare.py", description=(bench.compare.__doc__ or "").splitlines()[0]
    )
    parser.add_argument("--base-url", help="the endpoint, up to and including /v1")
    parser.add_argument("--model", help="the model ID as the provider names it")
    parser.add_argument(
        "--api-key-env",
        default="OPENAI_API_KEY",
        help="name of the environment variable holding the key ('' for none)",
    )
    parser.add_argument(
        "--context-window", type=int, help="[agent] context_window (uncatalogued models)"
    )
    parser.add_argument("--buffer-tokens", type=int, help="[compaction] buffer_tokens")
    parser.add_argument("--threshold", type=float, help="[compaction] mid_turn_threshold")
    parser.add_argument("--thinking", choices=("low", "medium", "high"), help="[provider] thinking")
    parser.add_argument("--repeats", type=int, help="repeats of both arms (default 1)")
    parser.add_argument("--budget-tokens", type=int, help="phase-1 token budget per arm")
    parser.add_argument("--fillers", type=int, help="filler exchanges in session 1")
    parser.add_argument(
        "--compact-every", type=int, help="lecode/session/compact after every K fillers (0: never)"
    )
    parser.add_argument("--price-in", type=float, help="price per 1M prompt tokens")
    parser.add_argument("--price-out", type=float, help="price per 1M completion tokens")
    parser.add_argument("--step-timeout", type=float, help="seconds before a request is cancelled")
    parser.add_argument(
        "--max-output-tokens", type=int, help="[agent] max_output_tokens (a cap on each answer)"
    )
    parser.add_argument(
        "--read-timeout", type=int, help="[provider] read_timeout_seconds (a slow local model)"
    )
    parser.add_argument("--out", type=Path, help="write the full JSON record here")
    parser.add_argument("--scripted", action="store_true", help="smoke run against FakeOpenAI")
    parser.add_argument("--quick", action="store_true", help="with --scripted: 4 fillers")
    args = parser.parse_args(argv)
    if args.scripted:
        plan = scripted_plan(args.quick)
    else:
        if not args.base_url or not args.model:
            parser.error("--base-url and --model are required (or --scripted)")
        if args.api_key_env and args.api_key_env not in os.environ:
            parser.error(
                f"the environment variable {args.api_key_env} is not set (--api-key-env '' for none)"
            )
        plan = Plan(base_url=args.base_url, model=args.model, api_key_env=args.api_key_env)
    overrides = {
        "context_window": args.context_window,
        "buffer_tokens": args.buffer_tokens,
        "threshold": args.threshold,
        "thinking": args.thinking,
        "repeats": args.repeats,
        "budget_tokens": args.budget_tokens,
        "fillers": args.fillers,
        "compact_every": args.compact_every,
        "price_in": args.price_in,
        "price_out": args.price_out,
        "step_timeout": args.step_timeout,
        "max_output_tokens": args.max_output_tokens,
        "read_timeout": args.read_timeout,
    }
    plan = replace(plan, **{k: v for k, v in overrides.items() if v is not None})
    if plan.repeats < 1 or plan.fillers < 0 or plan.compact_every < 0 or plan.budget_tokens < 1:
        parser.error("--repeats and --budget-tokens must be >= 1; --fillers, --compact-every >= 0")
    return plan, args.out
