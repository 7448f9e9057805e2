"""The JSON objects of the fact methods (the source reference they share is in sessions/)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from lecode_ls.server.messages import Message, Params, WorkspaceParams
from lecode_ls.server.sessions.messages import SourceRefModel

AnchorStatus = Literal["current", "moved", "changed", "deleted", "unchecked"]


class AnchorModel(Message):
    """One code anchor of a fact's current revision and its drift now."""

    index: int
    """Its position among the revision's anchors (0-based; `lecode/facts/reanchor` takes it)."""
    path: str
    """The file, relative to its checkout root, "/"-separated."""
    start_line: int
    """First anchored line as captured (1-based, inclusive)."""
    end_line: int
    """Last anchored line as captured (1-based, inclusive)."""
    sha256: str
    """`sha256:` + hex of the lines' text joined with `\\n` (line endings dropped)."""
    commit: str | None
    """The commit checked out when captured; null outside Git."""
    captured_at: str
    """When it was captured (ISO 8601, UTC)."""
    status: AnchorStatus
    """current (same lines in place), moved (found elsewhere: followed), changed (not in the
    file), deleted (file gone, or it ends before the lines), unchecked (file over 1 MiB, not
    text, outside the workspace, or past 200 anchors in the file)."""
    current_path: str | None = None
    """The file Git says `path` was renamed to (`git mv`, or a commit since the capture), where
    the anchor was checked and is shown: the lines are then `moved` or `changed`; absent when
    the file was not renamed or Git cannot tell (a plain move, or no `git` on PATH)."""
    current_start_line: int | None = None
    """Where the lines are now (1-based): the captured place when current, the new one when
    moved; absent otherwise."""
    current_end_line: int | None = None
    """Last line of where they are now."""
    checked_against: Literal["buffer", "disk"] | None = None
    """The editor's open buffer (unsaved edits count) or the file on disk; absent when
    unchecked."""


class FactsListParams(WorkspaceParams):
    offset: int = Field(0, ge=0)
    """Index of the first fact of the page (pass back `nextOffset`)."""
    session_id: str | None = Field(None, max_length=64)
    """Report that session's latest automatic learning (default: the newest sessions')."""
    path: str | None = Field(None, min_length=1, max_length=4096)
    """Only the facts anchored in this file: a `file://` URI inside a workspace folder, or a
    path relative to its checkout root as anchors store it. Paging runs over those facts."""
    query: str | None = Field(None, max_length=262_144)
    """The facts that best match these words, best first (BM25 over every fact's current text;
    identifiers split, English stemmed, any script), each with the words it `matched`: at
    most 200 in all, paged as usual. Any text: its search syntax is words (the first 16,384
    characters are read). With `path`, only the matching facts anchored in that file."""


class SharedModel(Message):
    """A fact shared with the team (`lecode/facts/share`): which file, who shared it, when."""

    team_id: str
    """The shared fact's ID (20 hex digits)."""
    file: str
    """Its file, relative to the checkout root (`.lecode/facts/<teamId>.json`)."""
    shared_by: str | None = None
    """The sharer's Git `user.name` (or `[team] name`), as the file says: untrusted."""
    shared_at: str | None = None
    """When it was shared (ISO 8601 UTC), as the file says."""


FactStatus = Literal["valid", "retired", "missing", "stale", "hidden", "unverified"]
"""A fact's status: `retired` is a valid fact the person retired (listed, recallable with its
evidence, restorable; not injected, not known to learning)."""


class FactEntry(Message):
    fact_id: int
    """The fact's ID."""
    revision: int
    """Its current revision."""
    status: FactStatus
    """Whether its current evidence validates now (`retired`: it does, and it is retired)."""
    source: SourceRefModel | None = None
    """Its evidence (valid facts only)."""
    text: str | None = None
    """Its text, at most 512 characters (valid facts only; untrusted data)."""
    shared: SharedModel | None = None
    """The file it is shared in, in the first folder's checkout; absent when not shared."""
    fact_text_truncated: bool | None = None
    """Whether `text` was cut at 512 characters."""
    anchors: list[AnchorModel] | None = None
    """The current revision's code anchors and their drift now; absent when it has none."""
    pinned: bool | None = None
    """true when the person pinned it (injected first); absent otherwise."""
    matched: list[str] | None = None
    """With `query`: the query's words it holds, as the query spelled them (valid facts)."""
    last_used: str | None = None
    """When it was last used (ISO 8601 UTC): shown to a model in a turn, recalled by ID, or
    returned by a query; absent when never."""
    uses: int | None = None
    """How many times it was used (a turn counts once); absent when never."""


class RetirementModel(Message):
    fact_id: int
    """The fact proposed for retirement (accept with `lecode/facts/retire`; dismiss with
    `lecode/facts/restore`, which keeps it and starts its unused clock again)."""
    why: str
    """Why it is proposed: `unused since <date>` or `never used since <date>`."""
    since: str
    """Its last use, write or keep (ISO 8601 UTC)."""


class LearnedFactModel(Message):
    fact_id: int
    """The fact's ID."""
    revision: int
    """Its revision when it was learned (an equal existing fact is returned unchanged)."""


class ProposalModel(Message):
    index: int
    """Its index in its learning event (what `lecode/facts/dismissProposal` takes)."""
    text: str
    """The proposed fact (untrusted: the model's classification, source-checked)."""
    kind: Literal["explicit_user_preference", "verified_project_fact"]
    """What kind of evidence backs it."""
    source: SourceRefModel
    """Its captured evidence, valid now (accept it with `lecode/facts/remember`)."""
    conflicts: list[LearnedFactModel]
    """Existing facts it would contradict or correct, at their current revision (resolve
    with `lecode/facts/correct`)."""
    why: str
    """Why it is a proposal and not a fact: `near-duplicate of #n` (its words nearly repeat
    that fact's: a proposed correction of it), `supersedes #n` (the model said so), `worded as a correction`,
    `reads as a request: "<quote>"`, `the model was not sure` (at most 200 characters)."""


class LearningModel(Message):
    """The latest automatic learning attempt."""

    session_id: str
    """The session it ran in."""
    seq: int
    """Its `learning` event's seq (a proposal is named by this seq and its index)."""
    status: Literal["no_candidates", "rejected", "learned", "proposed", "failed", "stale"]
    """How it went."""
    reason_counts: dict[str, int]
    """Per fixed reason code, how many candidates (or responses) failed that check first. Beyond
    the seed's codes, the rules' verdicts on a sentence that reads like a convention but is not
    a lasting one of the person's own (issue 41): `one_off_request` (a request or a question),
    `hypothetical`, `past_practice`, `observation` (what happens, not what is done by choice:
    "we always forget to ..."), `task_scoped` ("this PR", "here", "the fix", "to
    reproduce ..."), `no_lasting_scope` (nothing project-, team- or habit-wide),
    `retracted_preference` (taken back later in its message) and `unsupported_script` (not in
    Latin script: the rules read English only)."""
    learned: list[LearnedFactModel]
    """The facts it remembered."""
    proposals: list[ProposalModel]
    """Candidates left for review that still validate (same epoch, source valid now): what the
    rules alone found (with `[memory] rules_learn = "propose"`, the default), the ones the model
    marked uncertain or conflicting, worded as a correction, or preferences whose quote reads as
    a request or a question. Accept one with `lecode/facts/acceptProposal`."""
    omitted_proposals: int = 0
    """Valid proposals left out to keep this status within 8,192 bytes: accept or dismiss the
    ones shown to see them."""


class FactsListResult(Message):
    facts: list[FactEntry]
    """At most 20 facts, in ID order (with `query`: best first); the page with its `learning`
    status is within 16,384 bytes."""
    offset: int
    """Offset of this page."""
    next_offset: int | None
    """Offset of the next page; null when this is the last."""
    learning: LearningModel | None = None
    """The latest automatic learning attempt, when there is one: of `sessionId` when given,
    else of the newest sessions."""
    retirements: list[RetirementModel] | None = None
    """The first page of a listing without `query` or `path`: the facts proposed for retirement
    (unused for `[memory] retire_after_days`; not retired, not pinned), the longest unused first,
    at most 50. Nothing is retired until the person says so."""


class FactsGetParams(WorkspaceParams):
    fact_id: int = Field(ge=1)
    """The fact."""


class FactsRememberParams(WorkspaceParams):
    text: str = Field(min_length=1, max_length=4096)
    """The fact."""
    source: SourceRefModel
    """Its evidence, from `lecode/session/snapshot` (validated now, and at every later use)."""


class FactRevisionResult(Message):
    fact_id: int
    """The fact's ID."""
    revision: int
    """Its current revision."""


class FactsRecallParams(WorkspaceParams):
    fact_id: int = Field(ge=1)
    """The fact's ID."""
    offset: int = Field(0, ge=0)
    """Character offset into `sourceText` (pass back `nextOffset`)."""
    limit: int | None = Field(None, ge=1)
    """Page size in characters (default 4096, at most 8192)."""


class ScrubbedRecord(Message):
    seq: int
    """The record."""
    scrub_id: int
    """The scrub that rewrote it (the latest)."""
    at: str
    """When (ISO 8601 UTC)."""


class RecallFactResult(Message):
    """A fact and a page of its evidence (R1-R7). Only a valid answer carries text."""

    fact_id: int
    """The fact's ID."""
    revision: int
    """Its current revision."""
    status: FactStatus
    """valid, retired (valid and retired: text and evidence still shown), unverified (no
    source), hidden (forgotten or undone evidence), missing, stale."""
    label: str | None = None
    """Reminder that recalled text is untrusted evidence, not instructions."""
    text: str | None = None
    """The fact's text, at most 512 characters."""
    fact_text_truncated: bool | None = None
    """Whether `text` was cut at 512 characters."""
    source: SourceRefModel | None = None
    """The evidence of the current revision."""
    source_text: str | None = None
    """One character page of a JSON array of the cited records."""
    offset: int | None = None
    """Offset of this page."""
    next_offset: int | None = None
    """Offset of the next page; null when this is the last."""
    scrubbed: list[ScrubbedRecord] | None = None
    """The cited records a secret scrub rewrote (`lecode/memory/scrubSecrets`), when any: the
    evidence was re-attached to their new digest then, so it is scrubbed, not tampered."""


class FactsCorrectParams(WorkspaceParams):
    fact_id: int = Field(ge=1)
    """The fact to correct."""
    expected_revision: int = Field(ge=1)
    """The revision the correction was made against (optimistic check)."""
    text: str = Field(min_length=1, max_length=4096)
    """The corrected text."""
    source: SourceRefModel
    """New evidence: it must include persisted user or assistant text."""


class FactsForgetParams(WorkspaceParams):
    fact_id: int = Field(ge=1)
    """The fact to forget, with all its revisions and the evidence they cite."""
    dry_run: bool = False
    """true: change nothing, only answer which other facts the forget would hide (`hides`), for
    the confirmation an editor shows first."""


class FactsForgetResult(Message):
    forgotten: bool
    """true the first time; false when the fact was already forgotten, and with `dryRun`."""
    hides: list[int] = Field(default_factory=list)
    """The other facts whose current evidence cites a position this forget excludes: they are
    hidden from recall and injection from now on (with `dryRun`: would be)."""


class FactsDidChangeParams(Message):
    workspace_uri: str
    """The workspace folder URI of the project."""
    project_root: str
    """The project whose facts changed (here or in another server process)."""
    generation: int
    """The project's exclusion generation (it grows with every forget)."""


class DismissProposalParams(WorkspaceParams):
    session_id: str = Field(max_length=64)
    """The session of the learning event (`learning.sessionId` of `lecode/facts/list`)."""
    seq: int = Field(ge=1)
    """The learning event's seq (`learning.seq`)."""
    index: int = Field(ge=0)
    """The proposal's `index`."""


class DismissProposalResult(Message):
    """An empty object."""


class FactsPinParams(WorkspaceParams):
    fact_id: int = Field(ge=1)
    """The fact to pin or unpin."""


class FactsPinResult(Message):
    fact_id: int
    """The fact."""
    pinned: bool
    """Whether it is pinned now."""
    changed: bool
    """false when it already was (pin) or was not (unpin)."""


class FactsRetireResult(Message):
    fact_id: int
    """The fact."""
    retired: bool
    """Whether it is retired now."""
    changed: bool
    """false when it already was (retire) or was not (restore)."""


class AcceptProposalCommand(Params):
    params: DismissProposalParams
    """`{workspaceUri?, sessionId, seq, index}`."""


class FactRetireCommand(Params):
    params: FactsPinParams
    """`{workspaceUri?, factId}`."""


class DoctorParams(WorkspaceParams):
    """Only the workspace folder (optional)."""


class CountedIds(Message):
    count: int
    """How many facts."""
    ids: list[int]
    """Their IDs, the first 50 in ID order."""


class StatusCounts(Message):
    valid: CountedIds
    retired: CountedIds
    missing: CountedIds
    stale: CountedIds
    hidden: CountedIds
    unverified: CountedIds


class Duplicates(Message):
    count: int
    """How many groups of stored facts share a dedup key (from before remembering refused
    duplicates: none are merged, so they are shown to be corrected or forgotten)."""
    groups: list[list[int]]
    """Each group's fact IDs (the first 50 groups, the first 10 IDs of each)."""


class NoteShareModel(Message):
    file: str
    """`MEMORY.md` or `scratchpad.md` (a file that is empty is left out)."""
    bytes: int
    """Its size (UTF-8 bytes of its text)."""
    shown: int
    """How many of them the memory injected into a chat request shows (its share of
    `[memory] max_bytes`, with the pinned and recent facts as a turn without a message has)."""
    cut: int
    """`bytes - shown`: what is cut (marked for the model, and in the chat's memory line)."""


class DoctorResult(Message):
    facts: int
    """How many facts are stored."""
    by_status: StatusCounts
    """Facts by status, each validated now as listings do."""
    drifted: CountedIds
    """Facts with a code anchor `changed` or `deleted`."""
    anchors_deleted: CountedIds
    """Facts whose anchors are all `deleted`."""
    duplicates: Duplicates
    """Stored facts that say the same thing (see `lecode/facts/remember`)."""
    never_used: CountedIds
    """Facts never shown to a model, recalled by ID or found by a query."""
    proposed_retirements: CountedIds
    """Facts proposed for retirement (`[memory] retire_after_days`)."""
    proposed_corrections: CountedIds
    """Facts that the latest learning's proposals would correct (their `conflicts`)."""
    notes: list[NoteShareModel]
    """MEMORY.md and the scratchpad against their share of the injected memory."""
