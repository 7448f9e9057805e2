"""A byte-level client of the real server, for what no LSP client library will send.

pytest-lsp frames every message correctly; the transport tests need to send broken frames,
invalid JSON and hostile headers, and read exactly what comes back.
"""

from __future__ import annotations

import asyncio
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SERVER = [sys.executable, "-m", "lecode_ls"]


def frame(body: bytes | str | dict[str, Any]) -> bytes:
    if isinstance(body, dict):
        body = json.dumps(body)
    if isinstance(body, str):
        body = body.encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def request(msg_id: int | str, method: str, params: Any = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if params is not None:
        message["params"] = params
    return frame(message)


def notification(method: str, params: Any = None) -> bytes:
    return frame({"jsonrpc": "2.0", "method": method, "params": params})


@dataclass
class Wire:
    """One connection to a server: bytes out, whole messages in."""

    reader: asyncio.StreamReader
    writer: Any  # asyncio.StreamWriter, or a subprocess's stdin
    messages: list[dict[str, Any]] = field(default_factory=list)

    def send(self, data: bytes) -> None:
        self.writer.write(data)

    def close(self) -> None:
        self.writer.close()

    async def next_message(self, seconds: float = 10) -> dict[str, Any]:
        async def read() -> dict[str, Any]:
            header = await self.reader.readuntil(b"\r\n\r\n")
            length = next(
                int(line.split(b":")[1])
                for line in header.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            )
            message = json.loads(await self.reader.readexactly(length))
            assert isinstance(message, dict)
            self.messages.append(message)
            return message

        return await asyncio.wait_for(read(), seconds)

    async def response(self, msg_id: int | str | None, seconds: float = 10) -> dict[str, Any]:
        """The next response with this id (None: `id: null`); notifications are skipped."""
        while True:
            message = await self.next_message(seconds)
            if "method" not in message and message.get("id") == msg_id:
                return message

    async def call(self, msg_id: int, method: str, params: Any = None) -> dict[str, Any]:
        self.send(request(msg_id, method, params))
        return await self.response(msg_id)

    async def initialize(self, folder: Path | None, msg_id: int = 1) -> None:
        folders = [] if folder is None else [{"uri": folder.as_uri(), "name": folder.name}]
        result = await self.call(
            msg_id, "initialize", {"capabilities": {}, "workspaceFolders": folders}
        )
        assert result["result"]["serverInfo"]["name"] == "lecode-ls"
        self.send(notification("initialized", {}))


class Served:
    """A server process on stdio, with its log (stderr) drained as it comes, so it never blocks."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdout is not None and process.stdin is not None
        self.process = process
        self.wire = Wire(process.stdout, process.stdin)
        self._log = bytearray()
        self._drain = asyncio.ensure_future(self._read_log())

    async def _read_log(self) -> None:
        assert self.process.stderr is not None
        while chunk := await self.process.stderr.read(65536):
            self._log += chunk

    async def stop(self) -> str:
        """End the server however it stands; its whole log as text."""
        if self.process.returncode is None:
            self.process.kill()
        await self.process.wait()
        await self._drain
        return self._log.decode("utf-8", "replace")


async def start_stdio(*args: str, env: dict[str, str] | None = None) -> Served:
    process = await asyncio.create_subprocess_exec(
        *SERVER,
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        limit=1 << 20,
        env=env,
    )
    return Served(process)
