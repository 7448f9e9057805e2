"""The prompt layout against llama-server's prompt cache (issue 40): a new user message and a
fact learned between two turns only append to the request the server has read, so it takes the
whole previous request from its cache and evaluates only the new message, the turn's memory and
the template's few tokens.

What is asserted is the server's own count (`timings.cache_n` of the request, recorded by the tap)
against the previous chat request's prompt (its `cache_n + prompt_n`): token counts, never a
time. bench/prompt_cache.py measures the latency. Written for issue 40 and not run by its author
(the live rig is run by the lead).

# covers I1, I3
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench.compare.tap import Tap
from tests.e2e.conftest import Start, call
from tests.live.conftest import Llama, provider_options
from tests.live.test_live import send, session

pytestmark = [pytest.mark.live, pytest.mark.timeout(900)]

PREFERENCE = "We use tabs for indentation in this repo."
MEMORY = "# widget\n\n" + "".join(
    f"- Note {n}: the widget module {n} builds with `make widget-{n}`.\n" for n in range(1, 21)
)


async def remember_quote(client: Any, session_id: str, quote: str) -> None:
    history = await call(client, "lecode/chat/history", {"sessionId": session_id, "limit": 100})
    seq = next(i["seq"] for i in history["items"] if i["kind"] == "user" and quote in i["text"])
    source = await call(
        client,
        "lecode/session/snapshot",
        {"sessionId": session_id, "startSeq": seq, "endSeq": seq},
    )
    await call(client, "lecode/facts/remember", {"text": quote, "source": source})


class TestPromptCache:
    async def test_a_learned_fact_leaves_the_cached_prompt_before_it_in_use(
        self, start: Start, workspace: Path, tap: Tap, llama: Llama
    ) -> None:
        client = await start(workspace, options=provider_options(tap.base_url))
        await call(client, "lecode/memory/write", {"file": "MEMORY.md", "content": MEMORY})
        sid = await session(client)
        await send(client, sid, "Say hello in five words.")
        await send(client, sid, PREFERENCE + " Reply with OK only.")
        await remember_quote(client, sid, PREFERENCE)
        tap.keep_bodies = True
        first = len(tap.calls)
        await send(client, sid, "Name one Python test runner. One word.")
        chats = [c for c in tap.calls if c.purpose == "chat"]
        made = next(c for c in tap.calls[first:] if c.purpose == "chat")
        previous = chats[chats.index(made) - 1]
        messages = json.loads(tap.bodies[made.index])["messages"]
        # The learned fact comes after the history, in front of the new message; the system
        # message (notes and the session's facts) is as the first turn sent it.
        assert PREFERENCE in messages[-1]["content"]
        assert PREFERENCE not in messages[0]["content"] and "Note 20" in messages[0]["content"]
        assert made.timings is not None and previous.timings is not None
        read_before = previous.timings["cache_n"] + previous.timings["prompt_n"]
        # Two tokens of slack: the previous request ended with the assistant's opening, which
        # its answer follows now.
        assert made.timings["cache_n"] >= read_before - 2
