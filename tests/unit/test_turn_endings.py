"""Every turn ends with an answer, and a cut-off answer cannot break a session (issue 31): the
last request without tools after the tool guard, a tool call cut off halfway recorded apart and
never replayed, an older session holding one, and a provider that refuses one record found by
its seq.

# covers T1, C10, K2, V1
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lecode_ls.agent.openai import OpenAICompatible
from lecode_ls.agent.provider import Finish, TextDelta, ToolCall, Usage
from lecode_ls.agent.replay import replay
from lecode_ls.agent.runner import TOOLS_STOPPED, ChatTurn, TurnOptions
from lecode_ls.runtime import Runtime
from lecode_ls.tools.permissions import PermissionPolicy
from tests.fakes.openai_server import FakeOpenAI, Reply, Stream, text_chunks
from tests.fakes.scripted_provider import ScriptedProvider, text_turn, tool_turn
from tests.unit.test_runner import Deltas, records, shapes

READ = ToolCall("c", "memory_read", '{"path": "MEMORY.md"}')
CUT = ToolCall("c9", "memory_read", '{"path": "MEM')  # stopped at max_output_tokens


def turn(runtime: Runtime, session: str, provider: Any, folder: Path, deltas: Deltas) -> ChatTurn:
    options = TurnOptions(model="gpt-4o", policy=PermissionPolicy(default="allow"))
    return ChatTurn(runtime, session, provider, options, folder=folder, emit=deltas)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    path = tmp_path / "workspace"
    path.mkdir()
    return path


def sent_calls(request: Any) -> list[str]:
    """The arguments of every tool call a request carries."""
    return [
        call["function"]["arguments"]
        for message in request.messages
        for call in message.get("tool_calls", [])
    ]


class TestTheToolGuard:
    async def test_a_turn_stopped_by_the_guard_still_ends_with_an_answer(
        self, runtime: Runtime, folder: Path
    ) -> None:
        # What the 0.5B model did in 15 of 16 turns (issue 31): the same call three rounds
        # running, and the turn ended with no answer.
        session = runtime.sessions.create("t")
        provider = ScriptedProvider().add(
            *(tool_turn([READ]) for _ in range(3)), text_turn("MEMORY.md is empty.")
        )
        deltas = Deltas()
        result = await turn(runtime, session, provider, folder, deltas).run("What is in memory?")
        assert result.stop_reason == "toolLimit" and result.usage.calls == 4
        last = provider.requests[-1]
        assert last.tool_choice == "none" and last.tools  # the tools stay known, unused
        assert last.messages[-1] == {"role": "user", "content": TOOLS_STOPPED}
        assert "tools were stopped" in dict(deltas)["error"]["message"]
        assert deltas.text().endswith("MEMORY.md is empty.")
        [event] = [r for r in records(runtime, session) if r.get("type") == "tool_limit"]
        assert (event["answered"], event["rounds"]) == (True, 3)
        # the note is never stored; the next turn replays the answer after the results
        assert all(TOOLS_STOPPED not in json.dumps(r) for r in records(runtime, session))
        assert replay(records(runtime, session))[-1] == {
            "role": "assistant",
            "content": "MEMORY.md is empty.",
        }

    async def test_a_last_answer_that_calls_tools_anyway_runs_nothing(
        self, runtime: Runtime, folder: Path
    ) -> None:
        session = runtime.sessions.create("t")
        provider = ScriptedProvider().add(*(tool_turn([READ]) for _ in range(4)))
        deltas = Deltas()
        result = await turn(runtime, session, provider, folder, deltas).run("loop")
        assert result.stop_reason == "toolLimit" and len(provider.requests) == 4
        assert [f["code"] for k, f in deltas if k == "error"] == ["tool_limit", "no_answer"]
        assert shapes(runtime, session).count("tool") == 3  # the fourth call never ran
        last = [r for r in records(runtime, session) if r.get("role") == "assistant"][-1]
        assert "tool_calls" not in last and last["meta"]["dropped_tool_calls"][0]["id"] == "c"
        [event] = [r for r in records(runtime, session) if r.get("type") == "tool_limit"]
        assert event["answered"] is False


class TestCutOffCalls:
    async def test_a_cut_off_call_is_never_run_nor_replayed_and_the_turn_answers(
        self, runtime: Runtime, folder: Path
    ) -> None:
        session = runtime.sessions.create("t")
        provider = ScriptedProvider().add(
            [TextDelta("Let me look. "), CUT, Finish("length", Usage(10, 200, 210))],
            text_turn("I could not finish the call; MEMORY.md was not read."),
            text_turn("Hello again."),
        )
        deltas = Deltas()
        result = await turn(runtime, session, provider, folder, deltas).run("Read my memory.")
        assert result.stop_reason == "stop"
        assert "tool" not in shapes(runtime, session)  # not run
        cut = next(r for r in records(runtime, session) if r.get("role") == "assistant")
        assert "tool_calls" not in cut and cut["content"] == "Let me look. "
        assert cut["meta"]["truncated_tool_calls"][0]["function"]["arguments"] == '{"path": "MEM'
        assert cut["meta"]["finish_reason"] == "length"
        assert dict(deltas)["error"]["code"] == "truncated_tool_call"
        assert sent_calls(provider.requests[1]) == []
        # the session goes on: the next turn carries no cut-off call either
        await turn(runtime, session, provider, folder, Deltas()).run("Hi.")
        assert sent_calls(provider.requests[2]) == []
        [event] = [r for r in records(runtime, session) if r.get("type") == "truncated_tool_call"]
        assert event["answered"] is True

    def test_an_older_session_holding_a_cut_off_call_replays_without_it(self) -> None:
        # What versions before issue 31 wrote: the cut-off call as a call, and its error result.
        old = [
            {"kind": "message", "seq": 1, "role": "user", "content": "Read my memory."},
            {"kind": "message", "seq": 2, "role": "assistant", "content": None,
             "tool_calls": [{"id": "c9", "type": "function",
                             "function": {"name": "memory_read", "arguments": '{"path": "MEM'}}]},
            {"kind": "message", "seq": 3, "role": "tool", "tool_call_id": "c9",
             "name": "memory_read", "content": "invalid_params: arguments: not valid JSON"},
            {"kind": "message", "seq": 4, "role": "assistant", "content": "Sorry.",
             "tool_calls": [{"id": "c1", "type": "function",
                             "function": {"name": "memory_list", "arguments": ""}}]},
            {"kind": "message", "seq": 5, "role": "tool", "tool_call_id": "c1",
             "name": "memory_list", "content": "[]"},
        ]  # fmt: skip
        assert replay(old) == [
            {"role": "user", "content": "Read my memory."},
            {"role": "assistant", "content": "Sorry.",
             "tool_calls": [{"id": "c1", "type": "function",
                             "function": {"name": "memory_list", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "[]"},
        ]  # fmt: skip


POISON = "POISONED-RECORD"


def refusing(body: dict[str, Any]) -> Stream | Reply:
    """A server that answers 500 to every request whose history holds the poisoned record."""
    if POISON in json.dumps(body["messages"]):
        return Reply(500, {"error": {"message": "Failed to parse tool call arguments"}})
    return Stream(text_chunks("ok", usage=(5, 1)))


class TestARefusedRecord:
    async def test_the_record_a_provider_refuses_is_reported_by_its_seq(
        self, runtime: Runtime, folder: Path
    ) -> None:
        session = runtime.sessions.create("t")
        for n in range(6):
            runtime.sessions.append(
                session, {"kind": "message", "role": "user", "content": f"q{n}"}
            )
            content = POISON if n == 3 else f"a{n}"
            runtime.sessions.append(
                session,
                {"kind": "message", "role": "assistant", "content": content,
                 "meta": {"generation": 0}},
            )  # fmt: skip
        poisoned = 8  # seq of the fourth answer
        async with FakeOpenAI(respond=refusing) as server:
            provider = OpenAICompatible(server.base_url, "gpt-4o", None, max_retries=0)
            deltas = Deltas()
            result = await turn(runtime, session, provider, folder, deltas).run("Hello?")
            await provider.aclose()
        assert result.stop_reason == "error"
        errors = [f for k, f in deltas if k == "error"]
        assert errors[-1]["code"] == "provider_rejects_history"
        assert f"seq {poisoned}" in errors[-1]["message"]
        [found] = [r for r in records(runtime, session) if r.get("type") == "provider_rejects"]
        assert (found["found"], found["record_seq"]) == ("record", poisoned)
        # every probe is a call with its usage record (C10), and they were few
        probes = [r for r in records(runtime, session) if r.get("purpose") == "diagnosis"]
        assert len(probes) == found["probes"] <= 6
        assert result.usage.calls == 1 + len(probes)

    async def test_a_provider_that_refuses_everything_is_not_blamed_on_the_session(
        self, runtime: Runtime, folder: Path
    ) -> None:
        session = runtime.sessions.create("t")
        async with FakeOpenAI(respond=lambda body: Reply(500, "down")) as server:
            provider = OpenAICompatible(server.base_url, "gpt-4o", None, max_retries=0)
            deltas = Deltas()
            result = await turn(runtime, session, provider, folder, deltas).run("Hello?")
            await provider.aclose()
        assert result.stop_reason == "error"
        assert [f["code"] for k, f in deltas if k == "error"][-1] == "provider_failing"
