"""The questions waiting for the person (server/questions/state.py): answered once, by one of
their two answers; anything else, withdrawal included, is a no; at most 16 wait.

# covers T4 (nothing changes without the person's explicit yes), issue 24
"""

from __future__ import annotations

import pytest

from lecode_ls.errors import InvalidParams, QuestionNotFound, TooManyQuestions
from lecode_ls.server.questions.state import LIMIT, Questions


def ask(questions: Questions) -> int:
    return questions.open("forget?", "Forget", "Cancel", "yes", "no", in_editor=False).question_id


class TestQuestions:
    async def test_the_yes_is_the_only_yes(self) -> None:
        questions = Questions()
        first, second = ask(questions), ask(questions)
        assert questions.answer(first, "Forget") is True
        assert questions.answer(second, "Cancel") is False
        assert [q.answer.result() for q in questions._open.values()] == [True, False]

    async def test_an_answer_not_offered_is_refused_and_the_question_stays(self) -> None:
        questions = Questions()
        question_id = ask(questions)
        with pytest.raises(InvalidParams, match="answer: question 1 takes 'Forget' or 'Cancel'"):
            questions.answer(question_id, "forget")
        assert [q.question_id for q in questions.waiting()] == [question_id]

    async def test_a_question_is_answered_once(self) -> None:
        questions = Questions()
        question_id = ask(questions)
        questions.answer(question_id, "Cancel")
        with pytest.raises(QuestionNotFound):
            questions.answer(question_id, "Forget")

    async def test_withdrawn_and_shut_down_questions_are_a_no(self) -> None:
        questions = Questions()
        first, second = ask(questions), ask(questions)
        answers = [q.answer for q in questions.waiting()]
        questions.close(first)
        questions.close_all()
        assert [a.result() for a in answers] == [False, False]
        with pytest.raises(QuestionNotFound):
            questions.answer(second, "Forget")

    async def test_at_most_16_wait_and_ids_are_never_reused(self) -> None:
        questions = Questions()
        ids = [ask(questions) for _ in range(LIMIT)]
        with pytest.raises(TooManyQuestions):
            ask(questions)
        questions.close(ids[0])
        assert ask(questions) == LIMIT + 1
