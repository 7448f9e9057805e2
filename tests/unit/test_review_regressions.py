"""Regressions found by a review of the chat runner, compaction and learning; each failed on the
code it guards before the fix.

# covers E1, E2, E3, E4, C3, C4, A6, A7, T4
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncGenerator, Callable
from pathlib import Path
from typing import Any

import pytest

from lecode_ls.agent import runner as runner_module
from lecode_ls.agent.compaction import compact_session
from lecode_ls.agent.learning_evidence import PAYLOAD_MAX_BYTES, prepare
from lecode_ls.agent.provider import ChatRequest, Event, Finish, TextDelta, ToolCall
from lecode_ls.agent.replay import replay
from lecode_ls.agent.runner import ChatTurn, TurnOptions, TurnResult
from lecode_ls.config import MemorySettings, Settings
from lecode_ls.memory.injection import build_memory_section
from lecode_ls.memory.learning_status import latest_learning
from lecode_ls.memory.sessions.sources import source_snapshot
from lecode_ls.memory.sessions.store import SessionStore
from lecode_ls.memory.working import working_view
from lecode_ls.runtime import Runtime
from lecode_ls.tools.memory import run_tool
from lecode_ls.tools.permissions import PermissionPolicy
from tests.fakes.scripted_provider import ScriptedProvider, text_turn, tool_turn
from tests.unit.stores import chat, make_runtime, remember

ALLOW = PermissionPolicy(default="allow")
LEARN = PermissionPolicy({"memory_write": "allow"})


def turn(runtime: Runtime, session: str, provider: Any, tmp_path: Path, **kw: Any) -> ChatTurn:
    options = TurnOptions(model="gpt-4o", policy=kw.pop("policy", ALLOW))
    return ChatTurn(
        runtime, session, provider, options, folder=tmp_path, emit=lambda k, f: None, **kw
    )


def shapes(runtime: Runtime, session: str) -> list[str]:
    records = runtime.sessions.read(session, 1, runtime.sessions.length(session) - 1)
    return [r["role"] if r["kind"] == "message" else f"event:{r['type']}" for r in records]


def message(runtime: Runtime, session: str, role: str, content: Any) -> int:
    record: dict[str, Any] = {"kind": "message", "role": role, "content": content}
    if role != "user":
        record["meta"] = {"generation": 0}
    return runtime.sessions.append(session, record)


class TestEpochs:
    async def test_a_call_carries_the_generation_of_its_request_not_of_when_it_ran(
        self, runtime: Runtime, tmp_path: Path
    ) -> None:
        # E1, E4: a forget between two calls of one answer must fail the second's correction.
        source = chat(runtime, {"role": "user", "content": "x"})
        forgotten = remember(runtime, source, 1, 1, "x")
        other = chat(
            runtime,
            {"role": "user", "content": "Use make."},
            {"role": "user", "content": "Use just."},
        )
        fact = remember(runtime, other, 1, 1, "Use make.")
        ref = source_snapshot(runtime.sessions, other, 2, 2, exclusions=runtime.facts)
        correct = {
            "fact_id": fact,
            "expected_revision": 1,
            "text": "Use just.",
            "source_snapshot": ref.to_json(),
        }
        calls = [
            ToolCall("c1", "memory_list", "{}"),
            ToolCall("c2", "memory_correct", json.dumps(correct)),
        ]
        provider = ScriptedProvider().add(tool_turn(calls), text_turn("ok"), text_turn("ok"))

        async def after(name: str, result: Any) -> None:
            if name == "memory_list":
                runtime.facts.forget(forgotten)

        session = runtime.sessions.create("t")
        await turn(runtime, session, provider, tmp_path, after_tool=after).run("go")
        assert runtime.facts.get(fact).revision == 1  # type: ignore[union-attr]
        records = runtime.sessions.read(session, 1, runtime.sessions.length(session) - 1)
        result = next(r for r in records if r.get("tool_call_id") == "c2")
        assert "stale_generation" in result["content"] and result["meta"]["generation"] == 0

    async def test_a_discarded_answer_does_not_block_later_compactions(
        self, runtime: Runtime, tmp_path: Path
    ) -> None:
        source = chat(runtime, {"role": "user", "content": "I prefer tabs."})
        fact = remember(runtime, source, 1, 1, "tabs")

        class ForgetDuringTheFirstCall:
            calls = 0

            async def stream(self, request: ChatRequest) -> AsyncGenerator[Event, None]:
                self.calls += 1
                if self.calls == 1:
                    runtime.facts.forget(fact)
                yield TextDelta(f"answer {self.calls}")
                yield Finish("stop")

        session = runtime.sessions.create("t")
        model = ForgetDuringTheFirstCall()
        for n in range(8):
            assert (
                await turn(runtime, session, model, tmp_path).run(f"q{n}")
            ).stop_reason == "stop"
        assert "event:discarded" in shapes(runtime, session)
        summariser = ScriptedProvider().add(text_turn("summary"))
        outcome = await compact_session(runtime, session, summariser, model="gpt-4o", window=None)
        assert outcome.status == "compacted"

    def test_a_stamp_ahead_of_the_store_does_not_survive_a_forget(self, runtime: Runtime) -> None:
        # E2: an import from another project (or a hand edit) may carry any generation.
        session, _ = runtime.sessions.import_records(
            [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": "recalled text", "meta": {"generation": 10**6}},
            ]
        )
        source = chat(runtime, {"role": "user", "content": "x"})
        runtime.facts.forget(remember(runtime, source, 1, 1, "x"))
        view = working_view(runtime.sessions, runtime.facts, session)
        assert [m["role"] for m in view.messages] == ["user"]


def edit(
    runtime: Runtime, session: str, seq: int, change: Callable[[dict[str, Any]], None]
) -> None:
    """Hand-edit one record of the transcript file, as a person with an editor could."""
    path = runtime.sessions.folder / f"{session}.jsonl"
    lines = path.read_text().splitlines()
    record = json.loads(lines[seq])
    change(record)
    lines[seq] = json.dumps(record)
    path.write_text("\n".join(lines) + "\n")
    runtime.sessions = SessionStore(runtime.store_path)  # a fresh reader


class TestMalformedRecords:
    @pytest.mark.parametrize(
        "change",
        [
            lambda r: r.__setitem__("meta", "x"),
            lambda r: r.__setitem__(
                "tool_calls", [{"type": "function", "function": {"name": "read"}}]
            ),
            lambda r: r.__setitem__("tool_calls", "abc"),
        ],
        ids=["meta-string", "call-without-id", "calls-string"],
    )
    async def test_are_inert_in_the_view_replay_and_compaction(
        self, runtime: Runtime, change: Callable[[dict[str, Any]], None]
    ) -> None:
        session = runtime.sessions.create("t")
        for n in range(3):
            message(runtime, session, "user", f"q{n}")
            message(runtime, session, "assistant", f"a{n}")
        edit(runtime, session, 2, change)
        view = working_view(runtime.sessions, runtime.facts, session)
        messages = replay(view.records)
        assert all("tool_calls" not in m for m in messages)
        provider = ScriptedProvider().add(text_turn("summary"))
        outcome = await compact_session(runtime, session, provider, model="gpt-4o", window=None)
        assert outcome.status == "compacted"

    def test_a_malformed_learning_event_is_skipped_not_fatal(self, runtime: Runtime) -> None:
        session = runtime.sessions.create("t")
        runtime.sessions.append(
            session, {"kind": "event", "type": "learning", "status": "proposed", "proposals": 5}
        )
        assert latest_learning(runtime.sessions, runtime.facts) is None
        result = run_tool(runtime, "memory_list", "{}", policy=ALLOW, readonly=False, child=False)
        assert not result.is_error and "learning" not in json.loads(result.content)


class TestPermissionAndCancellation:
    async def test_a_failed_permission_question_denies_and_the_turn_goes_on(
        self, runtime: Runtime, tmp_path: Path
    ) -> None:
        async def ask(name: str, summary: str) -> bool:
            raise RuntimeError("the client answered window/showMessageRequest with an error")

        write = {"file": "MEMORY.md", "content": "x", "mode": "replace"}
        provider = ScriptedProvider().add(
            tool_turn([ToolCall("c1", "memory_write", json.dumps(write))]), text_turn("ok")
        )
        session = runtime.sessions.create("t")
        chat_turn = turn(runtime, session, provider, tmp_path, policy=PermissionPolicy(), ask=ask)
        result = await chat_turn.run("write")
        assert result.stop_reason == "stop"
        assert runtime.markdown.read("MEMORY.md") == ("", False)
        assert "tool" in shapes(runtime, session)

    async def test_a_cancel_before_the_first_request_is_recorded(
        self, runtime: Runtime, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        loading, go = threading.Event(), threading.Event()
        real = runner_module.working_view

        def slow(*args: Any) -> Any:  # runs in a worker thread
            loading.set()
            go.wait(10)
            return real(*args)

        monkeypatch.setattr(runner_module, "working_view", slow)
        session = runtime.sessions.create("t")
        task = asyncio.ensure_future(
            turn(runtime, session, ScriptedProvider().add(text_turn("x")), tmp_path).run("hello")
        )
        await asyncio.to_thread(loading.wait, 10)
        task.cancel()
        go.set()
        result: TurnResult = await task
        assert result.stop_reason == "cancelled"
        assert shapes(runtime, session) == ["user", "event:cancelled"]


class TestLearningSeesOnlyWhatItShows:
    async def test_facts_whose_evidence_is_no_longer_valid_are_not_sent(
        self, tmp_path: Path
    ) -> None:
        runtime = make_runtime(tmp_path, Settings(memory=MemorySettings(auto_learn=True)))
        source = chat(runtime, {"role": "user", "content": "The deploy password is hunter2."})
        remember(runtime, source, 1, 1, "The deploy password is hunter2.")
        runtime.sessions.undo(source)
        assert "hunter2" not in build_memory_section(runtime).text
        session = runtime.sessions.create("x")
        for n in range(4):
            message(runtime, session, "user", f"q{n}")
            message(runtime, session, "assistant", "ok")
        provider = ScriptedProvider().add(text_turn("summary"), text_turn('{"candidates": []}'))
        await compact_session(runtime, session, provider, model="gpt-4o", window=None, policy=LEARN)
        assert "hunter2" not in provider.requests[1].messages[1]["content"]

    async def test_nothing_is_offered_when_the_first_exchange_does_not_fit(
        self, tmp_path: Path
    ) -> None:
        memory = MemorySettings(auto_learn=True, learning="model")
        runtime = make_runtime(tmp_path, Settings(memory=memory))
        session = runtime.sessions.create("x")
        message(runtime, session, "user", "big " + "x" * 17_000)  # over the 16,000 bytes
        message(runtime, session, "assistant", "ok")
        message(runtime, session, "user", "We use tabs in this repo.")  # after it: never shown
        message(runtime, session, "assistant", "ok")
        for n in range(2):
            message(runtime, session, "user", f"f{n}")
            message(runtime, session, "assistant", "ok")
        provider = ScriptedProvider().add(text_turn("A big message, then tabs in this repo."))
        outcome = await compact_session(
            runtime, session, provider, model="gpt-4o", window=None, policy=LEARN
        )
        assert outcome.status == "compacted" and outcome.learning is None
        assert len(provider.requests) == 1  # no extraction call

    def test_the_payload_never_exceeds_its_budget(self, runtime: Runtime) -> None:
        session = runtime.sessions.create("x")
        sizes = []
        for size in range(15_700, 16_001, 3):
            message(runtime, session, "user", "y" * size)
            records = runtime.sessions.read(session, 1, runtime.sessions.length(session) - 1)
            prepared = prepare(runtime, session, [[records[-1]]])
            if prepared is not None:
                sizes.append(len(prepared[0].encode("utf-8")))
        assert max(sizes) <= PAYLOAD_MAX_BYTES
        assert max(sizes) > PAYLOAD_MAX_BYTES - 10  # the limit is used, not undershot
