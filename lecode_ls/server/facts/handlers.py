"""Handlers of the fact methods.

Each handler parses its params, runs the operation (lecode_ls/actions/facts.py) in a worker
thread (a write through server/act.py, which tells the client what changed), and converts its
answer: the operations return snake_case JSON (the shapes of the spec), which the result models
turn into the protocol's camelCase.
"""

from __future__ import annotations

import asyncio

from lecode_ls.actions import facts
from lecode_ls.memory.doctor import diagnose
from lecode_ls.memory.facts import check_path
from lecode_ls.memory.sessions import SourceRef, check_session_id
from lecode_ls.runtime import Runtime
from lecode_ls.server.act import act
from lecode_ls.server.documents import locate
from lecode_ls.server.facts import messages as p
from lecode_ls.server.messages import WorkspaceParams
from lecode_ls.server.server import LecodeServer
from lecode_ls.server.sessions.messages import SourceRefModel


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
    answer = await asyncio.to_thread(
        lambda: facts.page(
            runtime,
            params.offset,
            audience="person",
            session_id=session_id,
            path=path,
            query=params.query,
        )
    )
    return p.FactsListResult.model_validate(answer)


async def facts_get(ls: LecodeServer, params: p.FactsGetParams) -> p.FactEntry:
    runtime = await _facts_runtime(ls, params)
    return p.FactEntry.model_validate(await asyncio.to_thread(facts.get, runtime, params.fact_id))


def _anchor_path(ls: LecodeServer, path: str | None) -> str | None:
    """A listing's file filter as anchors store it: a file:// URI becomes checkout-relative."""
    if path is None or not path.startswith("file:"):
        return None if path is None else check_path(path)
    return locate(ls, path, field="path").rel


async def facts_remember(ls: LecodeServer, params: p.FactsRememberParams) -> p.FactRevisionResult:
    runtime = await _facts_runtime(ls, params)
    fact = await act(ls, runtime, lambda: facts.remember(runtime, params.text, _ref(params.source)))
    return p.FactRevisionResult(fact_id=fact.fact_id, revision=fact.revision)


async def facts_recall(ls: LecodeServer, params: p.FactsRecallParams) -> p.RecallFactResult:
    runtime = await _facts_runtime(ls, params)
    answer = await asyncio.to_thread(
        facts.recall, runtime, params.fact_id, params.offset, params.limit
    )
    return p.RecallFactResult.model_validate(answer)


async def facts_correct(ls: LecodeServer, params: p.FactsCorrectParams) -> p.FactRevisionResult:
    runtime = await _facts_runtime(ls, params)
    fact = await act(
        ls,
        runtime,
        lambda: facts.correct(
            runtime,
            params.fact_id,
            params.text,
            expected_revision=params.expected_revision,
            ref=_ref(params.source),
        ),
    )
    return p.FactRevisionResult(fact_id=fact.fact_id, revision=fact.revision)


async def facts_forget(ls: LecodeServer, params: p.FactsForgetParams) -> p.FactsForgetResult:
    runtime = await _facts_runtime(ls, params)
    fact = await act(
        ls, runtime, lambda: facts.forget(runtime, params.fact_id, dry_run=params.dry_run)
    )
    return p.FactsForgetResult(forgotten=fact.forgotten, hides=fact.hides)


async def facts_dismiss_proposal(
    ls: LecodeServer, params: p.DismissProposalParams
) -> p.DismissProposalResult:
    runtime = await _facts_runtime(ls, params)
    session_id = check_session_id(params.session_id)
    await act(
        ls,
        runtime,
        lambda: facts.dismiss_proposal(runtime, session_id, params.seq, params.index),
    )
    return p.DismissProposalResult()


async def facts_accept_proposal(
    ls: LecodeServer, params: p.DismissProposalParams
) -> p.FactRevisionResult:
    runtime = await _facts_runtime(ls, params)
    session_id = check_session_id(params.session_id)
    fact = await act(
        ls, runtime, lambda: facts.accept_proposal(runtime, session_id, params.seq, params.index)
    )
    return p.FactRevisionResult(fact_id=fact.fact_id, revision=fact.revision)


async def accept_proposal_command(
    ls: LecodeServer, args: p.AcceptProposalCommand
) -> p.FactRevisionResult:
    return await facts_accept_proposal(ls, args.params)


async def facts_pin(ls: LecodeServer, params: p.FactsPinParams) -> p.FactsPinResult:
    return await _pin(ls, params, pinned=True)


async def facts_unpin(ls: LecodeServer, params: p.FactsPinParams) -> p.FactsPinResult:
    return await _pin(ls, params, pinned=False)


async def _pin(ls: LecodeServer, params: p.FactsPinParams, *, pinned: bool) -> p.FactsPinResult:
    runtime = await _facts_runtime(ls, params)
    changed = await act(ls, runtime, lambda: facts.pin(runtime, params.fact_id, pinned=pinned))
    return p.FactsPinResult(fact_id=params.fact_id, pinned=pinned, changed=changed)


async def facts_retire(ls: LecodeServer, params: p.FactsPinParams) -> p.FactsRetireResult:
    return await _retirement(ls, params, retire=True)


async def facts_restore(ls: LecodeServer, params: p.FactsPinParams) -> p.FactsRetireResult:
    return await _retirement(ls, params, retire=False)


async def _retirement(
    ls: LecodeServer, params: p.FactsPinParams, *, retire: bool
) -> p.FactsRetireResult:
    runtime = await _facts_runtime(ls, params)
    changed = await act(ls, runtime, lambda: facts.retire(runtime, params.fact_id, retired=retire))
    return p.FactsRetireResult(fact_id=params.fact_id, retired=retire, changed=changed)


async def retire_command(ls: LecodeServer, args: p.FactRetireCommand) -> p.FactsRetireResult:
    return await facts_retire(ls, args.params)


async def restore_command(ls: LecodeServer, args: p.FactRetireCommand) -> p.FactsRetireResult:
    return await facts_restore(ls, args.params)


async def memory_doctor(ls: LecodeServer, params: p.DoctorParams) -> p.DoctorResult:
    runtime = await _facts_runtime(ls, params)
    answer = await asyncio.to_thread(diagnose, runtime, runtime.sessions)
    return p.DoctorResult.model_validate(answer)
