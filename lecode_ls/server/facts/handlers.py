"""Handlers of the fact methods.

Blocking SQLite and transcript work runs in a worker thread; the core returns snake_case JSON
(the shapes of the spec), which the result models turn into the protocol's camelCase.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from lecode_ls.errors import FactNotFound, LecodeError
from lecode_ls.memory import team
from lecode_ls.memory.doctor import diagnose
from lecode_ls.memory.facts import check_path
from lecode_ls.memory.learning_status import accept, dismiss, latest_learning
from lecode_ls.memory.recall import check_retirable, get_fact, list_facts, recall_fact
from lecode_ls.memory.sessions import SourceRef, check_session_id
from lecode_ls.runtime import Runtime
from lecode_ls.server.documents import locate
from lecode_ls.server.facts import messages as p
from lecode_ls.server.facts.watch import facts_changed
from lecode_ls.server.messages import WorkspaceParams
from lecode_ls.server.server import LecodeServer
from lecode_ls.server.sessions.messages import SourceRefModel

log = logging.getLogger(__name__)


def _ref(model: SourceRefModel) -> SourceRef:
    return SourceRef(model.session_id, tuple(model.seqs), model.digest)


async def _facts_runtime(ls: LecodeServer, params: WorkspaceParams) -> Runtime:
    """The runtime of a memory request: facts, recall and evidence (memory_disabled when off)."""
    runtime, _ = await ls.runtime(params.workspace_uri)
    runtime.require_facts()
    return runtime


async def facts_list(ls: LecodeServer, params: p.FactsListParams) -> p.FactsListResult:
    runtime = await _facts_runtime(ls, params)
    session_id = None if params.session_id is None else check_session_id(params.session_id)

    path = _anchor_path(ls, params.path)

    def read() -> dict[str, Any]:
        learning = latest_learning(runtime.sessions, runtime.facts, session_id)
        answer = list_facts(
            runtime.facts,
            runtime.sessions,
            params.offset,
            learning=learning,
            drift=runtime.drift,
            path=path,
            query=params.query,
            verdicts=runtime.verdicts,
            retire_after=runtime.settings.memory.retire_after(),
        )
        _mark_shared(runtime, answer["facts"])
        return answer

    return p.FactsListResult.model_validate(await asyncio.to_thread(read))


async def facts_get(ls: LecodeServer, params: p.FactsGetParams) -> p.FactEntry:
    runtime = await _facts_runtime(ls, params)

    def read() -> dict[str, Any]:
        entry = get_fact(
            runtime.facts,
            runtime.sessions,
            params.fact_id,
            drift=runtime.drift,
            verdicts=runtime.verdicts,
        )
        _mark_shared(runtime, [entry])
        return entry

    return p.FactEntry.model_validate(await asyncio.to_thread(read))


def _reshare(runtime: Runtime, checkout: Path, fact_id: int, earlier: team.SharedDoc) -> None:
    """A shared fact of the person's was corrected: its file gets the new revision (issue 29).
    The correction stands even when the file cannot be rewritten (a secret in the new
    evidence, say): that is logged, and the file keeps the revision it had."""
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


def _mark_shared(runtime: Runtime, entries: list[dict[str, Any]]) -> None:
    """Mark the listed facts that are shared in the first folder's checkout (issue 29)."""
    checkout = runtime.drift.default_checkout()
    if checkout is None or not entries:
        return
    shelf = runtime.team.shelf(checkout)
    for entry in entries:
        shared = shelf.for_local(entry["fact_id"])
        if shared is not None and shared.doc is not None:
            entry["shared"] = {
                "team_id": shared.id,
                "file": shared.file,
                "shared_by": shared.doc.shared_by,
                "shared_at": shared.doc.shared_at,
            }


def _anchor_path(ls: LecodeServer, path: str | None) -> str | None:
    """A listing's file filter as anchors store it: a file:// URI becomes checkout-relative."""
    if path is None or not path.startswith("file:"):
        return None if path is None else check_path(path)
    return locate(ls, path, field="path").rel


async def facts_remember(ls: LecodeServer, params: p.FactsRememberParams) -> p.FactRevisionResult:
    runtime = await _facts_runtime(ls, params)
    ref = _ref(params.source)

    def remember() -> tuple[int, int]:
        # A verified project fact (`path contains "line"`, A5) is anchored at the line its
        # evidence's read showed.
        anchors = runtime.verified_anchors(params.text, ref)
        return runtime.facts.remember(params.text, ref, check=runtime.check_source, anchors=anchors)

    fact_id, revision = await asyncio.to_thread(remember)
    await facts_changed(ls, runtime)
    return p.FactRevisionResult(fact_id=fact_id, revision=revision)


async def facts_recall(ls: LecodeServer, params: p.FactsRecallParams) -> p.RecallFactResult:
    runtime = await _facts_runtime(ls, params)
    answer = await asyncio.to_thread(
        recall_fact, runtime.facts, runtime.sessions, params.fact_id, params.offset, params.limit
    )
    return p.RecallFactResult.model_validate(answer)


async def facts_correct(ls: LecodeServer, params: p.FactsCorrectParams) -> p.FactRevisionResult:
    runtime = await _facts_runtime(ls, params)

    def correct() -> int:
        checkout = runtime.drift.default_checkout()
        shared = runtime.team.shelf(checkout).for_local(params.fact_id) if checkout else None
        revision = runtime.facts.correct(
            params.fact_id,
            params.text,
            expected_revision=params.expected_revision,
            ref=_ref(params.source),
            check=runtime.check_source,
            has_authored_text=runtime.has_authored_text,
        )
        if checkout is not None and shared is not None and shared.doc is not None:
            _reshare(runtime, checkout, params.fact_id, shared.doc)
        return revision

    revision = await asyncio.to_thread(correct)
    await facts_changed(ls, runtime)
    return p.FactRevisionResult(fact_id=params.fact_id, revision=revision)


async def facts_forget(ls: LecodeServer, params: p.FactsForgetParams) -> p.FactsForgetResult:
    runtime = await _facts_runtime(ls, params)
    if params.dry_run:
        hides = await asyncio.to_thread(runtime.facts.sharing_evidence, params.fact_id)
        return p.FactsForgetResult(forgotten=False, hides=hides)

    def forget() -> tuple[bool, list[int]]:
        # Read just before the forget's own transaction: what it hides, for its answer.
        try:
            hides = runtime.facts.sharing_evidence(params.fact_id)
        except FactNotFound:
            hides = []
        return runtime.facts.forget(params.fact_id), hides

    forgotten, hides = await asyncio.to_thread(forget)
    if forgotten:  # a retry changes nothing
        await facts_changed(ls, runtime)
    return p.FactsForgetResult(forgotten=forgotten, hides=hides if forgotten else [])


async def facts_dismiss_proposal(
    ls: LecodeServer, params: p.DismissProposalParams
) -> p.DismissProposalResult:
    runtime = await _facts_runtime(ls, params)
    session_id = check_session_id(params.session_id)
    await asyncio.to_thread(dismiss, runtime.sessions, session_id, params.seq, params.index)
    await facts_changed(ls, runtime)  # views listing proposals refresh on this
    return p.DismissProposalResult()


async def facts_accept_proposal(
    ls: LecodeServer, params: p.DismissProposalParams
) -> p.FactRevisionResult:
    runtime = await _facts_runtime(ls, params)
    session_id = check_session_id(params.session_id)

    def remember(text: str, ref: SourceRef) -> tuple[int, int]:
        return runtime.facts.remember(
            text, ref, check=runtime.check_source, deduplicate=True, origin="learned",
            anchors=runtime.verified_anchors(text, ref),
        )  # fmt: skip

    fact_id, revision = await asyncio.to_thread(
        accept, runtime.sessions, runtime.facts, session_id, params.seq, params.index, remember
    )
    await facts_changed(ls, runtime)
    return p.FactRevisionResult(fact_id=fact_id, revision=revision)


async def accept_proposal_command(
    ls: LecodeServer, args: p.AcceptProposalCommand
) -> p.FactRevisionResult:
    return await facts_accept_proposal(ls, args.params)


async def facts_pin(ls: LecodeServer, params: p.FactsPinParams) -> p.FactsPinResult:
    runtime = await _facts_runtime(ls, params)
    changed = await asyncio.to_thread(runtime.facts.ranking.pin, params.fact_id)
    if changed:
        await facts_changed(ls, runtime)
    return p.FactsPinResult(fact_id=params.fact_id, pinned=True, changed=changed)


async def facts_unpin(ls: LecodeServer, params: p.FactsPinParams) -> p.FactsPinResult:
    runtime = await _facts_runtime(ls, params)
    changed = await asyncio.to_thread(runtime.facts.ranking.unpin, params.fact_id)
    if changed:
        await facts_changed(ls, runtime)
    return p.FactsPinResult(fact_id=params.fact_id, pinned=False, changed=changed)


async def facts_retire(ls: LecodeServer, params: p.FactsPinParams) -> p.FactsRetireResult:
    return await _retirement(ls, params, retire=True)


async def facts_restore(ls: LecodeServer, params: p.FactsPinParams) -> p.FactsRetireResult:
    return await _retirement(ls, params, retire=False)


async def _retirement(
    ls: LecodeServer, params: p.FactsPinParams, *, retire: bool
) -> p.FactsRetireResult:
    runtime = await _facts_runtime(ls, params)
    retirement = runtime.facts.retirement

    def change() -> bool:
        check_retirable(runtime.facts, runtime.sessions, params.fact_id)
        return (retirement.retire if retire else retirement.restore)(params.fact_id)

    changed = await asyncio.to_thread(change)
    if changed or not retire:  # a kept proposal leaves the review queue too: views refresh
        await facts_changed(ls, runtime)
    return p.FactsRetireResult(fact_id=params.fact_id, retired=retire, changed=changed)


async def retire_command(ls: LecodeServer, args: p.FactRetireCommand) -> p.FactsRetireResult:
    return await facts_retire(ls, args.params)


async def restore_command(ls: LecodeServer, args: p.FactRetireCommand) -> p.FactsRetireResult:
    return await facts_restore(ls, args.params)


async def memory_doctor(ls: LecodeServer, params: p.DoctorParams) -> p.DoctorResult:
    runtime = await _facts_runtime(ls, params)
    answer = await asyncio.to_thread(diagnose, runtime, runtime.sessions)
    return p.DoctorResult.model_validate(answer)
