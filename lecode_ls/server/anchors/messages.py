"""The JSON objects of code anchors: anchored selections, re-anchoring, drift news."""

from __future__ import annotations

from pydantic import Field

from lecode_ls.server.facts.messages import AnchorModel
from lecode_ls.server.messages import Message, Params, WorkspaceParams
from lecode_ls.server.questions.messages import QuestionModel


class PositionModel(Params):
    line: int = Field(ge=0, le=10_000_000)
    """0-based line (LSP)."""
    character: int = Field(ge=0, le=10_000_000)
    """0-based UTF-16 offset in the line (LSP)."""


class RangeModel(Params):
    """An LSP range. Anchors cover whole lines: `start.line` to `end.line`, but an end at
    character 0 of a later line leaves that line out (a selection of whole lines)."""

    start: PositionModel
    """Where the selection starts."""
    end: PositionModel
    """Where it ends (exclusive, LSP)."""


class SelectionParams(WorkspaceParams):
    uri: str = Field(max_length=4096)
    """`file://` URI of the document (open or on disk) inside a workspace folder."""
    range: RangeModel
    """The selection (whole lines are anchored, at most 200)."""
    text: str | None = Field(None, min_length=1, max_length=4096)
    """The fact in the person's words. Absent: one line gives `path contains "<line>"`, several
    give `path lines a-b: "<first line>" ...`."""
    session_id: str | None = Field(None, max_length=64)
    """The session that records the exchange; default: the project's "Remembered in the
    editor" session (made on first use)."""


class RememberSelectionParams(SelectionParams):
    pass


class CorrectSelectionParams(SelectionParams):
    fact_id: int = Field(ge=1)
    """The fact to correct."""
    expected_revision: int = Field(ge=1)
    """The revision the correction was made against (optimistic check)."""


class SelectionResult(Message):
    fact_id: int
    """The fact's ID."""
    revision: int
    """Its revision now (the new one after a correction)."""
    session_id: str
    """The session holding the exchange that is the fact's evidence."""
    seqs: list[int]
    """The evidence's seqs in that session."""
    anchor: AnchorModel
    """The anchor of the selection."""


class ReanchorParams(WorkspaceParams):
    fact_id: int = Field(ge=1)
    """The fact whose anchor moves."""
    expected_revision: int = Field(ge=1)
    """Its current revision (optimistic check)."""
    index: int = Field(0, ge=0, le=7)
    """Which anchor of that revision (default the first)."""
    uri: str = Field(max_length=4096)
    """`file://` URI of the document the lines are in now."""
    range: RangeModel
    """The lines the anchor covers from now on."""


class ReanchorResult(Message):
    fact_id: int
    """The fact's ID."""
    revision: int
    """Its revision (unchanged)."""
    anchor: AnchorModel
    """The anchor as it is now stored."""


class FactRefParams(WorkspaceParams):
    fact_id: int = Field(ge=1)
    """The fact."""


class AskedResult(Message):
    question: QuestionModel
    """What the person was asked; the forget happens on their Forget, and only then."""
    hides: list[int]
    """The other facts whose evidence the forget would exclude: hidden from recall and injection
    once it is done."""


class AnchorsDidChangeParams(Message):
    workspace_uri: str
    """The workspace folder URI of the project."""
    project_root: str
    """The project whose anchors' drift changed."""
    paths: list[str]
    """The checkout-relative files whose anchors changed status (or gained or lost anchors): after
    an edit, that file; after a change of the checkout in Git (a branch switch, a commit, a
    `git mv`, noticed within a second), every anchored file whose anchors changed, at most
    1,000."""


# Command forms: `workspace/executeCommand` arguments are positional; each command takes ONE
# argument, the object its request takes.


class RememberSelectionCommand(Params):
    params: RememberSelectionParams
    """The params of `lecode/facts/rememberSelection`."""


class CorrectSelectionCommand(Params):
    params: CorrectSelectionParams
    """The params of `lecode/facts/correctSelection`."""


class ReanchorCommand(Params):
    params: ReanchorParams
    """The params of `lecode/facts/reanchor`."""


class FactRefCommand(Params):
    params: FactRefParams
    """`{workspaceUri?, factId}`."""
