"""The questions waiting for the person's answer, for the whole server
(`ls.rooms.get(Questions)`, from the questions' room: room.py).

asking.py opens and closes them. A question is answered once: by the editor's `window/showMessageRequest`, by the
`lecode.answer` command (the code actions of a client that cannot be asked run it), or by
nothing, when the request that asked is cancelled or the server shuts down: then it is a no.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from lecode_ls.errors import InvalidParams, QuestionNotFound, TooManyQuestions

LIMIT = 16
"""Questions open at once. One more is refused (`questions_pending`) rather than kept: a client
that never answers cannot make the server hold an unbounded number of them."""


@dataclass
class Question:
    """One question with two answers: `yes` (the change happens) and `no` (nothing happens)."""

    question_id: int
    message: str
    yes: str
    """The answer that allows the change ("Forget", "Delete", "Allow")."""
    no: str
    """The answer that refuses it ("Cancel", "Deny")."""
    yes_title: str
    """The code action that answers `yes` ("Forget fact #3 (confirm)")."""
    no_title: str
    """The code action that answers `no`."""
    in_editor: bool
    """Asked with `window/showMessageRequest`; otherwise offered as code actions."""
    answer: asyncio.Future[bool] = field(repr=False)
    asking: asyncio.Task[None] | None = field(default=None, repr=False)
    """The `window/showMessageRequest` in flight, when `in_editor`."""


class Questions:
    """The open questions, by ID (IDs count up from 1 and are never reused by one server)."""

    def __init__(self) -> None:
        self._open: dict[int, Question] = {}
        self._last = 0

    def open(
        self, message: str, yes: str, no: str, yes_title: str, no_title: str, *, in_editor: bool
    ) -> Question:
        if len(self._open) >= LIMIT:
            raise TooManyQuestions(
                f"{LIMIT} questions are already waiting for an answer; answer or cancel them first"
            )
        self._last += 1
        question = Question(
            self._last,
            message,
            yes,
            no,
            yes_title,
            no_title,
            in_editor,
            asyncio.get_running_loop().create_future(),
        )
        self._open[question.question_id] = question
        return question

    def close(self, question_id: int) -> None:
        """Forget the question; one not answered yet is a no."""
        question = self._open.pop(question_id, None)
        if question is not None and not question.answer.done():
            question.answer.set_result(False)

    def answer(self, question_id: int, answer: str) -> bool:
        """Answer an open question with one of its two answers; whether that was the yes."""
        question = self._open.get(question_id)
        if question is None or question.answer.done():
            raise QuestionNotFound(
                f"questionId: question {question_id} is not waiting for an answer (answered, "
                "withdrawn, or never asked)",
                field="questionId",
            )
        if answer not in (question.yes, question.no):
            raise InvalidParams(
                f"answer: question {question_id} takes {question.yes!r} or {question.no!r}",
                field="answer",
            )
        question.answer.set_result(answer == question.yes)
        return answer == question.yes

    def waiting(self) -> list[Question]:
        """The questions still waiting, oldest first."""
        return [q for q in self._open.values() if not q.answer.done()]

    def close_all(self) -> None:
        for question_id in list(self._open):
            self.close(question_id)
