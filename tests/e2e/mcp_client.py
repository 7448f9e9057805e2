"""Drive `lecode-ls mcp` as a subprocess with the MCP SDK's own client (stdio_client and
ClientSession), as Claude Code, Codex CLI, Cursor or VS Code would over stdio."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp_types import Implementation

MCP_SERVER = [sys.executable, "-m", "lecode_ls", "mcp"]


@asynccontextmanager
async def mcp_session(
    project: Path, *args: str, client: str = "pytest-agent", errlog: Path | None = None
) -> AsyncIterator[ClientSession]:
    """An initialized SDK client session with `lecode-ls mcp` started in `project`; its stderr
    goes to `errlog` when given."""
    params = StdioServerParameters(
        command=MCP_SERVER[0],
        args=[*MCP_SERVER[1:], *args],
        cwd=str(project),
        env=dict(os.environ),  # LECODE_CONFIG_DIR: the test's isolated store
    )
    with (errlog or Path(os.devnull)).open("w") as quiet:
        async with (
            stdio_client(params, errlog=quiet) as (read, write),
            ClientSession(read, write, client_info=Implementation(name=client, version="1")) as s,
        ):
            await s.initialize()
            yield s


async def tool(session: ClientSession, name: str, **arguments: Any) -> Any:
    """A tool call's JSON answer; asserts it is not an error."""
    result = await session.call_tool(name, arguments)
    text = result.content[0].text  # type: ignore[union-attr]
    assert not result.is_error, text
    return json.loads(text)


async def tool_error(session: ClientSession, name: str, **arguments: Any) -> dict[str, Any]:
    """A tool call's error answer {error, message}; asserts it is an error."""
    result = await session.call_tool(name, arguments)
    text = result.content[0].text  # type: ignore[union-attr]
    assert result.is_error, text
    body: dict[str, Any] = json.loads(text)
    return body


def allow(config_dir: Path, *tools: str) -> None:
    """config.toml's `[mcp] allow`, as a person would write it."""
    listed = ", ".join(json.dumps(t) for t in tools)
    (config_dir / "config.toml").write_text(f"[mcp]\nallow = [{listed}]\n", encoding="utf-8")
