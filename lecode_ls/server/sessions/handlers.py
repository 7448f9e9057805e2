"""Handlers of the session (transcript) methods.

Each handler parses its params, runs the operation (lecode_ls/actions/sessions.py) in a worker
thread, and converts its answer: the operations return snake_case JSON (the shapes of the spec),
which the result models turn into the protocol's camelCase.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from lecode_ls.actions import sessions
from lecode_ls.errors import InvalidParams, OutsideWorkspace, SessionNotFound
from lecode_ls.memory.sessions import check_session_id
from lecode_ls.other_agents.importing import read_import_file
from lecode_ls.platform.paths import canonical, is_within
from lecode_ls.runtime import Runtime
from lecode_ls.server.act import act, tell
from lecode_ls.server.asking import Ask, ask_later
from lecode_ls.server.chat.state import Chat
from lecode_ls.server.messages import WorkspaceParams
from lecode_ls.server.server import LecodeServer
from lecode_ls.server.sessions import messages as p


async def _session_runtime(ls: LecodeServer, params: WorkspaceParams) -> Runtime:
    """The runtime of a chat-session request: transcripts are chat's own record, so these work
    with memory disabled too (K1)."""
    runtime, _ = await ls.runtime(params.workspace_uri)
    return runtime


async def _evidence_runtime(ls: LecodeServer, params: WorkspaceParams) -> Runtime:
    """The runtime of a request that reads evidence (recall of a range, a snapshot): it needs the
    facts store, so memory_disabled when the memory is off."""
    runtime = await _session_runtime(ls, params)
    runtime.require_facts()
    return runtime


async def session_list(ls: LecodeServer, params: p.SessionListParams) -> p.SessionListResult:
    runtime = await _session_runtime(ls, params)
    listed = await asyncio.to_thread(sessions.listing, runtime)
    return p.SessionListResult(
        sessions=[
            p.SessionInfoModel(
                session_id=i.session_id,
                title=i.title,
                created=i.created,
                records=i.records,
                corrupt=i.corrupt,
                citing_facts=citing,
                origin=i.origin,
            )
            for i, citing in listed
        ]
    )


def _read_jsonl(name: str, folders: list[Path]) -> tuple[list[dict[str, Any]], str | None]:
    """The records of a JSONL file inside a workspace folder: one JSON object a line, or a
    Claude Code session or Codex rollout converted (other_agents/transcripts.py); and a title for it."""
    if "\x00" in name:  # no file has one; os.path.realpath raises on it
        raise InvalidParams("path: a path cannot hold a NUL character", field="path")
    path = canonical(name)  # a link is followed, and must then still land inside
    if not any(is_within(path, folder) for folder in folders):
        raise OutsideWorkspace("path: the file is outside every workspace folder", field="path")
    return read_import_file(path, folders)


async def session_import(ls: LecodeServer, params: p.SessionImportParams) -> p.SessionImportResult:
    runtime = await _session_runtime(ls, params)
    if (params.records is None) == (params.path is None):
        raise InvalidParams("records: give exactly one of records and path", field="records")
    records, title = params.records, params.title
    if params.path is not None:
        records, named = await asyncio.to_thread(_read_jsonl, params.path, ls.workspace_folders())
        title = title if title is not None else named
    assert records is not None
    session_id, renamed = await act(
        ls, runtime, lambda: sessions.import_records(runtime, records, title)
    )
    return p.SessionImportResult(session_id=session_id, renamed_from=renamed)


async def session_read(ls: LecodeServer, params: p.SessionReadParams) -> p.RecallSessionResult:
    runtime = await _evidence_runtime(ls, params)
    answer = await asyncio.to_thread(
        sessions.read,
        runtime,
        params.session_id,
        params.start_seq,
        params.end_seq,
        params.offset,
        params.limit,
    )
    return p.RecallSessionResult.model_validate(answer)


async def session_snapshot(ls: LecodeServer, params: p.SessionSnapshotParams) -> p.SourceRefModel:
    runtime = await _evidence_runtime(ls, params)
    ref = await asyncio.to_thread(
        sessions.snapshot, runtime, params.session_id, params.start_seq, params.end_seq
    )
    return p.SourceRefModel(session_id=ref.session_id, seqs=list(ref.seqs), digest=ref.digest)


async def session_new(ls: LecodeServer, params: p.SessionNewParams) -> p.SessionIdResult:
    runtime = await _session_runtime(ls, params)
    session_id = await act(ls, runtime, lambda: sessions.new(runtime, params.title))
    return p.SessionIdResult(session_id=session_id)


async def session_rename(ls: LecodeServer, params: p.SessionRenameParams) -> p.SessionRenameResult:
    runtime = await _session_runtime(ls, params)
    title = await act(
        ls, runtime, lambda: sessions.rename(runtime, params.session_id, params.title)
    )
    return p.SessionRenameResult(title=title)


async def session_undo(ls: LecodeServer, params: p.SessionParams) -> p.SessionSeqsResult:
    runtime = await _session_runtime(ls, params)
    seqs = await act(ls, runtime, lambda: sessions.undo(runtime, params.session_id))
    return p.SessionSeqsResult(seqs=seqs)


async def session_redo(ls: LecodeServer, params: p.SessionParams) -> p.SessionSeqsResult:
    runtime = await _session_runtime(ls, params)
    seqs = await act(ls, runtime, lambda: sessions.redo(runtime, params.session_id))
    return p.SessionSeqsResult(seqs=seqs)


async def session_clear(ls: LecodeServer, params: p.SessionParams) -> p.SessionClearResult:
    runtime = await _session_runtime(ls, params)
    seq = await act(ls, runtime, lambda: sessions.clear(runtime, params.session_id))
    return p.SessionClearResult(seq=seq)


async def session_delete(ls: LecodeServer, params: p.SessionParams) -> p.SessionDeleteResult:
    """Delete a session's transcript (S6): refused while a turn or compaction runs in it here,
    or while another process has it attached; the facts citing it become `missing`."""
    runtime = await _session_runtime(ls, params)
    citing = await _delete(ls, runtime, check_session_id(params.session_id))
    return p.SessionDeleteResult(citing_facts=citing)


async def _delete(ls: LecodeServer, runtime: Runtime, session_id: str) -> int:
    busy = (
        f"sessionId: session {session_id} has a turn or a compaction running; stop it before "
        "deleting the session"
    )
    # Marked busy meanwhile: no turn starts in the session while it is deleted.
    with ls.rooms.get(Chat).running((str(runtime.project.root), session_id), busy):
        done = await asyncio.to_thread(sessions.delete, runtime, session_id)
    await tell(ls, runtime, done.changed)  # the facts citing it are missing now
    return done.value


def _cited(count: int) -> str:
    if count == 0:
        return "No fact cites it."
    if count == 1:
        return "1 fact cites it: it becomes missing (kept, without evidence)."
    return f"{count} facts cite it: they become missing (kept, without evidence)."


async def delete_command(ls: LecodeServer, args: p.SessionDeleteCommand) -> p.SessionAskedResult:
    """Ask the person whether to delete a session, saying how many facts cite it, and answer at
    once (asking.py): the session is deleted on their Delete, and only then."""
    runtime = await _session_runtime(ls, args.params)
    session_id = check_session_id(args.params.session_id)

    listed = await asyncio.to_thread(sessions.listing, runtime)
    found = next(((i, n) for i, n in listed if i.session_id == session_id), None)
    if found is None:
        raise SessionNotFound(f"sessionId: there is no session {session_id}", field="sessionId")
    info, citing = found
    records = info.records - 1  # the header is not a record the person made
    name = f'"{info.title}" ({session_id})' if info.title.strip() else session_id

    async def delete() -> str:
        now = await _delete(ls, runtime, session_id)
        missing = f" {now} fact{' is' if now == 1 else 's are'} missing now." if now else ""
        return f"lecode: deleted session {session_id}.{missing}"

    ask = Ask(
        message=f"lecode: delete session {name} for good? Its transcript "
        f"({records} record{'' if records == 1 else 's'}) cannot be restored. {_cited(citing)}",
        yes="Delete",
        no="Cancel",
        yes_title=f"Delete session {session_id} (confirm)",
        no_title=f"Keep session {session_id} (cancel the deletion)",
        kept=f"lecode: session {session_id} is kept; nothing was deleted.",
    )
    return p.SessionAskedResult(question=ask_later(ls, ask, delete), citing_facts=citing)
