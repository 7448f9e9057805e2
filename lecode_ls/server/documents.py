"""Documents as code anchors see them: which project, checkout and relative path a URI names,
and its text now (the editor's buffer when open, else the file on disk, bounded)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from lecode_ls.errors import FileTooLarge, InvalidParams, NotFound, OutsideWorkspace
from lecode_ls.memory.anchors import MAX_FILE_BYTES, split_lines
from lecode_ls.memory.files import NotRegularFile, read_regular
from lecode_ls.memory.project import checkout_root, relative
from lecode_ls.platform.paths import (
    canonical,
    is_within,
    path_problem,
    path_to_uri,
    uri_to_path,
)
from lecode_ls.runtime import Runtime
from lecode_ls.server.server import LecodeServer


@dataclass(frozen=True)
class Doc:
    """A file:// document inside a workspace folder."""

    uri: str  # as the client spells it (diagnostics go back under it)
    path: Path  # canonical
    folder: Path  # the innermost workspace folder holding it
    checkout: Path  # its checkout root (memory/project/checkout.py)
    rel: str  # relative to the checkout, "/"-separated


def locate(ls: LecodeServer, uri: str, field: str = "uri") -> Doc:
    """The document a URI names; InvalidParams or OutsideWorkspace naming `field` otherwise."""
    raw = uri_to_path(uri)
    if raw is None:
        raise InvalidParams(f"{field}: not a file:// URI of this machine", field=field)
    if (problem := path_problem(raw)) is not None:
        raise InvalidParams(f"{field}: the file's path {problem}", field=field)
    path = canonical(raw)  # a link is followed and must still land inside
    folders = ls.workspace_folders()
    inside = [folder for folder in folders if is_within(path, folder)]
    root = checkout_root(path, folders)
    rel = relative(path, root) if root is not None else None
    if not inside or root is None or rel is None:
        raise OutsideWorkspace(f"{field}: the file is outside every workspace folder", field=field)
    folder = max(inside, key=lambda f: len(f.parts))
    return Doc(uri=uri, path=path, folder=folder, checkout=root, rel=rel)


async def runtime_of(ls: LecodeServer, doc: Doc) -> Runtime:
    """The runtime of the document's project (reached through its workspace folder)."""
    runtime, _ = await ls.runtime(path_to_uri(doc.folder))
    return runtime


def buffer_text(ls: LecodeServer, uri: str) -> str | None:
    """The open buffer's text (unsaved edits included), or None when it is not open."""
    return ls.buffers.text(unquote(uri))  # kept by their unquoted URI


def read_text(ls: LecodeServer, doc: Doc, field: str = "uri") -> str:
    """The document's text: its open buffer, else the file (at most 1 MiB of UTF-8 text)."""
    text = buffer_text(ls, doc.uri)
    if text is not None:
        if len(text) > MAX_FILE_BYTES:
            raise FileTooLarge(f"{field}: the document is larger than 1 MiB", field=field)
        return text
    try:
        data = read_regular(doc.path, MAX_FILE_BYTES + 1)
    except NotRegularFile:
        raise InvalidParams(f"{field}: not a regular file", field=field) from None
    except OSError as exc:
        raise InvalidParams(f"{field}: cannot be read ({exc.strerror})", field=field) from None
    if data is None:
        raise NotFound(f"{field}: no such file", field=field)
    if len(data) > MAX_FILE_BYTES:
        raise FileTooLarge(f"{field}: the file is larger than 1 MiB", field=field)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidParams(f"{field}: the file is not UTF-8 text", field=field) from None


def selected_lines(
    text: str, start_line: int, end_line: int, end_character: int, max_lines: int
) -> tuple[int, list[str]]:
    """The 1-based first line and the lines a selection covers (0-based LSP positions in).

    Whole lines: an end at character 0 of a later line leaves that line out."""
    last = end_line - 1 if end_character == 0 and end_line > start_line else end_line
    lines = split_lines(text)
    if last < start_line:
        raise InvalidParams("range: the end is before the start", field="range")
    if last >= len(lines):
        raise InvalidParams(
            f"range: the document has {len(lines)} lines, not {last + 1}", field="range"
        )
    if last - start_line + 1 > max_lines:
        raise InvalidParams(f"range: at most {max_lines} lines can be anchored", field="range")
    return start_line + 1, lines[start_line : last + 1]
