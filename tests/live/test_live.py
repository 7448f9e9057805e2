"""lecode-ls against a real model (llama-server, Qwen2.5-Coder 0.5B): its behaviour, never the
model's words. Each test checks what lecode-ls did with what the server really sent, as the tap
recorded it on the wire.

# covers K2, C8, C9, C10, T1, T4, A2, A3, A7, P3
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from bench.compare.tap import Tap
from lecode_ls.config import Settings
from lecode_ls.memory.working import working_view
from lecode_ls.runtime import Runtimes
from tests.e2e.conftest import Start, call
from tests.e2e.test_chat import Deltas
from tests.live.conftest import WINDOW, provider_options, serve

pytestmark = [pytest.mark.live, pytest.mark.timeout(900)]  # CPU inference is slow

STATUSES = ("no_candidates", "rejected", "learned", "proposed", "failed", "stale")
"""Learning's documented statuses (memory.md, "Automatic learning")."""

WRITE = "Use the memory_write tool now: replace MEMORY.md with the text 'Build with make.'"
READ = "Call the tool named read with path pyproject.toml."
ALLOW_ALL = {"permissions": {"memory_write": "allow", "memory_edit": "allow"}}


async def session(client: Any) -> str:
    return str((await call(client, "lecode/session/new", {"title": "live"}))["sessionId"])


async def send(client: Any, session_id: str, text: str) -> dict[str, Any]:
    result: dict[str, Any] = await call(
        client, "lecode/chat/send", {"sessionId": session_id, "text": text}
    )
    return result


async def first_tool_result(
    client: Any, deltas: Deltas, session_id: str, text: str
) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """Send `text`; once the first tool has run, cancel the turn (a small model may call tools
    again and again, up to the runner's 24 rounds). The tool's result (None when the turn ended
    without one) and the turn's result."""
    turn_id = f"live-{session_id}"
    sent = asyncio.ensure_future(
        client.protocol.send_request_async(
            "lecode/chat/send", {"sessionId": session_id, "text": text}, msg_id=turn_id
        )
    )
    ran = asyncio.ensure_future(deltas.wait_for("toolResult"))
    await asyncio.wait({sent, ran}, return_when=asyncio.FIRST_COMPLETED)
    if ran.done():
        client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=turn_id))
    else:
        ran.cancel()
    result: dict[str, Any] = await sent
    return (ran.result() if ran.done() and not ran.cancelled() else None), result


def records(config: Path, folder: Path, session_id: str) -> list[dict[str, Any]]:
    """The session's transcript, read from the store as another process would."""
    runtimes = Runtimes(config, Settings())
    try:
        sessions = runtimes.for_folder(folder.resolve()).sessions
        return sessions.read(session_id, 1, sessions.length(session_id) - 1)
    finally:
        runtimes.close_all()


def usage_records(config: Path, folder: Path, session_id: str) -> list[dict[str, Any]]:
    return [
        r
        for r in records(config, folder, session_id)
        if r["kind"] == "event" and r["type"] in ("usage", "compact", "memory_usage")
    ]


def wire_total(tap: Tap, purposes: tuple[str, ...] = ("chat",)) -> dict[str, int]:
    total = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
    for made in tap.calls:
        if made.purpose in purposes and made.usage is not None:
            for key in total:
                total[key] += made.usage[key]
    return total


def chat_calls(tap: Tap) -> list[Any]:
    return [c for c in tap.calls if c.purpose != "other"]


class TestATurn:
    async def test_a_turn_streams_and_its_usage_is_exactly_the_wires(
        self, start: Start, workspace: Path, tap: Tap, isolated_config_dir: Path
    ) -> None:
        client = await start(workspace, options=provider_options(tap.base_url))
        deltas = Deltas(client)
        sid = await session(client)
        result = await send(client, sid, "Say hello in five words.")
        assert result["stopReason"] in ("stop", "length")
        assert deltas.text()  # it streamed
        [made] = chat_calls(tap)
        assert made.ok and made.usage is not None
        assert made.max_tokens is not None  # the answer is capped
        total = dict(result["usage"])
        # llama-server's timings (issue 40): what its cache served and what it evaluated, which
        # together are the prompt
        cached, evaluated = total.pop("cachedTokens"), total.pop("evaluatedTokens")
        assert cached + evaluated == made.usage["prompt_tokens"]
        assert total == {
            "calls": 1,
            "promptTokens": made.usage["prompt_tokens"],
            "completionTokens": made.usage["completion_tokens"],
            "totalTokens": made.usage["total_tokens"],
            "unknownUsageCalls": 0,
        }
        [record] = usage_records(isolated_config_dir, workspace, sid)
        assert record["usage"] == {
            **made.usage,
            "cached_tokens": cached,
            "evaluated_tokens": evaluated,
        }
        # The window was asked of the server, once: the model is not in the catalog.
        assert next(c for c in tap.calls if c.purpose == "other").status == 200


class TestRealToolCalls:
    async def test_a_real_call_reaches_memory_write_under_the_policy(
        self, start: Start, workspace: Path, tap: Tap
    ) -> None:
        # covers T1, T4: allowed by [agent] permissions, the write lands
        options = provider_options(tap.base_url, agent=ALLOW_ALL)
        client = await start(workspace, options=options)
        deltas = Deltas(client)
        sid = await session(client)
        result, _ = await first_tool_result(client, deltas, sid, WRITE)
        names = [name for made in tap.calls for name in made.tool_calls]
        assert names[:1] == ["memory_write"]  # a structured call on the wire, not text
        assert result is not None and result["name"] == "memory_write"
        read = await call(client, "lecode/memory/read", {"file": "MEMORY.md"})
        assert read["exists"] is (not result["isError"])

    async def test_a_denied_real_call_changes_nothing(
        self, start: Start, workspace: Path, tap: Tap
    ) -> None:
        options = provider_options(tap.base_url, agent={"permissions": {"memory_write": "deny"}})
        client = await start(workspace, options=options)
        deltas = Deltas(client)
        sid = await session(client)
        result, _ = await first_tool_result(client, deltas, sid, WRITE)
        assert [name for made in tap.calls for name in made.tool_calls][:1] == ["memory_write"]
        assert result is not None
        assert result["isError"] and "permission_denied" in result["output"]
        assert (await call(client, "lecode/memory/read", {"file": "MEMORY.md"}))["exists"] is False

    async def test_a_real_call_reads_the_workspace(
        self, start: Start, workspace: Path, tap: Tap
    ) -> None:
        client = await start(workspace, options=provider_options(tap.base_url))
        deltas = Deltas(client)
        sid = await session(client)
        result, _ = await first_tool_result(client, deltas, sid, READ)
        assert [name for made in tap.calls for name in made.tool_calls][:1] == ["read"]
        assert result is not None and result["name"] == "read" and not result["isError"]
        assert "requires-python" in result["output"]  # the file's own line, numbered


class TestCompactionAndLearning:
    async def test_a_compaction_keeps_valid_lineage_and_learning_ends_documented(
        self, start: Start, workspace: Path, tap: Tap, isolated_config_dir: Path
    ) -> None:
        # covers C1, C5, A2, A3, A7: a real summary, chained lineage that validates, and a
        # learning run that ends in a documented status with reason codes
        options = provider_options(tap.base_url, memory={"auto_learn": True}, agent=ALLOW_ALL)
        client = await start(workspace, options=options)
        # The exchanges are imported, not chatted: a small model given tools may call them for
        # many rounds, and what is under test here is the summary and the extraction.
        messages = [
            {"role": "user", "content": "We use tabs for indentation in this repo."},
            {"role": "assistant", "content": "Noted: tabs for indentation."},
            {
                "role": "user",
                "content": "Read pyproject.toml and tell me its requires-python line.",
            },
            {"role": "assistant", "content": 'It says requires-python = ">=3.11".'},
            {"role": "user", "content": "Name one Python test runner."},
            {"role": "assistant", "content": "pytest."},
            {"role": "user", "content": "Thanks."},
            {"role": "assistant", "content": "You are welcome."},
        ]
        imported = await call(client, "lecode/session/import", {"records": messages})
        sid = imported["sessionId"]
        result = await call(client, "lecode/session/compact", {"sessionId": sid})
        assert result["status"] in ("compacted", "rejected")
        listed = await call(client, "lecode/facts/list", {"sessionId": sid})
        learning = listed.get("learning")
        if result["status"] == "compacted":
            runtimes = Runtimes(isolated_config_dir, Settings())
            try:
                runtime = runtimes.for_folder(workspace.resolve())
                view = working_view(runtime.sessions, runtime.facts, sid)
            finally:
                runtimes.close_all()
            assert view.summary is not None  # its lineage validates
            assert learning is not None
            assert learning["status"] in STATUSES
            assert all(isinstance(code, str) for code in learning["reasonCounts"])
        # C10: every call the tap saw has one usage record, accepted or rejected
        made = chat_calls(tap)
        assert len(usage_records(isolated_config_dir, workspace, sid)) == len(made)


class TestEndings:
    async def test_cancelling_mid_stream_ends_the_turn_cancelled(
        self, start: Start, workspace: Path, tap: Tap, isolated_config_dir: Path
    ) -> None:
        client = await start(workspace, options=provider_options(tap.base_url))
        deltas = Deltas(client)
        sid = await session(client)
        future = client.protocol.send_request_async(
            "lecode/chat/send",
            {"sessionId": sid, "text": "Write a long story about a lighthouse keeper."},
            msg_id="live-turn",
        )
        sent = asyncio.ensure_future(future)
        await deltas.wait_for("text")
        client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="live-turn"))
        result = await asyncio.wait_for(sent, 60)
        assert result["stopReason"] == "cancelled"
        [usage] = usage_records(isolated_config_dir, workspace, sid)
        assert usage["usage"] is None and usage["error"] == "cancelled"

    async def test_a_killed_server_ends_the_turn_with_an_error(
        self, start: Start, workspace: Path, isolated_config_dir: Path
    ) -> None:
        own = serve()
        try:
            async with Tap(own.url, read_timeout=300.0) as tap:
                options = provider_options(tap.base_url)
                client = await start(workspace, options=options)
                deltas = Deltas(client)
                sid = await session(client)
                turn = asyncio.ensure_future(
                    send(client, sid, "Write a long story about a lighthouse keeper.")
                )
                await deltas.wait_for("text")
                own.process.kill()
                result = await asyncio.wait_for(turn, 60)
        finally:
            own.stop()
        assert result["stopReason"] == "error"
        error = await deltas.wait_for("error")
        assert error["code"] in ("provider_incomplete", "provider_unreachable")
        assert result["usage"]["unknownUsageCalls"] == 1
        [usage] = usage_records(isolated_config_dir, workspace, sid)
        assert usage["usage"] is None and usage["error"] == error["code"]

    async def test_a_request_longer_than_the_servers_window_pauses(
        self, start: Start, workspace: Path, tap: Tap, isolated_config_dir: Path
    ) -> None:
        # covers C8, C9: the settings claim a larger window than the server has, so the
        # preflight lets the request through; llama-server refuses it (HTTP 400, "exceeds the
        # available context size"), nothing can be compacted, and the turn pauses with the reason
        options = provider_options(tap.base_url, agent={"context_window": 10 * WINDOW})
        client = await start(workspace, options=options)
        deltas = Deltas(client)
        sid = await session(client)
        text = " ".join(f"w{n}" for n in range(2 * WINDOW))  # ~40,000 tokens, 100,000 bytes
        result = await send(client, sid, text)
        assert result["stopReason"] == "paused"
        [made] = chat_calls(tap)
        assert made.status == 400
        paused = await deltas.wait_for("paused")
        assert paused["message"].startswith("the request is longer than the model's context window")
        [usage] = usage_records(isolated_config_dir, workspace, sid)
        assert usage["usage"] is None and usage["error"] == "context_overflow"
        assert json.dumps(usage)  # one record for the one failed call
