"""The operations on the project's Markdown notes (MEMORY.md, scratchpad.md, daily logs, named
notes): what the editor, the model's tools and `/memory` write. Reading goes to the store
itself (`runtime.markdown`). Blocking: call from a worker thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from lecode_ls.actions.changes import Changed, Done
from lecode_ls.runtime import Runtime


@dataclass(frozen=True)
class Written:
    file: str
    """The store-relative name, validated."""
    count: int
    """write: the file's size in bytes now; edit: the replacements made."""


def write(
    runtime: Runtime, file: str, content: str, mode: Literal["append", "replace"]
) -> Done[Written]:
    """Append to a note or replace its content (the previous content kept in a .bak copy)."""
    store = runtime.require_memory()
    name = store.validate(file)
    size = store.write(name, content, mode)
    return Done(Written(name, size), Changed(notes=(name,)))


def edit(runtime: Runtime, file: str, search: str, replace: str) -> Done[Written]:
    """Replace every occurrence of `search` in a note (NotFound when there is none)."""
    store = runtime.require_memory()
    name = store.validate(file)
    count = store.edit(name, search, replace)
    return Done(Written(name, count), Changed(notes=(name,)))
