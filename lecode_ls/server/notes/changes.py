"""`lecode/memory/didChange`: the client hears which notes changed, whether a request, a chat tool
or a `/memory` line changed them."""

from __future__ import annotations

from pathlib import Path

from lecode_ls.server.notes.messages import MemoryDidChangeParams
from lecode_ls.server.server import LecodeServer


def notes_changed(ls: LecodeServer, root: Path, folder_uri: str, files: list[str]) -> None:
    ls.send(
        "lecode/memory/didChange",
        MemoryDidChangeParams(workspace_uri=folder_uri, project_root=str(root), files=files),
    )
