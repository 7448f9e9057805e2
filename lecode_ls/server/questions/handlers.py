"""Handler of `lecode.answer`: the person's answer to a question the server asked."""

from __future__ import annotations

from lecode_ls.server.questions import messages as p
from lecode_ls.server.questions.state import Questions
from lecode_ls.server.server import LecodeServer


async def answer_command(ls: LecodeServer, args: p.AnswerCommand) -> p.AnswerResult:
    yes = ls.rooms.get(Questions).answer(args.params.question_id, args.params.answer)
    return p.AnswerResult(question_id=args.params.question_id, yes=yes)
