"""`memory_remember` over MCP: a project fact another agent asks for, verified by the server itself.

An agent connected over MCP has no lecode transcript to cite, so the evidence contract (F6, A5)
is met the only way the server can meet it alone: it reads the workspace file now and remembers
only `path contains "exact line"` when that exact line is there. The exchange is recorded as a
lecode transcript, one session per MCP connection titled "MCP: <client name>":

    user       the request: `memory_remember {"path": ..., "line": ...}` (meta: the client)
    assistant  a call of the `read` tool: {"path": path, "start_line": n}
    tool       the read tool's own numbered output of line n (tools/read.py's shape)
    assistant  the fact text, confirming what the read showed

These four records are the fact's SourceRef (validated by `validate_source` like any other), the
`read` gives the code anchor (memory/anchors/capture.py), and recall-to-source, provenance, forget and
exclusions work as for a fact learned in chat. Refusals name the rule. Blocking.
"""

from __future__ import annotations

import json
import posixpath
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lecode_ls.actions import facts
from lecode_ls.errors import InvalidParams, NotFound, PermissionDenied, SessionNotFound
from lecode_ls.memory.facts import check_text
from lecode_ls.memory.sessions import MCP_PREFIX, SourceRef
from lecode_ls.runtime import Runtime
from lecode_ls.tools.memory import ToolResult
from lecode_ls.tools.read import find_line, read_workspace_file, secret_match

MAX_CLIENT_CHARS = 80
_RULE = 'memory_remember remembers only `path contains "exact line"` that the server reads now'


@dataclass
class Exchange:
    """One MCP connection: its project folder (paths are relative to it), the client's name, and
    the transcript its remembers are recorded in (created by the first one)."""

    folder: Path
    client: str = "unknown client"
    session_id: str | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def title(self) -> str:
        name = " ".join(self.client.split())[:MAX_CLIENT_CHARS] or "unknown client"
        return f"{MCP_PREFIX}{name}"


def check_fact_path(path: str) -> str:
    """`path` if it can be the path of a verified fact: relative, in normal form, with no
    whitespace or quote (the fact's text `path contains "line"` must parse back, A5)."""
    if not path or any(c.isspace() or c in '"\\\x00' for c in path):
        raise InvalidParams(
            "path: a verified fact's path has no spaces, quotes or backslashes", field="path"
        )
    if path.startswith("/") or path != posixpath.normpath(path) or path.split("/")[0] == "..":
        raise InvalidParams(
            f"path: give a relative path in normal form (like src/app.py), not {path[:80]!r}",
            field="path",
        )
    return path


def remember_verified(runtime: Runtime, exchange: Exchange, path: str, line: str) -> ToolResult:
    """Verify that `path` holds `line` now, record the exchange, remember the fact with that
    evidence and its anchor. Raises LecodeError naming the argument or rule at fault."""
    check_fact_path(path)
    if "\n" in line or "\r" in line or not line.strip():
        raise InvalidParams("line: one non-blank line of the file, without its end", field="line")
    folder = exchange.folder
    secret = secret_match(folder, path, runtime.settings.agent.secret_files)
    if secret is not None:
        raise PermissionDenied(
            f"path: {secret} usually holds credentials; memory_remember never reads it "
            "([agent] secret_files)",
            field="path",
        )
    text = check_text(f"{path} contains {json.dumps(line, ensure_ascii=False)}")
    number = find_line(folder, path, line)
    if number is None:
        raise NotFound(f"line: not found in {path} as one whole line; {_RULE}", field="line")
    shown = read_workspace_file(folder, path, start_line=number, max_lines=1)
    generation = runtime.facts.generation()
    meta = {"mcp_client": exchange.client[:MAX_CLIENT_CHARS], "generation": generation}
    arguments = {"path": path, "start_line": number}
    records: list[dict[str, Any]] = [
        {
            "kind": "message",
            "role": "user",
            "content": "memory_remember " + json.dumps({"path": path, "line": line}),
            "meta": {"mcp_client": meta["mcp_client"]},
        },
        {
            "kind": "message",
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "mcp-read",
                    "type": "function",
                    "function": {"name": "read", "arguments": json.dumps(arguments)},
                }
            ],
            "meta": meta,
        },
        {
            "kind": "message",
            "role": "tool",
            "tool_call_id": "mcp-read",
            "name": "read",
            "content": shown,
            "meta": meta,
        },
        {"kind": "message", "role": "assistant", "content": text, "meta": meta},
    ]
    ref = _record(runtime, exchange, records)
    session_id = ref.session_id
    anchors = runtime.verified_anchors(text, ref)
    if not anchors:  # the file is not inside a checkout the server can anchor in
        raise InvalidParams(f"path: {path} cannot be anchored in this project", field="path")
    done = facts.remember(runtime, text, ref, origin="mcp", anchors=anchors, deduplicate=True)
    body = {
        "fact_id": done.value.fact_id,
        "revision": done.value.revision,
        "text": text,
        "line_number": number,
        "session_id": session_id,
    }
    return ToolResult(json.dumps(body, ensure_ascii=False), changed=done.changed)


def _record(runtime: Runtime, exchange: Exchange, records: list[dict[str, Any]]) -> SourceRef:
    """Record `records` in the connection's transcript (created on first use, or again when the
    person deleted it) and capture them as evidence. One lock: the four records of one remember
    are contiguous."""
    with exchange.lock:
        for _ in range(2):
            try:
                ref = runtime.record_evidence(
                    records, session_id=exchange.session_id, title=exchange.title(), origin="mcp"
                )
            except SessionNotFound:
                exchange.session_id = None
            else:
                exchange.session_id = ref.session_id
                return ref
        raise SessionNotFound("session: the MCP transcript could not be written")
