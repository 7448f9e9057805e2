"""Other agents (Claude Code, Codex, Gemini CLI, Cursor): the memory section for their hooks
(`lecode-ls context`), and their transcripts imported and followed as sessions.

Code outside this package imports only the names `__all__` lists.
"""

__all__: list[str] = []
