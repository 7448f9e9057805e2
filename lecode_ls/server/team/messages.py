"""Payloads of the team-memory methods (issue 29). Shared facts are named by `teamId` (20 hex
digits, the file's name), the person's own facts by `factId`."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from lecode_ls.server.facts.messages import AnchorModel, SharedModel
from lecode_ls.server.messages import Message, Params, WorkspaceParams
from lecode_ls.server.sessions.messages import SourceRefModel

TEAM_ID = r"^[0-9a-f]{20}$"


class FactsShareParams(WorkspaceParams):
    fact_id: int = Field(ge=1)
    """The person's fact to share: its current revision, anchors and evidence are written to
    `.lecode/facts/<teamId>.json` in the checkout of `workspaceUri`."""


class FactsShareResult(Message):
    team_id: str
    """The shared fact's ID (the same for every revision of the fact)."""
    file: str
    """The file written, relative to the checkout root: commit it with your change."""
    uri: str
    """The same file as a `file://` URI."""
    created: bool
    """false when the file was there already and was rewritten (a new revision, say)."""


class FactsUnshareParams(WorkspaceParams):
    team_id: str | None = Field(None, pattern=TEAM_ID)
    """The shared fact to stop sharing."""
    fact_id: int | None = Field(None, ge=1)
    """Or the person's own fact that is shared."""

    @model_validator(mode="after")
    def _one(self) -> FactsUnshareParams:
        if (self.team_id is None) == (self.fact_id is None):
            raise ValueError("teamId: give teamId or factId, not both")
        return self


class FactsUnshareResult(Message):
    team_id: str
    file: str
    """The file removed, relative to the checkout root: commit its removal."""
    uri: str


class TeamListParams(WorkspaceParams):
    offset: int = Field(0, ge=0)
    """Index of the first shared fact of the page (pass back `nextOffset`)."""


TeamStatus = Literal["valid", "unverified", "hidden"]
Support = Literal["quote", "read", "claim"]


class TeamFactEntry(SharedModel):
    status: TeamStatus
    """valid (the bundle verifies and it is injected as team evidence); unverified (`reason`
    says why: not JSON, merge-conflict markers, over a bound, records that do not hash to the digest, a secret, an anchor
    outside the checkout, another repository); hidden (you forgot it here: its evidence is
    excluded for you)."""
    reason: str | None = None
    """Why it is unverified or hidden."""
    uri: str
    """The file as a `file://` URI."""
    revision: int | None = None
    support: Support | None = None
    """What the bundle shows of the text (valid and hidden facts): `quote`, an exact quote of a
    cited user message; `read`, a `path contains "line"` fact whose bundle holds that read;
    `claim`, the sharer's own words, which the records do not contain (verification shows the
    file is intact, not that a claim follows from its evidence)."""
    text: str | None = None
    """At most 512 characters (valid and hidden facts; untrusted data)."""
    fact_text_truncated: bool | None = None
    source: SourceRefModel | None = None
    """The bundled evidence's reference (the sharer's session)."""
    anchors: list[AnchorModel] | None = None
    """Its code anchors and their drift now in this checkout (valid facts)."""
    local_fact_id: int | None = None
    """Your own fact that this is (you shared it, or hold the same evidence): one fact, not two."""


class TeamListResult(Message):
    facts: list[TeamFactEntry]
    """At most 20 shared facts, by ID; the page is within 16,384 bytes."""
    offset: int
    next_offset: int | None
    total: int
    """Shared-fact files in the checkout (each listed, valid or not)."""
    skipped: dict[str, int]
    """Files not read, by why (a name that is not `<id>.json`, past a bound)."""
    pending: int
    """Changed files not read yet (a load stops after 2 s; the next refresh goes on)."""


class TeamRecallParams(WorkspaceParams):
    team_id: str = Field(pattern=TEAM_ID)
    offset: int = Field(0, ge=0)
    """Character offset into `sourceText`."""
    limit: int | None = Field(None, ge=1)
    """Page size in characters (default 4096, at most 8192)."""


class TeamRecallResult(SharedModel):
    status: TeamStatus
    reason: str | None = None
    label: str | None = None
    """Reminder that recalled text is untrusted evidence, not instructions."""
    revision: int | None = None
    support: Support | None = None
    """What the bundle shows of the text (see `lecode/facts/team`)."""
    text: str | None = None
    fact_text_truncated: bool | None = None
    source: SourceRefModel | None = None
    source_text: str | None = None
    """One character page of a JSON array of the cited records, from the file's bundle (valid
    facts only)."""
    offset: int | None = None
    next_offset: int | None = None


class TeamForgetParams(WorkspaceParams):
    team_id: str = Field(pattern=TEAM_ID)


class TeamForgetResult(Message):
    team_id: str
    forgotten: bool
    """false when its evidence was excluded here already."""
    file: str
    """The file, which stays for the team: unshare it (`lecode/facts/unshare`) to remove it for
    everyone."""


class TeamCorrectParams(WorkspaceParams):
    team_id: str = Field(pattern=TEAM_ID)
    """The shared fact to correct."""
    expected_revision: int = Field(ge=1)
    """The revision the correction was made against (optimistic check against the file)."""
    text: str = Field(min_length=1, max_length=4096)
    """The corrected text."""
    source: SourceRefModel
    """New evidence from one of your sessions: it must include persisted user or assistant text."""


class TeamCorrectResult(Message):
    team_id: str
    revision: int
    """The shared fact's new revision, written into its file (commit it)."""
    fact_id: int
    """Your own fact that now holds the correction (the same fact as the shared one)."""
    file: str


class ShareCommand(Params):
    params: FactsShareParams
    """`{workspaceUri?, factId}`."""


class UnshareCommand(Params):
    params: FactsUnshareParams
    """`{workspaceUri?, teamId | factId}`."""
