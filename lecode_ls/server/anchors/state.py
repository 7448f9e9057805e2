"""What the code anchors keep between messages, for the whole server: which documents show
diagnostics now, and what may be shown of each fact revision. The anchors' room (room.py) gives
the server one (`ls.rooms.get(AnchorView)`); lsp.py uses it."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field


@dataclass
class Shown:
    """What may be shown of a fact revision: its text only while its evidence is valid."""

    revision: int
    status: str
    text: str | None
    session_id: str | None = None
    seqs: tuple[int, ...] = ()


@dataclass
class AnchorView:
    """The server's anchor state between messages (one per server)."""

    published: set[str] = field(default_factory=set)  # URIs with diagnostics shown now
    shown: dict[tuple[str, int], Shown] = field(default_factory=dict)  # (project, fact) -> Shown
    team: dict[str, list[str]] = field(default_factory=dict)  # URI -> shared facts' drift shown
    # One check publishes at a time, and a facts change waits for the check under way: a check
    # that read the facts before a forget can never publish after the check that follows it.
    checking: asyncio.Lock = field(default_factory=asyncio.Lock)
    # Counts facts changes: what `shown` was read under an older count is not kept.
    epoch: int = 0
