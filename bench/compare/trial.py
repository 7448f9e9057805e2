"""V2: the live comparison of working memory alone (baseline) against working memory with automatic
learning (hybrid), run through lecode-ls against any OpenAI-compatible endpoint.

    uv run python -m bench.compare --base-url URL --model MODEL [--api-key-env NAME]
        [--context-window N] [--repeats K] [--budget-tokens T] [--price-in P --price-out P]
        [--out report.json]
    uv run python -m bench.compare --scripted [--quick]     # a smoke run against FakeOpenAI

Two arms, identical except `[memory] auto_learn` (baseline false, hybrid true): each its own
temporary config dir and store, its own copy of the fixture project and the same initial MEMORY.md,
the same model settings and the same fixed prompts (bench/compare/fixture.py), in this order.

Session 1 (phase 1): an explicit lasting preference inside a longer message with a transient task;
a verified local read (pyproject.toml's requires-python line); a third-party instruction in a tool
output (docs/vendor-notes.md) and one pasted into a message; then filler exchanges, with
`lecode/session/compact` after every `--compact-every` of them (automatic compaction also runs when
the model's window is known and the request crosses `mid_turn_threshold`). Phase 1 stops early,
in either arm, once the arm's reported tokens reach `--budget-tokens`.
Session 2 (phase 2): a fresh session in the same project asks the recall question. It always runs,
so both arms are scored; its tokens are reported with the rest.

Every provider request goes through a recording tap (bench/compare/tap.py), so answers, summaries,
learning calls, retries and failed requests are all counted, with the usage the provider reported
(absent usage is counted as unknown, never as zero) and their latency. The `usage` of every
`lecode/chat/send` and `lecode/session/compact` result, and the usage, compact, memory_usage and
learning events of the transcripts, are recorded beside it as a cross-check. Scored per arm: the facts held at the end
(`lecode/facts/list`, `lecode/facts/recall`): supported-fact precision, missed and unwanted
promotions; the recall answer's correctness, and separately whether the arm holds a currently valid
fact with an exact source for the preference. A failed step or trial is recorded, never dropped.

Then step 4 of the protocol (bench/compare/events.py): extraction faults, cancellation, a forget
during a call, undo/redo, clear, a correction, deleted and corrupted sources, each checked for
exclusion and continuity; its requests are tallied apart from the scored phases'.

A scripted run makes no savings or quality claim: its answers are fixed by the harness.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import re
import statistics
import sys
import tempfile
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from bench.common import LECODE, RpcError, Server, markdown_table, now, server_env
from bench.compare.events import STEPS, Step4, failures
from bench.compare.events import summary as step4_summary
from bench.compare.fixture import (
    FILLERS,
    INITIAL_MEMORY,
    PREFERENCE,
    PROMPT_PASTED,
    PROMPT_PREFERENCE,
    PROMPT_READ,
    PROMPT_VENDOR,
    RECALL_QUESTION,
    REQUIRES_PYTHON,
    VENDOR_INSTRUCTION,
    ScriptedModel,
    install,
    make_fixture,
)
from bench.compare.tap import Call, Tap
from tests.fakes.openai_server import FakeOpenAI

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
PURPOSES = ("chat", "summary", "learning", "other")


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


# --- the client -----------------------------------------------------------------------------------


class StepTimeout(Exception):
    def __init__(self, seconds: float, result: Any) -> None:
        super().__init__(f"no answer within {seconds:g} s; the request was cancelled")
        self.result = result


class Client(Server):
    """bench.common's client, plus a per-request timeout (then `$/cancelRequest`), a check that
    the server is still there before each request, and the time of every compaction boundary
    inside a turn (from its `compaction` deltas: started, then its outcome)."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.compactions: list[dict[str, Any]] = []
        self._compacting: float | None = None
        self.text_seen = asyncio.Event()
        """Set by every `text` delta (step 4 clears it, then waits for an answer to start)."""
        self.injected: list[list[tuple[int, int]]] = []
        """The facts (ID, revision) of every `memory` delta: what each model request carried."""
        super().__init__(proc)

    def _delta(self, params: Any) -> None:
        if not isinstance(params, dict) or params.get("kind") != "compaction":
            return
        if params.get("status") == "started":
            self._compacting = now()
        elif self._compacting is not None:
            self.compactions.append(
                {
                    "status": params.get("status"),
                    "message": params.get("message"),
                    "seconds": now() - self._compacting,
                }
            )
            self._compacting = None

    def notified(self, method: str, params: Any) -> None:
        if method == "lecode/chat/delta":
            self._delta(params)
            kind = params.get("kind") if isinstance(params, dict) else None
            if kind == "text":
                self.text_seen.set()
            elif kind == "memory":
                facts = params.get("facts") or []
                self.injected.append([(int(f["factId"]), int(f["revision"])) for f in facts])

    def begin(self, method: str, params: Any) -> tuple[int, asyncio.Future[Any]]:
        """Send a request without waiting: its ID (for `$/cancelRequest`) and its answer."""
        request_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        self._send({"id": request_id, "method": method, "params": params})
        return request_id, future

    async def call(self, method: str, params: Any, seconds: float) -> Any:
        if self.proc.returncode is not None or self._reader.done():
            raise ConnectionError(f"the server has exited (code {self.proc.returncode})")
        request_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        self._send({"id": request_id, "method": method, "params": params})
        try:
            return await asyncio.wait_for(asyncio.shield(future), seconds)
        except TimeoutError:
            self.notify("$/cancelRequest", {"id": request_id})
            result: Any = None
            with contextlib.suppress(TimeoutError, RpcError, ConnectionError):
                result = await asyncio.wait_for(future, 30)
            raise StepTimeout(seconds, result) from None


@contextlib.asynccontextmanager
async def serving(env: dict[str, str], folder: Path) -> AsyncIterator[Client]:
    client = await Client.spawn(LECODE, env)
    assert isinstance(client, Client)
    try:
        await asyncio.wait_for(client.initialize([folder]), 60)
        yield client
    finally:
        await client.close()


def describe(error: BaseException) -> str:
    if isinstance(error, RpcError):
        data = error.error.get("data") or {}
        code = data.get("code") if isinstance(data, dict) else None
        return f"{code or error.error.get('code')}: {error.error.get('message')}"
    return f"{type(error).__name__}: {error}"


# --- usage tallies --------------------------------------------------------------------------------


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


# --- one trial (one arm, one repeat) --------------------------------------------------------------


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
        record = self.record
        every = self.tap.calls if self.tap is not None else []
        cut, lsp = self.scored if self.scored is not None else (len(every), self.lsp)
        calls = every[:cut]
        tallies = tap_tallies(calls)
        record["providerUsage"] = {name: asdict(t) for name, t in tallies.items()}
        record["lspUsage"] = asdict(lsp)
        record["step4Usage"] = asdict(tap_tallies(every[cut:])["all"])
        record.setdefault("step4", [])
        record["cost"] = cost(self.plan, tallies["all"])
        record["costKnownUsage"] = cost_value(self.plan, tallies["all"])
        facts = record.get("facts", [])
        supported = [f for f in facts if f["supported"]]
        record["score"] = {
            "factsHeld": len(facts),
            "supported": len(supported),
            "precision": len(supported) / len(facts) if facts else None,
            "missed": [
                k for k in ("preference", "file") if not any(f["kind"] == k for f in supported)
            ],
            "unwanted": [
                f"{f['factId']}:{f['kind']}"
                for f in facts
                if f["kind"] in ("transient", "third-party")
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
            "explicitCompact": [
                s["seconds"] for s in steps if s["method"] == "lecode/session/compact"
            ],
            "automaticCompaction": [
                b["seconds"] for s in steps for b in s.get("compactionBoundaries", [])
            ],
            **{
                f"provider {p}": [c.seconds for c in calls if c.purpose == p and c.seconds]
                for p in PURPOSES
            },
        }


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


# --- the run --------------------------------------------------------------------------------------


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


# --- the report -----------------------------------------------------------------------------------


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


# --- entry points ---------------------------------------------------------------------------------


def scripted_plan(quick: bool) -> Plan:
    return replace(SCRIPTED, fillers=4) if quick else SCRIPTED


async def measure(quick: bool = False) -> str:
    """bench.run's entry: the scripted smoke run."""
    return report(await run(scripted_plan(quick)))


def parse(argv: Sequence[str] | None = None) -> tuple[Plan, Path | None]:
    # The usage line names the program as it did before bench/compare/ was a package (argparse
    # would take "__main__.py" from sys.argv[0]).
    parser = argparse.ArgumentParser(prog="compare.py", description=(__doc__ or "").splitlines()[0])
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


def main(argv: Sequence[str] | None = None) -> None:
    plan, out = parse(argv)
    result = asyncio.run(run(plan, out))
    print(report(result))
    if out is not None:
        save(out, result)
        print(f"\nFull record: {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
