"""The language server's side of `[agents] follow`: a poll of every open project's followed
transcripts (agents/follow.py) every POLL_SECONDS, in a worker thread, while the setting names
an agent and memory is enabled."""

from __future__ import annotations

import asyncio
import datetime
import logging
import os
from pathlib import Path

from lecode_ls.agents.follow import Follower
from lecode_ls.agents.transcripts import Agent
from lecode_ls.server.server import LecodeServer
from lecode_ls.server.sessions.state import Following

log = logging.getLogger(__name__)

POLL_SECONDS = 2.0


async def follow_agents(ls: LecodeServer, interval: float = POLL_SECONDS) -> None:
    followers: dict[Path, Follower] = {}
    while True:
        await asyncio.sleep(interval)
        agents: list[Agent] = list(ls.settings.agents.follow)
        if not agents or not ls.settings.memory.enabled:
            followers.clear()
            ls.following.clear()
            continue
        for folder in ls.workspace_folders():
            try:
                await _poll_folder(ls, folder, agents, followers)
            except Exception as error:
                log.warning("following other agents' transcripts: %s", type(error).__name__)


async def _poll_folder(
    ls: LecodeServer, folder: Path, agents: list[Agent], followers: dict[Path, Follower]
) -> None:
    runtime = await asyncio.to_thread(ls.runtimes.for_folder, folder)
    root = runtime.project.root
    follower = followers.get(root)
    if follower is None or follower.agents != agents:
        follower = Follower(
            runtime.sessions, runtime.store_path, runtime.drift.folders, agents, os.environ
        )
        followers[root] = follower
    appended = await asyncio.to_thread(follower.poll)
    status = ls.following.get(root)
    if status is None or status.agents != agents:
        status = ls.following[root] = Following(agents)
    status.polls += 1
    status.appended += appended
    status.last_poll = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    if appended:
        log.info("followed transcripts: %d record(s) appended", appended)
