"""Start the real `lecode-ls` over stdio with pytest-lsp and talk to it as an editor would."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types
from lsprotocol.converters import get_converter
from pygls.protocol import JsonRPCProtocol
from pygls.uris import from_fs_path
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import register_lsp_features

from lecode_ls.server.routes import NOTIFICATIONS

Start = Callable[..., Awaitable[LanguageClient]]

SERVER = [sys.executable, "-m", "lecode_ls"]


def uri(path: Path) -> str:
    result = from_fs_path(str(path))
    assert result is not None
    return result


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def make_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    (path / "README.md").write_text("fixture\n")
    git(path, "add", ".")
    git(path, "commit", "-q", "-m", "init")
    return path


ASKABLE = types.ClientCapabilities(
    window=types.WindowClientCapabilities(show_message=types.ShowMessageRequestClientCapabilities())
)
"""A client that says it answers `window/showMessageRequest`."""
UNASKABLE = types.ClientCapabilities()
"""A client that does not (Helix 25.x, eglot 1.9): questions become code actions."""


def make_client() -> LanguageClient:
    """A pytest-lsp client whose custom results arrive as plain dicts, as JSON has them."""
    client = LanguageClient(converter_factory=get_converter)
    register_lsp_features(client)
    return client


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo")


@pytest_asyncio.fixture
async def start(isolated_config_dir: Path) -> AsyncIterator[Start]:
    """Start servers on demand; each is shut down (shutdown, exit) at the end of the test."""
    clients: list[LanguageClient] = []

    async def _start(
        *folders: Path,
        options: Any = None,
        initialize: bool = True,
        env: dict[str, str] | None = None,
        capabilities: types.ClientCapabilities | None = None,
        notifications: Sequence[str] = NOTIFICATIONS,
        args: Sequence[str] = (),
        client_factory: Callable[[], LanguageClient] = make_client,
    ) -> LanguageClient:
        """`notifications`: the custom notifications the client asks for (all of them, as the
        extension does, unless told); `capabilities`: default, a client that can be asked
        (`window.showMessage`, as VS Code and Neovim); `args`: more command-line arguments
        (`--log-file`)."""
        config = ClientServerConfig(
            server_command=[*SERVER, *args],
            client_factory=client_factory,
            server_env={**os.environ, **(env or {})},
        )
        client = await config.start()
        assert isinstance(client, LanguageClient)
        clients.append(client)
        if initialize:
            await client.initialize_session(
                types.InitializeParams(
                    capabilities=capabilities or ASKABLE,
                    workspace_folders=[
                        types.WorkspaceFolder(uri=uri(f), name=f.name) for f in folders
                    ],
                    initialization_options=(
                        {**(options or {}), "notifications": list(notifications)}
                        if options is None or isinstance(options, dict)
                        else options
                    ),
                )
            )
        return client

    yield _start
    for client in clients:
        if client.capabilities is not None and not client.stopped and client.error is None:
            await client.shutdown_session()
        elif not client.stopped:
            client.protocol.notify(types.EXIT, None)  # never initialized: just exit
        if not client.stopped:
            await client.stop()


async def call(client: LanguageClient, method: str, params: Any = None) -> Any:
    """Send a custom request and return its result (JSON-RPC errors raise JsonRpcException)."""
    return await client.protocol.send_request_async(method, params if params is not None else {})


async def raw_call(client: LanguageClient, method: str, params: Any = None) -> Any:
    """Send a request even before `initialize`; pytest-lsp's own check would refuse to."""
    return await JsonRPCProtocol.send_request_async(client.protocol, method, params)


async def command(client: LanguageClient, *arguments: Any) -> Any:
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="lecode.memory", arguments=list(arguments))
    )
