"""Questions that never wait inside the client's request (issue 24, item 1): a forget, a
session's deletion, a `/memory forget` line and a chat turn's memory change, asked of a client
that answers `window/showMessageRequest` and of one that cannot (Helix 25.x answers it -32601;
eglot 1.9 does not advertise it), through the real server over stdio.

The command always answers first; the person's answer comes later (here: only once the test has
the command's result, which is what an editor that times requests out needs), and only then does
the store change, so what the editor was told and what the store did agree.

# covers T4 (ask before memory changes), F7 (forget), S6 (delete a session)
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.e2e.chat import chat_client, new_session, tool_chunks
from tests.e2e.conftest import UNASKABLE, Start, call, command, uri
from tests.e2e.facts import error_of, imported, remember
from tests.e2e.test_anchors import SOURCE, WHOLE_PORT_LINE, fix_code_action_parsing, open_doc
from tests.fakes.openai_server import FakeOpenAI, Stream, text_chunks

FACT = "We use tabs for indentation in this repo."


def execute(name: str, *arguments: Any) -> types.ExecuteCommandParams:
    return types.ExecuteCommandParams(command=name, arguments=list(arguments))


async def run(client: LanguageClient, name: str, *arguments: Any) -> Any:
    return await client.workspace_execute_command_async(execute(name, *arguments))


async def fact_ids(client: LanguageClient) -> list[int]:
    return [f["factId"] for f in (await call(client, "lecode/facts/list"))["facts"]]


class LatePerson:
    """Answers `window/showMessageRequest` with `answer`, but only once `release()` is called:
    a person who takes their time, after the editor has its command's result."""

    def __init__(self, client: LanguageClient, answer: str) -> None:
        self.asked: list[types.ShowMessageRequestParams] = []
        self.released = asyncio.Event()

        @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
        async def on_ask(params: types.ShowMessageRequestParams) -> types.MessageActionItem:
            self.asked.append(params)
            await self.released.wait()
            return types.MessageActionItem(answer)

    def release(self) -> None:
        self.released.set()


class NoPrompt:
    """What Helix 25.x does with `window/showMessageRequest`: Method not found (counted, so a
    test can show it was never sent)."""

    def __init__(self, client: LanguageClient) -> None:
        self.requests = 0

        @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
        def on_ask(params: types.ShowMessageRequestParams) -> None:
            self.requests += 1
            raise RuntimeError("Method not found: window/showMessageRequest")


def shown_next(client: LanguageClient) -> asyncio.Future[Any]:
    return client.protocol.wait_for_notification_async(types.WINDOW_SHOW_MESSAGE)


async def actions_in(client: LanguageClient, doc: str, line: int = 0) -> list[types.CodeAction]:
    """The code actions an editor gets on `line` of `doc` (no selection)."""
    found = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(doc),
            range=types.Range(types.Position(line, 0), types.Position(line, 0)),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    return [a for a in found or [] if isinstance(a, types.CodeAction)]


async def run_action(client: LanguageClient, action: types.CodeAction) -> Any:
    assert action.command is not None
    return await run(client, action.command.command, *(action.command.arguments or []))


@pytest.fixture
def doc(repo: Path) -> str:
    (repo / "src").mkdir()
    app = repo / "src" / "app.py"
    app.write_text(SOURCE)
    return uri(app)


class TestForgetInAnEditorThatAsks:
    async def test_the_command_answers_before_the_person_and_forgets_on_their_late_forget(
        self, start: Start, repo: Path, doc: str
    ) -> None:
        client = await start(repo)
        person = LatePerson(client, "Forget")
        await call(client, "lecode/facts/rememberSelection", {"uri": doc, "range": WHOLE_PORT_LINE})

        result = await run(client, "lecode.anchor.forget", {"factId": 1})
        # Answered with the question while the person has not answered yet: nothing forgotten.
        assert result["hides"] == []
        question = result["question"]
        assert question["inEditor"] is True and question["answers"] == ["Forget", "Cancel"]
        assert "forget fact #1" in question["message"]
        assert await fact_ids(client) == [1]

        changed = client.protocol.wait_for_notification_async("lecode/facts/didChange")
        told = shown_next(client)
        person.release()
        await asyncio.wait_for(changed, 10)
        assert (await asyncio.wait_for(told, 10)).message.startswith("lecode: forgot fact #1")
        assert await fact_ids(client) == []
        assert [p.message for p in person.asked] == [question["message"]]

    async def test_cancel_forgets_nothing(self, start: Start, repo: Path, doc: str) -> None:
        client = await start(repo)
        person = LatePerson(client, "Cancel")
        await call(client, "lecode/facts/rememberSelection", {"uri": doc, "range": WHOLE_PORT_LINE})
        await run(client, "lecode.anchor.forget", {"factId": 1})
        told = shown_next(client)
        person.release()
        assert (await asyncio.wait_for(told, 10)).message == (
            "lecode: fact #1 is kept; nothing was forgotten."
        )
        assert await fact_ids(client) == [1]
        # Closed once answered: the command that would answer it finds none.
        error = await error_of(run(client, "lecode.answer", {"questionId": 1, "answer": "Forget"}))
        assert error.data["code"] == "question_not_found"

    async def test_lecode_answer_may_answer_a_question_the_editor_shows(
        self, start: Start, repo: Path, doc: str
    ) -> None:
        client = await start(repo)
        person = LatePerson(client, "Cancel")  # the dialog stays open meanwhile
        await call(client, "lecode/facts/rememberSelection", {"uri": doc, "range": WHOLE_PORT_LINE})
        question = (await run(client, "lecode.anchor.forget", {"factId": 1}))["question"]
        changed = client.protocol.wait_for_notification_async("lecode/facts/didChange")
        confirm = question["confirm"]
        assert await run(client, confirm["command"], *confirm["arguments"]) == {
            "questionId": question["questionId"],
            "yes": True,
        }
        await asyncio.wait_for(changed, 10)
        assert await fact_ids(client) == []
        # The dialog's late Cancel changes nothing: that question was answered.
        person.release()
        assert (await call(client, "lecode/ping")) is not None
        assert await fact_ids(client) == []


class TestForgetInAnEditorWithoutPrompts:
    async def test_forget_then_its_confirm_code_action_forgets(
        self, start: Start, repo: Path, doc: str
    ) -> None:
        client = await start(repo, capabilities=UNASKABLE)
        fix_code_action_parsing(client)
        helix = NoPrompt(client)
        open_doc(client, doc, SOURCE)
        await call(client, "lecode/facts/rememberSelection", {"uri": doc, "range": WHOLE_PORT_LINE})
        assert [a.title for a in await actions_in(client, doc)] == []

        announced = shown_next(client)
        result = await run(client, "lecode.anchor.forget", {"factId": 1})
        question = result["question"]
        assert question["inEditor"] is False
        assert question["confirm"] == {
            "title": "Forget fact #1 (confirm)",
            "command": "lecode.answer",
            "arguments": [{"questionId": question["questionId"], "answer": "Forget"}],
        }
        assert (await asyncio.wait_for(announced, 10)).message == (
            "lecode: forget fact #1 and exclude its evidence for good? To answer, run the code "
            'action "Forget fact #1 (confirm)" or "Keep fact #1 (cancel the forget)" (offered '
            "in every file)."
        )
        assert await fact_ids(client) == [1]

        # Offered in any document, not only where the fact is anchored.
        offered = await actions_in(client, doc)
        assert [a.title for a in offered] == [
            "Forget fact #1 (confirm)",
            "Keep fact #1 (cancel the forget)",
        ]
        told = shown_next(client)
        assert await run_action(client, offered[0]) == {
            "questionId": question["questionId"],
            "yes": True,
        }
        assert (await asyncio.wait_for(told, 10)).message.startswith("lecode: forgot fact #1")
        assert await fact_ids(client) == []
        assert await actions_in(client, doc) == []  # answered: no longer offered
        assert helix.requests == 0  # never asked with the request it cannot answer

    async def test_keep_forgets_nothing_and_a_second_answer_is_refused(
        self, start: Start, repo: Path, doc: str
    ) -> None:
        client = await start(repo, capabilities=UNASKABLE)
        fix_code_action_parsing(client)
        NoPrompt(client)
        open_doc(client, doc, SOURCE)
        await call(client, "lecode/facts/rememberSelection", {"uri": doc, "range": WHOLE_PORT_LINE})
        question = (await run(client, "lecode.anchor.forget", {"factId": 1}))["question"]
        keep = (await actions_in(client, doc))[1]
        assert await run_action(client, keep) == {
            "questionId": question["questionId"],
            "yes": False,
        }
        error = await error_of(run(client, *_confirm(question)))
        assert error.data["code"] == "question_not_found"
        assert await fact_ids(client) == [1]


def _confirm(question: dict[str, Any]) -> tuple[Any, ...]:
    return (question["confirm"]["command"], *question["confirm"]["arguments"])


class TestAnswers:
    async def test_an_answer_must_be_one_of_the_questions_two(
        self, start: Start, repo: Path, doc: str
    ) -> None:
        client = await start(repo, capabilities=UNASKABLE)
        await call(client, "lecode/facts/rememberSelection", {"uri": doc, "range": WHOLE_PORT_LINE})
        question = (await run(client, "lecode.anchor.forget", {"factId": 1}))["question"]
        answer = {"questionId": question["questionId"], "answer": "Yes"}
        error = await error_of(run(client, "lecode.answer", answer))
        assert (error.code, error.data) == (-32602, {"code": "invalid_params", "field": "answer"})
        error = await error_of(run(client, "lecode.answer", {"questionId": 99, "answer": "x"}))
        assert error.data == {"code": "question_not_found", "field": "questionId"}
        error = await error_of(run(client, "lecode.answer", {"questionId": "1", "answer": "x"}))
        assert error.data["field"] == "questionId"
        assert await fact_ids(client) == [1]

    async def test_at_most_16_questions_wait_and_shutdown_answers_no(
        self, start: Start, repo: Path, doc: str
    ) -> None:
        client = await start(repo, capabilities=UNASKABLE)
        await call(client, "lecode/facts/rememberSelection", {"uri": doc, "range": WHOLE_PORT_LINE})
        for _ in range(16):
            await run(client, "lecode.anchor.forget", {"factId": 1})
        error = await error_of(run(client, "lecode.anchor.forget", {"factId": 1}))
        assert error.data["code"] == "questions_pending"
        assert await fact_ids(client) == [1]

    async def test_a_forgotten_fact_is_not_asked_about(
        self, start: Start, repo: Path, doc: str
    ) -> None:
        client = await start(repo, capabilities=UNASKABLE)
        await call(client, "lecode/facts/rememberSelection", {"uri": doc, "range": WHOLE_PORT_LINE})
        await call(client, "lecode/facts/forget", {"factId": 1})
        error = await error_of(run(client, "lecode.anchor.forget", {"factId": 1}))
        assert error.data["code"] == "fact_not_found"


class TestDeleteSession:
    @pytest.mark.parametrize("askable", [True, False], ids=["prompt", "code action"])
    async def test_delete_happens_on_the_yes_only(
        self, start: Start, repo: Path, askable: bool
    ) -> None:
        client = await start(repo, **({} if askable else {"capabilities": UNASKABLE}))
        person = LatePerson(client, "Delete") if askable else None
        if not askable:
            NoPrompt(client)
        session = await imported(client)
        await remember(client, session, 3, FACT)
        result = await run(client, "lecode.session.delete", {"sessionId": session})
        question = result["question"]
        assert result["citingFacts"] == 1
        assert question["answers"] == ["Delete", "Cancel"] and question["inEditor"] is askable
        assert "1 fact cites it: it becomes missing" in question["message"]
        listed = await call(client, "lecode/session/list")
        assert [s["sessionId"] for s in listed["sessions"]] == [session]

        told = shown_next(client)
        if person is not None:
            person.release()
        else:
            await run(client, *_confirm(question))
        assert (await asyncio.wait_for(told, 10)).message == (
            f"lecode: deleted session {session}. 1 fact is missing now."
        )
        assert (await call(client, "lecode/session/list"))["sessions"] == []
        [fact] = (await call(client, "lecode/facts/list"))["facts"]
        assert fact["status"] == "missing"


class TestSlashForget:
    async def test_the_memory_command_answers_with_the_question_and_forgets_on_allow(
        self, start: Start, repo: Path
    ) -> None:
        client = await start(repo, capabilities=UNASKABLE)
        NoPrompt(client)
        session = await imported(client)
        fact = (await remember(client, session, 3, FACT))["factId"]
        output = await command(client, f"forget {fact}")
        assert output.startswith(
            f"lecode: /memory wants to run memory_forget: forget fact {fact} and exclude"
        )
        assert 'the code action "Allow memory_forget (/memory asks)"' in output
        assert await fact_ids(client) == [fact]

        told = shown_next(client)
        allow = next(a for a in await _all_actions(client, repo) if a.title.startswith("Allow"))
        await run_action(client, allow)
        assert (await asyncio.wait_for(told, 10)).message == (
            f"Fact #{fact} is forgotten; the transcript positions it cited are excluded for good."
        )
        assert await fact_ids(client) == []

    async def test_a_line_that_needs_no_question_answers_with_its_output(
        self, start: Start, repo: Path
    ) -> None:
        client = await start(repo, capabilities=UNASKABLE)
        assert await command(client, "facts") == "No facts."


async def _all_actions(client: LanguageClient, repo: Path) -> list[types.CodeAction]:
    fix_code_action_parsing(client)
    readme = uri(repo / "README.md")
    open_doc(client, readme, (repo / "README.md").read_text())
    return await actions_in(client, readme)


class TestChatPermissionWithoutPrompts:
    @pytest.mark.parametrize("answer", ["Allow", "Deny"])
    async def test_a_turn_waits_for_the_code_action_that_answers(
        self, start: Start, repo: Path, answer: str
    ) -> None:
        write = {"file": "MEMORY.md", "content": "Build with make.", "mode": "replace"}
        async with FakeOpenAI() as server:
            server.push(Stream(tool_chunks("memory_write", write)), Stream(text_chunks("ok")))
            client = await chat_client(start, repo, server, capabilities=UNASKABLE)
            helix = NoPrompt(client)
            session = await new_session(client)
            announced = shown_next(client)
            turn = asyncio.ensure_future(
                call(client, "lecode/chat/send", {"sessionId": session, "text": "remember make"})
            )
            message = (await asyncio.wait_for(announced, 10)).message
            assert message.startswith("lecode: the model wants to run memory_write")
            actions = await _all_actions(client, repo)
            assert [a.title for a in actions] == [
                "Allow memory_write (the model asks)",
                "Deny memory_write (the model asks)",
            ]
            assert not turn.done()
            await run_action(client, actions[0 if answer == "Allow" else 1])
            result = await asyncio.wait_for(turn, 30)
            assert result["stopReason"] == "stop"
            read = await call(client, "lecode/memory/read", {"file": "MEMORY.md"})
            assert read["exists"] is (answer == "Allow")
            assert helix.requests == 0
            tool_result = json.loads(server.requests[1].body["messages"][-1]["content"])
            assert ("error" in tool_result) is (answer == "Deny")
