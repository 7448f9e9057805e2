"""The protocol table's ping, project, Markdown-memory (notes) and AGENTS.md methods, and the
`lecode.memory` command (see protocol.py)."""

from __future__ import annotations

from lecode_ls.server.method import WS, Method
from lecode_ls.server.notes import handlers
from lecode_ls.server.notes.messages import (
    AgentsReadParams,
    AgentsReadResult,
    CommandOutput,
    MemoryCommandArgs,
    MemoryDidChangeParams,
    MemoryEditParams,
    MemoryEditResult,
    MemoryListParams,
    MemoryListResult,
    MemoryReadParams,
    MemoryReadResult,
    MemorySearchParams,
    MemorySearchResult,
    MemoryWriteParams,
    MemoryWriteResult,
    PingParams,
    PingResult,
    ProjectInfoParams,
    ProjectInfoResult,
)

# --- the method table ------------------------------------------------------------------------

METHODS: tuple[Method, ...] = (
    Method(
        "lecode/ping",
        "request",
        "Health check; answers at once. Works with memory disabled.",
        PingParams,
        PingResult,
        handler=handlers.ping,
        example_params={},
        example_result={},
    ),
    Method(
        "lecode/project/info",
        "request",
        "The project identity of a folder and where its memory lives.",
        ProjectInfoParams,
        ProjectInfoResult,
        handler=handlers.project_info,
        errors=("no_workspace", "outside_workspace"),
        example_params={"workspaceUri": WS},
        example_result={
            "projectRoot": "/home/me/project",
            "slug": "project-3f2a9c41d0b7",
            "storePath": "/home/me/.config/lecode/memory/project-3f2a9c41d0b7",
            "memoryEnabled": True,
        },
    ),
    Method(
        "lecode/memory/list",
        "request",
        "The project's memory files.",
        MemoryListParams,
        MemoryListResult,
        handler=handlers.memory_list,
        errors=("memory_disabled", "symlink_refused"),
        example_params={},
        example_result={
            "files": [{"file": "MEMORY.md", "bytes": 120, "modified": "2026-11-29T10:00:00Z"}]
        },
    ),
    Method(
        "lecode/memory/read",
        "request",
        "Read one memory file. A file over 1 MiB (put there by another program) is refused.",
        MemoryReadParams,
        MemoryReadResult,
        handler=handlers.memory_read,
        errors=(
            "memory_disabled",
            "invalid_name",
            "symlink_refused",
            "file_too_large",
            "store_error",
        ),
        example_params={"file": "notes/build.md"},
        example_result={"file": "notes/build.md", "content": "Run `make`.\n", "exists": True},
    ),
    Method(
        "lecode/memory/write",
        "request",
        "Replace or append to one memory file, atomically, keeping the previous content in "
        "`<file>.bak`. A memory file holds at most 1 MiB (1,048,576 bytes): a write whose "
        "result would be larger is refused before anything is written. "
        "Sends `lecode/memory/didChange`.",
        MemoryWriteParams,
        MemoryWriteResult,
        handler=handlers.memory_write,
        errors=(
            "memory_disabled",
            "invalid_name",
            "symlink_refused",
            "file_too_large",
            "store_error",
        ),
        example_params={"file": "scratchpad.md", "content": "- [ ] bench\n", "mode": "append"},
        example_result={"file": "scratchpad.md", "bytes": 42},
    ),
    Method(
        "lecode/memory/edit",
        "request",
        "Replace every occurrence of an exact text in one memory file; refused before anything "
        "is written when the result would pass 1 MiB. Sends `lecode/memory/didChange`.",
        MemoryEditParams,
        MemoryEditResult,
        handler=handlers.memory_edit,
        errors=(
            "memory_disabled",
            "invalid_name",
            "not_found",
            "no_match",
            "symlink_refused",
            "file_too_large",
        ),
        example_params={"file": "MEMORY.md", "search": "tabs", "replace": "spaces"},
        example_result={"file": "MEMORY.md", "replacements": 2},
    ),
    Method(
        "lecode/memory/search",
        "request",
        "Regular-expression search over the Markdown memory files only (at most 50 hits, "
        "2 s at most; files over 1 MiB are skipped).",
        MemorySearchParams,
        MemorySearchResult,
        handler=handlers.memory_search,
        errors=("memory_disabled", "invalid_pattern"),
        example_params={"pattern": "make|ninja"},
        example_result={
            "hits": [{"file": "notes/build.md", "line": 1, "text": "Run `make`."}],
            "truncated": False,
        },
    ),
    Method(
        "lecode/memory/didChange",
        "notification",
        "Server to client, after every change to a memory file made through this server.",
        MemoryDidChangeParams,
        None,
        example_params={
            "workspaceUri": WS,
            "projectRoot": "/home/me/project",
            "files": ["scratchpad.md"],
        },
    ),
    Method(
        "lecode/agents/read",
        "request",
        "AGENTS.md of the active folder, apart from memory (it is not injected as memory), and "
        "the other agents' instruction files `[agent] instruction_files` names beside it.",
        AgentsReadParams,
        AgentsReadResult,
        handler=handlers.agents_read,
        errors=("symlink_refused",),
        example_params={"workspaceUri": WS},
        example_result={
            "content": "Use uv.\n",
            "exists": True,
            "instructions": [
                {"path": "CLAUDE.md", "content": "Run the tests with uv.\n", "truncated": False}
            ],
            "notes": [],
        },
    ),
)


COMMANDS: tuple[Method, ...] = (
    Method(
        "lecode.memory",
        "command",
        "`workspace/executeCommand` form of the `/memory` slash command, for editors whose UI "
        "only runs commands. Arguments are positional: `[text]` or `[text, workspaceUri]`; "
        "the result is the output string. `/memory correct` and `/memory forget` obey "
        "`[agent] readonly` and `permissions` (see `lecode/command`); one that must ask never "
        "waits for the answer inside the command: the result is then the question, and the "
        "line's output (or error) is shown with `window/showMessage` once it is answered.",
        MemoryCommandArgs,
        CommandOutput,
        handler=handlers.memory_command,
        errors=(
            "memory_disabled",
            "invalid_name",
            "invalid_pattern",
            "not_found",
            "readonly",
            "permission_denied",
        ),
        example_params=["search make"],
        example_result="notes/build.md:1: Run `make`.",
    ),
)
