"""The memory tools as another agent sees them over MCP: which are offered, their bounded JSON
schemas, and one entry point that runs a call (T1-T4, T6, R1-R8 extended to MCP).

The tools are the chat tools (tools/memory.py), run by the same `dispatch` with the same caps,
labels and paging, plus `memory_doctor` (the memory's health, as `lecode/memory/doctor`),
`memory_team` (the team's shared facts, team.py), `memory_remember` (remember.py) and
`memory_remember_quote` (quote.py). Their schemas gain what an MCP client's arguments need and
the model's do not: a `maxLength` on every string and a `maximum` on every integer, enforced by
the same checker. Write-class tools are offered and run only when
`[mcp] allow` lists them (T4 for MCP: there is no person to ask, so "ask" is "deny"). Nothing here
imports the MCP SDK: app.py wires this to it. Blocking: call `call_tool` from a worker thread.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

from lecode_ls.config import Settings
from lecode_ls.errors import InvalidParams, LecodeError, PermissionDenied
from lecode_ls.mcp.quote import MAX_QUOTE_CHARS, remember_quote
from lecode_ls.mcp.remember import Exchange, remember_verified
from lecode_ls.mcp.team import TEAM, team_facts
from lecode_ls.memory.doctor import diagnose
from lecode_ls.memory.facts import MAX_TEXT_BYTES
from lecode_ls.memory.notes import MAX_FILE_BYTES
from lecode_ls.runtime import Runtime
from lecode_ls.tools.memory import (
    SPECS,
    ToolResult,
    ToolSpec,
    check_arguments,
    dispatch,
    error_result,
)
from lecode_ls.tools.permissions import PermissionPolicy
from lecode_ls.tools.read import MAX_LINE_CHARS

MAX_PATH_CHARS = 1024
MAX_INT = 2**31 - 1
MAX_QUERY_TEXT = 262_144  # memory_list's query; the store reads its first 16,384 characters
# The longest string each argument may be, in characters (JSON Schema's maxLength).
STRING_LIMITS = {
    "file": 300,
    "content": MAX_FILE_BYTES,
    "search": MAX_FILE_BYTES,
    "replace": MAX_FILE_BYTES,
    "pattern": 1000,
    "session_id": 64,
    "text": MAX_TEXT_BYTES,
    "path": MAX_PATH_CHARS,
    "line": MAX_LINE_CHARS,
    "query": MAX_QUERY_TEXT,
    "quote": MAX_QUOTE_CHARS,
}

REMEMBER = ToolSpec(
    "memory_remember",
    "Remember a verified project fact: that the workspace file `path` (relative to the project "
    "folder this server runs in) contains the exact line `line`. The server reads the file itself now and "
    'refuses a line it does not find; the fact is stored as `path contains "line"`, with the '
    "server's read as its evidence and anchored to that line, so it shows its drift when the code "
    "changes. Nothing else can be remembered over MCP. Returns JSON {fact_id, revision, text, "
    "line_number, session_id}.",
    {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "a file path relative to the checkout root"},
            "line": {
                "type": "string",
                "description": "one whole line of the file, exactly, without its end of line",
            },
        },
        "required": ["path", "line"],
        "additionalProperties": False,
    },
    "write",
)
DOCTOR = ToolSpec(
    "memory_doctor",
    "The project memory's health, each number with the fact IDs behind it (the first 50): facts "
    "by status (valid, retired, missing, stale, hidden, unverified), facts with drifted or "
    "all-deleted code anchors, duplicates, facts never used, proposed retirements and "
    "corrections, and MEMORY.md and the scratchpad against their share of the injected memory "
    "(bytes, shown, cut). Returns JSON; what `lecode/memory/doctor` answers an editor.",
    {"type": "object", "properties": {}, "required": [], "additionalProperties": False},
    "read",
)
QUOTE = ToolSpec(
    "memory_remember_quote",
    "Remember a project fact in the person's own words to you: `quote` is what the person "
    "said, exactly as they typed it (a part of one of their messages in this session or a recent "
    'one: quote the whole convention, such as "Release builds go out on Fridays"), and it '
    "becomes the fact's text, never a paraphrase (`text`, if given, must equal `quote`). The "
    "server finds `quote` verbatim in the project's followed transcripts ([agents] follow) and "
    "remembers it with that message as its evidence only when exactly one message holds it and "
    "it is the person's (a user message); otherwise no fact, and the error says why. Returns "
    "JSON {fact_id, revision, text, session_id, seq, origin}.",
    {
        "type": "object",
        "properties": {
            "quote": {
                "type": "string",
                "description": "the person's exact words, verbatim: the fact's text (12 "
                "characters or more, at most 512 UTF-8 bytes)",
            },
            "text": {
                "type": "string",
                "description": "optional: the same words as quote (the fact's text is the quote)",
            },
        },
        "required": ["quote"],
        "additionalProperties": False,
    },
    "write",
)
ALL_SPECS: tuple[ToolSpec, ...] = (*SPECS, DOCTOR, TEAM, REMEMBER, QUOTE)
BY_NAME = {spec.name: spec for spec in ALL_SPECS}
WRITE_TOOLS = tuple(spec.name for spec in ALL_SPECS if spec.tool_class == "write")


def bounded(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with a maxLength on every string and a maximum on every integer (recursively)."""
    out = copy.deepcopy(schema)

    def walk(node: dict[str, Any], name: str) -> None:
        kind = node.get("type")
        if kind == "string" and "enum" not in node:
            node.setdefault("maxLength", STRING_LIMITS.get(name, 256))
        elif kind == "integer":
            node.setdefault("maximum", MAX_INT)
        elif kind == "array":
            node.setdefault("maxItems", 200)
            walk(node["items"], name)
        for key, child in node.get("properties", {}).items():
            walk(child, key)

    walk(out, "")
    return out


@dataclass(frozen=True)
class McpTool:
    """One tool as listed over MCP."""

    name: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool


_TOOLS = {spec.name: bounded(spec.parameters) for spec in ALL_SPECS}


def schema_of(name: str) -> dict[str, Any]:
    """The input schema tool `name` is listed and checked with."""
    return copy.deepcopy(_TOOLS[name])


def offered(settings: Settings) -> list[McpTool]:
    """The tools to list: none when memory is disabled (K1); the read-class ones; and each
    write-class one that `[mcp] allow` lists (memory_remember_quote also only while
    `[agents] follow` names an agent)."""
    if not settings.memory.enabled:
        return []
    allowed = set(settings.mcp.allow)
    if not settings.agents.follow:
        allowed.discard(QUOTE.name)
    return [
        McpTool(spec.name, spec.description, _TOOLS[spec.name], spec.tool_class == "read")
        for spec in ALL_SPECS
        if spec.tool_class == "read" or spec.name in allowed
    ]


def refuse_unless_allowed(name: str, settings: Settings) -> None:
    """PermissionDenied naming the rule when `[mcp] allow` does not list the write tool `name`."""
    if name in WRITE_TOOLS and name not in settings.mcp.allow:
        raise PermissionDenied(
            f"{name}: not allowed over MCP; the person allows it by listing it in config.toml's "
            '[mcp] allow (e.g. allow = ["' + name + '"])'
        )


def call_tool(runtime: Runtime, exchange: Exchange, name: str, arguments: object) -> ToolResult:
    """Run one MCP tool call; every failure the client can cause is an error result whose
    content is JSON {error: code, message} naming the argument or rule at fault."""
    try:
        spec = BY_NAME.get(name)
        if spec is None:
            raise InvalidParams(f"name: there is no memory tool {name[:80]!r}", field="name")
        settings = runtime.settings
        refuse_unless_allowed(name, settings)
        args = check_arguments(
            ToolSpec(spec.name, spec.description, _TOOLS[name], spec.tool_class),
            {} if arguments is None else arguments,
        )
        if name == REMEMBER.name:
            runtime.require_facts()
            return remember_verified(runtime, exchange, args["path"], args["line"])
        if name == DOCTOR.name:
            sessions, _ = runtime.require_facts()
            return ToolResult(json.dumps(diagnose(runtime, sessions), ensure_ascii=False))
        if name == TEAM.name:
            runtime.require_facts()
            return team_facts(runtime, exchange.folder, args)
        if name == QUOTE.name:
            runtime.require_facts()
            return remember_quote(runtime, exchange, args["quote"], args.get("text"))
        policy = PermissionPolicy({tool: "allow" for tool in settings.mcp.allow}, default="deny")
        return dispatch(runtime, name, args, policy=policy, readonly=False, child=False)
    except LecodeError as error:
        return error_result(error)
