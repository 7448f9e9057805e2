"""The operations on a project's facts, for every door.

Where doors once chose differently, one choice holds now (docs/reference/protocol.md, "One
operation for every door"):

- `remember` anchors a verified project fact (`path contains "line"`, A5) at the line its
  evidence read, whoever asks; a selection's own anchor is given instead.
- `correct` rewrites the fact's shared file when it is shared in the first folder's checkout
  (issue 29), whether the LSP, the model or `/memory` corrected it.
- `page` lists for an audience: the person (the editor's listing, `/memory facts`) sees the
  retirements proposed and which facts are shared; the model (`memory_list`) sees neither: both
  are the person's to decide.

Blocking: call from a worker thread.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from lecode_ls.actions.changes import FACTS, NOTHING, Done
from lecode_ls.errors import FactNotFound, LecodeError
from lecode_ls.memory import learning_status, team
from lecode_ls.memory.facts import NewAnchor, SourceLike, StoredAnchor
from lecode_ls.memory.recall import check_retirable, get_fact, list_facts, recall_fact
from lecode_ls.memory.sessions import SourceRef
from lecode_ls.runtime import Runtime

log = logging.getLogger(__name__)

Audience = Literal["person", "model"]


@dataclass(frozen=True)
class Revision:
    """A fact and the revision an operation left current."""

    fact_id: int
    revision: int


@dataclass(frozen=True)
class Forgotten:
    forgotten: bool
    """False when the fact was forgotten already (a retry changes nothing)."""
    hides: list[int]
    """The other facts whose current evidence the forget excludes (so hides), by ID."""


def remember(
    runtime: Runtime,
    text: str,
    ref: SourceLike,
    *,
    origin: str = "remembered",
    anchors: Sequence[NewAnchor] | None = None,
    deduplicate: bool = False,
    expected_generation: int | None = None,
) -> Done[Revision]:
    """Remember `text` with `ref` as its evidence (F6), checked in the store's transaction.
    `anchors` None: the verified anchor of a `path contains "line"` fact whose evidence shows
    that line read (A5), else none. `deduplicate` (learning, MCP): an existing fact with the
    same text is returned instead of refused."""
    _, facts = runtime.require_facts()
    if anchors is None:
        anchors = runtime.verified_anchors(text, ref)
    fact_id, revision = facts.remember(
        text,
        ref,
        check=runtime.check_source,
        deduplicate=deduplicate,
        expected_generation=expected_generation,
        origin=origin,
        anchors=anchors,
    )
    return Done(Revision(fact_id, revision), FACTS)


def correct(
    runtime: Runtime,
    fact_id: int,
    text: str,
    *,
    expected_revision: int,
    ref: SourceLike,
    anchors: Sequence[NewAnchor] = (),
    expected_generation: int | None = None,
) -> Done[Revision]:
    """Append a revision with new evidence (F2, F6); a fact shared in the first folder's
    checkout gets the revision in its file too (the correction stands when the file cannot be
    rewritten: that is logged)."""
    _, facts = runtime.require_facts()
    checkout = runtime.drift.default_checkout()
    shared = runtime.team.shelf(checkout).for_local(fact_id) if checkout else None
    revision = facts.correct(
        fact_id,
        text,
        expected_revision=expected_revision,
        ref=ref,
        check=runtime.check_source,
        has_authored_text=runtime.has_authored_text,
        expected_generation=expected_generation,
        anchors=anchors,
    )
    if checkout is not None and shared is not None and shared.doc is not None:
        _reshare(runtime, checkout, fact_id, shared.doc)
    return Done(Revision(fact_id, revision), FACTS)


def _reshare(runtime: Runtime, checkout: Any, fact_id: int, earlier: team.SharedDoc) -> None:
    try:
        doc = team.build(
            runtime.facts, runtime.sessions, runtime.redactor, checkout, fact_id,
            check=runtime.check_source, shared_by=runtime.settings.team.name,
        )  # fmt: skip
        if doc.id != earlier.id:  # a correction of a teammate's fact (teamCorrect): its file
            doc = team.succeed(doc, earlier)
        team.write(checkout, doc)
    except LecodeError as error:
        log.warning("the shared file of fact %d keeps its revision: %s", fact_id, error.message)


def forget(runtime: Runtime, fact_id: int, *, dry_run: bool = False) -> Done[Forgotten]:
    """Forget a fact for good (F7): its revisions go and its evidence is excluded. `dry_run`
    only says which other facts it would hide."""
    _, facts = runtime.require_facts()
    if dry_run:
        return Done(Forgotten(False, facts.sharing_evidence(fact_id)))
    try:  # read just before the forget's own transaction: what it hides, for its answer
        hides = facts.sharing_evidence(fact_id)
    except FactNotFound:
        hides = []
    if not facts.forget(fact_id):
        return Done(Forgotten(False, []))
    return Done(Forgotten(True, hides), FACTS)


def reanchor(
    runtime: Runtime, fact_id: int, expected_revision: int, index: int, anchor: NewAnchor
) -> Done[StoredAnchor]:
    """Move anchor `index` of the fact's current revision to `anchor` (its text and revision
    stay as they are)."""
    _, facts = runtime.require_facts()
    stored = facts.anchors.reanchor(fact_id, expected_revision, index, anchor)
    return Done(stored, FACTS)


def pin(runtime: Runtime, fact_id: int, *, pinned: bool = True) -> Done[bool]:
    """Pin a fact (every request's memory shows it first) or unpin it; whether that changed
    anything."""
    ranking = runtime.require_facts()[1].ranking
    changed = ranking.pin(fact_id) if pinned else ranking.unpin(fact_id)
    return Done(changed, FACTS if changed else NOTHING)


def retire(runtime: Runtime, fact_id: int, *, retired: bool = True) -> Done[bool]:
    """Retire a fact (kept, listed, recallable, not injected) or restore it; a restore also
    keeps a fact proposed for retirement, which leaves the review queue."""
    sessions, facts = runtime.require_facts()
    check_retirable(facts, sessions, fact_id)
    retirement = facts.retirement
    changed = retirement.retire(fact_id) if retired else retirement.restore(fact_id)
    return Done(changed, FACTS if changed or not retired else NOTHING)


def accept_proposal(runtime: Runtime, session_id: str, seq: int, index: int) -> Done[Revision]:
    """Remember proposal `index` of the learning event at `seq` with its recorded evidence, and
    list it no more (issue 41)."""
    sessions, facts = runtime.require_facts()

    def remembered(text: str, ref: SourceRef) -> tuple[int, int]:
        done = remember(runtime, text, ref, origin="learned", deduplicate=True)
        return done.value.fact_id, done.value.revision

    fact_id, revision = learning_status.accept(sessions, facts, session_id, seq, index, remembered)
    return Done(Revision(fact_id, revision), FACTS)


def dismiss_proposal(runtime: Runtime, session_id: str, seq: int, index: int) -> Done[None]:
    """List proposal `index` of the learning event at `seq` no more."""
    sessions, _ = runtime.require_facts()
    learning_status.dismiss(sessions, session_id, seq, index)
    return Done(None, FACTS)  # views listing proposals refresh on this


def page(
    runtime: Runtime,
    offset: int = 0,
    *,
    audience: Audience,
    session_id: str | None = None,
    path: str | None = None,
    query: str | None = None,
    measure: Callable[[dict[str, Any]], int] | None = None,
) -> dict[str, Any]:
    """A page of the facts (R8) with the latest learning status of `session_id` (or of the
    newest sessions): for the person, the retirements proposed and the facts shared in the
    first folder's checkout; for the model, neither. `path` is checkout-relative; `measure`
    sizes the page as its door shows it."""
    sessions, facts = runtime.require_facts()
    person = audience == "person"
    marks = _marks(runtime) if person else None
    size = measure or _json_size

    def measured(answer: dict[str, Any]) -> int:  # the marks count against the cap (R8)
        if marks is not None:
            marks(answer["facts"])
        return size(answer)

    answer = list_facts(
        facts,
        sessions,
        offset,
        learning=learning_status.latest_learning(sessions, facts, session_id),
        measure=measured,
        drift=runtime.drift,
        path=path,
        query=query,
        verdicts=runtime.verdicts,
        retire_after=runtime.settings.memory.retire_after() if person else None,
    )
    if marks is not None:
        marks(answer["facts"])
    return answer


def _json_size(answer: dict[str, Any]) -> int:
    return len(json.dumps(answer, ensure_ascii=False).encode("utf-8"))


def recall(
    runtime: Runtime, fact_id: int, offset: int = 0, limit: int | None = None
) -> dict[str, Any]:
    """A fact and a page of the records its evidence cites (R2), validated now."""
    sessions, facts = runtime.require_facts()
    return recall_fact(facts, sessions, fact_id, offset, limit)


def get(runtime: Runtime, fact_id: int) -> dict[str, Any]:
    """One fact as the person's listing shows it."""
    sessions, facts = runtime.require_facts()
    entry = get_fact(facts, sessions, fact_id, drift=runtime.drift, verdicts=runtime.verdicts)
    marks = _marks(runtime)
    if marks is not None:
        marks([entry])
    return entry


def _marks(runtime: Runtime) -> Callable[[list[dict[str, Any]]], None] | None:
    """What marks listed facts that are shared in the first folder's checkout (issue 29), each
    with its `shared` {team_id, file, shared_by, shared_at}; None outside a checkout."""
    checkout = runtime.drift.default_checkout()
    if checkout is None:
        return None
    shelf = runtime.team.shelf(checkout)

    looked: set[int] = set()  # a page is measured after each entry: each is looked up once

    def mark(entries: list[dict[str, Any]]) -> None:
        for entry in entries:
            if entry["fact_id"] in looked:
                continue
            looked.add(entry["fact_id"])
            shared = shelf.for_local(entry["fact_id"])
            if shared is not None and shared.doc is not None:
                entry["shared"] = {
                    "team_id": shared.id,
                    "file": shared.file,
                    "shared_by": shared.doc.shared_by,
                    "shared_at": shared.doc.shared_at,
                }

    return mark
