"""The bounds of `lecode-ls mcp` that its documentation states (contract/mcp.py renders mcp.md from them
without loading the MCP SDK)."""

MAX_LINE_BYTES = 4 << 20  # one message; a memory_write of a whole 1 MiB note, escaped, fits
MAX_JSON_STRUCTURE = (
    500_000  # `{ [ , :` in a line (lecode_ls/jsonbound.py): 4 MiB of `{}` took 426 MiB
)
CHUNK_BYTES = 65536  # how the rest of a longer line is read and dropped
RESOURCES_PAGE = 100  # resources/list page size
URI_PREFIX = "lecode://memory/"
