"""The `/memory correct` and `/memory forget` slash commands obey the tool policy, on every path a
person can type them: `lecode/command`, the `lecode.memory` command, and `/memory` sent as a chat
message. The Facts tree's own Forget (`lecode/facts/forget`) is the person's act and stays open.

# covers T2, T4, T5 (issue 11, item 1)
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.e2e.conftest import Start, call, command
from tests.e2e.facts import error_of, imported, remember

Path_ = Callable[[LanguageClient, str, str], Awaitable[Any]]


async def by_request(client: LanguageClient, session: str, line: str) -> Any:
    return (await call(client, "lecode/command", {"line": line}))["output"]


async def by_command(client: LanguageClient, session: str, line: str) -> Any:
    return await command(client, line)


async def by_chat(client: LanguageClient, session: str, line: str) -> Any:
    return await call(client, "lecode/chat/send", {"sessionId": session, "text": line})


PATHS = pytest.mark.parametrize(
    "send", [by_request, by_command, by_chat], ids=["lecode/command", "lecode.memory", "chat"]
)
# The paths that wait for the person's answer inside the request (a chat panel's); the
# `lecode.memory` command answers with the question instead (see TestTheCommandNeverWaits).
WAITING = pytest.mark.parametrize("send", [by_request, by_chat], ids=["lecode/command", "chat"])


async def with_a_fact(start: Start, repo: Path, **agent: Any) -> tuple[LanguageClient, str, int]:
    client = await start(repo, options={"agent": agent})
    session = await imported(client)
    fact = await remember(client, session, 3, "We use tabs for indentation in this repo.")
    return client, session, fact["factId"]


async def fact_ids(client: LanguageClient) -> list[int]:
    return [f["factId"] for f in (await call(client, "lecode/facts/list"))["facts"]]


class Person:
    """Answers every permission question with `answer`, and keeps the questions asked."""

    def __init__(self, client: LanguageClient, answer: str) -> None:
        self.answer = answer
        self.asked: list[str] = []

        @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
        def on_ask(params: types.ShowMessageRequestParams) -> types.MessageActionItem:
            self.asked.append(params.message)
            return types.MessageActionItem(self.answer)


class TestReadonly:
    @PATHS
    async def test_forget_is_refused_in_readonly_mode(
        self, start: Start, repo: Path, send: Path_
    ) -> None:
        client, session, fact_id = await with_a_fact(start, repo, readonly=True)
        error = await error_of(send(client, session, f"/memory forget {fact_id}"))
        assert error.data["code"] == "readonly"
        assert await fact_ids(client) == [fact_id]

    @PATHS
    async def test_correct_is_refused_in_readonly_mode(
        self, start: Start, repo: Path, send: Path_
    ) -> None:
        client, session, fact_id = await with_a_fact(start, repo, readonly=True)
        line = f"/memory correct {fact_id} 1 {session} 5 5 We use 4 spaces."
        error = await error_of(send(client, session, line))
        assert error.data["code"] == "readonly"
        listed = await call(client, "lecode/facts/list")
        assert [f["revision"] for f in listed["facts"]] == [1]

    async def test_the_facts_tree_forget_is_the_persons_own_act(
        self, start: Start, repo: Path
    ) -> None:
        client, _, fact_id = await with_a_fact(start, repo, readonly=True)
        forgotten = await call(client, "lecode/facts/forget", {"factId": fact_id})
        assert forgotten["forgotten"] is True
        assert await fact_ids(client) == []


class TestPermissions:
    @PATHS
    async def test_a_denied_tool_is_denied_to_the_slash_command(
        self, start: Start, repo: Path, send: Path_
    ) -> None:
        client, session, fact_id = await with_a_fact(
            start, repo, permissions={"memory_forget": "deny", "memory_correct": "deny"}
        )
        error = await error_of(send(client, session, f"/memory forget {fact_id}"))
        assert error.data["code"] == "permission_denied"
        line = f"/memory correct {fact_id} 1 {session} 5 5 We use 4 spaces."
        error = await error_of(send(client, session, line))
        assert error.data["code"] == "permission_denied"
        assert await fact_ids(client) == [fact_id]

    @WAITING
    async def test_ask_means_the_person_confirms(
        self, start: Start, repo: Path, send: Path_
    ) -> None:
        client, session, fact_id = await with_a_fact(start, repo)  # ask is the default
        person = Person(client, "Deny")
        error = await error_of(send(client, session, f"/memory forget {fact_id}"))
        assert error.data["code"] == "permission_denied"
        assert person.asked == [
            f"lecode: /memory wants to run memory_forget: forget fact {fact_id} and exclude its "
            "evidence for good"
        ]
        assert await fact_ids(client) == [fact_id]

        person.answer = "Allow"
        await send(client, session, f"/memory forget {fact_id}")
        assert await fact_ids(client) == []

    @pytest.mark.parametrize("answer", ["Deny", "Allow"])
    async def test_the_memory_command_answers_with_the_question_and_shows_the_outcome(
        self, start: Start, repo: Path, answer: str
    ) -> None:
        # Issue 24: a command whose client times requests out never waits for the person.
        client, session, fact_id = await with_a_fact(start, repo)
        person = Person(client, answer)
        shown = client.protocol.wait_for_notification_async(types.WINDOW_SHOW_MESSAGE)
        output = await by_command(client, session, f"/memory forget {fact_id}")
        assert output == (
            f"lecode: /memory wants to run memory_forget: forget fact {fact_id} and exclude its "
            "evidence for good\nAnswer in the editor's prompt: the command goes on then, and "
            "its output is shown as a message."
        )
        message = await asyncio.wait_for(shown, 10)
        assert len(person.asked) == 1
        if answer == "Deny":
            assert message.type == types.MessageType.Error
            assert message.message.startswith("lecode: /memory: ")
            assert await fact_ids(client) == [fact_id]
        else:
            assert message.message == (
                f"Fact #{fact_id} is forgotten; the transcript positions it cited are excluded "
                "for good."
            )
            assert await fact_ids(client) == []

    async def test_allow_runs_without_asking(self, start: Start, repo: Path) -> None:
        client, session, fact_id = await with_a_fact(
            start, repo, permissions={"memory_correct": "allow"}
        )
        person = Person(client, "Deny")
        line = f"/memory correct {fact_id} 1 {session} 5 5 We use 4 spaces."
        output = await by_request(client, session, line)
        assert output == f"Fact #{fact_id} is now at revision 2."
        assert person.asked == []
