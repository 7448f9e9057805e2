"""The floor of the MCP benchmark: the SDK's low-level server with nothing registered, over the
SDK's own stdio transport (`python -m bench.bare_mcp`), so the difference between it and
`lecode-ls mcp` is what lecode-ls adds on top of the SDK."""

from __future__ import annotations

import anyio
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server


async def serve() -> None:
    server: Server = Server("bare")
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def main() -> None:
    anyio.run(serve)


if __name__ == "__main__":
    main()
