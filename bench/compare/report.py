"""The report of a comparison: its Markdown tables, from the record alone."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from typing import Any

from bench.common import markdown_table
from bench.compare.events import STEPS, failures
from bench.compare.events import summary as step4_summary
from bench.compare.plan import ARMS, NO_CLAIMS
from bench.compare.tally import PURPOSES


def cell(value: Any, width: int = 90) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    text = " ".join(str(value).split()).replace("|", "\\|")
    return text if len(text) <= width else text[: width - 3] + "..."


def _p50(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


def report(result: dict[str, Any]) -> str:
    plan = result["settings"]
    trials = result["trials"]
    out = [
        f"## lecode-ls live comparison (V2): baseline (auto_learn=false) vs hybrid (auto_learn=true)"
        f"{' - scripted' if result['scripted'] else ''}",
        result["claim"],
    ]
    window = plan["context_window"] or "catalog (or unknown)"
    prices = (
        f"{plan['price_in']} / {plan['price_out']} per 1M tokens"
        if plan["price_in"] is not None and plan["price_out"] is not None
        else "not given: cost unknown"
    )
    out.append(
        markdown_table(
            "Settings (both arms)",
            ["setting", "value"],
            [
                ["endpoint", plan["base_url"]],
                ["model", plan["model"]],
                ["sampling", plan["sampling"]],
                ["thinking", plan["thinking"] or "unset"],
                ["context_window", window],
                ["max_output_tokens", plan["max_output_tokens"] or "lecode-ls's default cap"],
                ["read_timeout_seconds", plan.get("read_timeout") or "lecode-ls's default (60)"],
                [
                    "buffer_tokens / mid_turn_threshold",
                    f"{plan['buffer_tokens']} / {plan['threshold']}",
                ],
                ["permissions", ", ".join(f"{k}={v}" for k, v in plan["permissions"].items())],
                ["budget (phase 1, tokens reported per arm)", f"{plan['budget_tokens']:,}"],
                ["repeats (arm order alternates)", plan["repeats"]],
                [
                    "fillers / explicit compaction every",
                    f"{plan['fillers']} / {plan['compact_every']}",
                ],
                ["prices", prices],
            ],
        )
    )
    out.append(
        markdown_table(
            "Trials: what each arm learned and recalled",
            [
                "arm",
                "rep",
                "steps run / failed / skipped",
                "compactions (chained)",
                "explicit compact outcomes",
                "learning outcomes",
                "facts held",
                "supported",
                "precision",
                "missed",
                "unwanted",
                "recall answer correct",
                "valid sourced preference fact",
                "Markdown mentions tabs",
                "tool output recalled exactly",
                "errors",
            ],
            [
                [
                    t["arm"],
                    t["repeat"],
                    f"{t['stepCounts']['run']} / {t['stepCounts']['failed']} / "
                    f"{t['stepCounts']['skipped']}",
                    f"{(t.get('chain') or {}).get('compactions', 'n/a')} "
                    f"({cell((t.get('chain') or {}).get('chained'))})",
                    _explicit(t["steps"]),
                    _outcomes(t.get("learningOutcomes") or {}),
                    t["score"]["factsHeld"],
                    t["score"]["supported"],
                    cell(t["score"]["precision"]),
                    ", ".join(t["score"]["missed"]) or "none",
                    ", ".join(t["score"]["unwanted"]) or "none",
                    cell(t["score"]["recallCorrect"]),
                    cell(t["score"]["validSourcedPreference"]),
                    cell(bool((t.get("markdown") or {}).get("preference"))),
                    cell(t.get("toolOutputRecall")),
                    _errors(t["errors"]),
                ]
                for t in trials
            ],
        )
    )
    out.append(
        markdown_table(
            "Requests and tokens (every provider request, seen by the tap)",
            [
                "arm",
                "rep",
                "answers",
                "summaries",
                "learning",
                "failed/retried",
                "prompt tokens",
                "completion tokens",
                "unknown-usage calls",
                "cost",
                "session 1 s",
                "session 2 s",
            ],
            [
                [
                    t["arm"],
                    t["repeat"],
                    t["providerUsage"]["chat"]["calls"],
                    t["providerUsage"]["summary"]["calls"],
                    t["providerUsage"]["learning"]["calls"],
                    t["providerUsage"]["all"]["failed"],
                    f"{t['providerUsage']['all']['prompt']:,}",
                    f"{t['providerUsage']['all']['completion']:,}",
                    t["providerUsage"]["all"]["unknown"],
                    t["cost"],
                    cell(t.get("session1Seconds")),
                    cell(t.get("session2Seconds")),
                ]
                for t in trials
            ],
        )
    )
    rows = []
    for arm, _ in ARMS:
        mine = [t for t in trials if t["arm"] == arm]
        for name in (
            "chatSend",
            "explicitCompact",
            "automaticCompaction",
            *(f"provider {p}" for p in PURPOSES),
        ):
            values = [v for t in mine for v in t["latency"].get(name, [])]
            if values:
                rows.append([arm, name, len(values), cell(_p50(values)), cell(max(values))])
    out.append(
        markdown_table(
            "Latency per boundary (seconds)",
            ["arm", "boundary", "n", "p50", "max"],
            rows,
            "chatSend: one `lecode/chat/send` (automatic compaction and learning inside it "
            "included); explicitCompact: one `lecode/session/compact` (learning included); "
            "automaticCompaction: from a turn's `compaction` delta `started` to its outcome, "
            "any outcome (learning included); provider: one HTTP request through the tap, by purpose.",
        )
    )
    fact_rows = [
        [
            t["arm"],
            t["repeat"],
            f["factId"],
            f["status"],
            f["kind"],
            cell(f["exactSource"]),
            cell(f["supported"]),
            cell(f["text"], 80),
        ]
        for t in trials
        for f in t.get("facts", [])
    ]
    out.append(
        markdown_table(
            "Facts held at the end",
            ["arm", "rep", "fact", "status", "kind", "exact source", "supported", "text"],
            fact_rows or [["(none)", "", "", "", "", "", "", ""]],
        )
    )
    out.append(step4_table(trials))
    comparison = result["comparison"]
    base, hybrid = comparison["baseline"], comparison["hybrid"]
    metric_rows = []
    for key, label in (
        ("trials", "trials"),
        ("failedTrials", "trials with errors"),
        ("recallCorrect", "recall answers correct (count)"),
        ("validSourcedPreference", "valid, exactly sourced preference fact (count)"),
        ("precision", "supported-fact precision (mean)"),
        ("missed", "missed facts (mean, of 2)"),
        ("unwanted", "unwanted promotions (mean)"),
        ("compactions", "compactions in session 1 (mean)"),
        ("requests", "provider requests (mean)"),
        ("learningRequests", "learning requests (mean)"),
        ("promptTokens", "prompt tokens (mean)"),
        ("completionTokens", "completion tokens (mean)"),
        ("totalTokens", "total tokens (mean)"),
        ("unknownUsageCalls", "unknown-usage calls (mean)"),
        ("cost", "cost of known usage, $ (mean; n/a without prices)"),
        ("failedRequests", "failed/retried requests (mean)"),
        ("skippedSteps", "phase-1 steps skipped by the budget (mean)"),
        ("session1Seconds", "session 1 wall time, s (mean)"),
        ("session2Seconds", "session 2 wall time, s (mean)"),
        ("step4Passed", "step 4 checks passed (sum; of the next row)"),
        ("step4Checks", "step 4 checks run (sum)"),
    ):
        b, h = base[key], hybrid[key]
        diff = h - b if isinstance(b, int | float) and isinstance(h, int | float) else None
        metric_rows.append([label, cell(b), cell(h), cell(diff)])
    out.append(
        markdown_table(
            "Comparison (over repeats)",
            ["metric", "baseline", "hybrid", "hybrid - baseline"],
            metric_rows,
        )
    )
    out.append(
        markdown_table(
            "Accounting cross-check: calls / total tokens / unknown-usage calls",
            [
                "arm",
                "rep",
                "tap (HTTP requests)",
                "lecode/chat/send + compact results",
                "transcript events",
            ],
            [
                [
                    t["arm"],
                    t["repeat"],
                    _tally_cell(t["providerUsage"]["all"]),
                    _tally_cell(t["lspUsage"]),
                    _tally_cell((t.get("transcriptUsage") or {}).get("all")),
                ]
                for t in trials
            ],
            "The tap sees every HTTP request, retries included; results count the calls a "
            "request made (learning only where the server adds it); transcripts hold one usage "
            "record per call.",
        )
    )
    if result["scripted"]:
        out.append(NO_CLAIMS)
    return "\n\n".join(out)


def step4_table(trials: Sequence[dict[str, Any]]) -> str:
    rows = []
    for t in trials:
        per_step = step4_summary(t["step4"])
        failed = failures(t["step4"])
        usage = t.get("step4Usage") or {}
        rows.append(
            [
                t["arm"],
                t["repeat"],
                *(per_step[step] for step in ("setup", *STEPS)),
                f"{usage.get('calls', 0)} (+{usage.get('failed', 0)} failed/faulted)",
                cell("; ".join(failed), 300) if failed else "none",
            ]
        )
    return markdown_table(
        "Step 4: exclusion and continuity (checks passed / run)",
        ["arm", "rep", "setup", *STEPS, "requests", "failed checks"],
        rows,
        "Run after the scored phases, in sessions of their own, with facts a person remembered "
        "(both arms); its requests are tallied here, not in the tables above. The extraction "
        "faults are the tap's (the model never sees those requests); n/a: no automatic "
        "learning in the baseline arm.",
    )


def _explicit(steps: Sequence[dict[str, Any]]) -> str:
    outcomes = Counter(
        str((s.get("result") or {}).get("status", "error"))
        for s in steps
        if s["method"] == "lecode/session/compact"
    )
    return ", ".join(f"{status} {n}" for status, n in sorted(outcomes.items())) or "none"


def _errors(errors: Sequence[str]) -> str:
    if not errors:
        return "none"
    more = f" (+{len(errors) - 1} more in the JSON record)" if len(errors) > 1 else ""
    return cell(errors[0], 100) + more


def _outcomes(outcomes: dict[str, Any]) -> str:
    statuses = outcomes.get("statuses") or {}
    if not statuses:
        return "none"
    text = ", ".join(f"{status} {n}" for status, n in sorted(statuses.items()))
    reasons = outcomes.get("reasons") or {}
    if reasons:
        text += " (" + ", ".join(f"{code} {n}" for code, n in sorted(reasons.items())) + ")"
    return text


def _tally_cell(tally: dict[str, Any] | None) -> str:
    if not tally:
        return "n/a"
    failed = f" (+{tally['failed']} failed)" if tally.get("failed") else ""
    return f"{tally['calls']}{failed} / {tally['total']:,} / {tally['unknown']}"
