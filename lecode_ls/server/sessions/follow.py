"""The language server's side of `[agents] follow`: a poll of every open project's followed
transcripts (other_agents/follow.py) every POLL_SECONDS, in a worker thread, while the setting names
an agent and memory is enabled. A followed session that grew and then went idle for `[agents]
learn_after_idle_seconds` is compacted once in a task of its own, so that automatic learning
runs over it as over lecode's own chats (A1-A8): only while `[memory] auto_learn` is on and a
provider is set."""

from __future__ import annotations

import asyncio
import datetime
import logging
import os
import time
from pathlib import Path

from lecode_ls.errors import LecodeError
from lecode_ls.other_agents.follow import Follower
from lecode_ls.other_agents.transcripts import Agent
from lecode_ls.platform.paths import path_to_uri
from lecode_ls.runtime import Runtime
from lecode_ls.server.chat.state import Chat
from lecode_ls.server.facts.watch import facts_changed
from lecode_ls.server.server import LecodeServer
from lecode_ls.server.sessions.messages import AgentsDidFollowParams
from lecode_ls.server.sessions.state import Followed, Following

log = logging.getLogger(__name__)

POLL_SECONDS = 2.0


async def follow_agents(ls: LecodeServer, interval: float = POLL_SECONDS) -> None:
    followers: dict[Path, Follower] = {}
    while True:
        await asyncio.sleep(interval)
        agents: list[Agent] = list(ls.settings.agents.follow)
        if not agents or not ls.settings.memory.enabled:
            followers.clear()
            ls.rooms.get(Followed).clear()
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

    def poll() -> tuple[dict[str, int], int]:  # the cursors before, then the poll: off the loop
        before = {c.session: c.line for c in follower.cursors().values()}
        return before, follower.poll()

    before, appended = await asyncio.to_thread(poll)
    followed = ls.rooms.get(Followed)
    status = followed.get(root)
    if status is None or status.agents != agents:
        status = followed[root] = Following(agents)
    if appended:
        now = time.monotonic()
        for cursor in follower.cursors().values():
            if cursor.line != before.get(cursor.session):
                status.grown[cursor.session] = now
    _compact_idle(ls, runtime, status)
    status.polls += 1
    status.appended += appended
    status.last_poll = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    if appended:
        log.info("followed transcripts: %d record(s) appended", appended)
    _tell(ls, runtime, status)


def _tell(ls: LecodeServer, runtime: Runtime, status: Following) -> None:
    root = runtime.project.root
    ls.send(
        "lecode/agents/didFollow",
        AgentsDidFollowParams(
            workspace_uri=path_to_uri(root),
            project_root=str(root),
            polls=status.polls,
            appended=status.appended,
            compactions=status.compactions,
        ),
    )


def _compact_idle(ls: LecodeServer, runtime: Runtime, status: Following) -> None:
    """Start the compaction of each followed session idle long enough since it grew."""
    settings = ls.settings
    if not settings.memory.auto_learn or settings.provider.base_url is None:
        return
    idle = settings.agents.learn_after_idle_seconds
    now = time.monotonic()
    for session, grew in list(status.grown.items()):
        if now - grew >= idle and session not in status.compacting:
            del status.grown[session]
            status.compacting.add(session)
            ls.run_task(_compact(ls, runtime, status, session), f"learn-followed-{session}")


async def _compact(ls: LecodeServer, runtime: Runtime, status: Following, session: str) -> None:
    from lecode_ls.agent import catalog
    from lecode_ls.agent.compaction import compact_session
    from lecode_ls.tools.permissions import PermissionPolicy

    settings = ls.settings
    model = settings.provider.model
    chat = ls.rooms.get(Chat)
    try:
        with chat.running((str(runtime.project.root), session), "the session is busy"):
            lock = runtime.sessions.attach(session)
            await asyncio.to_thread(lock.__enter__)
            try:
                outcome = await compact_session(
                    runtime,
                    session,
                    chat.provider(settings.provider),
                    model=model,
                    window=catalog.context_window(model, settings.agent.context_window),
                    policy=PermissionPolicy.from_settings(settings),
                    readonly=settings.agent.readonly,
                )
            finally:
                lock.__exit__(None, None, None)
    except LecodeError as error:  # busy, deleted, no provider: the next growth tries again
        log.info("followed session %s not compacted: %s", session, error.code)
        return
    finally:
        status.compacting.discard(session)
    status.compactions += 1
    log.info("followed session %s: compaction %s", session, outcome.status)
    if outcome.learning is not None and outcome.learning.called:
        await facts_changed(ls, runtime)
    _tell(ls, runtime, status)
