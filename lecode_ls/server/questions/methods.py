"""The protocol table's question command (see protocol.py)."""

from __future__ import annotations

from lecode_ls.server.method import Method
from lecode_ls.server.questions import handlers
from lecode_ls.server.questions.messages import AnswerCommand, AnswerResult

METHODS: tuple[Method, ...] = ()

COMMANDS: tuple[Method, ...] = (
    Method(
        "lecode.answer",
        "command",
        "Answer a question the server asked (a forget, a session's deletion, a memory change "
        "in chat): the code actions `confirm` and `cancel` of a client without "
        "`window/showMessageRequest` run it, and any client may. The yes lets the change "
        "happen now; its outcome is shown with `window/showMessage`. A question is answered "
        "once, by this or by the editor's prompt, whichever comes first.",
        AnswerCommand,
        AnswerResult,
        handler=handlers.answer_command,
        errors=("invalid_params", "question_not_found"),
        example_params=[{"questionId": 3, "answer": "Forget"}],
        example_result={"questionId": 3, "yes": True},
    ),
)
