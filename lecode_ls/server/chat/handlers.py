"""Handlers of chat: `lecode/chat/send` (a turn, streamed as `lecode/chat/delta`),
`lecode/chat/history` and `lecode/command`.

The turn itself is `lecode_ls.agent.runner.ChatTurn`; this module adapts it to LSP: deltas become
notifications, a permission question becomes `window/showMessageRequest` (so every LSP editor can
answer it), memory changes send their didChange notifications, and cancelling the request
(`$/cancelRequest`) cancels the turn's task.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from lecode_ls.actions import FACTS
from lecode_ls.agent import catalog
from lecode_ls.agent.compaction import Outcome, compact_session
from lecode_ls.agent.runner import ChatTurn, DeltaKind, TurnOptions, TurnUsage
from lecode_ls.config import Settings
from lecode_ls.errors import InvalidParams
from lecode_ls.memory.sessions import UsageTotal, check_session_id, session_usage
from lecode_ls.runtime import Runtime
from lecode_ls.server.act import tell
from lecode_ls.server.asking import ask_person
from lecode_ls.server.chat import messages as p
from lecode_ls.server.chat.state import Chat
from lecode_ls.server.server import LecodeServer
from lecode_ls.server.sessions import messages as sp
from lecode_ls.server.slash import run_command
from lecode_ls.tools.memory import ToolResult
from lecode_ls.tools.permissions import PermissionPolicy


@contextlib.asynccontextmanager
async def _attached(runtime: Runtime, session_id: str) -> AsyncIterator[None]:
    """The session's attach lock for the length of a turn or a compaction (deletion waits).
    Taking it may wait on another process's lock: that wait happens in a worker thread."""
    lock = runtime.sessions.attach(session_id)
    await asyncio.to_thread(lock.__enter__)
    try:
        yield
    finally:
        lock.__exit__(None, None, None)


async def chat_send(ls: LecodeServer, params: p.ChatSendParams) -> p.ChatSendResult:
    runtime, folder_uri = await ls.runtime(params.workspace_uri)
    session_id = check_session_id(params.session_id)
    if _command_word(params.text) in ("/memory", "/compact"):
        return await _command_turn(ls, runtime, params)
    running = (str(runtime.project.root), session_id)
    busy = f"sessionId: session {session_id} already has a turn running; wait for it or cancel it"
    settings = ls.settings
    seq = 0

    progress: list[str | None] = []

    def emit(kind: DeltaKind, fields: dict[str, Any]) -> None:
        nonlocal seq
        if kind == "learning":  # facts or proposals changed: fact views refresh
            ls.run_task(tell(ls, runtime, FACTS), "facts-changed")
        if kind == "compaction":  # every editor shows LSP progress; the chat panel the delta
            if fields["status"] == "started":
                progress.append(ls.progress_begin("lecode: compacting the chat session"))
            elif progress:
                ls.progress_end(progress.pop(), fields["status"])
        ls.send(
            "lecode/chat/delta",
            p.ChatDeltaParams(
                session_id=session_id,
                turn_id=turn.turn_id,
                seq=seq,
                kind=kind,
                **fields,
            ),
        )
        seq += 1

    async def ask(tool: str, summary: str) -> bool:
        return await ask_person(ls, "the model", tool, summary)

    async def after_tool(tool: str, result: ToolResult) -> None:
        await tell(ls, runtime, result.changed, folder_uri=folder_uri)

    chat = ls.rooms.get(Chat)
    # First, so a set-up error (no provider, a missing key) answers before anything is sent.
    provider = chat.provider(settings.provider)
    options = TurnOptions.from_settings(
        settings, context_window=await _window(ls, settings), calibration=chat.calibration
    )
    folder = ls.folder_for(params.workspace_uri)
    embeddings = chat.embeddings(settings)
    if embeddings is not None:  # vectors of facts that have none, beside the turn
        ls.run_task(chat.fill_vectors(runtime, settings), "fact-vectors")
    turn = ChatTurn(
        runtime,
        session_id,
        provider,
        options,
        folder=folder,
        emit=emit,
        ask=ask,
        after_tool=after_tool,
        embeddings=embeddings,
    )
    try:
        with chat.running(running, busy):  # shutdown cancels it through this
            async with _attached(runtime, session_id):  # session deletion waits for the turn
                result = await turn.run(params.text)
    finally:
        for token in progress:  # a compaction the turn did not see end (cancelled, failed)
            ls.progress_end(token, "stopped")
    return p.ChatSendResult(
        turn_id=result.turn_id,
        stop_reason=result.stop_reason,
        usage=_usage_model(result.usage),
    )


async def session_compact(ls: LecodeServer, params: sp.SessionParams) -> p.SessionCompactResult:
    """`/compact`: compact the session's working memory now (refused while a turn runs)."""
    runtime, _ = await ls.runtime(params.workspace_uri)
    session_id = check_session_id(params.session_id)
    running = (str(runtime.project.root), session_id)
    busy = (
        f"sessionId: session {session_id} has a turn running; compaction waits for it to "
        "end (or cancel it)"
    )
    settings = ls.settings
    model = settings.provider.model
    outcome: Outcome | None = None
    usage = TurnUsage()
    chat = ls.rooms.get(Chat)
    # No turn starts while the summary is written; shutdown cancels it through this.
    with chat.running(running, busy):
        token = ls.progress_begin("lecode: compacting the chat session")
        try:
            async with _attached(runtime, session_id):
                outcome = await compact_session(
                    runtime,
                    session_id,
                    chat.provider(settings.provider),
                    model=model,
                    window=catalog.context_window(model, await _window(ls, settings)),
                    policy=PermissionPolicy.from_settings(settings),
                    readonly=settings.agent.readonly,
                    on_usage=usage.add,
                    asked=True,  # the person asked: tried even after repeated rejections
                )
        finally:
            ls.progress_end(token, outcome.status if outcome else "failed")
    if outcome.learning is not None and outcome.learning.called:
        await tell(ls, runtime, FACTS)  # facts or proposals changed: fact views refresh
    result = p.SessionCompactResult(
        status=outcome.status, covered_through=outcome.covered_through, usage=_usage_model(usage)
    )
    if outcome.reason is not None:
        result = result.model_copy(update={"message": outcome.reason})
    return result


async def _window(ls: LecodeServer, settings: Settings) -> int | None:
    """`[agent] context_window`; unset, for a model the catalog does not know, the window the
    server says it serves (asked once per provider, bounded; None when it does not say)."""
    configured = settings.agent.context_window
    if configured is not None or catalog.lookup(settings.provider.model) is not None:
        return configured
    return await ls.rooms.get(Chat).provider(settings.provider).server_window()


def _usage_model(usage: UsageTotal) -> p.UsageModel:
    return p.UsageModel.model_validate(usage.to_json())


async def _command_turn(
    ls: LecodeServer, runtime: Runtime, params: p.ChatSendParams
) -> p.ChatSendResult:
    """`/memory ...` or `/compact` sent as a chat message: the command's output as the turn's
    text (plain text, not Markdown), and the usage of the calls it made (a compaction's, C10);
    `/memory` makes no model call and appends nothing to the transcript."""
    output, usage = await _run_line(ls, params.workspace_uri, params.session_id, params.text)
    turn_id = "cmd-" + secrets.token_hex(4)
    ls.send(
        "lecode/chat/delta",
        p.ChatDeltaParams(
            session_id=params.session_id, turn_id=turn_id, seq=0, kind="text", text=output
        ),
    )
    return p.ChatSendResult(turn_id=turn_id, stop_reason="stop", usage=usage)


async def command(ls: LecodeServer, params: p.CommandParams) -> p.CommandResult:
    output, _ = await _run_line(ls, params.workspace_uri, params.session_id, params.line)
    return p.CommandResult(output=output)


def _command_word(line: str) -> str:
    words = line.split(maxsplit=1)
    return words[0] if words else ""


async def _run_line(
    ls: LecodeServer, workspace_uri: str | None, session_id: str | None, line: str
) -> tuple[str, p.UsageModel]:
    """One slash-command line, `/memory ...` or `/compact` (which needs the session): its
    output, and the usage of the provider calls it made."""
    word = _command_word(line)
    if word == "/memory":
        output = await run_command(ls, workspace_uri, line.strip(), session_id)
        return output, _usage_model(TurnUsage())
    if word != "/compact" or line.split() != ["/compact"]:
        raise InvalidParams(
            "line: the commands are /memory ... (/memory help lists them) and /compact",
            field="line",
        )
    if session_id is None:
        raise InvalidParams("sessionId: /compact needs the chat session", field="sessionId")
    params = sp.SessionParams.model_validate(
        {"sessionId": session_id, "workspaceUri": workspace_uri}
    )
    result = await session_compact(ls, params)
    if result.status == "compacted":
        covered = result.covered_through
        return (
            f"Compacted: the working summary now covers the transcript through seq {covered}.",
            result.usage,
        )
    return f"Not compacted ({result.status}): {result.message}", result.usage


async def provider_info(ls: LecodeServer, params: p.ProviderInfoParams) -> p.ProviderInfoResult:
    provider = ls.settings.provider
    variable = provider.api_key_env
    return p.ProviderInfoResult(
        configured=provider.base_url is not None,
        base_url=None if provider.base_url is None else _without_credentials(provider.base_url),
        model=provider.model,
        api_key_env=variable,
        api_key_set=bool(variable and os.environ.get(variable, "").strip()),
    )


def _without_credentials(url: str) -> str:
    """`url` with any `user:password@` taken out of it (a URL may carry a key that way)."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))


# --- history -----------------------------------------------------------------------------------

HISTORY_BLOCK = 500
"""Records read at a time, from the end, by `lecode/chat/history`."""

_EVENT_KINDS = {"memory", "error", "cancelled", "compact", "paused"}


async def chat_history(ls: LecodeServer, params: p.ChatHistoryParams) -> p.ChatHistoryResult:
    runtime, _ = await ls.runtime(params.workspace_uri)
    session_id = check_session_id(params.session_id)

    def read() -> tuple[list[dict[str, Any]], bool, UsageTotal]:
        # From the end backwards, a block at a time, until there are enough items: opening a
        # long session parses its tail, not its whole history.
        sessions = runtime.sessions
        end = sessions.length(session_id) - 1
        items: list[dict[str, Any]] = []
        while end >= 1 and len(items) <= params.limit:
            start = max(1, end - HISTORY_BLOCK + 1)
            got = sessions.read_range(session_id, start, end)
            block = [
                item
                for record in got.records
                if got.visibility.visible(record["seq"])
                for item in _items_or_none(record)
            ]
            items = block + items
            end = start - 1
        total = session_usage(sessions, session_id)
        return items[-params.limit :], len(items) > params.limit, total

    items, truncated, total = await asyncio.to_thread(read)
    return p.ChatHistoryResult(
        items=[p.ChatHistoryItem.model_validate(item) for item in items],
        truncated=truncated,
        usage=_usage_model(total),
    )


def _items_or_none(record: dict[str, Any]) -> list[dict[str, Any]]:
    """`_items`, or nothing for a record whose shape is not what lecode-ls writes (imported or
    hand-edited): history shows what it can and never fails on one record."""
    try:
        items = _items(record)
        for item in items:
            p.ChatHistoryItem.model_validate(item)
    except (KeyError, TypeError, AttributeError, ValueError):
        return []
    return items


def _items(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The chat items of one transcript record (an assistant message with tool calls is several)."""
    base = {"seq": record["seq"]}
    if record["kind"] == "event":
        kind = record["type"]
        if kind not in _EVENT_KINDS:
            return []
        base["turn_id"] = record.get("turn_id")
        if kind == "memory":
            facts = [
                {
                    "fact_id": f["fact_id"],
                    "revision": f["revision"],
                    **({"reason": str(f["reason"])} if f.get("reason") else {}),
                }
                for f in record["facts"]
            ]
            item = {**base, "kind": "memory", "facts": facts, "notes": record["notes"]}
            cut = record.get("cut")
            if isinstance(cut, list) and cut:
                item["cut"] = [
                    {"file": str(c["file"]), "bytes": int(c["bytes"]), "shown": int(c["shown"])}
                    for c in cut
                ]
            return [item]
        if kind == "compact":
            return [{**base, "kind": "compaction", "status": "compacted"}]
        if kind == "paused":
            return [{**base, "kind": "paused", "message": record.get("reason")}]
        if kind == "error":
            return [
                {
                    **base,
                    "kind": "error",
                    "message": record.get("message"),
                    "code": record.get("code"),
                }
            ]
        return [{**base, "kind": "cancelled"}]
    meta = record.get("meta") or {}
    base["turn_id"] = meta.get("turn_id")
    role, content = record["role"], record.get("content")
    text = content if isinstance(content, str) else None
    if role == "user":
        return [{**base, "kind": "user", "text": text or ""}]
    if role == "tool":
        return [
            {
                **base,
                "kind": "toolResult",
                "call_id": record.get("tool_call_id"),
                "name": record.get("name"),
                "output": text or "",
                "is_error": bool(meta.get("is_error")),
            }
        ]
    if role != "assistant":
        return []
    items = [{**base, "kind": "text", "text": text}] if text else []
    for call in record.get("tool_calls") or []:
        function = call.get("function", {})
        items.append(
            {
                **base,
                "kind": "toolCall",
                "call_id": call.get("id"),
                "name": function.get("name"),
                "arguments": function.get("arguments", ""),
            }
        )
    return items
