"""The JSON objects of the ping, project, Markdown-memory (notes) and AGENTS.md methods.

JSON fields are camelCase; each field's docstring is its documentation (protocol.md is generated
from them). Params are strict: unknown fields and wrong types are refused with -32602.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from lecode_ls.server.messages import Message, Params, WorkspaceParams

# --- lecode/ping -----------------------------------------------------------------------------


class PingParams(Params):
    """No fields."""


class PingResult(Message):
    """An empty object."""


# --- lecode/project/info ---------------------------------------------------------------------


class ProjectInfoParams(WorkspaceParams):
    pass


class ProjectInfoResult(Message):
    project_root: str
    """The project path: the main Git checkout root, or the folder itself outside Git."""
    slug: str
    """The project's store name: readable name plus a short hash of the project path."""
    store_path: str
    """The folder that holds this project's memory."""
    memory_enabled: bool
    """Whether `[memory] enabled` is true."""
    following: FollowingStatus | None = None
    """While `[agents] follow` names an agent: what following their transcripts has done for
    this project since the server started."""


class FollowingStatus(Message):
    agents: list[str]
    """The agents followed (`claude-code`, `codex`)."""
    polls: int
    """Polls of their transcripts completed (one about every 2 s)."""
    appended: int
    """Records those polls appended to this project's sessions."""
    last_poll: str | None
    """When the last poll ended (ISO 8601 UTC)."""
    compactions: int
    """Followed sessions compacted once idle (`[agents] learn_after_idle_seconds`), learning
    after each as after a chat's."""


# --- lecode/memory/* -------------------------------------------------------------------------


class MemoryListParams(WorkspaceParams):
    pass


class MemoryFileInfo(Message):
    file: str
    """Store-relative name, e.g. `notes/build.md`."""
    bytes: int
    """Size in bytes."""
    modified: datetime
    """Last modification time (ISO 8601, UTC)."""


class MemoryListResult(Message):
    files: list[MemoryFileInfo]
    """Every memory file that exists, sorted by name."""


class MemoryReadParams(WorkspaceParams):
    file: str = Field(max_length=512)
    """`MEMORY.md`, `scratchpad.md`, `daily/YYYY-MM-DD.md` or `notes/<name>.md`."""


class MemoryReadResult(Message):
    file: str
    """The normalized store-relative name."""
    content: str
    """The file's text; empty when it does not exist."""
    exists: bool
    """Whether the file exists."""


class MemoryWriteParams(WorkspaceParams):
    file: str = Field(max_length=512)
    """`MEMORY.md`, `scratchpad.md`, `daily/YYYY-MM-DD.md` or `notes/<name>.md`."""
    content: str = Field(max_length=1_048_576)
    """Text to write (at most 1 MiB per request)."""
    mode: Literal["replace", "append"] = "replace"
    """`replace` the whole file, or `append` to it (a newline is inserted if the file lacks one)."""


class MemoryWriteResult(Message):
    file: str
    """The normalized store-relative name."""
    bytes: int
    """Size of the file after the write."""


class MemoryEditParams(WorkspaceParams):
    file: str = Field(max_length=512)
    """The memory file to edit."""
    search: str = Field(min_length=1, max_length=1_048_576)
    """Exact text to find (not a pattern); every occurrence is replaced."""
    replace: str = Field(max_length=1_048_576)
    """Replacement text."""


class MemoryEditResult(Message):
    file: str
    """The normalized store-relative name."""
    replacements: int
    """How many occurrences were replaced (at least 1)."""


class MemorySearchParams(WorkspaceParams):
    pattern: str = Field(min_length=1, max_length=1000)
    """A regular expression in RE2 syntax (Python's `re` syntax without lookaround or
    backreferences), matched line by line over the Markdown files only. Matching takes linear
    time; a pattern that would compile past 8 MiB, or whose nested repeats expand past 1000
    copies, is refused with `invalid_pattern` naming why."""


class SearchHit(Message):
    file: str
    """Store-relative name of the file."""
    line: int
    """1-based line number."""
    text: str
    """The line (at most 500 characters)."""


class MemorySearchResult(Message):
    hits: list[SearchHit]
    """At most 50 hits, in file order."""
    truncated: bool
    """Whether more lines matched than were returned."""


class MemoryDidChangeParams(Message):
    workspace_uri: str
    """The workspace folder URI the change was made through."""
    project_root: str
    """The project whose memory changed: every folder of this project should refresh."""
    files: list[str]
    """Store-relative names of the files that changed."""


# --- lecode/agents/read ----------------------------------------------------------------------


class AgentsReadParams(WorkspaceParams):
    pass


class InstructionFile(Message):
    path: str
    """Relative to the active folder, with "/" separators."""
    content: str
    """What the chat's system prompt takes of it (empty when refused)."""
    truncated: bool
    """Whether it was cut: AGENTS.md and the instruction files share 256 KiB."""
    refused: str | None = None
    """Why it was not read: a link leading outside the folder, not a regular file, over the
    size budget, or unreadable."""


class AgentsReadResult(Message):
    content: str
    """AGENTS.md of the active folder (checkout-specific instructions, kept apart from memory)."""
    exists: bool
    """Whether the folder has an AGENTS.md."""
    instructions: list[InstructionFile]
    """The files `[agent] instruction_files` names in the folder, in the order the chat's
    system prompt takes them after AGENTS.md (empty when the setting is)."""
    notes: list[str]
    """Why a glob brought in fewer files than it matches (the bounds on a glob)."""


# --- command lecode.memory -------------------------------------------------------------------


class MemoryCommandArgs(Params):
    text: str = Field(max_length=1_048_576)
    """arguments[0]: the text after `/memory`, e.g. `show`, `search foo`, `log 2026-11-29`."""
    workspace_uri: str | None = None
    """arguments[1], optional: a URI inside the project; default: the first workspace folder."""


class CommandOutput(Message):
    output: str
    """What the slash command shows (plain text). The command itself returns this string."""
