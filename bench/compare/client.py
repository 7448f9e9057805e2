"""The harness's client of lecode-ls: bench.common's, with a timeout on every request, a way to
cancel one, and what the chat deltas showed.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from bench.common import LECODE, RpcError, Server, now


class StepTimeout(Exception):
    def __init__(self, seconds: float, result: Any) -> None:
        super().__init__(f"no answer within {seconds:g} s; the request was cancelled")
        self.result = result


class Client(Server):
    """bench.common's client, plus a per-request timeout (then `$/cancelRequest`), a check that
    the server is still there before each request, and the time of every compaction boundary
    inside a turn (from its `compaction` deltas: started, then its outcome)."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.compactions: list[dict[str, Any]] = []
        self._compacting: float | None = None
        self.text_seen = asyncio.Event()
        """Set by every `text` delta (step 4 clears it, then waits for an answer to start)."""
        self.injected: list[list[tuple[int, int]]] = []
        """The facts (ID, revision) of every `memory` delta: what each model request carried."""
        super().__init__(proc)

    def _delta(self, params: Any) -> None:
        if not isinstance(params, dict) or params.get("kind") != "compaction":
            return
        if params.get("status") == "started":
            self._compacting = now()
        elif self._compacting is not None:
            self.compactions.append(
                {
                    "status": params.get("status"),
                    "message": params.get("message"),
                    "seconds": now() - self._compacting,
                }
            )
            self._compacting = None

    def notified(self, method: str, params: Any) -> None:
        if method == "lecode/chat/delta":
            self._delta(params)
            kind = params.get("kind") if isinstance(params, dict) else None
            if kind == "text":
                self.text_seen.set()
            elif kind == "memory":
                facts = params.get("facts") or []
                self.injected.append([(int(f["factId"]), int(f["revision"])) for f in facts])

    def begin(self, method: str, params: Any) -> tuple[int, asyncio.Future[Any]]:
        """Send a request without waiting: its ID (for `$/cancelRequest`) and its answer."""
        request_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        self._send({"id": request_id, "method": method, "params": params})
        return request_id, future

    async def call(self, method: str, params: Any, seconds: float) -> Any:
        if self.proc.returncode is not None or self._reader.done():
            raise ConnectionError(f"the server has exited (code {self.proc.returncode})")
        request_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        self._send({"id": request_id, "method": method, "params": params})
        try:
            return await asyncio.wait_for(asyncio.shield(future), seconds)
        except TimeoutError:
            self.notify("$/cancelRequest", {"id": request_id})
            result: Any = None
            with contextlib.suppress(TimeoutError, RpcError, ConnectionError):
                result = await asyncio.wait_for(future, 30)
            raise StepTimeout(seconds, result) from None


@contextlib.asynccontextmanager
async def serving(env: dict[str, str], folder: Path) -> AsyncIterator[Client]:
    client = await Client.spawn(LECODE, env)
    assert isinstance(client, Client)
    try:
        await asyncio.wait_for(client.initialize([folder]), 60)
        yield client
    finally:
        await client.close()


def describe(error: BaseException) -> str:
    if isinstance(error, RpcError):
        data = error.error.get("data") or {}
        code = data.get("code") if isinstance(data, dict) else None
        return f"{code or error.error.get('code')}: {error.error.get('message')}"
    return f"{type(error).__name__}: {error}"
