"""Code anchors where the person looks, with standard LSP: buffers tracked through
`textDocument/didOpen`/`didChange`/`didClose`, a diagnostic (source `lecode`) on every drifted
anchor, a CodeLens naming the fact on its lines, a hover with its text and evidence, and code
actions to correct, forget or re-anchor it, or to remember a selection.

Only the changed document's anchors are re-checked on a change (DriftTracker.update_buffer);
diagnostics, `lecode/anchors/didChange` and a CodeLens refresh go out only when some anchor's
state changed. A fact's text is shown only while its evidence validates (as listings do).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from lsprotocol import types

from lecode_ls.errors import LecodeError
from lecode_ls.memory.anchors import DRIFTED, AnchorState, split_lines
from lecode_ls.memory.facts import StoredAnchor
from lecode_ls.memory.recall import fact_status
from lecode_ls.memory.team import MAX_DIAGNOSTICS
from lecode_ls.platform.paths import path_to_uri
from lecode_ls.runtime import Runtime
from lecode_ls.server.anchors.messages import AnchorsDidChangeParams
from lecode_ls.server.anchors.shown import (
    actions_named,
    has_code_lens,
    hover_text,
    inlay_hint,
    one_line,
    wants_plain_hover,
)
from lecode_ls.server.anchors.state import AnchorView, Shown
from lecode_ls.server.asking import question_actions
from lecode_ls.server.documents import Doc, buffer_text, locate, runtime_of
from lecode_ls.server.server import LecodeServer

log = logging.getLogger(__name__)

SOURCE = "lecode"
LENS_CHARS = 60
MESSAGE_CHARS = 80
REMEMBER_KIND = "refactor.lecode.remember"
MAX_NOTIFIED_PATHS = 1000
ACTION_KINDS = [types.CodeActionKind.QuickFix, REMEMBER_KIND]


def _shown(ls: LecodeServer, runtime: Runtime, fact_id: int) -> Shown | None:
    """Blocking: reads the fact and validates its evidence, once per facts change."""
    view = ls.rooms.get(AnchorView)
    key = (str(runtime.project.root), fact_id)
    cached = view.shown.get(key)
    if cached is not None:
        return cached
    epoch = view.epoch
    found = fact_status(runtime.facts, runtime.sessions, fact_id)
    if found is None:
        return None
    fact, status, ref = found
    shown = Shown(fact.revision, status, fact.text if status == "valid" else None)
    if ref is not None:
        shown.session_id, shown.seqs = ref.session_id, ref.seqs
    if epoch == view.epoch:  # else the facts changed while this was read: not kept
        view.shown[key] = shown
    return shown


def _title(state: AnchorState, shown: Shown, limit: int) -> str:
    about = one_line(shown.text, limit) if shown.text is not None else f"({shown.status})"
    return f"fact #{state.anchor.fact_id} r{shown.revision}: {about}"


def _place(state: AnchorState, lines: list[str]) -> types.Range:
    """Where an anchor is shown: where its lines are now, else where they were (clamped)."""
    located, anchor = state.located, state.anchor
    start = (located.start_line or anchor.start_line) - 1
    end = (located.end_line or anchor.end_line) - 1
    last = max(len(lines) - 1, 0)
    start, end = min(start, last), min(end, last)
    width = len(lines[end].encode("utf-16-le")) // 2 if lines else 0
    return types.Range(types.Position(start, 0), types.Position(end, width))


async def _document(ls: LecodeServer, uri: str) -> tuple[Doc, Runtime] | None:
    """The document and its project when anchors apply to it (memory on, inside a folder)."""
    try:
        doc = locate(ls, uri)
        runtime = await runtime_of(ls, doc)
    except LecodeError:
        return None
    if not runtime.settings.memory.enabled:
        return None
    return doc, runtime


async def _states(ls: LecodeServer, uri: str) -> tuple[Doc, Runtime, list[AnchorState]] | None:
    found = await _document(ls, uri)
    if found is None:
        return None
    doc, runtime = found
    states = await asyncio.to_thread(runtime.drift.states, doc.checkout, doc.rel)
    return doc, runtime, states


# -- document sync -------------------------------------------------------------------------------


async def check_document(ls: LecodeServer, uri: str, *, publish: bool = False) -> None:
    """Re-check one open document's anchors against its buffer; publish what changed."""
    view = ls.rooms.get(AnchorView)
    async with view.checking:
        await _check_document(ls, uri, publish)


async def _check_document(ls: LecodeServer, uri: str, publish: bool) -> None:
    view = ls.rooms.get(AnchorView)
    found = await _document(ls, uri)
    text = buffer_text(ls, uri)
    if found is None or text is None:
        if uri in view.published:
            _publish(ls, uri, [])
        return
    doc, runtime = found
    states, changed = await asyncio.to_thread(
        runtime.drift.update_buffer, doc.checkout, doc.rel, text
    )
    team = await asyncio.to_thread(_team_diagnostics, runtime, doc, text)
    keys = [f"{d.range} {d.message}" for d in team]
    team_changed = keys != view.team.get(uri, [])
    view.team[uri] = keys
    # A document without anchors that shows nothing needs no (empty) publication.
    if not (changed or team_changed or (publish and states) or uri in view.published):
        return
    diagnostics = await asyncio.to_thread(_diagnostics, ls, runtime, doc, states, text)
    _publish(ls, uri, diagnostics + team)
    if changed:
        anchors_changed(ls, runtime, [doc.rel])


def anchors_changed(ls: LecodeServer, runtime: Runtime, paths: list[str]) -> None:
    """Tell the client that the drift of these files' anchors changed (at most
    MAX_NOTIFIED_PATHS are named), and refresh its CodeLenses."""
    root = runtime.project.root
    ls.send(
        "lecode/anchors/didChange",
        AnchorsDidChangeParams(
            workspace_uri=path_to_uri(root),
            project_root=str(root),
            paths=paths[:MAX_NOTIFIED_PATHS],
        ),
    )
    refresh_lenses(ls)


def _publish(ls: LecodeServer, uri: str, diagnostics: list[types.Diagnostic]) -> None:
    view = ls.rooms.get(AnchorView)
    if diagnostics:
        view.published.add(uri)
    else:
        view.published.discard(uri)
    ls.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics)
    )


def refresh_lenses(ls: LecodeServer) -> None:
    """Ask the client to fetch CodeLenses (or, without them, inlay hints) again, where it
    supports being asked."""
    workspace = ls.client_capabilities.workspace
    lens = workspace.code_lens if workspace is not None else None
    if lens is not None and lens.refresh_support:
        ls.workspace_code_lens_refresh(None)
    hints = workspace.inlay_hint if workspace is not None else None
    if not has_code_lens(ls) and hints is not None and hints.refresh_support:
        ls.workspace_inlay_hint_refresh(None)


async def watch_checkouts(ls: LecodeServer, interval: float = 1.0) -> None:
    """Every `interval` seconds: when the Git state of a project's checkout changed (a branch
    switch, a commit, a `git mv`), re-check its anchored files on disk and name those whose
    anchors changed in `lecode/anchors/didChange`, so fact views
    refresh without being asked. Open documents follow their buffers, which the editor updates."""
    while True:
        await asyncio.sleep(interval)
        for runtime in ls.runtimes.all():
            if not runtime.settings.memory.enabled:
                continue
            try:
                paths = await asyncio.to_thread(runtime.drift.poll_checkouts)
            except Exception as exc:  # one unreadable checkout must not end the watch
                log.warning("anchors not re-checked after a change in Git: %s", type(exc).__name__)
                continue
            if paths:
                anchors_changed(ls, runtime, paths)


async def did_close(ls: LecodeServer, uri: str) -> None:
    view = ls.rooms.get(AnchorView)
    found = await _document(ls, uri)
    if found is not None:
        doc, runtime = found
        runtime.drift.close_buffer(doc.checkout, doc.rel)
    view.team.pop(uri, None)
    if uri in view.published:
        _publish(ls, uri, [])


async def facts_changed(ls: LecodeServer, runtime: Runtime) -> None:
    """Facts changed (here or in another process): reload the anchors and re-check every open
    document of the project."""
    view = ls.rooms.get(AnchorView)
    async with view.checking:  # after the check under way, before the next
        runtime.drift.reload()
        root = str(runtime.project.root)
        shown = view.shown
        for key in [k for k in shown if k[0] == root]:
            del shown[key]
        view.epoch += 1
    # Each document by the URI its client gave (pygls keys them unquoted).
    for uri in ls.buffers.uris():
        try:
            await check_document(ls, uri, publish=True)
        except LecodeError as exc:  # one unreadable document must not stop the others
            log.debug("anchors of %s not checked: %s", uri, exc.code)
    refresh_lenses(ls)


# -- what is shown -------------------------------------------------------------------------------


def _team_diagnostics(runtime: Runtime, doc: Doc, text: str) -> list[types.Diagnostic]:
    """A warning on each drifted anchor, in this document, of a valid fact shared in its
    checkout that is not the person's own (issue 29), as for one's own facts: of the first
    MAX_DIAGNOSTICS such facts, the shelf as the last poll left it."""
    shelf = runtime.team.current(doc.checkout)
    found: list[types.Diagnostic] = []
    lines = split_lines(text)
    for fact in shelf.candidates({doc.rel}, MAX_DIAGNOSTICS):
        if fact.doc is None or not any(anchor.path == doc.rel for anchor in fact.doc.anchors):
            break  # the candidates anchored here come first: the rest are not
        here = shelf.anchor_states(fact, lambda rel: text if rel == doc.rel else None)
        for index, (anchor, where, against) in enumerate(here):
            if anchor.path != doc.rel or where.status not in DRIFTED:
                continue
            stored = StoredAnchor(
                0, fact.doc.revision, index, anchor.path, anchor.start_line, anchor.end_line,
                anchor.sha256, anchor.first_sha256, anchor.commit, anchor.captured_at,
            )  # fmt: skip
            what = "its lines changed" if where.status == "changed" else "its lines are gone"
            found.append(
                types.Diagnostic(
                    range=_place(AnchorState(stored, where, against), lines),
                    message=(
                        f"shared fact {fact.id} r{fact.doc.revision} (shared by "
                        f"{one_line(fact.doc.shared_by, 40)}) may be out of date: {what} since "
                        f"it was shared ({one_line(fact.doc.text, MESSAGE_CHARS)})"
                    ),
                    severity=types.DiagnosticSeverity.Warning,
                    source=SOURCE,
                    code=f"team-fact-{where.status}",
                    data={"workspaceUri": path_to_uri(doc.folder), "teamId": fact.id},
                )
            )
    return found


def _diagnostics(
    ls: LecodeServer, runtime: Runtime, doc: Doc, states: list[AnchorState], text: str
) -> list[types.Diagnostic]:
    lines = split_lines(text)
    found: list[types.Diagnostic] = []
    for state in states:
        if state.located.status not in DRIFTED:
            continue
        shown = _shown(ls, runtime, state.anchor.fact_id)
        if shown is None:
            continue
        what = "its lines changed" if state.located.status == "changed" else "its lines are gone"
        about = one_line(shown.text, MESSAGE_CHARS) if shown.text else shown.status
        found.append(
            types.Diagnostic(
                range=_place(state, lines),
                message=(
                    f"fact #{state.anchor.fact_id} r{shown.revision} may be out of date: {what} "
                    f"since it was remembered ({about}). Code actions: "
                    f"{actions_named(state.anchor.fact_id)}"
                ),
                severity=types.DiagnosticSeverity.Warning,
                source=SOURCE,
                code=f"fact-{state.located.status}",
                data={
                    "workspaceUri": path_to_uri(doc.folder),
                    "factId": state.anchor.fact_id,
                    "revision": state.anchor.revision,
                    "index": state.anchor.index,
                },
            )
        )
    return found


async def code_lenses(ls: LecodeServer, uri: str) -> list[types.CodeLens]:
    found = await _states(ls, uri)
    text = buffer_text(ls, uri)
    if found is None or text is None:
        return []
    doc, runtime, states = found

    def make() -> list[types.CodeLens]:
        lines = split_lines(text)
        lenses = []
        for state in states:
            if state.located.status == "unchecked":
                continue
            shown = _shown(ls, runtime, state.anchor.fact_id)
            if shown is None:
                continue
            title = _title(state, shown, LENS_CHARS)
            if state.located.status in DRIFTED:
                title += f" ({state.located.status})"
            place = _place(state, lines)
            lenses.append(
                types.CodeLens(
                    range=types.Range(place.start, place.start),
                    command=types.Command(
                        title=title,
                        command="lecode.anchor.show",
                        arguments=[
                            {
                                "workspaceUri": path_to_uri(doc.folder),
                                "factId": state.anchor.fact_id,
                            }
                        ],
                    ),
                )
            )
        return lenses

    return await asyncio.to_thread(make)


def _covers(place: types.Range, start: int, end: int) -> bool:
    return place.start.line <= end and start <= place.end.line


async def hover(ls: LecodeServer, uri: str, line: int) -> types.Hover | None:
    found = await _states(ls, uri)
    text = buffer_text(ls, uri)
    if found is None or text is None:
        return None
    doc, runtime, states = found
    plain = wants_plain_hover(ls)

    def make() -> types.Hover | None:
        lines = split_lines(text)
        parts: list[str] = []
        for state in states:
            if state.located.status == "unchecked" or not _covers(_place(state, lines), line, line):
                continue
            shown = _shown(ls, runtime, state.anchor.fact_id)
            if shown is None:
                continue
            parts.append(hover_text(doc, state, shown, plain=plain))
        if not parts:
            return None
        if plain:
            return types.Hover(types.MarkupContent(types.MarkupKind.PlainText, "\n\n".join(parts)))
        body = "\n\n---\n\n".join(parts)
        return types.Hover(types.MarkupContent(types.MarkupKind.Markdown, body))

    return await asyncio.to_thread(make)


async def code_actions(
    ls: LecodeServer, uri: str, selection: types.Range
) -> list[types.CodeAction]:
    """The answers to waiting questions (in any document: asking.question_actions), then the
    actions of the drifted anchors under the selection, then "Remember selection as fact"."""
    questions = question_actions(ls)
    found = await _states(ls, uri)
    text = buffer_text(ls, uri)
    if found is None or text is None:
        return questions
    doc, runtime, states = found
    return questions + await asyncio.to_thread(_actions, ls, runtime, doc, states, text, selection)


async def inlay_hints(ls: LecodeServer, uri: str, rng: types.Range) -> list[types.InlayHint]:
    """For a client without CodeLens (eglot, Helix), an inlay hint at the end of each anchored
    fact's first line in `rng`, saying what the CodeLens would; a client with CodeLens gets none,
    so nothing is shown twice."""
    if has_code_lens(ls):
        return []
    found = await _states(ls, uri)
    text = buffer_text(ls, uri)
    if found is None or text is None:
        return []
    _, runtime, states = found

    def make() -> list[types.InlayHint]:
        lines = split_lines(text)
        hints = []
        for state in states:
            if state.located.status == "unchecked":
                continue
            place = _place(state, lines)
            if not _covers(rng, place.start.line, place.start.line):
                continue
            shown = _shown(ls, runtime, state.anchor.fact_id)
            if shown is None:
                continue
            line = place.start.line
            width = len(lines[line].encode("utf-16-le")) // 2 if lines else 0
            hints.append(inlay_hint(state, shown, line, width))
        return hints

    return await asyncio.to_thread(make)


def _actions(
    ls: LecodeServer,
    runtime: Runtime,
    doc: Doc,
    states: list[AnchorState],
    text: str,
    selection: types.Range,
) -> list[types.CodeAction]:
    """Blocking: the diagnostics the actions fix name the fact's text."""
    uri = doc.uri
    workspace_uri = path_to_uri(doc.folder)
    lines = split_lines(text)
    actions: list[types.CodeAction] = []
    for state in states:
        place = _place(state, lines)
        if state.located.status not in DRIFTED or not _covers(
            place, selection.start.line, selection.end.line
        ):
            continue
        anchor = state.anchor
        whole = {"start": {"line": place.start.line, "character": 0}, "end": _json(place.end)}
        diagnostic = _matching(ls, runtime, doc, state, text)
        common: dict[str, Any] = {
            "workspaceUri": workspace_uri,
            "factId": anchor.fact_id,
            "expectedRevision": anchor.revision,
            "uri": uri,
            "range": whole,
        }
        for title, command, args in (
            (f"Correct fact #{anchor.fact_id}…", "lecode.anchor.correctSelection", common),
            (
                f"Forget fact #{anchor.fact_id}",
                "lecode.anchor.forget",
                {"workspaceUri": workspace_uri, "factId": anchor.fact_id},
            ),
            (
                f"Re-anchor fact #{anchor.fact_id} here",
                "lecode.anchor.reanchor",
                {**common, "index": anchor.index},
            ),
        ):
            actions.append(
                types.CodeAction(
                    title=title,
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=diagnostic,
                    command=types.Command(title=title, command=command, arguments=[args]),
                )
            )
    if selection.start != selection.end:
        args = {"workspaceUri": workspace_uri, "uri": uri, "range": _json_range(selection)}
        title = "Remember selection as fact"
        actions.append(
            types.CodeAction(
                title=title,
                kind=REMEMBER_KIND,
                command=types.Command(
                    title=title, command="lecode.anchor.rememberSelection", arguments=[args]
                ),
            )
        )
    return actions


def _matching(
    ls: LecodeServer, runtime: Runtime, doc: Doc, state: AnchorState, text: str
) -> list[types.Diagnostic]:
    return [
        d
        for d in _diagnostics(ls, runtime, doc, [state], text)
        if isinstance(d.data, dict) and d.data.get("factId") == state.anchor.fact_id
    ]


def _json(position: types.Position) -> dict[str, int]:
    return {"line": position.line, "character": position.character}


def _json_range(rng: types.Range) -> dict[str, Any]:
    return {"start": _json(rng.start), "end": _json(rng.end)}
