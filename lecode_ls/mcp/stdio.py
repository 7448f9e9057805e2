"""MCP's stdio transport (newline-delimited JSON-RPC), read in bounded pieces.

The SDK's own `stdio_server` reads stdin with an unbounded `readline`, so one line without a
newline grows until memory runs out; and a line it cannot parse is dropped with no answer, so
the client waits for ever. `BoundedStdio` stands in front of it, as the language server's
`transport.Framer` does for LSP (server/transport.py):

- a line is at most MAX_LINE_BYTES; the rest of a longer one is read and dropped a chunk at a
  time, and the client gets -32600 with `id: null`;
- -32700 (`id: null`) for a line that is not UTF-8 JSON (NaN and Infinity, JSON nested too deeply
  and integers of 4,300+ digits included); -32600 for a batch, a non-object, a request whose `id`
  is neither an integer nor a string, or an object that is not a JSON-RPC message (with its `id`
  when it has a usable one; a malformed notification or response gets nothing, as JSON-RPC says);
- only lines the SDK's own message model accepts go on to it, through its `stdio_server`, given
  this object as both its stdin (async iteration of lines) and its stdout (`write`, `flush`).

Both this reader's error answers and the SDK's messages are written whole, one line at a time,
under one lock, so the two writers never interleave.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from typing import Any, BinaryIO

import anyio
import anyio.to_thread
import mcp_types
from pydantic import ValidationError

from lecode_ls.jsonbound import structure_count
from lecode_ls.mcp.limits import CHUNK_BYTES, MAX_JSON_STRUCTURE, MAX_LINE_BYTES

log = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _usable_id(data: dict[str, Any]) -> int | str | None:
    msg_id = data.get("id")
    if isinstance(msg_id, str) or (isinstance(msg_id, int) and not isinstance(msg_id, bool)):
        return msg_id
    return None


def check_line(raw: bytes) -> str | tuple[int | str | None, int, str] | None:
    """The text of a line to hand to the SDK; or the error to answer (id, code, message); or
    None for a line to drop silently (blank, or a malformed notification or response)."""
    if not raw.strip():
        return None
    if structure_count(raw) > MAX_JSON_STRUCTURE:
        return None, INVALID_REQUEST, f"the line holds more than {MAX_JSON_STRUCTURE:,} JSON values"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, PARSE_ERROR, f"the line is not UTF-8 (byte {exc.start})"
    try:
        data = json.loads(text, parse_constant=_refuse_constant)
    except RecursionError:
        return None, PARSE_ERROR, "the line is JSON nested too deeply"
    except ValueError as exc:  # JSONDecodeError, NaN/Infinity, integers of 4,300+ digits
        return None, PARSE_ERROR, f"the line is not JSON: {exc}"[:200]
    if isinstance(data, list):
        return None, INVALID_REQUEST, "batches are not supported"
    if not isinstance(data, dict):
        return None, INVALID_REQUEST, "a message must be a JSON object"
    if "id" in data and _usable_id(data) is None:
        # The SDK would take it for a notification (its models ignore an unknown key) and answer
        # nothing; a response with such an id matches no request of ours.
        return (
            (None, INVALID_REQUEST, "id: must be an integer or a string")
            if "method" in data
            else None
        )
    try:
        mcp_types.jsonrpc_message_adapter.validate_json(text, by_name=False)
    except (ValidationError, ValueError, RecursionError):
        if "method" in data and "id" in data:
            why = 'jsonrpc: must be "2.0"' if data.get("jsonrpc") != "2.0" else "a bad field"
            return _usable_id(data), INVALID_REQUEST, f"not a JSON-RPC request ({why})"
        if "method" not in data and "id" not in data:
            return None, INVALID_REQUEST, "a message needs a method or an id"
        return None
    return text


class BoundedStdio:
    """Bounded newline-delimited JSON-RPC over two binary streams (see the module docstring)."""

    def __init__(self, stdin: BinaryIO, stdout: BinaryIO, max_line: int = MAX_LINE_BYTES) -> None:
        self._stdin = stdin
        self._stdout = stdout
        self._max = max_line
        self._lock = anyio.Lock()

    # -- the SDK's stdout ------------------------------------------------------------------------

    async def write(self, text: str) -> None:
        data = text.encode("utf-8")
        async with self._lock:
            await anyio.to_thread.run_sync(self._write_bytes, data)

    async def flush(self) -> None:
        """Each write is flushed already."""

    def _write_bytes(self, data: bytes) -> None:
        self._stdout.write(data)
        self._stdout.flush()

    async def reply_error(self, msg_id: int | str | None, code: int, message: str) -> None:
        body = {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}
        await self.write(json.dumps(body) + "\n")

    # -- the SDK's stdin -------------------------------------------------------------------------

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _read(self, size: int) -> bytes:
        # Abandoned on cancel: a thread blocked on stdin cannot be interrupted, and the process
        # is ending then anyway.
        return await anyio.to_thread.run_sync(self._stdin.readline, size, abandon_on_cancel=True)

    async def _lines(self) -> AsyncIterator[str]:
        while raw := await self._read(self._max + 1):
            if len(raw) > self._max and not raw.endswith(b"\n"):
                while (rest := await self._read(CHUNK_BYTES)) and not rest.endswith(b"\n"):
                    pass  # the rest of the line: read and dropped, a chunk at a time
                log.warning("refused a message of more than %d bytes", self._max)
                await self.reply_error(
                    None, INVALID_REQUEST, f"a message over {self._max:,} bytes is refused"
                )
                if not rest:
                    return
                continue
            checked = check_line(raw)
            if isinstance(checked, str):
                yield checked
            elif checked is not None:
                await self.reply_error(*checked)
