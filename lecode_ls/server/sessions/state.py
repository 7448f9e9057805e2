"""What the sessions feature keeps between requests: the status of following other agents'
transcripts, per project (follow.py updates it, `lecode/project/info` shows it)."""

from __future__ import annotations

from dataclasses import dataclass

from lecode_ls.agents.transcripts import Agent


@dataclass
class Following:
    """What following has done for one project since the server started (`lecode/project/info`
    shows it): the polls that completed, the records they appended, and when the last ended."""

    agents: list[Agent]
    polls: int = 0
    appended: int = 0
    last_poll: str | None = None
