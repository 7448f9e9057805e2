"""Real lecode-ls servers over stdio for the reliability tests, which kill some of them.

Built on the e2e helpers (same server command and client); unlike the e2e `start` fixture, a
server may be killed mid-test, and every request is bounded by a timeout so nothing hangs.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.e2e.conftest import SERVER, make_client, uri

TIMEOUT = 60  # seconds any single request may take before the test fails


class Servers:
    """Starts lecode-ls processes; `close()` shuts down the live ones and reaps the killed."""

    def __init__(self) -> None:
        self.clients: list[LanguageClient] = []

    async def start(self, *folders: Path) -> LanguageClient:
        config = ClientServerConfig(
            server_command=SERVER, client_factory=make_client, server_env=dict(os.environ)
        )
        client = await asyncio.wait_for(config.start(), TIMEOUT)
        assert isinstance(client, LanguageClient)
        self.clients.append(client)
        await asyncio.wait_for(
            client.initialize_session(
                types.InitializeParams(
                    capabilities=types.ClientCapabilities(),
                    workspace_folders=[
                        types.WorkspaceFolder(uri=uri(f), name=f.name) for f in folders
                    ],
                )
            ),
            TIMEOUT,
        )
        return client

    @staticmethod
    def kill(client: LanguageClient) -> None:
        """SIGKILL the server now (synchronous, so it can run in a done-callback)."""
        process = client._server
        assert process is not None
        process.kill()

    @staticmethod
    async def reap(client: LanguageClient) -> None:
        """Wait until a killed server is gone; its pending requests then fail."""
        process = client._server
        assert process is not None
        await asyncio.wait_for(process.wait(), TIMEOUT)
        assert process.returncode == -9

    async def close(self) -> None:
        for client in self.clients:
            process = client._server
            if process is not None and process.returncode is None and not client.stopped:
                await asyncio.wait_for(client.shutdown_session(), TIMEOUT)
            # Killed or shut down, the process is gone; stop() reaps the client's own tasks.
            await asyncio.wait_for(client.stop(), TIMEOUT)


async def call(client: LanguageClient, method: str, params: Any = None) -> Any:
    """A custom request; JSON-RPC errors raise JsonRpcException."""
    return await asyncio.wait_for(
        client.protocol.send_request_async(method, params if params is not None else {}), TIMEOUT
    )


async def outcome(client: LanguageClient, method: str, params: Any) -> tuple[Any, Any]:
    """(result, None) or (None, the JsonRpcException): for requests allowed to fail."""
    try:
        return await call(client, method, params), None
    except JsonRpcException as error:
        return None, error


async def snapshot(client: LanguageClient, session: str, seq: int) -> dict[str, Any]:
    source: dict[str, Any] = await call(
        client, "lecode/session/snapshot", {"sessionId": session, "startSeq": seq, "endSeq": seq}
    )
    return source


async def listed(client: LanguageClient) -> list[dict[str, Any]]:
    """Every fact `lecode/facts/list` returns, all pages."""
    facts: list[dict[str, Any]] = []
    offset: int | None = 0
    while offset is not None:
        page = await call(client, "lecode/facts/list", {"offset": offset})
        facts += page["facts"]
        offset = page["nextOffset"]
    return facts
