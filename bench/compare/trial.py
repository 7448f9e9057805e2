"""One trial, one arm of one repeat: its own config dir, store, fixture, tap and server, the
protocol's sessions run through them, and the record they leave.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from bench.common import now, server_env
from bench.compare.client import Client, StepTimeout, describe, serving
from bench.compare.events import Step4
from bench.compare.fixture import (
    INITIAL_MEMORY,
    RECALL_QUESTION,
    VENDOR_INSTRUCTION,
    ScriptedModel,
    install,
    make_fixture,
)
from bench.compare.plan import Plan, config_toml, phase1
from bench.compare.score import (
    answer_correct,
    chain_check,
    event_summary,
    exact_source,
    fact_kind,
    summarise_record,
)
from bench.compare.tally import Tally, tap_tallies, transcript_tally
from bench.compare.tap import Tap
from tests.fakes.openai_server import FakeOpenAI


class Trial:
    """One arm of one repeat: its own config dir, store, fixture, tap and server."""

    def __init__(self, plan: Plan, arm: str, auto_learn: bool, repeat: int, order: int) -> None:
        self.plan = plan
        self.record: dict[str, Any] = {
            "arm": arm,
            "auto_learn": auto_learn,
            "repeat": repeat,
            "order": order,
            "errors": [],
            "steps": [],
        }
        self.auto_learn = auto_learn
        self.client: Client | None = None
        self.tap: Tap | None = None
        self.script: ScriptedModel | None = None
        self.store: Path | None = None
        self.lsp = Tally()
        self.scored: tuple[int, Tally] | None = None
        """Before step 4: the tap's call count and the results' usage so far. Phases 1 and 2
        are tallied up to there; step 4's requests are tallied apart."""

    # -- helpers ------------------------------------------------------------------------------

    async def rpc(self, method: str, params: Any) -> Any:
        assert self.client is not None
        return await self.client.call(method, params, self.plan.step_timeout)

    def error(self, where: str, error: BaseException) -> str:
        text = f"{where}: {describe(error)}"
        self.record["errors"].append(text)
        return text

    def spent(self) -> int:
        assert self.tap is not None
        return tap_tallies(self.tap.calls)["all"].total

    def transcript(self, session: str | None) -> list[dict[str, Any]]:
        if session is None or self.store is None:
            return []
        path = self.store / "sessions" / f"{session}.jsonl"
        records: list[dict[str, Any]] = []
        with contextlib.suppress(OSError):
            for line in path.read_text(encoding="utf-8").splitlines():
                with contextlib.suppress(ValueError):
                    records.append(json.loads(line))
        return records

    # -- steps --------------------------------------------------------------------------------

    async def chat(self, label: str, session: str, step: str, text: str) -> dict[str, Any]:
        assert self.tap is not None
        self.tap.step = f"{label}: {step}"
        entry: dict[str, Any] = {
            "session": label,
            "step": step,
            "method": "lecode/chat/send",
            "prompt": text,
        }
        began = now()
        try:
            entry["result"] = await self.rpc(
                "lecode/chat/send", {"sessionId": session, "text": text}
            )
        except StepTimeout as timeout:
            entry["error"] = describe(timeout)
            entry["result"] = timeout.result
        except Exception as error:
            entry["error"] = describe(error)
        entry["seconds"] = now() - began
        assert self.client is not None
        entry["compactionBoundaries"], self.client.compactions = self.client.compactions, []
        result = entry.get("result")
        if isinstance(result, dict):
            self.lsp.merge_lsp(result.get("usage") or {})
            if result.get("stopReason") not in ("stop", None):
                entry.setdefault("error", f"stopReason {result.get('stopReason')}")
            try:
                await self.turn_items(session, str(result.get("turnId")), entry)
            except Exception as error:
                self.error(f"{label}: {step} (history)", error)
        self.step_done(entry)
        return entry

    def step_done(self, entry: dict[str, Any]) -> None:
        """A step's record; a failed step is also one of the trial's errors."""
        self.record["steps"].append(entry)
        if entry.get("error") and entry["session"] != "step 4":  # step 4's are its checks
            self.record["errors"].append(f"{entry['session']}: {entry['step']}: {entry['error']}")

    async def turn_items(self, session: str, turn: str, entry: dict[str, Any]) -> None:
        history = await self.rpc("lecode/chat/history", {"sessionId": session, "limit": 1000})
        items = [i for i in history["items"] if i.get("turnId") == turn]
        entry["answer"] = "".join(i.get("text") or "" for i in items if i["kind"] == "text")
        entry["toolCalls"] = [i.get("name") for i in items if i["kind"] == "toolCall"]
        entry["compactions"] = sum(1 for i in items if i["kind"] == "compaction")
        problems = [
            f"{i.get('code')}: {i.get('message')}"
            for i in items
            if i["kind"] in ("error", "paused")
        ]
        if problems:
            entry["turnErrors"] = problems
            if "error" in entry and not entry["error"].startswith(problems[0]):
                entry["error"] += f" ({problems[0]})"
        users = [i["seq"] for i in items if i["kind"] == "user"]
        entry["userSeq"] = users[0] if users else None

    async def compact(self, label: str, session: str, after: str) -> None:
        assert self.tap is not None
        step = f"compact after {after}"
        self.tap.step = f"{label}: {step}"
        entry: dict[str, Any] = {
            "session": label,
            "step": step,
            "method": "lecode/session/compact",
        }
        began = now()
        try:
            result = await self.rpc("lecode/session/compact", {"sessionId": session})
            entry["result"] = result
            self.lsp.merge_lsp(result.get("usage") or {})
            if result.get("status") not in ("compacted", "nothing"):
                entry["error"] = f"{result.get('status')}: {result.get('message')}"
        except Exception as error:
            entry["error"] = describe(error)
        entry["seconds"] = now() - began
        self.step_done(entry)

    async def session(self, title: str) -> str:
        result = await self.rpc("lecode/session/new", {"title": title})
        return str(result["sessionId"])

    # -- the trial ----------------------------------------------------------------------------

    async def run(self) -> dict[str, Any]:
        began = now()
        record = self.record
        try:
            async with contextlib.AsyncExitStack() as stack:
                tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="lecode-v2-")))
                repo = make_fixture(tmp / "widget")
                config = tmp / "config"
                config.mkdir()
                upstream = self.plan.base_url
                if self.plan.scripted:
                    fake = await stack.enter_async_context(FakeOpenAI())
                    self.script = install(fake)
                    upstream = fake.base_url
                self.tap = await stack.enter_async_context(Tap(upstream))
                (config / "config.toml").write_text(
                    config_toml(self.plan, self.tap.base_url, self.auto_learn)
                )
                self.client = await stack.enter_async_context(serving(server_env(config), repo))
                try:
                    await self.protocol()
                finally:
                    record["requests"] = self.tap.records()
        except Exception as error:
            self.error("trial", error)
        record["wallSeconds"] = now() - began
        self.summarise()
        return record

    async def protocol(self) -> None:
        record, plan = self.record, self.plan
        info = await self.rpc("lecode/project/info", {})
        self.store = Path(info["storePath"])
        await self.rpc("lecode/memory/write", {"file": "MEMORY.md", "content": INITIAL_MEMORY})

        # Phase 1: the learning session, under the budget.
        started = now()
        first = await self.session("compare: session 1")
        record["session1"] = first
        skipped: list[str] = []
        for step, prompt, compact_after in phase1(plan):
            if skipped or self.spent() >= plan.budget_tokens:
                skipped.append(step)
                continue
            entry = await self.chat("session 1", first, step, prompt)
            if step == "preference+transient" and self.script is not None:
                self.script.preference_seq = entry.get("userSeq")
            if compact_after and self.spent() < plan.budget_tokens:
                await self.compact("session 1", first, step)
        record["session1Seconds"] = now() - started
        record["budget"] = {
            "limit": plan.budget_tokens,
            "spentPhase1": self.spent(),
            "reached": bool(skipped) or self.spent() >= plan.budget_tokens,
            "skipped": skipped,
        }

        # Phase 2: a fresh session in the same project, the recall question.
        started = now()
        second: str | None = None
        try:
            second = await self.session("compare: session 2")
            record["session2"] = second
            entry = await self.chat("session 2", second, "recall", RECALL_QUESTION)
            record["recall"] = {
                "answer": entry.get("answer"),
                "error": entry.get("error"),
                "correct": answer_correct(entry.get("answer")),
            }
        except Exception as error:
            record["recall"] = {"answer": None, "error": self.error("recall", error)}
        record["session2Seconds"] = now() - started

        # What the arm holds now.
        checks: tuple[tuple[str, Callable[[], Awaitable[None]]], ...] = (
            ("facts", self.facts),
            ("markdown", self.markdown),
            ("tool output recall", lambda: self.tool_output_recall(first)),
        )
        for name, check in checks:
            try:
                await check()
            except Exception as error:
                self.error(name, error)
        with contextlib.suppress(Exception):
            record["memoryFactsCommand"] = (
                await self.rpc("lecode/command", {"line": "/memory facts", "sessionId": first})
            )["output"]
        transcripts = {"session 1": self.transcript(first), "session 2": self.transcript(second)}
        record["transcriptEvents"] = {
            label: [event_summary(r) for r in records if r.get("kind") == "event"]
            for label, records in transcripts.items()
        }
        record["chain"] = chain_check(transcripts["session 1"])
        record["transcriptUsage"] = {
            name: asdict(tally)
            for name, tally in transcript_tally(
                transcripts["session 1"] + transcripts["session 2"]
            ).items()
        }

        # Step 4 (exclusion and continuity), once everything above is scored.
        assert self.tap is not None
        self.scored = (len(self.tap.calls), replace(self.lsp))
        await Step4(self).run()

    async def facts(self) -> None:
        entries: list[dict[str, Any]] = []
        offset: int | None = 0
        for _ in range(100):
            page = await self.rpc("lecode/facts/list", {"offset": offset})
            entries.extend(page["facts"])
            offset = page.get("nextOffset")
            if offset is None:
                break
        facts = []
        for entry in entries:
            recalled, records = await self.recall_fact(int(entry["factId"]))
            text = recalled.get("text") or entry.get("text")
            kind = fact_kind(text)
            exact = (
                exact_source(text, kind, records) if recalled.get("status") == "valid" else False
            )
            facts.append(
                {
                    "factId": entry["factId"],
                    "revision": entry["revision"],
                    "status": recalled.get("status", entry.get("status")),
                    "text": text,
                    "kind": kind,
                    "source": recalled.get("source"),
                    "exactSource": exact,
                    "supported": kind in ("preference", "file") and exact,
                }
            )
        self.record["facts"] = facts

    async def recall_fact(self, fact_id: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        pages: list[str] = []
        first: dict[str, Any] = {}
        offset: int | None = 0
        for _ in range(100):
            answer = await self.rpc("lecode/facts/recall", {"factId": fact_id, "offset": offset})
            first = first or answer
            pages.append(answer.get("sourceText") or "")
            offset = answer.get("nextOffset")
            if offset is None:
                break
        records: list[dict[str, Any]] = []
        with contextlib.suppress(ValueError):
            parsed = json.loads("".join(pages)) if "".join(pages) else []
            records = [r for r in parsed if isinstance(r, dict)]
        return first, records

    async def markdown(self) -> None:
        found: dict[str, Any] = {}
        for name, pattern in (
            ("preference", r"(?i)\btabs?\b"),
            ("thirdParty", r"(?i)\b(2|two)[ -]spaces?\b|2-space"),
        ):
            result = await self.rpc("lecode/memory/search", {"pattern": pattern})
            found[name] = [f"{h['file']}:{h['line']}: {h['text']}" for h in result["hits"]]
        memory = await self.rpc("lecode/memory/read", {"file": "MEMORY.md"})
        found["memoryChanged"] = memory["content"] != INITIAL_MEMORY
        self.record["markdown"] = found

    async def tool_output_recall(self, session: str) -> None:
        """Spec step 3's last check: the third-party instruction, seen in a tool output, is still
        recalled exactly from the raw transcript after the compactions (as data)."""
        stored = next(
            (
                r
                for r in self.transcript(session)
                if r.get("kind") == "message"
                and r.get("role") == "tool"
                and VENDOR_INSTRUCTION in str(r.get("content"))
            ),
            None,
        )
        if stored is None:
            self.record["toolOutputRecall"] = "n/a (no read of docs/vendor-notes.md)"
            return
        seq = int(stored["seq"])
        pages: list[str] = []
        offset: int | None = 0
        status = "?"
        for _ in range(100):
            answer = await self.rpc(
                "lecode/session/read",
                {"sessionId": session, "startSeq": seq, "endSeq": seq, "offset": offset},
            )
            status = answer["status"]
            pages.append(answer.get("sourceText") or "")
            offset = answer.get("nextOffset")
            if offset is None:
                break
        recalled = json.loads("".join(pages)) if status == "valid" else []
        same = bool(recalled) and recalled[0].get("content") == stored.get("content")
        self.record["toolOutputRecall"] = "exact" if same else f"not exact (status {status})"

    # -- scores -------------------------------------------------------------------------------

    def summarise(self) -> None:
        every = self.tap.calls if self.tap is not None else []
        cut, lsp = self.scored if self.scored is not None else (len(every), self.lsp)
        summarise_record(self.record, self.plan, every, cut, lsp)
