"""How a trial is scored: which fact a text states, whether its source holds it exactly, the
recall answer, the summaries' chain, the transcript events kept, the cost, and the scores, usage
and latencies a finished trial's record gets.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from bench.compare.fixture import REQUIRES_PYTHON
from bench.compare.plan import Plan
from bench.compare.tally import PURPOSES, Tally, tap_tallies
from bench.compare.tap import Call


def event_summary(record: dict[str, Any]) -> dict[str, Any]:
    """An event as recorded, with the lineage reduced to its size and long text capped."""
    event = dict(record)
    if "lineage" in event:
        event["lineage"] = f"{len(event['lineage'])} chunk(s)"
    if isinstance(event.get("summary"), str) and len(event["summary"]) > 2000:
        event["summary"] = event["summary"][:2000] + "..."
    return event


def chain_check(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Do the session's summaries chain: each names the one before it, coverage only advances?"""
    compacts = [r for r in records if r.get("kind") == "event" and r.get("type") == "compact"]
    ok = True
    for before, after in itertools.pairwise(compacts):
        prior = after.get("prior") or {}
        ok = ok and prior.get("seq") == before["seq"]
        ok = ok and int(after["covered_through"]) > int(before["covered_through"])
    if compacts and compacts[0].get("prior") is not None:
        ok = False
    return {"compactions": len(compacts), "chained": ok if compacts else None}


def fact_kind(text: str | None) -> str:
    """Which expected (or unwanted) fact a fact's text is: a heuristic over the fixed scenario."""
    if not text:
        return "unreadable"
    low = text.lower()
    if "requires-python" in low:
        return "file"
    if re.search(r"\b(2|two)[ -]spaces?\b|2-space|acme|vendor|forum", low):
        return "third-party"
    if re.search(r"\btypo\b|\bteh\b|readme|for now|first line", low):
        return "transient"
    if re.search(r"\btabs?\b", low) and "indent" in low:
        return "preference"
    return "other"


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def exact_source(text: str | None, kind: str, records: Sequence[dict[str, Any]]) -> bool:
    """Whether the fact's recalled evidence holds it exactly: the preference quoted in a user
    message; the requires-python line in a read tool's output; other text verbatim anywhere."""
    if not text:
        return False
    for record in records:
        content = _content_text(record.get("content"))
        role = record.get("role")
        if kind == "preference" and role == "user" and text in content:
            return True
        if kind == "file" and role == "tool" and REQUIRES_PYTHON in content:
            return True
        if kind not in ("preference", "file") and text in content:
            return True
    return False


def answer_correct(answer: str | None) -> bool | None:
    """Says tabs, and no number of spaces (a heuristic; the answer is recorded for reading)."""
    if answer is None:
        return None
    low = answer.lower()
    says_tabs = re.search(r"\btabs?\b", low) is not None
    says_spaces = re.search(r"\b(2|two|4|four)[ -]spaces?\b|\b[24]-space", low) is not None
    return says_tabs and not says_spaces


def cost_value(plan: Plan, tally: Tally) -> float | None:
    """The cost of the calls whose usage is known (None without prices)."""
    if plan.price_in is None or plan.price_out is None:
        return None
    return (tally.prompt * plan.price_in + tally.completion * plan.price_out) / 1e6


def cost(plan: Plan, tally: Tally) -> str:
    value = cost_value(plan, tally)
    if value is None:
        return "unknown"
    text = f"${value:.4f}"
    return f">= {text} ({tally.unknown} call(s) of unknown usage)" if tally.unknown else text


def summarise_record(
    record: dict[str, Any], plan: Plan, every: Sequence[Call], cut: int, lsp: Tally
) -> None:
    """A finished trial's usage, cost, score, learning outcomes, step counts and latencies, into
    its record. `every`: each request the tap saw, the first `cut` of them the scored phases'
    (the rest step 4's); `lsp`: the results' usage up to the same point."""
    calls = every[:cut]
    tallies = tap_tallies(calls)
    record["providerUsage"] = {name: asdict(t) for name, t in tallies.items()}
    record["lspUsage"] = asdict(lsp)
    record["step4Usage"] = asdict(tap_tallies(every[cut:])["all"])
    record.setdefault("step4", [])
    record["cost"] = cost(plan, tallies["all"])
    record["costKnownUsage"] = cost_value(plan, tallies["all"])
    facts = record.get("facts", [])
    supported = [f for f in facts if f["supported"]]
    record["score"] = {
        "factsHeld": len(facts),
        "supported": len(supported),
        "precision": len(supported) / len(facts) if facts else None,
        "missed": [k for k in ("preference", "file") if not any(f["kind"] == k for f in supported)],
        "unwanted": [
            f"{f['factId']}:{f['kind']}" for f in facts if f["kind"] in ("transient", "third-party")
        ],
        "recallCorrect": (record.get("recall") or {}).get("correct"),
        "validSourcedPreference": any(f["kind"] == "preference" for f in supported),
    }
    statuses: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    for events in (record.get("transcriptEvents") or {}).values():
        for event in events:
            if event.get("type") == "learning":
                statuses[str(event.get("status"))] += 1
                reasons.update(event.get("reason_counts") or {})
    record["learningOutcomes"] = {"statuses": dict(statuses), "reasons": dict(reasons)}
    steps = [s for s in record["steps"] if s["session"] != "step 4"]
    record["stepCounts"] = {
        "run": len(steps),
        "failed": sum(1 for s in steps if s.get("error")),
        "skipped": len((record.get("budget") or {}).get("skipped", [])),
    }
    record["latency"] = {
        "chatSend": [s["seconds"] for s in steps if s["method"] == "lecode/chat/send"],
        "explicitCompact": [s["seconds"] for s in steps if s["method"] == "lecode/session/compact"],
        "automaticCompaction": [
            b["seconds"] for s in steps for b in s.get("compactionBoundaries", [])
        ],
        **{
            f"provider {p}": [c.seconds for c in calls if c.purpose == p and c.seconds]
            for p in PURPOSES
        },
    }
