"""The records of a session transcript: session IDs, kind codes, and the checks on records.

A stored record (S1) is a JSON object with a `seq` and a `kind`: line 0 is the `session` header,
every other line a `message` or an `event`. `check_stored` checks the few fields every stored line
must have; `check_new_record` checks the full schema once, before a record is written. The file
that holds them, its index and its locking live in transcript.py.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping
from typing import Any

from lecode_ls.errors import InvalidParams, InvalidSessionId
from lecode_ls.memory.canonical import canonical_json

_SESSION_ID = re.compile(r"[0-9]{8}T[0-9]{6}Z-[0-9a-f]{8}")

# Kind codes, stored in the top byte of each index entry. 0 is never valid, so an index entry
# zero-filled by a power loss is noticed. 1 is no longer valid either: it was HEADER's code
# before USAGE existed, so an index from then (usage events under EVENT) is rebuilt once.
USER, MESSAGE, EVENT, UNDO, REDO, CLEAR, COMPACT, LEARNING, DISMISSED, HEADER, USAGE = range(2, 13)
CODES = bytes(range(2, 13))
VISIBILITY_CODES = frozenset({UNDO, REDO, CLEAR})
_EVENT_CODES = {"undo": UNDO, "redo": REDO, "clear": CLEAR}
# Events that readers look for get a code of their own, so they are found from the index without
# parsing the transcript: working summaries (the working view), learning outcomes and proposal
# dismissals (the latest learning status, on every fact list), and the other records of a
# provider call's usage (the session's usage total, C10). A new code renumbers HEADER, so that
# indexes written before it (the events under EVENT) are rebuilt.
_INDEXED_EVENTS = {
    **_EVENT_CODES,
    "compact": COMPACT,
    "learning": LEARNING,
    "proposal_dismissed": DISMISSED,
    "usage": USAGE,
    "discarded": USAGE,
    "memory_usage": USAGE,
}
ROLES = frozenset({"user", "assistant", "tool", "system"})


def check_session_id(text: object, field: str = "sessionId") -> str:
    """Return `text` if it is exactly a session ID, else raise `InvalidSessionId` naming `field`.

    A session ID is its creation time in UTC and 8 random hex digits,
    `YYYYMMDDTHHMMSSZ-xxxxxxxx`. Nothing else resolves to a session: not a path, a prefix, a
    title or an alias (S4), so a session can only be named by someone who was given its ID.
    """
    if isinstance(text, str) and _SESSION_ID.fullmatch(text):
        return text
    shown = repr(text) if isinstance(text, str) and len(text) <= 60 else "the value"
    raise InvalidSessionId(
        f"{field}: {shown} is not a session ID; expected the exact form "
        "YYYYMMDDTHHMMSSZ-xxxxxxxx (paths, prefixes and names are not accepted)",
        field=field,
    )


def new_session_id(created: str) -> str:
    """A fresh ID for a session created at `created` (ISO 8601 UTC, `YYYY-MM-DDTHH:MM:SSZ`)."""
    stamp = created.replace("-", "").replace(":", "")
    return f"{stamp}-{secrets.token_hex(4)}"


def kind_code(record: dict[str, Any]) -> int:
    """The index code of a record whose structure `check_stored` accepted."""
    kind = record["kind"]
    if kind == "session":
        return HEADER
    if kind == "message":
        return USER if record["role"] == "user" else MESSAGE
    return _INDEXED_EVENTS.get(record["type"], EVENT)


class Damage(Exception):
    """A line that does not hold the record its position promises."""


def check_stored(record: object, seq: int, session_id: str) -> int:
    """Check the structure every stored record must have at `seq`; return its kind code.

    Raises `Damage`. Only the fields that lines are located and hidden by are checked here;
    the full schema of new records is checked once, before they are written
    (`check_new_record`).
    """
    if not isinstance(record, dict):
        raise Damage(f"line {seq} is not a JSON object")
    if type(record.get("seq")) is not int or record["seq"] != seq:
        raise Damage(f"line {seq} holds seq {record.get('seq')!r}")
    kind = record.get("kind")
    if seq == 0:
        if kind != "session" or record.get("id") != session_id:
            raise Damage("line 0 is not the header of this session")
    elif kind == "message":
        if record.get("role") not in ROLES:
            raise Damage(f"line {seq} has no valid role")
    elif kind == "event":
        if not isinstance(record.get("type"), str):
            raise Damage(f"line {seq} has no event type")
    else:
        raise Damage(f"line {seq} has kind {kind!r}")
    return kind_code(record)


# -- the schema of new records ---------------------------------------------------------------


def _bad(where: str, message: str) -> InvalidParams:
    return InvalidParams(f"{where}: {message}", field=where)


def _check_message(record: dict[str, Any], where: str) -> None:
    role = record.get("role")
    if role not in ROLES:
        raise _bad(f"{where}.role", "expected one of assistant, system, tool, user")
    content = record.get("content")
    if isinstance(content, list):
        for index, part in enumerate(content):
            if not isinstance(part, dict) or not isinstance(part.get("type"), str):
                raise _bad(f"{where}.content[{index}]", "expected a content part with a type")
    elif content is not None and not isinstance(content, str):
        raise _bad(f"{where}.content", "expected a string, an array of content parts, or null")
    calls = record.get("tool_calls")
    if calls is not None:
        if role != "assistant" or not isinstance(calls, list):
            raise _bad(f"{where}.tool_calls", "expected an array, on an assistant message")
        for index, call in enumerate(calls):
            function = call.get("function") if isinstance(call, dict) else None
            if (
                not isinstance(call, dict)
                or not isinstance(call.get("id"), str)
                or not isinstance(function, dict)
                or not isinstance(function.get("name"), str)
            ):
                raise _bad(f"{where}.tool_calls[{index}]", "expected {id, function: {name}}")
    if role == "tool" and not isinstance(record.get("tool_call_id"), str):
        raise _bad(f"{where}.tool_call_id", "a tool message needs the ID of its call")
    for key in ("tool_call_id", "name"):
        if key in record and not isinstance(record[key], str):
            raise _bad(f"{where}.{key}", "expected a string")
    if "meta" in record and not isinstance(record["meta"], dict):
        raise _bad(f"{where}.meta", "expected an object")


def check_new_record(
    record: object, where: str, *, seq: int | None, imported: bool
) -> dict[str, Any]:
    """Check a record about to be written; return a copy ready to store. Errors name `where`.

    `seq` None (an append): the record must not carry `seq`; the store assigns it. Otherwise
    (an import) a carried `seq` must equal `seq`, and the copy gets it. `imported` also lets a
    record without `kind` stand for an OpenAI message, and lets undo/redo/clear events through
    (their references are checked by replaying them); an append gets those only from the store's
    undo, redo and clear methods.
    """
    if not isinstance(record, Mapping):
        raise _bad(where, "expected a JSON object")
    copy = dict(record)
    if "kind" not in copy and imported:
        if "seq" in copy:
            raise _bad(f"{where}.kind", "a record with a seq needs its kind")
        copy["kind"] = "message"
    if seq is None:
        if "seq" in copy:
            raise _bad(f"{where}.seq", "seqs are assigned by the store")
    else:
        if "seq" in copy and (type(copy["seq"]) is not int or copy["seq"] != seq):
            raise _bad(
                f"{where}.seq",
                f"{copy['seq']!r} is not the position {seq} it lands at; import a whole transcript",
            )
        copy["seq"] = seq
    kind = copy.get("kind")
    if kind == "message":
        _check_message(copy, where)
    elif kind == "event":
        kind_of_event = copy.get("type")
        if not isinstance(kind_of_event, str) or not kind_of_event:
            raise _bad(f"{where}.type", "expected the event's type, a non-empty string")
        if kind_of_event in _EVENT_CODES and not imported:
            raise _bad(f"{where}.type", f"{kind_of_event} events are written by {kind_of_event}()")
    elif kind == "session":
        raise _bad(f"{where}.kind", "a session header is only the first record of a transcript")
    else:
        raise _bad(f"{where}.kind", 'expected "message" or "event"')
    try:
        canonical_json(copy)
    except (TypeError, ValueError) as error:
        raise _bad(where, str(error).removeprefix("canonical_json: ")) from None
    return copy


def well_formed_calls(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool calls of an assistant record that have an ID and a function name; a hand-edited
    or imported record may hold anything, and what is malformed is left out, not fatal."""
    calls = record.get("tool_calls")
    if not isinstance(calls, list):
        return []
    return [
        call
        for call in calls
        if isinstance(call, dict)
        and isinstance(call.get("id"), str)
        and isinstance(call.get("function"), dict)
        and isinstance(call["function"].get("name"), str)
    ]


def has_authored_text(record: Mapping[str, Any]) -> bool:
    """Whether a stored record is a user or assistant message that holds text of its author's
    (F6: what a fact may cite): not a user record another agent wrote (`agent_injected`).
    Content is a string or a list of OpenAI content parts, one level: a part whose `text` is not
    a string holds none, so a crafted record nested thousands of levels deep costs one look at
    its parts, never a recursion."""
    if record.get("kind") != "message" or record.get("role") not in ("user", "assistant"):
        return False
    content = record.get("content")
    if isinstance(content, str):
        return bool(content.strip()) and not agent_injected(record)
    return (
        isinstance(content, list)
        and any(
            isinstance(part, dict)
            and part.get("type") == "text"
            and isinstance(part.get("text"), str)
            and bool(part["text"].strip())
            for part in content
        )
        and not agent_injected(record)
    )


# User-role messages Codex writes itself: the environment, and the project's AGENTS.md it gives
# the model (`<user_instructions>` in older releases, a message headed `# AGENTS.md instructions
# for <dir>` in current ones).
CODEX_INJECTED = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions for ")
# Blocks Claude Code writes into the user's turn: reminders, a slash command's invocation and
# expansion, a local (`!`) command's output. Not the person's words, whatever they say.
CLAUDE_INJECTED = (
    "system-reminder",
    "command-name",
    "command-message",
    "command-args",
    "command-contents",
    "local-command-stdout",
    "local-command-stderr",
    "local-command-caveat",
    "bash-stdout",
    "bash-stderr",
)
CLAUDE_OPENING = re.compile("<(" + "|".join(CLAUDE_INJECTED) + ")>")


def agent_injected(record: Mapping[str, Any]) -> bool:
    """Whether `record` is a user message another agent's transcript gave whose text that agent
    wrote (Codex's AGENTS.md and environment, Claude Code's reminders and command output): never
    the person's words. Conversion leaves such text out; this catches records imported before it
    did, for the checks that take a user message as the person's (A4, F6, memory_remember_quote)."""
    meta = record.get("meta")
    origin = meta.get("origin") if isinstance(meta, dict) else None
    if record.get("role") != "user" or not isinstance(origin, dict):
        return False
    if origin.get("agent") not in ("claude-code", "codex"):
        return False
    content = record.get("content")
    texts = [content] if isinstance(content, str) else []
    if isinstance(content, list):
        texts = [
            p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)
        ]
    return any(
        t.lstrip().startswith(CODEX_INJECTED) or CLAUDE_OPENING.search(t) is not None for t in texts
    )
