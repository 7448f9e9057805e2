"""The contract of lecode-ls, rendered from the code: protocol.md and protocol.ts from the method
tables, the settings docs from the settings model, mcp.md from the MCP tools.

`uv run python -m lecode_ls.contract` writes them all; tests fail when a committed file differs.
Nothing in the package imports this one.
"""
