"""Handlers of the anchored-fact requests and commands: remember or correct a fact
from a selection, re-anchor, and the commands code actions and lenses run.

A selection becomes evidence the way every fact's evidence is made: the person's wording and
the quoted lines are appended to a session as a user message, snapshotted as a SourceRef (digest
included), and the fact is remembered (or corrected) with that source and the selection's anchor
in one facts.sqlite3 transaction.
"""

from __future__ import annotations

import asyncio
import json
import re

from lsprotocol import types

from lecode_ls.actions import facts
from lecode_ls.errors import InvalidParams, SessionNotFound
from lecode_ls.memory.anchors import AnchorState, make_anchor, state_json
from lecode_ls.memory.facts import MAX_ANCHOR_LINES, NewAnchor
from lecode_ls.memory.project import head_commit
from lecode_ls.memory.sessions import EDITOR_TITLE, SourceRef, check_session_id
from lecode_ls.runtime import Runtime
from lecode_ls.server.act import act
from lecode_ls.server.anchors import messages as p
from lecode_ls.server.asking import Ask, ask_later
from lecode_ls.server.chat.state import Chat
from lecode_ls.server.documents import Doc, locate, read_text, runtime_of, selected_lines
from lecode_ls.server.facts import messages as fp
from lecode_ls.server.server import LecodeServer

EDITOR_SESSION_TITLE = EDITOR_TITLE
MAX_QUOTE_BYTES = 32 * 1024
_LINE_CHARS = 200
_editor_session_lock = asyncio.Lock()


def default_wording(rel: str, start: int, lines: list[str]) -> str:
    """The fact's text when the person gave none: the A5 shape for one line."""
    first = lines[0][:_LINE_CHARS]
    if len(lines) == 1:
        return f"{rel} contains {json.dumps(first, ensure_ascii=False)}"
    end = start + len(lines) - 1
    return f"{rel} lines {start}-{end}: {json.dumps(first, ensure_ascii=False)} ..."


def _fence(text: str) -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def exchange_text(
    rel: str, start: int, lines: list[str], wording: str, correcting: int | None
) -> str:
    """The user message that records a selection as evidence."""
    quoted = "\n".join(lines)
    if len(quoted.encode("utf-8", "replace")) > MAX_QUOTE_BYTES:
        raise InvalidParams("range: the selection is larger than 32 KiB", field="range")
    end = start + len(lines) - 1
    fence = _fence(quoted)
    head = (
        f"Correct fact #{correcting}" if correcting is not None else "Remember this fact"
    ) + f" about `{rel}` lines {start}-{end}:"
    return f"{head}\n\n{wording}\n\n{fence}\n{quoted}\n{fence}"


async def _session(runtime: Runtime, session_id: str | None) -> str:
    """The session that records the exchange: the given one, else the editor session."""
    if session_id is not None:
        session_id = check_session_id(session_id)
        if not await asyncio.to_thread(runtime.sessions.exists, session_id):
            raise SessionNotFound(f"sessionId: there is no session {session_id}", field="sessionId")
        return session_id
    async with _editor_session_lock:

        def find_or_create() -> str:
            for info in runtime.sessions.list():
                if info.title == EDITOR_SESSION_TITLE and not info.corrupt:
                    return info.session_id
            return runtime.sessions.create(EDITOR_SESSION_TITLE, origin="editor")

        return await asyncio.to_thread(find_or_create)


async def _capture(
    ls: LecodeServer, params: p.SelectionParams, correcting: int | None
) -> tuple[Runtime, Doc, NewAnchor, str, SourceRef]:
    """The document, the anchor of the selection, the wording and its recorded evidence."""
    doc = locate(ls, params.uri)
    runtime = await runtime_of(ls, doc)
    runtime.require_facts()
    if found := await asyncio.to_thread(runtime.redactor.find_all, doc.rel):
        raise InvalidParams(  # an anchor's path is stored and shown: it may hold no secret (P5)
            f"uri: the file's path holds what looks like a secret ({found[0].kind}); a fact "
            "cannot be anchored in it",
            field="uri",
        )
    text = read_text(ls, doc)
    rng = params.range
    start, lines = selected_lines(
        text, rng.start.line, rng.end.line, rng.end.character, MAX_ANCHOR_LINES
    )
    wording = params.text if params.text is not None else default_wording(doc.rel, start, lines)
    message = exchange_text(doc.rel, start, lines, wording, correcting)
    session_id = await _session(runtime, params.session_id)
    busy = f"sessionId: session {session_id} has a turn running; try again when it ends"
    with ls.rooms.get(Chat).running((str(runtime.project.root), session_id), busy):

        def record() -> tuple[NewAnchor, SourceRef]:
            ref = runtime.record_evidence(
                [{"kind": "message", "role": "user", "content": message}],
                session_id=session_id,
                title=EDITOR_SESSION_TITLE,
            )
            return make_anchor(lines, start, doc.rel, head_commit(doc.checkout)), ref

        anchor, ref = await asyncio.to_thread(record)
    return runtime, doc, anchor, wording, ref


def _anchor_model(state: AnchorState) -> fp.AnchorModel:
    return fp.AnchorModel.model_validate(state_json(state))


async def _state_of(
    runtime: Runtime, doc: Doc, fact_id: int, index: int | None = None
) -> fp.AnchorModel:
    """The fact's anchor in `doc` (the last, or number `index`) as drift sees it now, after
    the facts' news reloaded the anchors."""
    states = await asyncio.to_thread(runtime.drift.states, doc.checkout, doc.rel)
    mine = [
        s
        for s in states
        if s.anchor.fact_id == fact_id and (index is None or s.anchor.index == index)
    ]
    if not mine:  # cannot happen after a committed write; say so rather than invent one
        raise InvalidParams("uri: the anchor was not found after storing it", field="uri")
    return _anchor_model(mine[-1])


async def remember_selection(
    ls: LecodeServer, params: p.RememberSelectionParams
) -> p.SelectionResult:
    runtime, doc, anchor, wording, ref = await _capture(ls, params, None)
    fact = await act(ls, runtime, lambda: facts.remember(runtime, wording, ref, anchors=[anchor]))
    return p.SelectionResult(
        fact_id=fact.fact_id,
        revision=fact.revision,
        session_id=ref.session_id,
        seqs=list(ref.seqs),
        anchor=await _state_of(runtime, doc, fact.fact_id),
    )


async def correct_selection(
    ls: LecodeServer, params: p.CorrectSelectionParams
) -> p.SelectionResult:
    runtime, doc, anchor, wording, ref = await _capture(ls, params, params.fact_id)
    fact = await act(
        ls,
        runtime,
        lambda: facts.correct(
            runtime,
            params.fact_id,
            wording,
            expected_revision=params.expected_revision,
            ref=ref,
            anchors=[anchor],
        ),
    )
    return p.SelectionResult(
        fact_id=params.fact_id,
        revision=fact.revision,
        session_id=ref.session_id,
        seqs=list(ref.seqs),
        anchor=await _state_of(runtime, doc, params.fact_id),
    )


async def reanchor(ls: LecodeServer, params: p.ReanchorParams) -> p.ReanchorResult:
    doc = locate(ls, params.uri)
    runtime = await runtime_of(ls, doc)
    runtime.require_facts()
    if found := await asyncio.to_thread(runtime.redactor.find_all, doc.rel):
        raise InvalidParams(  # an anchor's path is stored and shown: it may hold no secret (P5)
            f"uri: the file's path holds what looks like a secret ({found[0].kind}); a fact "
            "cannot be anchored in it",
            field="uri",
        )
    text = read_text(ls, doc)
    rng = params.range
    start, lines = selected_lines(
        text, rng.start.line, rng.end.line, rng.end.character, MAX_ANCHOR_LINES
    )
    anchor = make_anchor(lines, start, doc.rel, head_commit(doc.checkout))
    stored = await act(
        ls,
        runtime,
        lambda: facts.reanchor(
            runtime, params.fact_id, params.expected_revision, params.index, anchor
        ),
    )
    now = await _state_of(runtime, doc, params.fact_id, stored.index)
    return p.ReanchorResult(fact_id=params.fact_id, revision=stored.revision, anchor=now)


# -- commands (one dict argument each) ---------------------------------------------------------


async def remember_selection_command(
    ls: LecodeServer, args: p.RememberSelectionCommand
) -> p.SelectionResult:
    return await remember_selection(ls, args.params)


async def correct_selection_command(
    ls: LecodeServer, args: p.CorrectSelectionCommand
) -> p.SelectionResult:
    return await correct_selection(ls, args.params)


async def reanchor_command(ls: LecodeServer, args: p.ReanchorCommand) -> p.ReanchorResult:
    return await reanchor(ls, args.params)


async def forget_command(ls: LecodeServer, args: p.FactRefCommand) -> p.AskedResult:
    """Ask the person whether to forget a fact, naming the other facts the forget would hide,
    and answer at once (asking.py): the forget happens on their Forget, and only then."""
    runtime, _ = await ls.runtime(args.params.workspace_uri)
    runtime.require_facts()
    fact_id = args.params.fact_id
    hides = (await asyncio.to_thread(facts.forget, runtime, fact_id, dry_run=True)).value.hides
    also = f" It also hides facts {', '.join(f'#{h}' for h in hides)}." if hides else ""

    async def forget() -> str:
        if not (await act(ls, runtime, lambda: facts.forget(runtime, fact_id))).forgotten:
            return f"lecode: fact #{fact_id} was already forgotten."
        return f"lecode: forgot fact #{fact_id}; its evidence is excluded for good.{also}"

    ask = Ask(
        message=f"lecode: forget fact #{fact_id} and exclude its evidence for good?{also}",
        yes="Forget",
        no="Cancel",
        yes_title=f"Forget fact #{fact_id} (confirm)",
        no_title=f"Keep fact #{fact_id} (cancel the forget)",
        kept=f"lecode: fact #{fact_id} is kept; nothing was forgotten.",
    )
    return p.AskedResult(question=ask_later(ls, ask, forget), hides=hides)


async def show_command(ls: LecodeServer, args: p.FactRefCommand) -> fp.RecallFactResult:
    """A fact and the first page of its evidence; its text also as `window/showMessage`."""
    runtime, _ = await ls.runtime(args.params.workspace_uri)
    runtime.require_facts()
    answer = await asyncio.to_thread(facts.recall, runtime, args.params.fact_id)
    result = fp.RecallFactResult.model_validate(answer)
    shown = result.text if result.text is not None else f"({result.status}: text not shown)"
    ls.window_show_message(
        types.ShowMessageParams(
            type=types.MessageType.Info,
            message=f"fact #{result.fact_id} r{result.revision}: {shown}",
        )
    )
    return result
