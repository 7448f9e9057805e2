"""The protocol table's code-anchor methods and commands (see protocol.py)."""

from __future__ import annotations

from lecode_ls.server.anchors import handlers
from lecode_ls.server.anchors.messages import (
    AnchorsDidChangeParams,
    AskedResult,
    CorrectSelectionCommand,
    CorrectSelectionParams,
    FactRefCommand,
    ReanchorCommand,
    ReanchorParams,
    ReanchorResult,
    RememberSelectionCommand,
    RememberSelectionParams,
    SelectionResult,
)
from lecode_ls.server.facts.messages import RecallFactResult
from lecode_ls.server.method import DIGEST, SID, WS, Method

URI = WS + "/src/app.py"
RANGE = {"start": {"line": 11, "character": 0}, "end": {"line": 12, "character": 0}}
ANCHOR = {
    "index": 0,
    "path": "src/app.py",
    "startLine": 12,
    "endLine": 12,
    "sha256": DIGEST,
    "commit": "3f2a9c41d0b7e5a6c8f9d0e1a2b3c4d5e6f7a8b9",
    "capturedAt": "2026-11-29T10:00:00.000Z",
    "status": "current",
    "currentStartLine": 12,
    "currentEndLine": 12,
    "checkedAgainst": "buffer",
}
SELECTION_ERRORS = (
    "memory_disabled",
    "invalid_params",
    "outside_workspace",
    "not_found",
    "file_too_large",
    "invalid_session_id",
    "session_not_found",
    "session_busy",
)
SELECTION_NOTES = (
    "The exchange is one user message quoting `path` lines a-b, the wording and the lines "
    "(fenced); its seq is the fact's evidence, snapshotted like `lecode/session/snapshot`.",
    "The anchor hashes the open buffer's text when the document is open (unsaved edits "
    "included), else the file on disk (at most 1 MiB of UTF-8).",
)
REMEMBER = {"uri": URI, "range": RANGE, "text": "The app listens on port 8080."}
SELECTED = {"factId": 7, "revision": 1, "sessionId": SID, "seqs": [1], "anchor": ANCHOR}
REANCHOR = {"factId": 7, "expectedRevision": 1, "uri": URI, "range": RANGE}

METHODS: tuple[Method, ...] = (
    Method(
        "lecode/facts/rememberSelection",
        "request",
        "Remember a fact about lines of a file, in one step: the selection and the person's "
        "wording become an exchange in a session (the fact's evidence), and the fact is stored "
        "with that source and a code anchor of the selected lines. Sends "
        "`lecode/facts/didChange`; diagnostics and lenses of open documents follow.",
        RememberSelectionParams,
        SelectionResult,
        handler=handlers.remember_selection,
        errors=(*SELECTION_ERRORS, "duplicate_fact"),
        example_params=REMEMBER,
        example_result=SELECTED,
        notes=SELECTION_NOTES,
    ),
    Method(
        "lecode/facts/correctSelection",
        "request",
        "Correct a fact from lines of a file: as `lecode/facts/rememberSelection`, but the "
        "exchange corrects fact `factId`, which gets a new revision with that evidence and an "
        "anchor of the selection (the old revision's anchors stay with it).",
        CorrectSelectionParams,
        SelectionResult,
        handler=handlers.correct_selection,
        errors=(*SELECTION_ERRORS, "fact_not_found", "stale_revision"),
        example_params={**REMEMBER, "factId": 7, "expectedRevision": 1},
        example_result={**SELECTED, "revision": 2},
        notes=SELECTION_NOTES,
    ),
    Method(
        "lecode/facts/reanchor",
        "request",
        "Move anchor `index` of a fact's current revision to lines as they are now (new hash "
        "and commit). The fact's text, revision and evidence do not change.",
        ReanchorParams,
        ReanchorResult,
        handler=handlers.reanchor,
        errors=(
            "memory_disabled",
            "invalid_params",
            "outside_workspace",
            "not_found",
            "file_too_large",
            "fact_not_found",
            "stale_revision",
        ),
        example_params=REANCHOR,
        example_result={"factId": 7, "revision": 1, "anchor": ANCHOR},
    ),
    Method(
        "lecode/anchors/didChange",
        "notification",
        "Server to client, when the drift of anchors in some files changed (an edit, a fact "
        "change): refresh views of facts' anchors. Not sent when a change leaves every "
        "anchor's status and place as they were.",
        AnchorsDidChangeParams,
        None,
        example_params={
            "workspaceUri": WS,
            "projectRoot": "/home/me/project",
            "paths": ["src/app.py"],
        },
    ),
)

COMMANDS: tuple[Method, ...] = (
    Method(
        "lecode.anchor.rememberSelection",
        "command",
        "`workspace/executeCommand` form of `lecode/facts/rememberSelection` (the command of "
        "the `Remember selection as fact` code action, which sends no `text`).",
        RememberSelectionCommand,
        SelectionResult,
        handler=handlers.remember_selection_command,
        errors=(*SELECTION_ERRORS, "duplicate_fact"),
        example_params=[{"uri": URI, "range": RANGE}],
        example_result=SELECTED,
    ),
    Method(
        "lecode.anchor.correctSelection",
        "command",
        "`workspace/executeCommand` form of `lecode/facts/correctSelection` (the `Correct fact` "
        "code action of a drifted anchor, which sends no `text`: an editor with an input box "
        "should ask for the wording and send the request instead).",
        CorrectSelectionCommand,
        SelectionResult,
        handler=handlers.correct_selection_command,
        errors=(*SELECTION_ERRORS, "fact_not_found", "stale_revision"),
        example_params=[{"uri": URI, "range": RANGE, "factId": 7, "expectedRevision": 1}],
        example_result={**SELECTED, "revision": 2},
    ),
    Method(
        "lecode.anchor.reanchor",
        "command",
        "`workspace/executeCommand` form of `lecode/facts/reanchor` (the `Re-anchor` code "
        "action of a drifted anchor).",
        ReanchorCommand,
        ReanchorResult,
        handler=handlers.reanchor_command,
        errors=("memory_disabled", "invalid_params", "fact_not_found", "stale_revision"),
        example_params=[{**REANCHOR, "index": 0}],
        example_result={"factId": 7, "revision": 1, "anchor": ANCHOR},
    ),
    Method(
        "lecode.anchor.forget",
        "command",
        "Forget a fact (the `Forget fact` code action), once the person says Forget: the "
        "command answers at once with the question it asked (naming the other facts the "
        "forget would hide) and never waits for the answer inside the request. Asked with "
        "`window/showMessageRequest` (Forget / Cancel) when the client advertised "
        "`window.showMessage`, else offered as the code actions `Forget fact #N (confirm)` and "
        "`Keep fact #N` (see `lecode.answer`). On Forget the fact is forgotten, "
        "`lecode/facts/didChange` is sent and `window/showMessage` says so; on anything else "
        "nothing is forgotten.",
        FactRefCommand,
        AskedResult,
        handler=handlers.forget_command,
        errors=("memory_disabled", "fact_not_found", "questions_pending"),
        example_params=[{"factId": 7}],
        example_result={
            "question": {
                "questionId": 3,
                "message": "lecode: forget fact #7 and exclude its evidence for good?",
                "answers": ["Forget", "Cancel"],
                "inEditor": False,
                "confirm": {
                    "title": "Forget fact #7 (confirm)",
                    "command": "lecode.answer",
                    "arguments": [{"questionId": 3, "answer": "Forget"}],
                },
                "cancel": {
                    "title": "Keep fact #7 (cancel the forget)",
                    "command": "lecode.answer",
                    "arguments": [{"questionId": 3, "answer": "Cancel"}],
                },
            },
            "hides": [],
        },
    ),
    Method(
        "lecode.anchor.show",
        "command",
        "Show a fact (the command of its CodeLens): `window/showMessage` with its text when "
        "its evidence is valid; the result is `lecode/facts/recall`'s first page.",
        FactRefCommand,
        RecallFactResult,
        handler=handlers.show_command,
        errors=("memory_disabled", "fact_not_found"),
        example_params=[{"factId": 7}],
        example_result={"factId": 7, "revision": 1, "status": "valid"},
    ),
)
