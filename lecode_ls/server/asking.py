"""Asking the person before something is destroyed or changed (T4): a forget, a session's
deletion, a memory change in chat or by a `/memory` line.

A question never waits inside the client's request that caused it, where editors time requests
out (eglot after 10 s): a command answers at once that it asked (`ask_later`), and what the
answer decides happens when it comes. Only a chat turn, a request that lasts as long as the
model works anyway, waits for its answers (`ask_person`).

How the person is asked depends on what the client said it can do:
- it advertised `window.showMessage` (VS Code, Neovim, current eglot): `window/showMessageRequest`
  with the two answers;
- it did not (Helix 25.x, eglot 1.9): a `window/showMessage` says what is asked, and the
  question is offered as two code actions in every document ("Forget fact #3 (confirm)"), which
  run the `lecode.answer` command. Any client can also run that command itself.
Anything but the explicit yes is a no: another answer, an error, a closed dialog, a cancelled
request, shutdown. Nothing is destroyed without an explicit yes.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from lsprotocol import types

from lecode_ls.errors import LecodeError, TooManyQuestions
from lecode_ls.server.questions.messages import CommandModel, QuestionModel
from lecode_ls.server.questions.state import Question, Questions
from lecode_ls.server.server import LecodeServer

log = logging.getLogger(__name__)

ALLOW, DENY = "Allow", "Deny"
ANSWER_COMMAND = "lecode.answer"


@dataclass(frozen=True)
class Ask:
    """What to ask: the sentence, the two answers, and the titles of their code actions."""

    message: str
    yes: str
    no: str
    yes_title: str
    no_title: str
    kept: str = ""
    """What `ask_later` shows on a no (nothing changed)."""


def asks_in_editor(ls: LecodeServer) -> bool:
    """Whether the client said it answers `window/showMessageRequest` (LSP 3.16's
    `window.showMessage` capability). Helix 25.x does not, and answers the request -32601."""
    window = ls.client_capabilities.window
    return window is not None and window.show_message is not None


def open_question(ls: LecodeServer, ask: Ask, *, after_reply: bool = False) -> Question:
    """Open a question and put it to the person (see the module's comment), right away or,
    with `after_reply`, once the response to the request being handled has gone out; raises
    TooManyQuestions when 16 are waiting."""
    question = ls.rooms.get(Questions).open(
        ask.message, ask.yes, ask.no, ask.yes_title, ask.no_title, in_editor=asks_in_editor(ls)
    )

    def put() -> None:
        if question.answer.done():  # withdrawn meanwhile
            return
        if question.in_editor:
            question.asking = ls.run_task(
                _request(ls, question), f"question-{question.question_id}"
            )
        else:
            _announce(ls, ask)

    if after_reply:
        ls.after_reply(put)
    else:
        put()
    return question


def _announce(ls: LecodeServer, ask: Ask) -> None:
    ls.window_show_message(
        types.ShowMessageParams(
            type=types.MessageType.Warning,
            message=f'{ask.message} To answer, run the code action "{ask.yes_title}" or '
            f'"{ask.no_title}" (offered in every file).',
        )
    )


async def _request(ls: LecodeServer, question: Question) -> None:
    try:
        answer = await ls.window_show_message_request_async(
            types.ShowMessageRequestParams(
                type=types.MessageType.Warning,
                message=question.message,
                actions=[
                    types.MessageActionItem(question.yes),
                    types.MessageActionItem(question.no),
                ],
            )
        )
    except Exception as exc:  # the client refused the request, or answered something else
        log.info(
            "question %d: the editor answered with an error (%s): no",
            question.question_id,
            type(exc).__name__,
        )
        answer = None
    yes = isinstance(answer, types.MessageActionItem) and answer.title == question.yes
    if not question.answer.done():
        question.answer.set_result(yes)


async def wait(ls: LecodeServer, question: Question) -> bool:
    """The answer (True only for the yes); the question is closed however this ends."""
    try:
        return await question.answer
    finally:
        ls.rooms.get(Questions).close(question.question_id)
        if question.asking is not None and not question.asking.done():
            question.asking.cancel()


async def ask_person(
    ls: LecodeServer,
    who: str,
    tool: str,
    summary: str,
    opened: Callable[[Question], None] | None = None,
) -> bool:
    """Whether the person allows `who` (the model, a slash command) to run `tool`; waits for the
    answer (a chat turn waits; see the module's comment). `opened` hears of the question as soon
    as it is put."""
    ask = Ask(
        message=f"lecode: {who} wants to run {tool}: {summary}",
        yes=ALLOW,
        no=DENY,
        yes_title=f"Allow {tool} ({who} asks)",
        no_title=f"Deny {tool} ({who} asks)",
    )
    try:
        # A line of the `lecode.memory` command (`opened` given) answers with the question
        # first: it is put after that response.
        question = open_question(ls, ask, after_reply=opened is not None)
    except TooManyQuestions:
        log.warning("%s asked to run %s while 16 questions wait: denied", who, tool)
        return False
    if opened is not None:
        opened(question)
    return await wait(ls, question)


def ask_later(
    ls: LecodeServer,
    ask: Ask,
    then: Callable[[], Coroutine[Any, Any, str]],
) -> QuestionModel:
    """Ask, and return at once: on the yes, `then()` runs and its sentence is shown
    (`window/showMessage`); a failure of it is shown as an error. On a no nothing happens."""
    question = open_question(ls, ask, after_reply=True)

    async def answered() -> None:
        if not await wait(ls, question):
            log.info("question %d answered no: nothing changed", question.question_id)
            if ask.kept:
                show_message(ls, types.MessageType.Info, ask.kept)
            return
        await show_outcome(ls, then(), "lecode", f"after question {question.question_id}")

    ls.run_task(answered(), f"answered-{question.question_id}")
    return question_model(question)


async def show_outcome(ls: LecodeServer, work: Awaitable[str], prefix: str, what: str) -> None:
    """Await work that runs after its request was answered, and show its sentence
    (`window/showMessage`), or its error: a LecodeError's message, else a pointer to the log
    (where `what` names it), never a traceback."""
    try:
        done = await work
    except LecodeError as exc:
        show_message(ls, types.MessageType.Error, f"{prefix}: {exc.message}")
    except Exception:
        log.exception("%s failed", what)
        show_message(
            ls,
            types.MessageType.Error,
            f"{prefix}: that failed inside lecode-ls; the server log has the details",
        )
    else:
        show_message(ls, types.MessageType.Info, done)


def show_message(ls: LecodeServer, kind: types.MessageType, message: str) -> None:
    with contextlib.suppress(Exception):  # the client may be gone by the time the answer came
        ls.window_show_message(types.ShowMessageParams(type=kind, message=message))


def _answer(question: Question, answer: str, title: str) -> CommandModel:
    return CommandModel(
        title=title,
        command=ANSWER_COMMAND,
        arguments=[{"questionId": question.question_id, "answer": answer}],
    )


def question_model(question: Question) -> QuestionModel:
    return QuestionModel(
        question_id=question.question_id,
        message=question.message,
        answers=[question.yes, question.no],
        in_editor=question.in_editor,
        confirm=_answer(question, question.yes, question.yes_title),
        cancel=_answer(question, question.no, question.no_title),
    )


def question_actions(ls: LecodeServer) -> list[types.CodeAction]:
    """The code actions that answer the questions a client without `showMessageRequest` was
    asked: offered in every document until answered."""
    actions = []
    for question in ls.rooms.get(Questions).waiting():
        if question.in_editor:
            continue
        for answer, title in ((question.yes, question.yes_title), (question.no, question.no_title)):
            actions.append(
                types.CodeAction(
                    title=title,
                    kind=types.CodeActionKind.QuickFix,
                    command=types.Command(
                        title=title,
                        command=ANSWER_COMMAND,
                        arguments=[{"questionId": question.question_id, "answer": answer}],
                    ),
                )
            )
    return actions
