"""What every benchmark shares: spawning a server, a minimal JSON-RPC client, statistics, tables.

The client is hand-rolled on purpose: it is the same few lines for lecode-ls and for the bare
pygls floor, and it adds as little as possible on top of the server's own time, so ratios are
about the servers and not about a client library.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import math
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, Self

ROOT = Path(__file__).resolve().parent.parent
LECODE = [sys.executable, "-m", "lecode_ls"]
BARE = [sys.executable, "-m", "bench.bare_server"]

BYTECODE_NOTE = (
    "Bytecode compiled first: `compileall lecode_ls bench`, and the servers run with "
    "PYTHONDONTWRITEBYTECODE unset (this machine sets it), after one unmeasured spawn of each."
)


class RpcError(Exception):
    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(f"{error.get('code')}: {error.get('message')}")
        self.error = error


class RpcProcess:
    """A server process spoken to over stdio with JSON-RPC. The framing is the subclass's
    (`_frame`, `_read_message`), and so is the answer to a server-to-client request (`_answer`)."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._reader = asyncio.create_task(self._read_loop(), name=f"rpc-reader-{proc.pid}")

    @property
    def pid(self) -> int:
        return self.proc.pid

    @classmethod
    async def spawn(cls, command: Sequence[str], env: dict[str, str], **options: Any) -> Self:
        proc = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            # The server log is not measured; a pipe nobody reads could fill and block it.
            stderr=asyncio.subprocess.DEVNULL,
            cwd=ROOT,
            env=env,
            **options,
        )
        return cls(proc)

    def _frame(self, body: bytes) -> bytes:
        raise NotImplementedError

    async def _read_message(self, stdout: asyncio.StreamReader) -> bytes | None:
        """The next message's JSON text; None at the end of the output."""
        raise NotImplementedError

    def _answer(self, request_id: Any) -> dict[str, Any]:
        """The reply to a request the server sends to the client."""
        raise NotImplementedError

    def _send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(self._frame(json.dumps({"jsonrpc": "2.0", **message}).encode()))

    async def request(self, method: str, params: Any = None) -> Any:
        request_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        self._send({"id": request_id, "method": method, "params": params})
        return await future

    def notify(self, method: str, params: Any = None) -> None:
        self._send({"method": method, "params": params})

    async def _read_loop(self) -> None:
        stdout = self.proc.stdout
        assert stdout is not None
        try:
            while (text := await self._read_message(stdout)) is not None:
                message = json.loads(text)
                if "id" in message and "method" in message:
                    self._send(self._answer(message["id"]))
                elif "id" in message:
                    future = self._pending.pop(message["id"], None)
                    if future is None or future.done():  # answered after a client timeout
                        continue
                    if "error" in message:
                        future.set_exception(RpcError(message["error"]))
                    else:
                        future.set_result(message.get("result"))
                else:
                    self.notified(message.get("method", ""), message.get("params"))
        finally:
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(ConnectionError("the server closed its output"))

    def notified(self, method: str, params: Any) -> None:
        """A notification from the server; ignored here, for subclasses to watch."""


class Server(RpcProcess):
    """A language server: Content-Length framed JSON-RPC."""

    def _frame(self, body: bytes) -> bytes:
        return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)

    async def _read_message(self, stdout: asyncio.StreamReader) -> bytes | None:
        try:
            header = await stdout.readuntil(b"\r\n\r\n")
            length = next(
                int(line.split(b":", 1)[1])
                for line in header.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            )
            return await stdout.readexactly(length)
        except asyncio.IncompleteReadError:
            return None

    def _answer(self, request_id: Any) -> dict[str, Any]:
        # A server-to-client request (registerCapability, ...): accept it.
        return {"id": request_id, "result": None}

    async def initialize(self, folders: Sequence[Path]) -> Any:
        result = await self.request("initialize", initialize_params(folders))
        self.notify("initialized", {})
        return result

    async def close(self) -> None:
        """shutdown + exit; kill only if the server does not end by itself."""
        try:
            if self.proc.returncode is None:
                await asyncio.wait_for(self.request("shutdown"), 10)
                self.notify("exit")
                await asyncio.wait_for(self.proc.wait(), 10)
        except (TimeoutError, ConnectionError, RpcError):
            self.proc.kill()
            await self.proc.wait()
        finally:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader


def initialize_params(folders: Sequence[Path]) -> dict[str, Any]:
    return {
        "processId": os.getpid(),
        "rootUri": folders[0].as_uri() if folders else None,
        "capabilities": {},
        "workspaceFolders": [{"uri": f.as_uri(), "name": f.name} for f in folders],
        # The custom notifications are sent only to a client that asks for them (the chat
        # deltas the comparison harness reads, the didChange news the anchors bench waits on).
        "initializationOptions": {
            "notifications": [
                "lecode/memory/didChange",
                "lecode/facts/didChange",
                "lecode/chat/delta",
                "lecode/anchors/didChange",
            ]
        },
    }


@contextlib.asynccontextmanager
async def running(
    command: Sequence[str], env: dict[str, str], folders: Sequence[Path]
) -> AsyncIterator[Server]:
    """A spawned and initialized server, shut down on exit."""
    server = await Server.spawn(command, env)
    try:
        await server.initialize(folders)
        yield server
    finally:
        await server.close()


def server_env(config_dir: Path) -> dict[str, str]:
    """The servers' environment: an isolated store, and bytecode caching allowed."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["LECODE_CONFIG_DIR"] = str(config_dir)
    return env


def compile_bytecode() -> None:
    """This machine sets PYTHONDONTWRITEBYTECODE; start-up without .pyc files is not the real one."""
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", "lecode_ls", "bench"],
        cwd=ROOT,
        check=True,
    )


def make_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    return path


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile, q in [0, 100]."""
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def ratio(value: float, floor: float) -> str:
    return f"{value / floor:.2f}"


def verdict(value: float, floor: float, target: float) -> str:
    return f"≤ {target}: {'met' if value / floor <= target else 'MISSED'}"


def markdown_table(
    title: str, headers: Sequence[str], rows: Sequence[Sequence[object]], note: str = ""
) -> str:
    lines = [
        f"### {title}",
        "",
        "| " + " | ".join(headers) + " |",
        "|" + "|".join("---" for _ in headers) + "|",
        *("| " + " | ".join(str(cell) for cell in row) + " |" for row in rows),
    ]
    if note:
        lines += ["", note]
    return "\n".join(lines)


def parse_args(description: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "--quick", action="store_true", help="few iterations: a smoke run (CI), not a measurement"
    )
    return parser.parse_args()


def run_bench(measure: Callable[[bool], Awaitable[str]], doc: str | None) -> None:
    """The `main` of every bench module: parse `--quick`, measure, print the table."""
    args = parse_args(doc.splitlines()[0] if doc else "")
    print(asyncio.run(measure(args.quick)))


def now() -> float:
    return time.perf_counter()
