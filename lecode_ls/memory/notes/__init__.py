"""The Markdown half of the memory: MEMORY.md, the scratchpad, daily logs and named notes, their
search index and patterns.

Code outside this part imports only the names `__all__` lists (a test keeps it so).
"""

from lecode_ls.memory.notes.store import MAX_FILE_BYTES, MarkdownStore, daily_name, validate_name

__all__ = [
    "MAX_FILE_BYTES",
    "MarkdownStore",
    "daily_name",
    "validate_name",
]
