"""Handlers of the team-memory methods. Files are read, verified and written in a worker thread.

Every request is about the checkout of its `workspaceUri` (default: the first folder): a linked
worktree shares the project's own memory but has its own branch, so its own shared facts.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from lecode_ls.actions import team
from lecode_ls.errors import NotACheckout
from lecode_ls.memory.project import checkout_root
from lecode_ls.memory.sessions import SourceRef
from lecode_ls.memory.team import TextOf
from lecode_ls.platform.paths import path_to_uri
from lecode_ls.runtime import Runtime
from lecode_ls.server.act import act
from lecode_ls.server.documents import buffer_text
from lecode_ls.server.messages import WorkspaceParams
from lecode_ls.server.server import LecodeServer
from lecode_ls.server.team import messages as p


async def _checkout(ls: LecodeServer, params: WorkspaceParams) -> tuple[Runtime, Path]:
    runtime, _ = await ls.runtime(params.workspace_uri)
    runtime.require_facts()
    folder = ls.folder_for(params.workspace_uri)
    checkout = checkout_root(folder, runtime.drift.folders)
    if checkout is None:
        raise NotACheckout("workspaceUri: the folder is not in a checkout", field="workspaceUri")
    return runtime, checkout


def text_of(ls: LecodeServer, checkout: Path) -> TextOf:
    """The open buffers of one checkout's files, by checkout-relative path."""
    return lambda rel: buffer_text(ls, path_to_uri(checkout / rel))


async def share(ls: LecodeServer, params: p.FactsShareParams) -> p.FactsShareResult:
    runtime, checkout = await _checkout(ls, params)
    shared = await act(ls, runtime, lambda: team.share(runtime, checkout, params.fact_id))
    return p.FactsShareResult(
        team_id=shared.team_id,
        file=shared.file,
        uri=path_to_uri(checkout / shared.file),
        created=shared.created,
    )


async def unshare(ls: LecodeServer, params: p.FactsUnshareParams) -> p.FactsUnshareResult:
    runtime, checkout = await _checkout(ls, params)
    gone = await act(
        ls,
        runtime,
        lambda: team.unshare(runtime, checkout, team_id=params.team_id, fact_id=params.fact_id),
    )
    return p.FactsUnshareResult(
        team_id=gone.team_id, file=gone.file, uri=path_to_uri(checkout / gone.file)
    )


async def team_list(ls: LecodeServer, params: p.TeamListParams) -> p.TeamListResult:
    runtime, checkout = await _checkout(ls, params)
    texts = text_of(ls, checkout)
    answer = await asyncio.to_thread(team.page, runtime, checkout, params.offset, texts)
    for entry in answer["facts"]:
        entry["uri"] = path_to_uri(checkout / entry["file"])
    return p.TeamListResult.model_validate(answer)


async def team_recall(ls: LecodeServer, params: p.TeamRecallParams) -> p.TeamRecallResult:
    runtime, checkout = await _checkout(ls, params)
    answer = await asyncio.to_thread(
        team.recall, runtime, checkout, params.team_id, params.offset, params.limit
    )
    return p.TeamRecallResult.model_validate(answer)


async def team_forget(ls: LecodeServer, params: p.TeamForgetParams) -> p.TeamForgetResult:
    runtime, checkout = await _checkout(ls, params)
    gone = await act(ls, runtime, lambda: team.forget_for_me(runtime, checkout, params.team_id))
    return p.TeamForgetResult(team_id=params.team_id, forgotten=gone.forgotten, file=gone.file)


async def team_correct(ls: LecodeServer, params: p.TeamCorrectParams) -> p.TeamCorrectResult:
    """A new revision of a shared fact, from your own evidence (actions/team.py)."""
    runtime, checkout = await _checkout(ls, params)
    ref = SourceRef(params.source.session_id, tuple(params.source.seqs), params.source.digest)
    done = await act(
        ls,
        runtime,
        lambda: team.correct(
            runtime,
            checkout,
            params.team_id,
            params.text,
            expected_revision=params.expected_revision,
            ref=ref,
        ),
    )
    return p.TeamCorrectResult(
        team_id=params.team_id, revision=done.revision, fact_id=done.fact_id, file=done.file
    )


async def share_command(ls: LecodeServer, args: p.ShareCommand) -> p.FactsShareResult:
    return await share(ls, args.params)


async def unshare_command(ls: LecodeServer, args: p.UnshareCommand) -> p.FactsUnshareResult:
    return await unshare(ls, args.params)
