"""How an anchored fact reads where the person looks: the hover's text, in Markdown or in plain
text as the client asks (`textDocument.hover.contentFormat`: eglot asks for plain text), and the
inlay hint that stands in for the CodeLens in clients that have no CodeLens (eglot, Helix)."""

from __future__ import annotations

import re

from lsprotocol import types

from lecode_ls.memory.anchors import DRIFTED, AnchorState
from lecode_ls.platform.paths import path_to_uri
from lecode_ls.server.anchors.state import Shown
from lecode_ls.server.documents import Doc
from lecode_ls.server.server import LecodeServer

HINT_CHARS = 60


def one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def wants_plain_hover(ls: LecodeServer) -> bool:
    """Whether the client prefers plain text in hovers: its first content format is plaintext,
    or it lists formats without Markdown (LSP: absent means Markdown is fine)."""
    document = ls.client_capabilities.text_document
    hover = document.hover if document is not None else None
    formats = [str(getattr(f, "value", f)) for f in (hover.content_format or [])] if hover else []
    return bool(formats) and (formats[0] == "plaintext" or "markdown" not in formats)


def has_code_lens(ls: LecodeServer) -> bool:
    document = ls.client_capabilities.text_document
    return document is not None and document.code_lens is not None


def actions_named(fact_id: int) -> str:
    """The code actions of a drifted anchor, as a diagnostic names them."""
    return f"Correct fact #{fact_id}…, Forget fact #{fact_id}, Re-anchor fact #{fact_id} here"


def _code(text: str) -> str:
    """`text` as a Markdown code span: one backtick more than its longest run of them."""
    ticks = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def hover_text(doc: Doc, state: AnchorState, shown: Shown, *, plain: bool) -> str:
    """One fact's part of the hover. In Markdown the evidence is a link to the transcript and
    paths are code; in plain text nothing is marked up."""
    anchor = state.anchor
    head = f"fact #{anchor.fact_id} r{shown.revision} · {state.located.status}"
    out = [head if plain else f"**{head.replace(' · ', '** · ', 1)}", ""]
    if shown.text is not None:
        if plain:
            out += ["untrusted evidence, not instructions:", shown.text]
        else:
            fence = "~~~~"
            while fence in shown.text:
                fence += "~"
            out += ["untrusted evidence, not instructions:", f"{fence}text", shown.text, fence]
    else:
        out.append(f"(text not shown: the fact is {shown.status})")
    if shown.session_id is not None and shown.seqs:
        first, last = shown.seqs[0], shown.seqs[-1]
        evidence = f"session {shown.session_id}, seqs {first}-{last}"
        if plain:
            out += ["", f"evidence: {evidence}"]
        else:
            link = (
                f"lecode-transcript:/{shown.session_id}.transcript?"
                f"workspace={path_to_uri(doc.folder)}&start={first}&end={last}"
                f"&fact={anchor.fact_id}"
            )
            out += ["", f"evidence: [{evidence}]({link})"]
    commit = f" at {anchor.commit[:12]}" if anchor.commit else ""
    place = f"{anchor.path}:{anchor.start_line}-{anchor.end_line}"
    renamed_to = state.renamed_to
    if plain:
        renamed = f" (the file was renamed to {renamed_to})" if renamed_to else ""
    else:
        # Paths are shown as code: a file named `![x](https://...)` is not Markdown to render.
        place = _code(place)
        renamed = f" (the file was renamed to {_code(renamed_to)})" if renamed_to else ""
    out += ["", f"anchored to {place}{commit}, {anchor.captured_at}{renamed}"]
    if state.located.status in DRIFTED:
        out += ["", f"code actions: {actions_named(anchor.fact_id)}"]
    return "\n".join(out)


def inlay_hint(state: AnchorState, shown: Shown, line: int, width: int) -> types.InlayHint:
    """At the end of the anchor's first line: what its CodeLens would say."""
    about = one_line(shown.text, HINT_CHARS) if shown.text is not None else f"({shown.status})"
    label = f"fact #{state.anchor.fact_id} r{shown.revision}: {about}"
    if state.located.status in DRIFTED:
        label += f" ({state.located.status}: see its code actions)"
    return types.InlayHint(position=types.Position(line, width), label=label, padding_left=True)
