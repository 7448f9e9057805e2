"""The prompt layout against llama-server's prompt cache: a fact learned between two turns leaves
the system prompt before the facts unchanged, so the server takes all of it from its cache.

What is asserted is the server's own count (`timings.cache_n` of the request, recorded by the tap)
against the tokens of the prompt's text before the facts block (llama-server's /tokenize): token
counts, never a time. bench/prompt_cache.py measures the latency.

# covers I1, I3
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
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
CHAT_TEMPLATE_HEAD = 3
"""Tokens before the system text in this model's prompt: `<|im_start|>`, `system`, newline."""


async def tokens(llama: Llama, text: str) -> int:
    async with httpx.AsyncClient(timeout=60) as client:
        answer = await client.post(f"{llama.url}/tokenize", json={"content": text})
        answer.raise_for_status()
        return len(answer.json()["tokens"])


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
        made = next(c for c in tap.calls[first:] if c.purpose == "chat")
        system = json.loads(tap.bodies[made.index])["messages"][0]["content"]
        assert PREFERENCE in system  # the fact is injected, after the notes
        before_facts = system[: system.index("\n## Durable facts")]
        assert "Note 20" in before_facts
        assert made.timings is not None and "cache_n" in made.timings
        # Two tokens of slack: where the text is cut, a token may span the cut.
        cached = CHAT_TEMPLATE_HEAD + await tokens(llama, before_facts) - 2
        assert made.timings["cache_n"] >= cached
