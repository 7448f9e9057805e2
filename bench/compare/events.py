"""V2, step 4 of the memory spec's evaluation protocol: exclusion and continuity under the events
that break naive memory. It runs in each arm after the scored phases (their facts are counted
first), in sessions of its own, and checks what lecode-ls did, never what the model said.

Facts here are stored the way a person stores them (`lecode/session/snapshot` of one message,
then `lecode/facts/remember` with its exact quote), in both arms: the baseline arm does not learn
automatically, but it still holds facts a person remembered, and what is under test is what
happens to facts and working context, not where the facts came from.

1. malformed extraction (hybrid only): two more exchanges and a compaction while the tap answers
   every learning request with cut-off JSON. Expected: the compaction stands, learning ends
   `failed`/`rejected` with `invalid_json`, no fact is added, the facts held stay valid.
2. failed extraction (hybrid only): the same with an HTTP 500 for every learning request.
   Expected: `extraction_error`, a usage record per failed call (C10), nothing else changes.
3. cancellation: a long answer cancelled once it streams. Expected: `cancelled`, a usage record
   with the error, and the next turn in the same session ends normally.
4. forget during a call: a fact is forgotten while an answer streams. Expected: the answer is
   discarded (a `discarded` event) and asked again, and no request after the forget carries the
   forgotten fact or the message it cited; the other facts stay valid.
5. undo/redo: the message a fact cites is undone, then redone. Expected: `hidden` and not
   injected, then `valid` and injected again.
6. clear: the session is cleared. Expected: the next request carries no earlier message, and the
   facts are still injected.
7. correction: a fact corrected with a new message's exact text. Expected: revision 2 valid and
   injected at revision 2; a second correction against revision 1 is refused (`stale_revision`).
8. deleted and corrupted sources: the session a fact cites is deleted, and another's transcript
   has a word changed on disk. Expected: `missing` and `stale`, and neither is injected.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol

from bench.common import RpcError
from bench.compare.client import Client
from bench.compare.fixture import (
    CORRECTED_RELEASE,
    CORRECTION,
    FILLERS,
    PROMPT_OK,
    QUOTE_BUILD,
    QUOTE_CI,
    QUOTE_CI_DELETED,
    QUOTE_RELEASE,
    QUOTE_TESTS,
    REPLY_OK,
    STORY_CANCELLED,
    STORY_FORGET,
    ScriptedModel,
)
from bench.compare.plan import Plan
from bench.compare.tap import Fault, Tap

STEPS = (
    "malformed extraction",
    "failed extraction",
    "cancellation",
    "forget during a call",
    "undo/redo",
    "clear",
    "correction",
    "deleted/corrupted source",
)


class TrialLike(Protocol):
    """What step 4 uses of the trial it runs in (trial.py's Trial, which imports this module:
    described here, so that this module need not import trial.py)."""

    plan: Plan
    record: dict[str, Any]
    auto_learn: bool
    client: Client | None
    tap: Tap | None
    script: ScriptedModel | None
    store: Path | None

    async def rpc(self, method: str, params: Any) -> Any: ...

    async def chat(self, label: str, session: str, step: str, text: str) -> dict[str, Any]: ...

    async def compact(self, label: str, session: str, after: str) -> None: ...

    def transcript(self, session: str | None) -> list[dict[str, Any]]: ...


class Step4:
    """Step 4 of one trial: `await Step4(trial).run()` fills `trial.record["step4"]`."""

    def __init__(self, trial: TrialLike) -> None:
        self.trial = trial
        self.checks: list[dict[str, Any]] = []
        self.facts: dict[str, int] = {}
        self.sessions: dict[str, str] = {}

    # -- helpers ------------------------------------------------------------------------------

    @property
    def client(self) -> Any:
        assert self.trial.client is not None
        return self.trial.client

    def check(self, step: str, name: str, ok: bool, observed: Any) -> None:
        self.checks.append({"step": step, "check": name, "ok": bool(ok), "observed": observed})

    async def rpc(self, method: str, params: Any) -> Any:
        return await self.trial.rpc(method, params)

    async def chat(self, session: str, step: str, text: str) -> dict[str, Any]:
        """A turn through the trial's own step (recorded with the others, as session "step 4");
        its entry. A turn that fails is a failed check of the step it belongs to."""
        entry = await self.trial.chat("step 4", self.sessions[session], step, text)
        if entry.get("error"):
            self.check(
                step.split(":")[0], f"turn '{step}' ends without error", False, entry["error"]
            )
        return entry

    async def said(self, session: str, step: str, statement: str) -> int:
        """A turn stating `statement`; the seq of its user message."""
        entry = await self.chat(session, step, statement + REPLY_OK)
        seq = entry.get("userSeq")
        if seq is None:
            raise RuntimeError(f"no user message recorded for {statement!r}")
        return int(seq)

    async def remember(self, name: str, session: str, seq: int, quote: str) -> None:
        source = await self.rpc(
            "lecode/session/snapshot",
            {"sessionId": self.sessions[session], "startSeq": seq, "endSeq": seq},
        )
        result = await self.rpc("lecode/facts/remember", {"text": quote, "source": source})
        self.facts[name] = int(result["factId"])

    async def status(self, name: str) -> str:
        try:
            answer = await self.rpc("lecode/facts/recall", {"factId": self.facts[name]})
        except RpcError as error:
            data = error.error.get("data") or {}
            return str(data.get("code") if isinstance(data, dict) else error)
        return f"{answer['status']} r{answer['revision']}"

    async def fact_count(self) -> int:
        count, offset = 0, 0
        for _ in range(100):
            page = await self.rpc("lecode/facts/list", {"offset": offset})
            count += len(page["facts"])
            if page.get("nextOffset") is None:
                break
            offset = int(page["nextOffset"])
        return count

    def events(self, session: str, kind: str, since: int = 0) -> list[dict[str, Any]]:
        return [
            r
            for r in self.trial.transcript(self.sessions[session])
            if r.get("kind") == "event" and r.get("type") == kind and int(r["seq"]) >= since
        ]

    def length(self, session: str) -> int:
        return len(self.trial.transcript(self.sessions[session]))

    def last_injection(self) -> list[tuple[int, int]] | None:
        return self.client.injected[-1] if self.client.injected else None

    def injected_ids(self) -> set[int]:
        return {fact_id for fact_id, _ in self.last_injection() or []}

    # -- the run ------------------------------------------------------------------------------

    async def run(self) -> None:
        record = self.trial.record
        try:
            await self.setup()
        except Exception as error:
            self.check("setup", "facts stored for step 4", False, describe(error))
            record["step4"] = self.checks
            return
        steps: tuple[tuple[str, Callable[[], Awaitable[None]]], ...] = (
            ("malformed extraction", lambda: self.extraction("malformed", "invalid_json")),
            ("failed extraction", lambda: self.extraction("http500", "extraction_error")),
            ("cancellation", self.cancellation),
            ("forget during a call", self.forget_during_call),
            ("undo/redo", self.undo_redo),
            ("clear", self.clear),
            ("correction", self.correction),
            ("deleted/corrupted source", self.deleted_source),
        )
        for name, step in steps:
            tap = self.trial.tap
            try:
                await step()
            except Exception as error:
                self.check(name, "ran without error", False, describe(error))
            finally:
                if tap is not None:
                    tap.faults.clear()
                    tap.keep_bodies = False
        record["step4"] = self.checks

    async def setup(self) -> None:
        for session in ("work", "undo", "delete", "tamper"):
            result = await self.rpc("lecode/session/new", {"title": f"compare: step 4 {session}"})
            self.sessions[session] = str(result["sessionId"])
        for name, session, quote in (
            ("build", "work", QUOTE_BUILD),
            ("release", "work", QUOTE_RELEASE),
            ("ci", "undo", QUOTE_CI),
            ("ci-deleted", "delete", QUOTE_CI_DELETED),
            ("tests", "tamper", QUOTE_TESTS),
        ):
            seq = await self.said(session, f"state: {name}", quote)
            await self.remember(name, session, seq, quote)
        statuses = {name: await self.status(name) for name in self.facts}
        self.check(
            "setup",
            "every fact stored valid",
            all(s == "valid r1" for s in statuses.values()),
            statuses,
        )

    async def extraction(self, fault: Fault, reason: str) -> None:
        step = "malformed extraction" if fault == "malformed" else "failed extraction"
        if not self.trial.auto_learn:
            self.check(step, "n/a: no automatic learning in this arm", True, "skipped")
            return
        tap = self.trial.tap
        assert tap is not None
        before_calls, before_facts = len(tap.calls), await self.fact_count()
        since = self.length("work")
        tap.faults["learning"] = fault
        for filler in FILLERS[:2]:
            await self.chat("work", f"{step}: exchange", filler)
        await self.trial.compact("step 4", self.sessions["work"], step)
        tap.faults.clear()
        learning = [c for c in tap.calls[before_calls:] if c.purpose == "learning"]
        events = self.events("work", "learning", since)
        compacts = self.events("work", "compact", since)
        self.check(step, "a compaction stands", bool(compacts), f"{len(compacts)} compact event(s)")
        self.check(
            step,
            "every learning request got the fault",
            bool(learning) and all(c.fault == fault for c in learning),
            f"{len(learning)} learning request(s)",
        )
        outcomes = [(e.get("status"), e.get("reason_counts") or {}) for e in events]
        # `proposed`: the rules proposed a filler's sentence for the person (issue 41: what
        # they alone find is a proposal by default); the model's fault is counted all the same.
        self.check(
            step,
            f"learning ends failed/rejected (or the rules' proposals only) with {reason}",
            bool(outcomes)
            and all(s in ("failed", "rejected", "proposed") and reason in r for s, r in outcomes),
            outcomes,
        )
        after = await self.fact_count()
        self.check(step, "no fact added", after == before_facts, f"{before_facts} -> {after}")
        if fault == "http500":
            usage = [
                e
                for e in self.events("work", "memory_usage", since)
                if e.get("purpose") == "learning"
            ]
            self.check(
                step,
                "a usage record per failed learning call (C10)",
                len(usage) == len(events) and all(e.get("usage") is None for e in usage),
                f"{len(usage)} record(s) for {len(events)} learning outcome(s)",
            )
        statuses = [await self.status(n) for n in ("build", "release")]
        self.check(step, "the facts held stay valid", statuses == ["valid r1"] * 2, statuses)

    async def cancellation(self) -> None:
        step = "cancellation"
        session = self.sessions["work"]
        since = self.length("work")
        self.client.text_seen.clear()
        request_id, answer = self.client.begin(
            "lecode/chat/send", {"sessionId": session, "text": STORY_CANCELLED}
        )
        timeout = self.trial.plan.step_timeout
        await asyncio.wait_for(self.client.text_seen.wait(), timeout)
        self.client.notify("$/cancelRequest", {"id": request_id})
        result = await asyncio.wait_for(answer, timeout)
        if self.trial.script is not None:
            self.trial.script.cancelled.set()
        stop = result.get("stopReason") if isinstance(result, dict) else result
        self.check(step, "the turn ends cancelled", stop == "cancelled", stop)
        cancelled = self.events("work", "cancelled", since)
        usage = [e for e in self.events("work", "usage", since) if e.get("error") == "cancelled"]
        self.check(
            step,
            "a cancelled event and a usage record with the error (C10)",
            bool(cancelled) and len(usage) == 1 and usage[0].get("usage") is None,
            f"{len(cancelled)} cancelled, {len(usage)} usage record(s)",
        )
        entry = await self.chat("work", f"{step}: next turn", PROMPT_OK)
        stop = (entry.get("result") or {}).get("stopReason")
        self.check(step, "the next turn ends normally", stop in ("stop", "length"), stop)

    async def forget_during_call(self) -> None:
        step = "forget during a call"
        tap = self.trial.tap
        assert tap is not None
        session = self.sessions["work"]
        since, first_call = self.length("work"), len(tap.calls)
        tap.keep_bodies = True
        self.client.text_seen.clear()
        _, answer = self.client.begin(
            "lecode/chat/send", {"sessionId": session, "text": STORY_FORGET}
        )
        timeout = self.trial.plan.step_timeout
        await asyncio.wait_for(self.client.text_seen.wait(), timeout)
        forgot = await self.rpc("lecode/facts/forget", {"factId": self.facts["build"]})
        after_forget = len(tap.calls)
        if self.trial.script is not None:
            self.trial.script.release.set()
        result = await asyncio.wait_for(answer, timeout)
        tap.keep_bodies = False
        self.check(step, "the fact is forgotten", forgot.get("forgotten") is True, forgot)
        stop = result.get("stopReason") if isinstance(result, dict) else result
        discarded = self.events("work", "discarded", since)
        self.check(
            step,
            "the answer in flight is discarded and the request made again",
            bool(discarded) and stop in ("stop", "length"),
            f"{len(discarded)} discarded, stop {stop}, {len(tap.calls) - first_call} request(s)",
        )
        later = [tap.bodies.get(c.index, b"") for c in tap.calls[after_forget:]]
        leaked = sum(1 for body in later if QUOTE_BUILD.encode() in body)
        self.check(
            step,
            "no request after the forget carries the fact or its message",
            bool(later) and leaked == 0,
            f"{leaked} of {len(later)} request(s)",
        )
        statuses = {n: await self.status(n) for n in ("build", "release")}
        self.check(
            step,
            "the forgotten fact is gone; the other stays valid",
            statuses["build"] != "valid r1" and statuses["release"] == "valid r1",
            statuses,
        )

    async def undo_redo(self) -> None:
        step = "undo/redo"
        undo = self.sessions["undo"]
        await self.rpc("lecode/session/undo", {"sessionId": undo})
        hidden = await self.status("ci")
        await self.chat("work", f"{step}: after undo", PROMPT_OK)
        injected_after_undo = self.facts["ci"] in self.injected_ids()
        self.check(
            step,
            "undone: hidden and not injected",
            hidden.startswith("hidden") and not injected_after_undo,
            f"{hidden}, injected {injected_after_undo}",
        )
        await self.rpc("lecode/session/redo", {"sessionId": undo})
        restored = await self.status("ci")
        await self.chat("work", f"{step}: after redo", PROMPT_OK)
        injected_after_redo = self.facts["ci"] in self.injected_ids()
        self.check(
            step,
            "redone: valid and injected again",
            restored == "valid r1" and injected_after_redo,
            f"{restored}, injected {injected_after_redo}",
        )

    async def clear(self) -> None:
        step = "clear"
        tap = self.trial.tap
        assert tap is not None
        await self.rpc("lecode/session/clear", {"sessionId": self.sessions["work"]})
        first_call = len(tap.calls)
        await self.chat("work", f"{step}: next turn", PROMPT_OK)
        chats = [c for c in tap.calls[first_call:] if c.purpose == "chat"]
        self.check(
            step,
            "the next request carries no earlier message (system + the new one)",
            bool(chats) and chats[0].messages == 2,
            [c.messages for c in chats],
        )
        self.check(
            step,
            "the facts are still injected",
            self.facts["release"] in self.injected_ids(),
            self.last_injection(),
        )

    async def correction(self) -> None:
        step = "correction"
        fact = self.facts["release"]
        seq = await self.said("work", f"{step}: the new evidence", CORRECTION)
        source = await self.rpc(
            "lecode/session/snapshot",
            {"sessionId": self.sessions["work"], "startSeq": seq, "endSeq": seq},
        )
        params = {
            "factId": fact,
            "expectedRevision": 1,
            "text": CORRECTED_RELEASE,
            "source": source,
        }
        result = await self.rpc("lecode/facts/correct", params)
        self.check(step, "corrected to revision 2", result.get("revision") == 2, result)
        try:
            again = await self.rpc("lecode/facts/correct", params)
            refused: Any = f"accepted: {again}"
        except RpcError as error:
            refused = (error.error.get("data") or {}).get("code")
        self.check(
            step,
            "a second correction against revision 1 is refused",
            refused == "stale_revision",
            refused,
        )
        await self.chat("work", f"{step}: next turn", PROMPT_OK)
        self.check(
            step,
            "injected at revision 2",
            (fact, 2) in (self.last_injection() or []),
            self.last_injection(),
        )

    async def deleted_source(self) -> None:
        step = "deleted/corrupted source"
        deleted = await self.rpc("lecode/session/delete", {"sessionId": self.sessions["delete"]})
        store = self.trial.store
        assert store is not None
        path = store / "sessions" / f"{self.sessions['tamper']}.jsonl"
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace("tests folder", "specs folder"), encoding="utf-8")
        statuses = {n: await self.status(n) for n in ("ci-deleted", "tests")}
        self.check(
            step,
            "the deleted source is missing, the changed one stale",
            statuses == {"ci-deleted": "missing r1", "tests": "stale r1"},
            {"citingFacts": deleted.get("citingFacts"), **statuses},
        )
        await self.chat("work", f"{step}: next turn", PROMPT_OK)
        shown = self.injected_ids()
        self.check(
            step,
            "neither is injected; the valid ones still are",
            self.facts["ci-deleted"] not in shown
            and self.facts["tests"] not in shown
            and self.facts["release"] in shown,
            self.last_injection(),
        )


def describe(error: BaseException) -> str:
    if isinstance(error, RpcError):
        return f"{error.error.get('code')}: {error.error.get('message')}"
    return f"{type(error).__name__}: {error}"


def summary(checks: list[dict[str, Any]]) -> dict[str, str]:
    """Per step: "passed/checks", or "n/a"."""
    result: dict[str, str] = {}
    for step in ("setup", *STEPS):
        mine = [c for c in checks if c["step"] == step]
        if not mine:
            result[step] = "not run"
        elif all(c["observed"] == "skipped" for c in mine):
            result[step] = "n/a"
        else:
            result[step] = f"{sum(c['ok'] for c in mine)}/{len(mine)}"
    return result


def failures(checks: list[dict[str, Any]]) -> list[str]:
    return [
        f"{c['step']}: {c['check']} (observed: {json.dumps(c['observed'], default=str)[:200]})"
        for c in checks
        if not c["ok"]
    ]
