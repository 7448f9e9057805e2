"""Claude Code session JSONL and Codex CLI rollout JSONL, as lecode session records.

Every user and assistant message and every tool call and result is kept verbatim, as an
OpenAI-style message (what `SessionStore.import_records` and `append` take: the one way text
enters a transcript, where redaction applies), with where it came from in `meta.origin`:
`{"agent", "file", "line", "id"}` (`id`: Claude Code's record `uuid`; a Codex line has none, and
carries `digest`, the SHA-256 of its bytes, instead).

Formats, as their public schemas and parsers describe them (docs/agents/transcripts.md):

- Claude Code (2.0.x, 2.1.x): one JSON object a line; `type` "user" or "assistant" carries
  `uuid`, `parentUuid`, `sessionId`, `cwd`, `version`, `isSidechain` and `message` {role,
  content}: a string, or blocks `text`, `tool_use` {id, name, input} (assistant),
  `tool_result` {tool_use_id, content} (user), `thinking`, `image`. Other types (`summary`,
  `system`, `file-history-snapshot`, `queue-operation`) hold no message.
- Codex CLI rollouts (0.x `RolloutLine`): `{timestamp, type, payload}`; `session_meta` {id, cwd,
  cli_version, ...} first, then `response_item` payloads `message` {role, content: [input_text |
  output_text]}, `function_call` {name, arguments, call_id}, `function_call_output` {call_id,
  output}, `custom_tool_call`/`custom_tool_call_output`, `local_shell_call`, `reasoning`;
  `event_msg` and `turn_context` repeat or describe what response items hold.

Hostile input: every line is bounded (MAX_LINE_BYTES), a line that is not JSON, a record of an
unknown type or shape, a duplicate (the same uuid, or the same bytes), a sidechain (a sub-agent's
conversation), text the agent itself put in the user's turn (Claude Code's `isMeta` records and its
`<system-reminder>`, `<command-...>` and local-command output blocks, Codex's
`<environment_context>`, `<user_instructions>` and `# AGENTS.md instructions for` messages: not
the person's words, so never evidence of their preferences; `agent_injected` tells records an
earlier import kept) or a
record whose `cwd` is outside the project is skipped, and each skip is
counted with its reason (`Converted.skipped`). Nothing here raises on bad records; a file with
no record of either format is `NotATranscript`.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from lecode_ls.memory.sessions import CLAUDE_OPENING, CODEX_INJECTED
from lecode_ls.platform.paths import canonical, is_within

Agent = Literal["claude-code", "codex"]
AGENTS: tuple[Agent, ...] = ("claude-code", "codex")
MAX_LINE_BYTES = 8 * 1024 * 1024
"""A longer line (a pasted file, an image) is skipped, never decoded."""
_CLAUDE_SKIPPED = {"summary", "system", "file-history-snapshot", "queue-operation"}
_CODEX_SKIPPED = {"event_msg", "turn_context", "compacted"}


class NotATranscript(Exception):
    """No line is a Claude Code or Codex record (the message says what it looked like)."""


@dataclass
class Converted:
    agent: Agent
    records: list[dict[str, Any]] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    session: str | None = None  # the agent's own session ID
    cwd: str | None = None  # the folder the agent ran in (Codex: session_meta; Claude: records)
    version: str | None = None


def without_injected(text: str) -> tuple[str, list[str]]:
    """`text` without the blocks Claude Code writes into the user's turn, and the names of those
    removed. Linear: each block's end is searched once, and an unclosed block runs to the end."""
    removed: list[str] = []
    parts: list[str] = []
    at = 0
    while (opening := CLAUDE_OPENING.search(text, at)) is not None:
        tag = opening.group(1)
        removed.append(tag)
        parts.append(text[at : opening.start()])
        close = text.find(f"</{tag}>", opening.end())
        at = len(text) if close < 0 else close + len(tag) + 3
    if not removed:
        return text, removed
    parts.append(text[at:])
    return "".join(parts).strip(), removed


def cwd_within(cwd: str, folders: list[Path]) -> bool:
    """Whether the folder a record claims (`cwd`, text from the file) is inside one of
    `folders`; False for text that names no path on this system: a NUL, or a lone surrogate
    (JSON's `\\ud800`), which no file system encoding can spell."""
    try:
        return "\x00" not in cwd and any(is_within(canonical(cwd), f) for f in folders)
    except (UnicodeError, ValueError, OSError):
        return False


def detect(lines: Iterable[bytes]) -> Agent | None:
    """Which agent wrote these lines: the first line that is a record of either decides."""
    for line in lines:
        record = _decode(line)
        if not isinstance(record, dict):
            continue
        if isinstance(record.get("payload"), dict) and isinstance(record.get("type"), str):
            return "codex"
        if record.get("type") in ("user", "assistant") and isinstance(record.get("message"), dict):
            return "claude-code"
        if record.get("type") in _CLAUDE_SKIPPED:
            return "claude-code"
    return None


def convert(
    lines: Iterable[tuple[int, bytes]],
    agent: Agent,
    file: str,
    *,
    within: Callable[[str], bool] | None = None,
    seen: set[str] | None = None,
) -> Converted:
    """The records of `lines` (`(line number, bytes)`, 1-based) written by `agent`.

    `within(cwd)`: whether a record's folder belongs to the project (None: not checked).
    `seen`: identities already imported (uuids, or line digests for Codex), updated in place, so
    a follower never imports a record twice."""
    out = Converted(agent)
    seen = set() if seen is None else seen
    for number, line in lines:
        if len(line) > MAX_LINE_BYTES:
            out.skipped["line too long"] += 1
            continue
        if not line.strip():
            continue
        record = _decode(line)
        if not isinstance(record, dict):
            out.skipped["not a JSON object"] += 1
            continue
        if agent == "claude-code":
            identity = record.get("uuid")
            key = identity if isinstance(identity, str) and identity else None
        else:
            key = "sha256:" + hashlib.sha256(line.strip()).hexdigest()
        if key is not None and key in seen:
            out.skipped["duplicate"] += 1
            continue
        origin: dict[str, Any] = {"agent": agent, "file": file, "line": number}
        if agent == "claude-code":
            origin["id"] = key
        else:
            origin["digest"] = key  # a Codex line has no ID of its own
        made = (_claude if agent == "claude-code" else _codex)(record, origin, out, within)
        if made is None:
            continue
        if key is not None:
            seen.add(key)
        out.records.extend(made)
    return out


def _decode(line: bytes) -> object:
    try:
        return json.loads(line)
    except (ValueError, RecursionError):
        return None


def _message(role: str, origin: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {"kind": "message", "role": role, **fields, "meta": {"origin": origin}}


def _text_parts(blocks: list[Any], kinds: tuple[str, ...]) -> list[dict[str, str]]:
    return [
        {"type": "text", "text": block["text"]}
        for block in blocks
        if isinstance(block, dict)
        and block.get("type") in kinds
        and isinstance(block.get("text"), str)
    ]


def _claude(
    record: dict[str, Any],
    origin: dict[str, Any],
    out: Converted,
    within: Callable[[str], bool] | None,
) -> list[dict[str, Any]] | None:
    kind = record.get("type")
    if kind in _CLAUDE_SKIPPED:
        out.skipped[f"{kind} record"] += 1
        return None
    message = record.get("message")
    if kind not in ("user", "assistant") or not isinstance(message, dict):
        out.skipped["unknown record type"] += 1
        return None
    if record.get("isMeta") is True:  # text Claude Code itself put in the user's turn
        out.skipped["meta record (not the person's words)"] += 1
        return None
    if record.get("isSidechain") is True:
        out.skipped["sidechain (a sub-agent's conversation)"] += 1
        return None
    cwd = record.get("cwd")
    if isinstance(cwd, str):
        if within is not None and not within(cwd):
            out.skipped["another project"] += 1
            return None
        out.cwd = out.cwd or cwd
    if isinstance(record.get("sessionId"), str):
        out.session = out.session or record["sessionId"]
    if isinstance(record.get("version"), str):
        out.version = record["version"]
    content = message.get("content")
    if kind == "user":
        content = _persons(content, out)
    if isinstance(content, str):
        if not content:
            return None  # only what Claude Code wrote into the turn (counted by _persons)
        return [_message(kind, origin, content=content)]
    if not isinstance(content, list):
        out.skipped["unknown message shape"] += 1
        return None
    made: list[dict[str, Any]] = []
    if kind == "user":
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                call_id = block.get("tool_use_id")
                result = block.get("content")
                if not isinstance(call_id, str):
                    out.skipped["tool result without its call"] += 1
                    continue
                text = (
                    result
                    if isinstance(result, str)
                    else _text_parts(result if isinstance(result, list) else [], ("text",))
                    or json.dumps(result, ensure_ascii=False)
                )
                made.append(_message("tool", origin, tool_call_id=call_id, content=text))
        parts = [p for p in _text_parts(content, ("text",)) if p["text"]]
        if parts:
            made.insert(0, _message("user", origin, content=parts))
        elif not made and any(isinstance(b, dict) and b.get("type") == "text" for b in content):
            return None  # only what Claude Code wrote into the turn (counted by _persons)
    else:
        parts = _text_parts(content, ("text",))
        calls = [
            {
                "id": block["id"],
                "type": "function",
                "function": {
                    "name": block["name"],
                    "arguments": json.dumps(block.get("input"), ensure_ascii=False),
                },
            }
            for block in content
            if isinstance(block, dict)
            and block.get("type") == "tool_use"
            and isinstance(block.get("id"), str)
            and isinstance(block.get("name"), str)
        ]
        if parts or calls:
            fields: dict[str, Any] = {"content": parts or None}
            if calls:
                fields["tool_calls"] = calls
            made.append(_message("assistant", origin, **fields))
    if not made:
        out.skipped["no text or tool call (thinking, images)"] += 1
        return None
    return made


def _persons(content: object, out: Converted) -> object:
    """A Claude Code user message's content without the blocks Claude Code wrote into the turn
    (each counted in `out.skipped`): a string, or its text blocks, emptied where nothing is left."""
    if isinstance(content, str):
        kept, removed = without_injected(content)
        _count_injected(removed, out)
        return kept
    if not isinstance(content, list):
        return content
    blocks: list[Any] = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "text":
            text = block.get("text")
            if isinstance(text, str):
                kept, removed = without_injected(text)
                _count_injected(removed, out)
                block = {**block, "text": kept}
        blocks.append(block)
    return blocks


def _count_injected(removed: list[str], out: Converted) -> None:
    for tag in removed:
        out.skipped[f"<{tag}> Claude Code wrote into the user's turn (not the person's words)"] += 1


def _codex(
    record: dict[str, Any],
    origin: dict[str, Any],
    out: Converted,
    within: Callable[[str], bool] | None,
) -> list[dict[str, Any]] | None:
    kind, payload = record.get("type"), record.get("payload")
    if not isinstance(payload, dict):
        out.skipped["unknown record type"] += 1
        return None
    if kind == "session_meta":
        cwd = payload.get("cwd")
        if isinstance(cwd, str):
            out.cwd = cwd
        if isinstance(payload.get("id"), str):
            out.session = payload["id"]
        if isinstance(payload.get("cli_version"), str):
            out.version = payload["cli_version"]
        out.skipped["session_meta record"] += 1
        return None
    if kind in _CODEX_SKIPPED:
        out.skipped[f"{kind} record"] += 1
        return None
    if kind != "response_item":
        out.skipped["unknown record type"] += 1
        return None
    if within is not None and (out.cwd is None or not within(out.cwd)):
        out.skipped["another project"] += 1
        return None
    item = payload.get("type")
    if item == "message":
        role = payload.get("role")
        content = payload.get("content")
        if role not in ("user", "assistant") or not isinstance(content, list):
            out.skipped[
                f"{role} message" if isinstance(role, str) else "unknown message shape"
            ] += 1
            return None
        parts = _text_parts(content, ("input_text", "output_text"))
        if not parts:
            out.skipped["no text (images)"] += 1
            return None
        if role == "user" and parts[0]["text"].lstrip().startswith(CODEX_INJECTED):
            out.skipped["context Codex adds to the user's turn (not the person's words)"] += 1
            # (its environment, or the project's AGENTS.md: a cloned repository's text)
            return None
        return [_message(role, origin, content=parts)]
    if item in ("function_call", "custom_tool_call", "local_shell_call"):
        call_id = payload.get("call_id") or payload.get("id")
        name = payload.get("name") if item != "local_shell_call" else "local_shell"
        if not isinstance(call_id, str) or not isinstance(name, str):
            out.skipped["tool call without an ID or name"] += 1
            return None
        arguments = payload.get("arguments", payload.get("input", payload.get("action")))
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False)
        call = {
            "id": call_id,
            "type": "function",
            "function": {"name": name, "arguments": arguments},
        }
        return [_message("assistant", origin, content=None, tool_calls=[call])]
    if item in ("function_call_output", "custom_tool_call_output"):
        call_id = payload.get("call_id")
        output = payload.get("output")
        if not isinstance(call_id, str):
            out.skipped["tool result without its call"] += 1
            return None
        text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
        return [_message("tool", origin, tool_call_id=call_id, content=text)]
    out.skipped[f"{item} item" if isinstance(item, str) else "unknown record type"] += 1
    return None
