"""The JSON objects of questions: what a command that asked returns, and an answer."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from lecode_ls.server.messages import Message, Params


class CommandModel(Message):
    """An LSP `Command`: what an editor runs with `workspace/executeCommand`."""

    title: str
    """What to show the person."""
    command: str
    """The command's name."""
    arguments: list[Any]
    """Its arguments, as they are to be sent."""


class QuestionModel(Message):
    """A question put to the person, waiting for an answer. What it decides happens when the
    answer comes; its outcome is shown then (`window/showMessage`)."""

    question_id: int
    """The question's ID (for `lecode.answer`)."""
    message: str
    """The question, as the person sees it."""
    answers: list[str]
    """The yes (the change happens) and the no, in that order."""
    in_editor: bool
    """true: asked with `window/showMessageRequest` (the client advertised `window.showMessage`);
    false: announced with `window/showMessage` and offered as the code actions `confirm` and
    `cancel` in every document."""
    confirm: CommandModel
    """Runs the yes (`lecode.answer`), for an editor that shows it as it likes."""
    cancel: CommandModel
    """Runs the no."""


class AnswerParams(Params):
    question_id: int = Field(ge=1)
    """The question (its `questionId`)."""
    answer: str = Field(max_length=64)
    """One of its `answers`."""


class AnswerCommand(Params):
    params: AnswerParams
    """The answer."""


class AnswerResult(Message):
    question_id: int
    """The question answered."""
    yes: bool
    """Whether the answer was the yes: what it allows now happens, and its outcome is shown."""
