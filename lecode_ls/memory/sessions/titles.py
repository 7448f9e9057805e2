"""Titles a person gave sessions after they began (rename), and where a session came from.

A transcript's header (line 0) is never rewritten, so a rename is kept beside the transcripts, in
`sessions/titles.json` (`{"<session id>": "title", ...}`): written atomically under a lock file,
read without following links, at most MAX_BYTES. A title there wins over the header's; a damaged
file is logged and read as empty, so the headers' titles show again.

A session's origin is what made it: `chat` (a chat view's session, or anything else), `editor`
(the "Remembered in the editor" session), `mcp` (one per MCP client) or `import` (an exported
lecode transcript keeps the origin it had). New sessions record it in their header; older ones
are told by what lecode-ls made them with, and an older import whose ID was free reads `chat`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal, cast

from lecode_ls.errors import StoreError
from lecode_ls.memory.files import FileLock, atomic_write, read_regular, refuse_symlinks

log = logging.getLogger(__name__)

Origin = Literal["chat", "editor", "mcp", "import"]
ORIGINS: tuple[Origin, ...] = ("chat", "editor", "mcp", "import")

EDITOR_TITLE = "Remembered in the editor"
"""The title of the session that records selections remembered in an editor."""
MCP_PREFIX = "MCP: "
"""The start of the title of an MCP client's session."""

MAX_BYTES = 4 << 20
"""titles.json holds at most this much (20,000 renamed sessions of 200 characters)."""


def origin_of(header: Mapping[str, Any]) -> Origin:
    """The origin a header records; for a session made before origins were recorded, what made
    it: an import renamed on the way in, the editor's session, an MCP client's, else a chat."""
    recorded = header.get("origin")
    if recorded in ORIGINS:
        return cast(Origin, recorded)
    title = header.get("title")
    if "imported_from" in header:
        return "import"
    if title == EDITOR_TITLE:
        return "editor"
    if isinstance(title, str) and title.startswith(MCP_PREFIX):
        return "mcp"
    return "chat"


class Titles:
    """`sessions/titles.json` of one store."""

    def __init__(self, store_root: Path) -> None:
        self.root = store_root
        self.path = store_root / "sessions" / "titles.json"
        self._lock = FileLock(store_root / "sessions" / "titles.json.lock")

    def read(self) -> dict[str, str]:
        """Every title given by a rename, by session ID."""
        refuse_symlinks(self.root, self.path)
        try:
            raw = read_regular(self.path, MAX_BYTES + 1)
        except OSError as error:
            log.warning("sessions/titles.json cannot be read (%s); using the first titles", error)
            return {}
        if raw is None:
            return {}
        try:
            data = json.loads(raw) if len(raw) <= MAX_BYTES else None
        except ValueError:
            data = None
        if not isinstance(data, dict):
            log.warning("sessions/titles.json is damaged; using the first titles")
            return {}
        return {key: value for key, value in data.items() if isinstance(value, str)}

    def set(self, session_id: str, title: str | None) -> None:
        """Give `session_id` the title `title` (None: forget its rename)."""
        if title is None and session_id not in self.read():
            return  # nothing to forget: no lock file is made for it
        refuse_symlinks(self.root, self.path)
        try:
            with self._lock:
                titles = self.read()
                if title is None:
                    if session_id not in titles:
                        return
                    del titles[session_id]
                else:
                    titles[session_id] = title
                data = json.dumps(titles, ensure_ascii=False, sort_keys=True).encode("utf-8")
                if len(data) > MAX_BYTES:
                    raise StoreError("sessions: too many renamed sessions to keep another title")
                atomic_write(self.path, data, backup=False)
        except OSError as error:
            raise StoreError(f"sessions: could not keep the title: {error.strerror}") from None

    def scrub(self, redact: Callable[[str], str]) -> bool:
        """Rewrite every title `redact` changes, atomically (a secret scrub); whether any did."""
        if not self.read():
            return False
        refuse_symlinks(self.root, self.path)
        try:
            with self._lock:
                titles = self.read()
                scrubbed = {key: redact(title) for key, title in titles.items()}
                if scrubbed == titles:
                    return False
                data = json.dumps(scrubbed, ensure_ascii=False, sort_keys=True).encode("utf-8")
                atomic_write(self.path, data, backup=False)
                return True
        except OSError as error:
            raise StoreError(f"sessions: could not rewrite the titles: {error.strerror}") from None
