"""`memory_remember_quote` over MCP: a fact from the person's own words to another agent.

The fact's text is the quote itself: memory.md's contract for a person's preference ("text must
equal quote ... no paraphrasing"), so an agent cannot file its own words under the person's
evidence; a `text` that differs is refused naming it (the seed's form, `text` equal to `quote`,
still works). With `[agents] follow` on, the language server (and this tool, which polls first) keeps the
project's Claude Code and Codex transcripts as lecode sessions (other_agents/follow.py). An agent asks
to remember what the person said, `quote`: the server looks for it verbatim in the
recent records of those sessions (the last RECENT_RECORDS of each) and remembers it with the
matching record as its evidence only when exactly one record holds it, and that record is a user
message the person wrote. No match, a match in several records, or one in an assistant or tool
record or in text the agent wrote into the user's turn (a Codex AGENTS.md, a Claude Code
reminder: other_agents/transcripts.py leaves these out, and `agent_injected` (memory/sessions) tells those an earlier
import kept): no fact, and the answer says which. The fact's evidence is the other agent's own record (its origin, file
line and uuid, in the record's `meta.origin`), validated like any other. Blocking.
"""

from __future__ import annotations

import json
import os
from typing import Any

from lecode_ls.actions import facts, sessions
from lecode_ls.errors import InvalidParams, NotFound, PermissionDenied
from lecode_ls.mcp.remember import Exchange
from lecode_ls.memory.facts import MAX_TEXT_BYTES, check_text
from lecode_ls.memory.sessions import agent_injected
from lecode_ls.other_agents.follow import Follower
from lecode_ls.runtime import Runtime
from lecode_ls.tools.memory import ToolResult

RECENT_RECORDS = 2000
MIN_QUOTE_CHARS = 12
MAX_QUOTE_CHARS = MAX_TEXT_BYTES  # the quote is the fact's text: its bound (in bytes, checked too)


def _texts(record: dict[str, Any]) -> list[str]:
    content = record.get("content")
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [
            p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)
        ]
    return []


def _agent(record: dict[str, Any]) -> str:
    origin = record.get("meta", {}).get("origin", {})
    return "Claude Code" if origin.get("agent") == "claude-code" else "Codex"


def remember_quote(
    runtime: Runtime, exchange: Exchange, quote: str, text: str | None = None
) -> ToolResult:
    agents = list(runtime.settings.agents.follow)
    if not agents:
        raise PermissionDenied(
            "memory_remember_quote: no agent's transcripts are followed ([agents] follow is empty)"
        )
    if len(quote.strip()) < MIN_QUOTE_CHARS or len(quote) > MAX_QUOTE_CHARS:
        raise InvalidParams(
            f"quote: give the person's exact words, {MIN_QUOTE_CHARS} characters or more and at "
            f"most a fact's {MAX_TEXT_BYTES} UTF-8 bytes, so that they name one message",
            field="quote",
        )
    if text is not None and text != quote:
        raise InvalidParams(
            "text: a fact from the person's words is those words, as memory.md's contract for a "
            "person's preference says (text equals quote, no paraphrase): leave text out, or "
            "quote the words to remember",
            field="text",
        )
    try:
        text = check_text(quote)
    except InvalidParams as error:  # the quote is the fact's text: its bound is the fact's
        raise InvalidParams(
            f"quote: {error.message.removeprefix('text: ')}", field="quote"
        ) from None
    folders = [exchange.folder, *runtime.drift.folders]
    follower = Follower(runtime.sessions, runtime.store_path, folders, agents, os.environ)
    follower.poll()  # what the person said a moment ago
    users: list[tuple[str, int, dict[str, Any]]] = []
    others: list[str] = []
    for session in follower.followed_sessions():
        length = runtime.sessions.length(session)
        first = max(1, length - RECENT_RECORDS)
        if length <= first:
            continue
        for seq, record in enumerate(runtime.sessions.read(session, first, length - 1), first):
            if record.get("kind") != "message" or not any(quote in t for t in _texts(record)):
                continue
            role = record.get("role")
            if role == "user" and agent_injected(record):
                others.append(f"user-turn text {_agent(record)} wrote (AGENTS.md, reminders)")
            elif role == "user":
                users.append((session, seq, record))
            else:
                others.append(str(role))
    if others:
        raise InvalidParams(
            f"quote: found in {len(others)} {'/'.join(sorted(set(others)))} record(s), which are "
            "not the person's words; only a quote from one user message makes a fact",
            field="quote",
        )
    if not users:
        raise NotFound(
            "quote: not found verbatim in the recent records of this project's followed "
            f"transcripts ({', '.join(agents)})",
            field="quote",
        )
    if len(users) > 1:
        raise InvalidParams(
            f"quote: found in {len(users)} user messages; quote more of the person's words so "
            "that they name one",
            field="quote",
        )
    session, seq, record = users[0]
    ref = sessions.snapshot(runtime, session, seq, seq)
    done = facts.remember(runtime, text, ref, origin="mcp", deduplicate=True)
    origin = record.get("meta", {}).get("origin") if isinstance(record.get("meta"), dict) else None
    body = {
        "fact_id": done.value.fact_id,
        "revision": done.value.revision,
        "text": text,
        "session_id": session,
        "seq": seq,
        "origin": origin,
    }
    return ToolResult(json.dumps(body, ensure_ascii=False), changed=done.changed)
