"""The chat runner with the in-process scripted provider and real stores.

# covers V1 (runner), I1, I2, I4, I6, T1, T2, T4, C8, C10, E1, L7
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import pytest

from lecode_ls.agent import runner as runner_module
from lecode_ls.agent.provider import ChatRequest, Event, Finish, TextDelta, ToolCall, Usage
from lecode_ls.agent.replay import NO_RESULT, replay
from lecode_ls.agent.runner import ChatTurn, TurnOptions, TurnResult
from lecode_ls.errors import ProviderAuth
from lecode_ls.memory.injection import MEMORY_HEADING
from lecode_ls.memory.project import AGENTS_HEADING
from lecode_ls.runtime import Runtime
from lecode_ls.tools.permissions import PermissionPolicy
from tests.fakes.scripted_provider import ScriptedProvider, text_turn, tool_turn
from tests.unit.stores import chat, remember

USAGE = Usage(100, 20, 120)
ALLOW = PermissionPolicy(default="allow")


class Deltas(list[tuple[str, dict[str, Any]]]):
    def __call__(self, kind: str, fields: dict[str, Any]) -> None:
        self.append((kind, fields))

    def kinds(self) -> list[str]:
        return [kind for kind, _ in self]

    def text(self) -> str:
        return "".join(fields["text"] for kind, fields in self if kind == "text")


def make_turn(
    runtime: Runtime,
    session: str,
    provider: Any,
    folder: Path,
    deltas: Deltas,
    *,
    options: TurnOptions | None = None,
    ask: Any = None,
) -> ChatTurn:
    return ChatTurn(
        runtime,
        session,
        provider,
        options or TurnOptions(model="gpt-4o", policy=ALLOW),
        folder=folder,
        emit=deltas,
        ask=ask,
    )


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    path = tmp_path / "workspace"
    path.mkdir()
    return path


def records(runtime: Runtime, session: str) -> list[dict[str, Any]]:
    length = runtime.sessions.length(session)
    return runtime.sessions.read(session, 1, length - 1)


def shapes(runtime: Runtime, session: str) -> list[str]:
    """Each record as `role` or `event:type`."""
    return [
        r["role"] if r["kind"] == "message" else f"event:{r['type']}"
        for r in records(runtime, session)
    ]


def call(name: str, arguments: dict[str, Any], call_id: str = "call-1") -> ToolCall:
    return ToolCall(call_id, name, json.dumps(arguments))


class TestATextTurn:
    async def test_streams_persists_and_counts(self, runtime: Runtime, folder: Path) -> None:
        session = runtime.sessions.create("t")
        provider = ScriptedProvider().add(text_turn("Run ", "`make`.", usage=USAGE))
        deltas = Deltas()
        result = await make_turn(runtime, session, provider, folder, deltas).run("How to build?")

        assert result.stop_reason == "stop"
        assert deltas.text() == "Run `make`."
        assert deltas.kinds() == ["memory", "text", "text", "usage"]
        assert (result.usage.calls, result.usage.total_tokens) == (1, 120)
        assert shapes(runtime, session) == [
            "user",
            "event:memory_block",
            "event:memory",
            "assistant",
            "event:usage",
        ]
        user, _, _, assistant, usage = records(runtime, session)
        assert user["content"] == "How to build?"
        assert assistant["content"] == "Run `make`."
        # E1: stamped with the generation captured before the request (no forget yet: 0).
        assert assistant["meta"]["generation"] == 0
        assert assistant["meta"]["turn_id"] == result.turn_id == user["meta"]["turn_id"]
        assert usage["usage"] == {
            "prompt_tokens": 100,
            "completion_tokens": 20,
            "total_tokens": 120,
        }

    async def test_the_request_carries_the_history_and_the_new_message(
        self, runtime: Runtime, folder: Path
    ) -> None:
        session = runtime.sessions.create("t")
        provider = ScriptedProvider().add(text_turn("one"), text_turn("two"))
        await make_turn(runtime, session, provider, folder, Deltas()).run("first")
        await make_turn(runtime, session, provider, folder, Deltas()).run("second")
        second = provider.requests[1].messages
        assert second[0]["role"] == "system"
        assert [(m["role"], m["content"]) for m in second[1:]] == [
            ("user", "first"),
            ("assistant", "one"),
            ("user", "second"),
        ]

    async def test_an_undone_exchange_is_not_replayed(self, runtime: Runtime, folder: Path) -> None:
        session = runtime.sessions.create("t")
        provider = ScriptedProvider().add(text_turn("one"), text_turn("two"))
        await make_turn(runtime, session, provider, folder, Deltas()).run("first")
        runtime.sessions.undo(session)
        await make_turn(runtime, session, provider, folder, Deltas()).run("second")
        assert [m["content"] for m in provider.requests[1].messages[1:]] == ["second"]


class TestMemoryInTheRequest:
    async def test_facts_and_notes_are_injected_as_untrusted_evidence(
        self, runtime: Runtime, folder: Path
    ) -> None:
        source = chat(runtime, {"role": "user", "content": "I prefer tabs."})
        fact = remember(runtime, source, 1, 1, "The user prefers tabs.")
        runtime.markdown.write("MEMORY.md", "Build with make.\n", "replace")
        session = runtime.sessions.create("t")
        provider = ScriptedProvider().add(text_turn("ok"))
        deltas = Deltas()
        await make_turn(runtime, session, provider, folder, deltas).run("hi")

        system = provider.requests[0].messages[0]["content"]
        assert "untrusted" in system.lower()
        assert "The user prefers tabs." in system and f'"fact_id":{fact}' in system
        assert "Build with make." in system
        memory = dict(deltas)["memory"]
        assert memory == {
            "facts": [{"fact_id": fact, "revision": 1, "reason": "recent"}],
            "notes": ["MEMORY.md"],
        }

    async def test_the_turns_message_ranks_facts_and_the_selection_stays_for_the_turn(
        self, runtime: Runtime, folder: Path
    ) -> None:
        # covers I1, I3: 80 facts, the one the message asks about is old; the turn's two
        # requests show the same facts, and the facts shown are recorded as used.
        texts = [f"The billing-{n} service reads its signing key from Vault." for n in range(80)]
        source = chat(runtime, *({"role": "user", "content": text} for text in texts))
        ids = [remember(runtime, source, n + 1, n + 1, text) for n, text in enumerate(texts)]
        session = runtime.sessions.create("t")
        read = call("memory_read", {"file": "MEMORY.md"})
        provider = ScriptedProvider().add(tool_turn([read]), text_turn("Vault."))
        deltas = Deltas()
        await make_turn(runtime, session, provider, folder, deltas).run(
            "Quick question about billing-3: what do we use for its signing key?"
        )
        first, second = (r.messages[0]["content"] for r in provider.requests)
        assert first == second
        memory = [fields for kind, fields in deltas if kind == "memory"]
        assert memory[0] == memory[1]
        [shown] = [f for f in memory[0]["facts"] if f["fact_id"] == ids[3]]
        assert shown["reason"] == "matched: billing-3, signing, key"
        used = runtime.facts.ranking.uses(ids)
        assert used[ids[3]][1] == 1  # one turn showed it
        assert set(used) == {f["fact_id"] for f in memory[0]["facts"]}

    async def test_agents_md_goes_into_the_prompt_apart_from_memory(
        self, runtime: Runtime, folder: Path
    ) -> None:
        (folder / "AGENTS.md").write_text("Always run the linter.\n")
        session = runtime.sessions.create("t")
        provider = ScriptedProvider().add(text_turn("ok"))
        await make_turn(runtime, session, provider, folder, Deltas()).run("hi")
        system = provider.requests[0].messages[0]["content"]
        agents = system.index("Always run the linter.")
        assert system.index(AGENTS_HEADING.strip()) < agents
        assert MEMORY_HEADING.strip() not in system[:agents]

    async def test_a_learned_fact_leaves_the_prompt_before_it_unchanged(
        self, runtime: Runtime, folder: Path
    ) -> None:
        # The provider's prompt cache keeps the longest unchanged prefix: base prompt, AGENTS.md,
        # the notes and the session's facts come first, and a fact learned between two turns
        # is in front of the new message, after the history (issue 40).
        (folder / "AGENTS.md").write_text("Always run the linter.\n")
        runtime.markdown.write("MEMORY.md", "Build with make.\n", "replace")
        runtime.markdown.write("scratchpad.md", "- [ ] release\n", "replace")
        session = runtime.sessions.create("t")
        provider = ScriptedProvider().add(text_turn("ok"), text_turn("ok"))
        await make_turn(runtime, session, provider, folder, Deltas()).run("hi")
        source = chat(runtime, {"role": "user", "content": "I prefer tabs."})
        remember(runtime, source, 1, 1, "The user prefers tabs.")
        await make_turn(runtime, session, provider, folder, Deltas()).run("again")
        before, after = (r.messages for r in provider.requests)
        assert after[: len(before)] == before
        assert "The user prefers tabs." in after[-1]["content"]
        assert after[-1]["content"].endswith("again")
        first = before[0]["content"]
        order = [first.index(part) for part in ("You are lecode", "Always run", "Build with make")]
        assert order == sorted(order)

    async def test_memory_is_read_again_at_every_provider_request(
        self, runtime: Runtime, folder: Path
    ) -> None:
        session = runtime.sessions.create("t")
        write = call("memory_write", {"file": "MEMORY.md", "content": "Use uv.", "mode": "replace"})
        provider = ScriptedProvider().add(tool_turn([write]), text_turn("done"))
        await make_turn(runtime, session, provider, folder, Deltas()).run("remember uv")
        first, second = (r.messages[0]["content"] for r in provider.requests)
        assert "Use uv." not in first
        assert "Use uv." in second


class TestTools:
    async def test_a_tool_round_persists_call_and_result_stamped(
        self, runtime: Runtime, folder: Path
    ) -> None:
        session = runtime.sessions.create("t")
        write = call("memory_write", {"file": "scratchpad.md", "content": "note", "mode": "append"})
        provider = ScriptedProvider().add(
            tool_turn([write], usage=USAGE), text_turn("ok", usage=USAGE)
        )
        deltas = Deltas()
        result = await make_turn(runtime, session, provider, folder, deltas).run("note it")

        assert runtime.markdown.read("scratchpad.md")[0].strip() == "note"
        assert result.usage.calls == 2 and result.usage.total_tokens == 240
        # The scratchpad changed: the stable part is chosen again, a counted miss (issue 40).
        assert shapes(runtime, session) == [
            "user",
            "event:memory_block",
            "event:memory",
            "assistant",
            "event:usage",
            "tool",
            "event:cache_miss",
            "event:memory_block",
            "event:memory",
            "assistant",
            "event:usage",
        ]
        tool = records(runtime, session)[5]
        assert tool["tool_call_id"] == "call-1" and tool["meta"]["generation"] == 0
        assert "toolCall" in deltas.kinds() and "toolResult" in deltas.kinds()
        # The second request answers the call with its result.
        roles = [m["role"] for m in provider.requests[1].messages]
        assert roles[-2:] == ["assistant", "tool"]

    async def test_ask_goes_to_the_person_and_a_no_refuses_the_write(
        self, runtime: Runtime, folder: Path
    ) -> None:
        asked: list[tuple[str, str]] = []

        async def ask(name: str, summary: str) -> bool:
            asked.append((name, summary))
            return False

        session = runtime.sessions.create("t")
        write = call("memory_write", {"file": "MEMORY.md", "content": "x", "mode": "replace"})
        provider = ScriptedProvider().add(tool_turn([write]), text_turn("ok"))
        deltas = Deltas()
        options = TurnOptions(model="gpt-4o", policy=PermissionPolicy(default="ask"))
        await make_turn(runtime, session, provider, folder, deltas, options=options, ask=ask).run(
            "write"
        )
        assert [name for name, _ in asked] == ["memory_write"] and "MEMORY.md" in asked[0][1]
        result = next(fields for kind, fields in deltas if kind == "toolResult")
        assert result["is_error"] and "permission_denied" in result["output"]
        assert runtime.markdown.read("MEMORY.md") == ("", False)

    async def test_readonly_offers_only_readers_and_refuses_a_write(
        self, runtime: Runtime, folder: Path
    ) -> None:
        session = runtime.sessions.create("t")
        write = call("memory_write", {"file": "MEMORY.md", "content": "x", "mode": "replace"})
        provider = ScriptedProvider().add(tool_turn([write]), text_turn("ok"))
        deltas = Deltas()
        options = TurnOptions(model="gpt-4o", readonly=True, policy=ALLOW)
        await make_turn(runtime, session, provider, folder, deltas, options=options).run("w")
        offered = {t["function"]["name"] for t in provider.requests[0].tools}
        assert offered == {"memory_read", "memory_search", "memory_list", "memory_recall", "read"}
        result = next(fields for kind, fields in deltas if kind == "toolResult")
        assert result["is_error"] and "readonly" in result["output"]

    async def test_the_read_tool_numbers_workspace_lines(
        self, runtime: Runtime, folder: Path
    ) -> None:
        (folder / "setup.cfg").write_text("[tool]\nline = 2\n")
        session = runtime.sessions.create("t")
        provider = ScriptedProvider().add(
            tool_turn([call("read", {"path": "setup.cfg"})]), text_turn("ok")
        )
        deltas = Deltas()
        await make_turn(runtime, session, provider, folder, deltas).run("read it")
        output = next(fields for kind, fields in deltas if kind == "toolResult")["output"]
        assert output.splitlines()[:2] == ["     1\t[tool]", "     2\tline = 2"]

    async def test_reading_a_secret_file_asks_the_person_first(
        self, runtime: Runtime, folder: Path
    ) -> None:
        # covers T4 (issue 10.8): .env would otherwise go to the provider silently
        (folder / ".env").write_text("API_TOKEN=hunter2\n")
        (folder / "sub").mkdir()
        (folder / "sub" / "link.txt").symlink_to(folder / ".env")
        asked: list[tuple[str, str]] = []

        async def ask(name: str, summary: str) -> bool:
            asked.append((name, summary))
            return False

        session = runtime.sessions.create("t")
        provider = ScriptedProvider().add(
            tool_turn(
                [call("read", {"path": ".env"}), call("read", {"path": "sub/link.txt"}, "c2")]
            ),
            text_turn("ok"),
        )
        deltas = Deltas()
        options = TurnOptions(
            model="gpt-4o",
            policy=PermissionPolicy({"memory_write": "allow"}, default="ask"),
            secret_files=(".env",),
        )
        await make_turn(runtime, session, provider, folder, deltas, options=options, ask=ask).run(
            "read .env"
        )
        assert [name for name, _ in asked] == ["read_secret", "read_secret"]
        results = [fields for kind, fields in deltas if kind == "toolResult"]
        assert all(r["is_error"] and "permission_denied" in r["output"] for r in results)
        assert "hunter2" not in json.dumps([r.messages for r in provider.requests])

    async def test_a_secret_file_is_read_where_the_person_allows_it(
        self, runtime: Runtime, folder: Path
    ) -> None:
        (folder / ".env").write_text("API_TOKEN=ok\n")
        session = runtime.sessions.create("t")
        provider = ScriptedProvider().add(
            tool_turn([call("read", {"path": ".env"})]), text_turn("ok")
        )
        deltas = Deltas()
        options = TurnOptions(
            model="gpt-4o",
            policy=PermissionPolicy({"read_secret": "allow"}),
            secret_files=(".env",),
        )
        await make_turn(runtime, session, provider, folder, deltas, options=options).run("r")
        output = next(fields for kind, fields in deltas if kind == "toolResult")["output"]
        assert output == "     1\tAPI_TOKEN=ok"

    async def test_a_model_that_never_stops_calling_tools_is_stopped(
        self, runtime: Runtime, folder: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(runner_module, "MAX_ROUNDS", 4)
        session = runtime.sessions.create("t")
        listings = [call("memory_list", {"offset": i}) for i in range(4)]  # never the same call
        provider = ScriptedProvider().add(*(tool_turn([listing]) for listing in listings))
        provider.add(text_turn("Here is what the listings showed."))
        deltas = Deltas()
        result = await make_turn(runtime, session, provider, folder, deltas).run("loop")
        # issue 31: one last request without tools, so the turn ends with an answer
        assert result.stop_reason == "toolLimit" and len(provider.requests) == 5
        assert provider.requests[-1].tool_choice == "none"
        assert shapes(runtime, session)[-3:] == ["assistant", "event:usage", "event:tool_limit"]
        assert "after 4 requests" in dict(deltas)["error"]["message"]

    async def test_a_model_repeating_the_same_calls_is_stopped_at_the_third_round(
        self, runtime: Runtime, folder: Path
    ) -> None:
        """Found live: a 0.5B model read the same note 24 times in a row (bench.compare)."""
        session = runtime.sessions.create("t")
        same = [
            ToolCall("c", "memory_read", '{"path": "MEMORY.md", "offset": 0}'),
            ToolCall("c", "memory_read", '{"offset":0,"path":"MEMORY.md"}'),  # same arguments
            ToolCall("c", "memory_read", '{"path": "MEMORY.md", "offset": 0}'),
        ]
        provider = ScriptedProvider().add(*(tool_turn([c]) for c in same), text_turn("MEMORY.md"))
        deltas = Deltas()
        result = await make_turn(runtime, session, provider, folder, deltas).run("loop")
        assert result.stop_reason == "toolLimit" and len(provider.requests) == 4
        assert dict(deltas)["error"] == {
            "code": "tool_limit",
            "message": "the model asked for the same tool calls 3 times in a row; "
            "tools were stopped and the model is asked to answer without them",
        }
        # Every call asked for ran and has its result; the answer follows them.
        assert shapes(runtime, session)[-5:] == [
            "tool", "event:memory", "assistant", "event:usage", "event:tool_limit"
        ]  # fmt: skip


class TestGenerationStamps:
    async def test_generated_messages_carry_the_generation_before_their_request(
        self, runtime: Runtime, folder: Path
    ) -> None:
        source = chat(runtime, {"role": "user", "content": "x"})
        runtime.facts.forget(remember(runtime, source, 1, 1, "x"))
        session = runtime.sessions.create("t")
        provider = ScriptedProvider().add(tool_turn([call("memory_list", {})]), text_turn("ok"))
        await make_turn(runtime, session, provider, folder, Deltas()).run("go")
        generated = [r for r in records(runtime, session) if r.get("role") in ("assistant", "tool")]
        assert len(generated) == 3
        assert all(r["meta"]["generation"] == 1 for r in generated)


class TestUsageAndFailures:
    async def test_unreported_usage_is_unknown_not_zero(
        self, runtime: Runtime, folder: Path
    ) -> None:
        session = runtime.sessions.create("t")
        provider = ScriptedProvider().add(text_turn("a", usage=None))
        deltas = Deltas()
        result = await make_turn(runtime, session, provider, folder, deltas).run("hi")
        assert (result.usage.calls, result.usage.unknown_usage_calls) == (1, 1)
        assert result.usage.total_tokens == 0
        assert dict(deltas)["usage"] == {"usage": None}
        assert records(runtime, session)[-1]["usage"] is None

    async def test_a_provider_error_ends_the_turn_and_is_recorded(
        self, runtime: Runtime, folder: Path
    ) -> None:
        session = runtime.sessions.create("t")
        provider = ScriptedProvider().add(ProviderAuth("the API key was rejected (401)"))
        deltas = Deltas()
        result = await make_turn(runtime, session, provider, folder, deltas).run("hi")
        assert result.stop_reason == "error"
        assert dict(deltas)["error"] == {
            "code": "provider_auth",
            "message": "the API key was rejected (401)",
        }
        # C10: the failed call has its usage record (null: the provider reported none).
        assert shapes(runtime, session) == [
            "user",
            "event:memory_block",
            "event:memory",
            "event:usage",
            "event:error",
        ]
        usage = records(runtime, session)[3]
        assert (usage["purpose"], usage["usage"], usage["error"]) == ("chat", None, "provider_auth")
        assert result.usage.unknown_usage_calls == 1

    async def test_a_request_that_cannot_fit_pauses_the_turn_before_any_call(
        self, runtime: Runtime, folder: Path
    ) -> None:
        session = runtime.sessions.create("t")
        provider = ScriptedProvider()
        deltas = Deltas()
        options = TurnOptions(model="my-local-model", context_window=1024, policy=ALLOW)
        result = await make_turn(runtime, session, provider, folder, deltas, options=options).run(
            "x" * 20_000
        )
        # covers C9: nothing can be compacted (one message), so the turn pauses with a reason.
        assert result.stop_reason == "paused" and provider.requests == []
        assert dict(deltas)["compaction"]["status"] == "nothing"
        assert "window" in dict(deltas)["paused"]["message"]
        assert shapes(runtime, session)[-1] == "event:paused"


class TestAnswerCap:
    """Every chat request caps the answer's tokens (a small local model once wrote 6,484 tokens
    of one degenerate answer, to the end of the server's window)."""

    async def cap(self, runtime: Runtime, folder: Path, options: TurnOptions) -> int | None:
        session = runtime.sessions.create("t")
        provider = ScriptedProvider().add(text_turn("ok"))
        await make_turn(runtime, session, provider, folder, Deltas(), options=options).run("hi")
        return provider.requests[0].max_tokens

    async def test_a_catalog_model_gets_its_output_limit(
        self, runtime: Runtime, folder: Path
    ) -> None:
        assert await self.cap(runtime, folder, TurnOptions(model="gpt-4o")) == 16_384

    async def test_an_unknown_model_gets_the_headroom_the_preflight_keeps_free(
        self, runtime: Runtime, folder: Path
    ) -> None:
        options = TurnOptions(model="qwen-local", buffer_tokens=2048)
        assert await self.cap(runtime, folder, options) == 2048

    async def test_the_setting_wins_within_the_catalogs_limit(
        self, runtime: Runtime, folder: Path
    ) -> None:
        assert TurnOptions(model="qwen-local", max_output_tokens=700).answer_cap() == 700
        assert TurnOptions(model="gpt-4o", max_output_tokens=900).answer_cap() == 900
        assert TurnOptions(model="gpt-4o", max_output_tokens=99_999).answer_cap() == 16_384


class GatedProvider:
    """Streams some text, then waits for a signal that never comes; notes when it is closed."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.closed = False

    async def stream(self, request: ChatRequest) -> AsyncGenerator[Event, None]:
        try:
            yield TextDelta("partial ")
            self.started.set()
            await asyncio.Event().wait()
            yield Finish("stop")
        finally:
            self.closed = True


class TestCancellation:
    async def test_cancelling_mid_stream_closes_it_and_records_the_cancellation(
        self, runtime: Runtime, folder: Path
    ) -> None:
        session = runtime.sessions.create("t")
        provider = GatedProvider()
        task = asyncio.create_task(
            make_turn(runtime, session, provider, folder, Deltas()).run("long answer please")
        )
        await provider.started.wait()
        task.cancel()
        result: TurnResult = await task
        assert result.stop_reason == "cancelled" and provider.closed
        assert shapes(runtime, session) == [
            "user",
            "event:memory_block",
            "event:memory",
            "assistant",
            "event:usage",
            "event:cancelled",
        ]
        assert records(runtime, session)[4]["error"] == "cancelled"
        assert result.usage.unknown_usage_calls == 1  # the cancelled call was made
        assert records(runtime, session)[3]["content"] == "partial "
        assert records(runtime, session)[3]["meta"]["finish_reason"] == "cancelled"

    async def test_cancelling_while_the_person_is_asked_denies_and_records_the_result(
        self, runtime: Runtime, folder: Path
    ) -> None:
        asking = asyncio.Event()

        async def ask(name: str, summary: str) -> bool:
            asking.set()
            await asyncio.Event().wait()
            return True

        session = runtime.sessions.create("t")
        write = call("memory_write", {"file": "MEMORY.md", "content": "x", "mode": "replace"})
        provider = ScriptedProvider().add(tool_turn([write]))
        options = TurnOptions(model="gpt-4o", policy=PermissionPolicy(default="ask"))
        turn = make_turn(runtime, session, provider, folder, Deltas(), options=options, ask=ask)
        task = asyncio.create_task(turn.run("write"))
        await asking.wait()
        task.cancel()
        result = await task
        assert result.stop_reason == "cancelled"
        assert runtime.markdown.read("MEMORY.md") == ("", False)
        assert shapes(runtime, session)[-2:] == ["tool", "event:cancelled"]
        assert "permission_denied" in records(runtime, session)[-2]["content"]


class TestReplay:
    def test_a_call_without_a_result_gets_a_placeholder_and_an_orphan_result_is_dropped(
        self,
    ) -> None:
        call_record = {
            "kind": "message",
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "x", "arguments": "{}"}}
            ],
        }
        orphan = {"kind": "message", "role": "tool", "tool_call_id": "zz", "content": "?"}
        user = {"kind": "message", "role": "user", "content": "next"}
        messages = replay([call_record, orphan, user])
        assert [m["role"] for m in messages] == ["assistant", "tool", "user"]
        assert messages[1] == {"role": "tool", "tool_call_id": "c1", "content": NO_RESULT}
