"""The shared-fact file, version 1: what a fact shared with the team is in the repository.

One file a fact, `.lecode/facts/<id>.json` in the checkout (so two people sharing two facts never
touch one file), written with sorted keys and two-space indents so that a review reads it:

    {
      "anchors": [{"capturedAt", "commit", "endLine", "firstSha256", "path", "sha256",
                   "startLine"}],
      "evidence": {"digest", "records": [<every transcript record from the first seq to the
                   last, exactly as stored>], "seqs", "sessionId"},
      "format": "lecode-shared-fact",
      "history": [{"at", "revision", "text"}],     <- the earlier revisions, oldest first
      "id": "<20 hex digits>",                      <- the file's name
      "repository": "<the repository's root commit>",
      "revision": 2,
      "sharedAt": "2026-12-02T17:00:00Z",
      "sharedBy": "Ada",
      "text": "...",                                <- the current revision's text
      "version": 1
    }

`evidence.digest` is the S2 digest (canonical.records_digest) of `records`, which is exactly
the digest the sharer's own fact store holds for the current revision: anyone can recompute it
without the session. `SCHEMA` is the JSON Schema of this format (protocol.md prints it).

Every bound a crafted repository could stretch is here, in one place: the reader (shelf.py)
holds to them, and so does the writer, so a file it writes is always one it reads.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from lecode_ls.jsonbound import deeper_than
from lecode_ls.memory.facts import MAX_ANCHOR_LINES, MAX_TEXT_BYTES
from lecode_ls.memory.sessions import clean_title

FOLDER = ".lecode/facts"
"""Where shared facts live, relative to the checkout root."""
FORMAT = "lecode-shared-fact"
VERSION = 1
ID = re.compile(r"[0-9a-f]{20}")
DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
FILE = re.compile(r"(?P<id>[0-9a-f]{20})\.json")

# -- bounds (what a crafted `.lecode/` can cost) -------------------------------------------------
MAX_ENTRIES = 20_000
"""Names of the folder looked at per load; the rest are counted as `skipped`."""
MAX_FILES = 10_000
"""Shared-fact files read per checkout; past it, files are counted as `skipped`."""
MAX_FILE_BYTES = 512 * 1024
"""One file. Share refuses a fact whose file would be larger (`fact_too_large`)."""
MAX_TOTAL_BYTES = 64 * 1024 * 1024
"""All the files of one checkout held at once; past it, files are counted as `skipped`."""
MAX_RECORDS = 200
"""Records in a bundle: a source spans at most 200 positions (S2)."""
MAX_ANCHORS = 16
"""Anchors a fact, each of at most MAX_ANCHOR_LINES (200) lines."""
MAX_REPOSITORIES = 4
"""Distinct repository commits looked up in Git per state of the checkout; a file naming
another is unverified."""
MAX_DIAGNOSTICS = 50
"""Shared facts whose anchors one open document's check looks at."""
MAX_HISTORY = 100
"""Earlier revisions kept in a file."""
MAX_NAME_CHARS = 200
"""`sharedBy`."""
MAX_DEPTH = 64
"""Levels of lists and objects in a bundled record (a message's content parts are three)."""
LOAD_SECONDS = 2.0
"""Time one load may spend reading and verifying (every check included); what is left is read
and checked at the next poll."""
BOUNDS = {
    "MAX_ENTRIES": MAX_ENTRIES, "MAX_FILES": MAX_FILES, "MAX_FILE_BYTES": MAX_FILE_BYTES,
    "MAX_TOTAL_BYTES": MAX_TOTAL_BYTES, "MAX_RECORDS": MAX_RECORDS, "MAX_ANCHORS": MAX_ANCHORS,
    "MAX_HISTORY": MAX_HISTORY, "MAX_REPOSITORIES": MAX_REPOSITORIES,
    "MAX_DIAGNOSTICS": MAX_DIAGNOSTICS, "MAX_DEPTH": MAX_DEPTH, "LOAD_SECONDS": LOAD_SECONDS,
}  # fmt: skip
"""Every bound above, by name (protocol.md prints them)."""


class Unverifiable(Exception):
    """A shared file that is not a well-formed version-1 shared fact: `reason` says why (no
    path, no content: it is shown to the person and to nobody else)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class SharedAnchor:
    path: str  # checkout-relative, "/"-separated
    start_line: int
    end_line: int
    sha256: str
    first_sha256: str
    commit: str | None
    captured_at: str


@dataclass(frozen=True)
class Evidence:
    session_id: str
    seqs: tuple[int, ...]
    digest: str
    records: tuple[dict[str, Any], ...]  # every record from seqs[0] to seqs[-1]


@dataclass(frozen=True)
class Earlier:
    revision: int
    text: str
    at: str


@dataclass(frozen=True)
class SharedDoc:
    """One shared-fact file as read: well formed, not yet verified (shelf.py verifies)."""

    id: str
    repository: str
    shared_by: str
    shared_at: str
    revision: int
    text: str
    history: tuple[Earlier, ...]
    anchors: tuple[SharedAnchor, ...]
    evidence: Evidence


def encode(doc: SharedDoc) -> bytes:
    """The file's bytes: sorted keys, two-space indents, a final newline."""
    value = {
        "format": FORMAT,
        "version": VERSION,
        "id": doc.id,
        "repository": doc.repository,
        "sharedBy": doc.shared_by,
        "sharedAt": doc.shared_at,
        "revision": doc.revision,
        "text": doc.text,
        "history": [{"revision": e.revision, "text": e.text, "at": e.at} for e in doc.history],
        "anchors": [
            {
                "path": a.path,
                "startLine": a.start_line,
                "endLine": a.end_line,
                "sha256": a.sha256,
                "firstSha256": a.first_sha256,
                "commit": a.commit,
                "capturedAt": a.captured_at,
            }
            for a in doc.anchors
        ],
        "evidence": {
            "sessionId": doc.evidence.session_id,
            "seqs": list(doc.evidence.seqs),
            "digest": doc.evidence.digest,
            "records": list(doc.evidence.records),
        },
    }
    return (json.dumps(value, ensure_ascii=False, sort_keys=True, indent=2) + "\n").encode()


def decode(data: bytes, name_id: str) -> SharedDoc:
    """Parse one file's bytes (at most MAX_FILE_BYTES: the caller read no more) into a
    SharedDoc, or raise Unverifiable. `name_id` is the ID its file name gives."""
    if re.search(rb"^(<{7}|>{7}|={7})( |\r?$)", data, re.MULTILINE):
        raise Unverifiable("the file holds merge-conflict markers")
    try:
        value = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise Unverifiable("the file is not UTF-8") from None
    except (ValueError, RecursionError):
        raise Unverifiable("the file is not JSON") from None
    top = _object(value, "the file")
    if top.get("format") != FORMAT or top.get("version") != VERSION:
        raise Unverifiable(f"not a version-{VERSION} {FORMAT} file")
    if top.get("id") != name_id:
        raise Unverifiable("its id is not its file name")
    revision = _int(top.get("revision"), "revision", 1)
    history = _list(top.get("history"), "history", MAX_HISTORY)
    if len(history) != min(revision - 1, MAX_HISTORY):
        raise Unverifiable("history: does not hold the earlier revisions")
    return SharedDoc(
        id=name_id,
        repository=_str(top.get("repository"), "repository", 64),
        shared_by=_name(top.get("sharedBy"), "sharedBy"),
        shared_at=_str(top.get("sharedAt"), "sharedAt", 64),
        revision=revision,
        text=_text(top.get("text"), "text"),
        history=tuple(_earlier(item) for item in history),
        anchors=tuple(_anchor(item) for item in _list(top.get("anchors"), "anchors", MAX_ANCHORS)),
        evidence=_evidence(_object(top.get("evidence"), "evidence")),
    )


def _earlier(value: object) -> Earlier:
    item = _object(value, "history")
    return Earlier(
        _int(item.get("revision"), "history.revision", 1),
        _text(item.get("text"), "history.text"),
        _str(item.get("at"), "history.at", 64),
    )


def _anchor(value: object) -> SharedAnchor:
    item = _object(value, "anchors")
    start = _int(item.get("startLine"), "anchors.startLine", 1)
    end = _int(item.get("endLine"), "anchors.endLine", start)
    if end - start + 1 > MAX_ANCHOR_LINES:
        raise Unverifiable(f"anchors: covers more than {MAX_ANCHOR_LINES} lines")
    for key in ("sha256", "firstSha256"):
        if not isinstance(item.get(key), str) or not DIGEST.fullmatch(item[key]):
            raise Unverifiable(f"anchors.{key}: not a sha256: digest")
    commit = item.get("commit")
    return SharedAnchor(
        path=_str(item.get("path"), "anchors.path", 4096),
        start_line=start,
        end_line=end,
        sha256=_str(item.get("sha256"), "anchors.sha256", 80),
        first_sha256=_str(item.get("firstSha256"), "anchors.firstSha256", 80),
        commit=None if commit is None else _str(commit, "anchors.commit", 64),
        captured_at=_str(item.get("capturedAt"), "anchors.capturedAt", 64),
    )


def _evidence(item: dict[str, Any]) -> Evidence:
    seqs = _list(item.get("seqs"), "evidence.seqs", MAX_RECORDS)
    if not seqs or any(type(s) is not int or s < 0 for s in seqs) or seqs != sorted(set(seqs)):
        raise Unverifiable("evidence.seqs: not distinct ascending positions")
    if seqs[-1] - seqs[0] + 1 > MAX_RECORDS:
        raise Unverifiable(f"evidence.seqs: spans more than {MAX_RECORDS} positions")
    records = _list(item.get("records"), "evidence.records", MAX_RECORDS)
    if deeper_than(records, MAX_DEPTH + 1):  # the list itself is one level
        raise Unverifiable(f"evidence.records: nested more than {MAX_DEPTH} levels deep")
    if len(records) != seqs[-1] - seqs[0] + 1:
        raise Unverifiable("evidence.records: not every record from the first seq to the last")
    for offset, record in enumerate(records):
        if not isinstance(record, dict) or record.get("seq") != seqs[0] + offset:
            raise Unverifiable("evidence.records: a record is out of place")
        if not isinstance(record.get("kind"), str):
            raise Unverifiable("evidence.records: a record has no kind")
    return Evidence(
        session_id=_str(item.get("sessionId"), "evidence.sessionId", 256),
        seqs=tuple(seqs),
        digest=_str(item.get("digest"), "evidence.digest", 128),
        records=tuple(records),
    )


def strings(value: object, *, keys: bool = False) -> list[str]:
    """Every string inside a JSON value; with `keys`, its objects' keys too (names, not
    content, but a crafted file can hide a token in one)."""
    found: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, dict):
            if keys:
                found.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def _object(value: object, field: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise Unverifiable(f"{field}: not an object")
    return value


def _list(value: object, field: str, most: int) -> list[Any]:
    if not isinstance(value, list):
        raise Unverifiable(f"{field}: not a list")
    if len(value) > most:
        raise Unverifiable(f"{field}: more than {most} entries")
    return value


def _int(value: object, field: str, least: int) -> int:
    if type(value) is not int or value < least:
        raise Unverifiable(f"{field}: not an integer of at least {least}")
    return value


def _str(value: object, field: str, most: int) -> str:
    if not isinstance(value, str) or not 0 < len(value) <= most:
        raise Unverifiable(f"{field}: not a string of 1 to {most} characters")
    return value


def _name(value: object, field: str) -> str:
    """A person's name as a person may be shown it: no control or bidirectional characters (ESC
    starts a terminal sequence; U+202E writes what follows backwards)."""
    name = _str(value, field, MAX_NAME_CHARS)
    if clean_title(name) != name:
        raise Unverifiable(f"{field}: holds control, bidirectional or repeated space characters")
    return name


def _text(value: object, field: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise Unverifiable(f"{field}: empty")
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError:
        raise Unverifiable(f"{field}: not valid Unicode") from None
    if size > MAX_TEXT_BYTES:
        raise Unverifiable(f"{field}: more than {MAX_TEXT_BYTES} bytes")
    return value


_STRING = {"type": "string", "minLength": 1}
SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "lecode-shared-fact/1",
    "title": "A fact shared with the team (.lecode/facts/<id>.json)",
    "type": "object",
    "additionalProperties": False,
    "required": [
        "format",
        "version",
        "id",
        "repository",
        "sharedBy",
        "sharedAt",
        "revision",
        "text",
        "history",
        "anchors",
        "evidence",
    ],
    "properties": {
        "format": {"const": FORMAT},
        "version": {"const": VERSION},
        "id": {"type": "string", "pattern": "^[0-9a-f]{20}$", "description": "the file's name"},
        "repository": {
            **_STRING,
            "maxLength": 64,
            "description": "the repository's root commit: a file copied from another "
            "repository is not this one's",
        },
        "sharedBy": {**_STRING, "maxLength": MAX_NAME_CHARS},
        "sharedAt": {**_STRING, "description": "ISO 8601 UTC"},
        "revision": {"type": "integer", "minimum": 1},
        "text": {**_STRING, "description": f"at most {MAX_TEXT_BYTES} UTF-8 bytes"},
        "history": {
            "type": "array",
            "maxItems": MAX_HISTORY,
            "description": "the earlier revisions, oldest first",
            "items": {
                "type": "object",
                "required": ["revision", "text", "at"],
                "properties": {
                    "revision": {"type": "integer", "minimum": 1},
                    "text": _STRING,
                    "at": _STRING,
                },
            },
        },
        "anchors": {
            "type": "array",
            "maxItems": MAX_ANCHORS,
            "items": {
                "type": "object",
                "required": [
                    "path",
                    "startLine",
                    "endLine",
                    "sha256",
                    "firstSha256",
                    "commit",
                    "capturedAt",
                ],
                "properties": {
                    "path": {**_STRING, "description": "relative to the checkout root"},
                    "startLine": {"type": "integer", "minimum": 1},
                    "endLine": {"type": "integer", "minimum": 1},
                    "sha256": {
                        "type": "string",
                        "pattern": "^sha256:[0-9a-f]{64}$",
                        "description": "of the lines joined with \\n",
                    },
                    "firstSha256": {
                        "type": "string",
                        "pattern": "^sha256:[0-9a-f]{64}$",
                        "description": "of the first line alone",
                    },
                    "commit": {"type": ["string", "null"]},
                    "capturedAt": _STRING,
                },
            },
        },
        "evidence": {
            "type": "object",
            "required": ["sessionId", "seqs", "digest", "records"],
            "properties": {
                "sessionId": _STRING,
                "seqs": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": MAX_RECORDS,
                    "items": {"type": "integer", "minimum": 0},
                },
                "digest": {
                    **_STRING,
                    "description": "`sha256:` + hex of the canonical JSON array of `records`",
                },
                "records": {
                    "type": "array",
                    "maxItems": MAX_RECORDS,
                    "description": "every transcript record from the first seq to the last",
                    "items": {
                        "type": "object",
                        "required": ["seq", "kind"],
                        "properties": {"seq": {"type": "integer"}, "kind": {"type": "string"}},
                    },
                },
            },
        },
    },
}
