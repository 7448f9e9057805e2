"""A session's usage total (C10): each call counted once from the one record that carries its
usage, unknown usage counted apart, undone records included, kept up to date incrementally.

# covers C10
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any

import pytest

from lecode_ls.agent.compaction import compact_session
from lecode_ls.agent.provider import ChatRequest, Event, Finish, TextDelta, Usage
from lecode_ls.memory.sessions.records import EVENT, HEADER, USAGE
from lecode_ls.memory.sessions.store import SessionStore
from lecode_ls.memory.sessions.usage import UsageTotal, session_usage
from lecode_ls.runtime import Runtime
from tests.unit.stores import chat

KNOWN = {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}


def event(kind: str, usage: Any, **extra: Any) -> dict[str, Any]:
    return {"kind": "event", "type": kind, "usage": usage, **extra}


class TestSessionUsage:
    def test_every_record_that_carries_a_calls_usage_counts_once(self, runtime: Runtime) -> None:
        session = chat(runtime, {"role": "user", "content": "hi"})
        for record in (
            event("memory", None),  # not a call
            event("usage", KNOWN, purpose="chat"),
            event("usage", None, purpose="chat"),  # a provider error, a cancelled stream
            event("discarded", KNOWN, reason="a fact was forgotten during the request"),
            event("memory_usage", None, purpose="compaction", outcome="rejected"),
            event("memory_usage", KNOWN, purpose="learning"),
        ):
            runtime.sessions.append(session, record)
        assert session_usage(runtime.sessions, session) == UsageTotal(
            calls=5,
            prompt_tokens=300,
            completion_tokens=30,
            total_tokens=330,
            unknown_usage_calls=2,
        )

    def test_the_total_grows_with_the_transcript_and_counts_undone_calls(
        self, runtime: Runtime
    ) -> None:
        session = chat(runtime, {"role": "user", "content": "hi"})
        runtime.sessions.append(session, event("usage", KNOWN, purpose="chat"))
        assert session_usage(runtime.sessions, session).calls == 1
        runtime.sessions.append(session, {"kind": "message", "role": "user", "content": "again"})
        runtime.sessions.append(session, event("usage", KNOWN, purpose="chat"))
        runtime.sessions.undo(session)  # the call was made all the same
        assert session_usage(runtime.sessions, session).total_tokens == 220

    def test_an_index_from_before_the_usage_code_is_rebuilt_and_counted_in_full(
        self, runtime: Runtime
    ) -> None:
        """Usage records are found from the index (code USAGE); an index written before that
        code existed (header 1, usage events under EVENT) is rebuilt, not trusted."""
        session = chat(runtime, {"role": "user", "content": "hi"})
        runtime.sessions.append(session, event("usage", KNOWN, purpose="chat"))
        runtime.sessions.append(session, event("memory_usage", KNOWN, purpose="learning"))
        index = runtime.sessions.folder / f"{session}.idx"
        old = bytearray(index.read_bytes())
        old[7] = 1  # HEADER's old code
        for seq in range(len(old) // 8):
            if old[seq * 8 + 7] == USAGE:
                old[seq * 8 + 7] = EVENT
        index.write_bytes(bytes(old))
        fresh = SessionStore(runtime.sessions.root)
        assert session_usage(fresh, session).calls == 2
        assert fresh.seqs_of_kind(session, USAGE) == [2, 3]
        assert index.read_bytes()[7] == HEADER

    def test_a_new_transcript_under_the_same_id_is_read_afresh(self, runtime: Runtime) -> None:
        session = chat(runtime, {"role": "user", "content": "hi"})
        runtime.sessions.append(session, event("usage", KNOWN, purpose="chat"))
        assert session_usage(runtime.sessions, session).calls == 1
        exported = runtime.sessions.read(session, 0, 1)
        runtime.sessions.delete(session)
        runtime.sessions.import_records(exported)  # the same ID, without the call
        assert session_usage(runtime.sessions, session) == UsageTotal()


class GatedProvider:
    """Starts to answer, then waits for what never comes."""

    def __init__(self) -> None:
        self.started = asyncio.Event()

    async def stream(self, request: ChatRequest) -> AsyncGenerator[Event, None]:
        yield TextDelta("partial ")
        self.started.set()
        await asyncio.Event().wait()
        yield Finish("stop")


class TestRunTotals:
    async def test_a_cancelled_compaction_call_is_counted_once_by_the_run(
        self, runtime: Runtime
    ) -> None:
        # C10: the run's total (a turn's, a /compact's) and the session's agree on a call that
        # was cancelled: it counts once, its usage unknown.
        session = chat(runtime, *({"role": "user", "content": f"q{n}"} for n in range(8)))
        provider = GatedProvider()
        seen: list[Usage | None] = []
        task = asyncio.ensure_future(
            compact_session(
                runtime, session, provider, model="gpt-4o", window=None, on_usage=seen.append
            )
        )
        await provider.started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert seen == [None]
        assert session_usage(runtime.sessions, session) == UsageTotal(
            calls=1, unknown_usage_calls=1
        )
