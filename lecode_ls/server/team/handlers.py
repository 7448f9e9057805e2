"""Handlers of the team-memory methods. Files are read, verified and written in a worker thread.

Every request is about the checkout of its `workspaceUri` (default: the first folder): a linked
worktree shares the project's own memory but has its own branch, so its own shared facts.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from lecode_ls.errors import InvalidSource, NotACheckout, SharedFactNotFound, StaleRevision
from lecode_ls.memory import team
from lecode_ls.memory.project import checkout_root
from lecode_ls.memory.recall import list_team, recall_team
from lecode_ls.memory.sessions import SourceRef
from lecode_ls.platform.paths import path_to_uri
from lecode_ls.runtime import Runtime
from lecode_ls.server.documents import buffer_text
from lecode_ls.server.facts.watch import facts_changed
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


def text_of(ls: LecodeServer, checkout: Path) -> team.TextOf:
    """The open buffers of one checkout's files, by checkout-relative path."""
    return lambda rel: buffer_text(ls, path_to_uri(checkout / rel))


async def share(ls: LecodeServer, params: p.FactsShareParams) -> p.FactsShareResult:
    runtime, checkout = await _checkout(ls, params)

    def write() -> tuple[str, str, bool]:
        doc = team.build(
            runtime.facts,
            runtime.sessions,
            runtime.redactor,
            checkout,
            params.fact_id,
            check=runtime.check_source,
            shared_by=runtime.settings.team.name,
        )
        file, created = team.write(checkout, doc)
        runtime.team.shelf(checkout)
        return doc.id, file, created

    team_id, file, created = await asyncio.to_thread(write)
    await facts_changed(ls, runtime)
    return p.FactsShareResult(
        team_id=team_id, file=file, uri=path_to_uri(checkout / file), created=created
    )


async def unshare(ls: LecodeServer, params: p.FactsUnshareParams) -> p.FactsUnshareResult:
    runtime, checkout = await _checkout(ls, params)

    def remove() -> tuple[str, str]:
        shelf = runtime.team.shelf(checkout)
        team_id = params.team_id
        if team_id is None:
            assert params.fact_id is not None  # the params' validator
            shared = shelf.for_local(params.fact_id)
            if shared is None:
                raise SharedFactNotFound(
                    f"factId: fact {params.fact_id} is not shared in this checkout",
                    field="factId",
                )
            team_id = shared.id
        file = team.remove(checkout, team_id)
        runtime.team.shelf(checkout)
        return team_id, file

    team_id, file = await asyncio.to_thread(remove)
    await facts_changed(ls, runtime)
    return p.FactsUnshareResult(team_id=team_id, file=file, uri=path_to_uri(checkout / file))


async def team_list(ls: LecodeServer, params: p.TeamListParams) -> p.TeamListResult:
    runtime, checkout = await _checkout(ls, params)
    texts = text_of(ls, checkout)

    def read() -> dict[str, Any]:
        return list_team(runtime.team.shelf(checkout), params.offset, texts)

    answer = await asyncio.to_thread(read)
    for entry in answer["facts"]:
        entry["uri"] = path_to_uri(checkout / entry["file"])
    return p.TeamListResult.model_validate(answer)


async def team_recall(ls: LecodeServer, params: p.TeamRecallParams) -> p.TeamRecallResult:
    runtime, checkout = await _checkout(ls, params)
    answer = await asyncio.to_thread(
        lambda: recall_team(
            runtime.team.shelf(checkout), params.team_id, params.offset, params.limit
        )
    )
    return p.TeamRecallResult.model_validate(answer)


async def team_forget(ls: LecodeServer, params: p.TeamForgetParams) -> p.TeamForgetResult:
    runtime, checkout = await _checkout(ls, params)

    def forget() -> tuple[bool, str]:
        fact = runtime.team.shelf(checkout).get(params.team_id)
        if fact is None or fact.doc is None:
            raise SharedFactNotFound(
                f"teamId: no readable shared fact {params.team_id} in this checkout",
                field="teamId",
            )
        if runtime.sessions.exists(fact.doc.evidence.session_id):
            # A file may name a session of the person's own (theirs are in their shared
            # files): excluding it would take their own evidence. Forget their fact instead.
            raise InvalidSource(
                "teamId: its evidence cites one of your own sessions; forget your own fact "
                "(lecode/facts/forget) instead",
                field="teamId",
            )
        forgotten = runtime.facts.exclude(fact.doc.evidence)
        runtime.team.shelf(checkout)
        return forgotten, fact.file

    forgotten, file = await asyncio.to_thread(forget)
    if forgotten:
        await facts_changed(ls, runtime)
    return p.TeamForgetResult(team_id=params.team_id, forgotten=forgotten, file=file)


async def team_correct(ls: LecodeServer, params: p.TeamCorrectParams) -> p.TeamCorrectResult:
    """A new revision of a shared fact, from your own evidence: the correction becomes your
    fact (remembered as any is), and the file gets it as its next revision, with the old text
    in its history."""
    runtime, checkout = await _checkout(ls, params)
    ref = SourceRef(params.source.session_id, tuple(params.source.seqs), params.source.digest)

    def correct() -> tuple[int, int, str]:
        earlier = runtime.team.shelf(checkout).get(params.team_id)
        if earlier is None or earlier.doc is None or earlier.status != "valid":
            raise SharedFactNotFound(
                f"teamId: no valid shared fact {params.team_id} in this checkout", field="teamId"
            )
        if earlier.doc.revision != params.expected_revision:
            raise StaleRevision(
                f"expectedRevision: the shared fact is at revision {earlier.doc.revision}",
                field="expectedRevision",
            )
        if not runtime.has_authored_text(ref):
            raise InvalidSource(
                "source: the new evidence must include user or assistant text", field="source"
            )
        # What would refuse the file is checked before the fact is stored: a refusal leaves
        # nothing behind (the file's size alone is known only once it is built).
        records = runtime.sessions.read(ref.session_id, ref.seqs[0], ref.seqs[-1])
        team.refuse_secrets(runtime.redactor, params.text, records)
        anchors = runtime.verified_anchors(params.text, ref)
        fact_id, _ = runtime.facts.remember(
            params.text, ref, check=runtime.check_source, anchors=anchors
        )
        mine = team.build(
            runtime.facts, runtime.sessions, runtime.redactor, checkout, fact_id,
            check=runtime.check_source, shared_by=runtime.settings.team.name,
        )  # fmt: skip
        doc = team.succeed(mine, earlier.doc)
        file, _ = team.write(checkout, doc)
        runtime.team.shelf(checkout)
        return fact_id, doc.revision, file

    fact_id, revision, file = await asyncio.to_thread(correct)
    await facts_changed(ls, runtime)
    return p.TeamCorrectResult(
        team_id=params.team_id, revision=revision, fact_id=fact_id, file=file
    )


async def share_command(ls: LecodeServer, args: p.ShareCommand) -> p.FactsShareResult:
    return await share(ls, args.params)


async def unshare_command(ls: LecodeServer, args: p.UnshareCommand) -> p.FactsUnshareResult:
    return await unshare(ls, args.params)
