"""What the sessions feature keeps between requests: the status of following other agents'
transcripts, per project (follow.py updates it, `lecode/project/info` shows it; the server holds
it in the sessions room, room.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from lecode_ls.other_agents.transcripts import Agent


@dataclass
class Following:
    """What following has done for one project since the server started (`lecode/project/info`
    shows it): the polls that completed, the records they appended, and when the last ended."""

    agents: list[Agent]
    polls: int = 0
    appended: int = 0
    last_poll: str | None = None
    compactions: int = 0
    """Compactions (with learning after them) of followed sessions once they went idle."""
    grown: dict[str, float] = field(default_factory=dict)
    """The followed sessions that grew since their last compaction, with when they last grew
    (the loop's clock)."""
    compacting: set[str] = field(default_factory=set)


class Followed(dict[Path, Following]):
    """Per project root, what following has done (`ls.rooms.get(Followed)`)."""
