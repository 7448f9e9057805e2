"""Usage tallies by purpose: of the tap's requests, of the LSP results' usage and of the
transcripts' events.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bench.compare.tap import Call

PURPOSES = ("chat", "summary", "learning", "other")


@dataclass
class Tally:
    calls: int = 0
    prompt: int = 0
    completion: int = 0
    total: int = 0
    unknown: int = 0
    """Calls answered without usage: their tokens are unknown, not zero."""
    failed: int = 0
    """Requests with no complete answer (HTTP errors, cut streams: mostly retried)."""

    def add(self, usage: dict[str, Any] | None, *, camel: bool = False) -> None:
        self.calls += 1
        if usage is None:
            self.unknown += 1
            return
        keys = (
            ("promptTokens", "completionTokens", "totalTokens")
            if camel
            else ("prompt_tokens", "completion_tokens", "total_tokens")
        )
        self.prompt += int(usage.get(keys[0]) or 0)
        self.completion += int(usage.get(keys[1]) or 0)
        self.total += int(usage.get(keys[2]) or 0)

    def merge_lsp(self, usage: dict[str, Any]) -> None:
        """A `UsageModel` of a result: several calls at once."""
        self.calls += int(usage.get("calls") or 0)
        self.prompt += int(usage.get("promptTokens") or 0)
        self.completion += int(usage.get("completionTokens") or 0)
        self.total += int(usage.get("totalTokens") or 0)
        self.unknown += int(usage.get("unknownUsageCalls") or 0)


def tap_tallies(calls: Sequence[Call]) -> dict[str, Tally]:
    tallies = {name: Tally() for name in (*PURPOSES, "all")}
    for call in calls:
        for name in (call.purpose, "all"):
            if call.ok:
                tallies[name].add(call.usage)
            else:
                tallies[name].failed += 1
                if call.usage is not None:  # a cut stream that still reported usage
                    tallies[name].add(call.usage)
    return tallies


def transcript_tally(records: Sequence[dict[str, Any]]) -> dict[str, Tally]:
    """Each provider call recorded in a transcript, once: chat `usage`, `compact`,
    `memory_usage` (failed summaries, learning), `discarded` answers, provider `error`s."""
    tallies = {name: Tally() for name in (*PURPOSES, "all")}
    for record in records:
        if record.get("kind") != "event":
            continue
        kind, usage = record.get("type"), record.get("usage")
        purpose: str | None = None
        if kind in ("usage", "discarded"):
            purpose = "chat"
        elif kind == "compact":
            purpose = "summary"
        elif kind == "memory_usage":
            named = str(record.get("purpose") or "other")
            purpose = "summary" if named == "compaction" else named
        elif kind == "error":
            purpose, usage = "chat", None  # the failed call's cost is unknown
        if purpose is None:
            continue
        purpose = purpose if purpose in tallies else "other"
        for name in (purpose, "all"):
            tallies[name].add(usage if isinstance(usage, dict) else None)
    return tallies
