"""What of a transcript is sent back to the provider: its visible messages as Chat Completions
messages, well formed whatever the transcript holds (every call answered, no orphan result, no
call cut off halfway)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from lecode_ls.memory.sessions import well_formed_calls

NO_RESULT = "[no result: the turn ended before this tool call ran]"


def replay(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The Chat Completions messages of visible transcript records, in order.

    Only messages are replayed (events are the transcript's own bookkeeping). The request must be
    well formed whatever the transcript holds: a tool result whose call is not in the history
    (hidden by an undo) is dropped, and a call without a result (a cancelled turn) gets a
    placeholder result, as every API requires one result per call. A call whose arguments are
    not a complete JSON object (an answer cut off at its token cap, recorded so by versions
    before issue 31) is never replayed, nor its result: a server may refuse every request that
    holds one (llama-server answered HTTP 500 to each).
    """
    messages: list[dict[str, Any]] = []
    open_calls: list[str] = []

    def close_calls() -> None:
        for call_id in open_calls:
            messages.append({"role": "tool", "tool_call_id": call_id, "content": NO_RESULT})
        open_calls.clear()

    for record in records:
        if record.get("kind") != "message":
            continue
        role = record["role"]
        if role == "tool":
            call_id = record.get("tool_call_id")
            if call_id not in open_calls:
                continue
            open_calls.remove(call_id)
            messages.append(
                {"role": "tool", "tool_call_id": call_id, "content": record.get("content")}
            )
            continue
        close_calls()
        message: dict[str, Any] = {"role": role, "content": record.get("content")}
        calls = replayable_calls(record) if role == "assistant" else []
        if calls:
            message["tool_calls"] = calls
            open_calls.extend(call["id"] for call in calls)
        elif role == "assistant" and not record.get("content"):
            continue  # nothing to say: a call cut off alone (an older version recorded it)
        messages.append(message)
    close_calls()
    return messages


def complete_arguments(arguments: object) -> bool:
    """Whether a call's arguments are a complete JSON object ("" counts as `{}`, as the tools
    read it)."""
    if not isinstance(arguments, str):
        return False
    if not arguments.strip():
        return True
    try:
        return isinstance(json.loads(arguments), dict)
    except (ValueError, RecursionError):
        return False


def replayable_calls(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The calls of an assistant record that may be sent back to a provider: well formed, with
    complete JSON arguments ("" sent as "{}")."""
    calls = []
    for call in well_formed_calls(record):
        arguments = call["function"].get("arguments", "")
        if not complete_arguments(arguments):
            continue
        if not arguments.strip():
            call = {**call, "function": {**call["function"], "arguments": "{}"}}
        calls.append(call)
    return calls
