"""Every repeat of both arms: the run, the record it writes, the comparison over repeats, and
bench.run's scripted smoke run.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench.compare.fixture import PREFERENCE, RECALL_QUESTION
from bench.compare.plan import (
    ARMS,
    LIVE_CAVEAT,
    NO_CLAIMS,
    PERMISSIONS,
    Plan,
    phase1,
    scripted_plan,
)
from bench.compare.report import report
from bench.compare.trial import Trial


async def run(plan: Plan, out: Path | None = None) -> dict[str, Any]:
    """Every repeat: both arms, one after the other, the order alternating between repeats.
    With `out`, the record so far is written there after every trial (a long live run that is
    stopped keeps its finished trials)."""
    trials: list[dict[str, Any]] = []
    for repeat in range(1, plan.repeats + 1):
        arms = ARMS if repeat % 2 else tuple(reversed(ARMS))
        for order, (arm, auto_learn) in enumerate(arms, 1):
            trials.append(await Trial(plan, arm, auto_learn, repeat, order).run())
            if out is not None:
                save(out, result_of(plan, trials))
    return result_of(plan, trials)


def save(out: Path, result: dict[str, Any]) -> None:
    out.write_text(json.dumps(result, indent=2, ensure_ascii=False, default=str) + "\n")


def result_of(plan: Plan, trials: list[dict[str, Any]]) -> dict[str, Any]:
    settings = asdict(plan)
    settings["sampling"] = "provider defaults (lecode-ls sends no temperature or top_p)"
    settings["permissions"] = PERMISSIONS
    settings["arms"] = {arm: {"auto_learn": learn} for arm, learn in ARMS}
    return {
        "harness": "bench.compare (V2)",
        "scripted": plan.scripted,
        "claim": NO_CLAIMS if plan.scripted else LIVE_CAVEAT.format(repeats=plan.repeats),
        "settings": settings,
        "prompts": {
            "phase1": [{"step": s, "prompt": p, "compactAfter": c} for s, p, c in phase1(plan)],
            "recall": RECALL_QUESTION,
            "preference": PREFERENCE,
        },
        "trials": trials,
        "comparison": compare(trials),
    }


def _mean(values: Sequence[float | int | None]) -> float | None:
    present = [float(v) for v in values if v is not None]
    return statistics.fmean(present) if present else None


def compare(trials: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per arm, over its repeats: counts and means of the scores and the usage."""
    result: dict[str, dict[str, Any]] = {}
    for arm, _ in ARMS:
        mine = [t for t in trials if t["arm"] == arm]
        scores = [t["score"] for t in mine]
        usage = [t["providerUsage"] for t in mine]
        result[arm] = {
            "trials": len(mine),
            "failedTrials": sum(1 for t in mine if t["errors"]),
            "recallCorrect": sum(1 for s in scores if s["recallCorrect"]),
            "validSourcedPreference": sum(1 for s in scores if s["validSourcedPreference"]),
            "precision": _mean([s["precision"] for s in scores]),
            "missed": _mean([len(s["missed"]) for s in scores]),
            "unwanted": _mean([len(s["unwanted"]) for s in scores]),
            "factsHeld": _mean([s["factsHeld"] for s in scores]),
            "compactions": _mean([(t.get("chain") or {}).get("compactions") for t in mine]),
            "requests": _mean([u["all"]["calls"] + u["all"]["failed"] for u in usage]),
            "learningRequests": _mean([u["learning"]["calls"] for u in usage]),
            "promptTokens": _mean([u["all"]["prompt"] for u in usage]),
            "completionTokens": _mean([u["all"]["completion"] for u in usage]),
            "totalTokens": _mean([u["all"]["total"] for u in usage]),
            "unknownUsageCalls": _mean([u["all"]["unknown"] for u in usage]),
            "cost": _mean([t.get("costKnownUsage") for t in mine]),
            "failedRequests": _mean([u["all"]["failed"] for u in usage]),
            "session1Seconds": _mean([t.get("session1Seconds") for t in mine]),
            "session2Seconds": _mean([t.get("session2Seconds") for t in mine]),
            "skippedSteps": _mean([t["stepCounts"]["skipped"] for t in mine]),
            "step4Passed": sum(sum(c["ok"] for c in t["step4"]) for t in mine),
            "step4Checks": sum(len(t["step4"]) for t in mine),
        }
    return result


async def measure(quick: bool = False) -> str:
    """bench.run's entry: the scripted smoke run."""
    return report(await run(scripted_plan(quick)))
