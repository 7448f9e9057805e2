"""Code anchors of facts: rows of facts.sqlite3's `anchors` table (schema migration 4).

An anchor ties a fact revision to lines of a file: the path relative to the file's checkout root
("/"-separated), a 1-based inclusive line range, the digest of those lines' text and of the first
line alone (memory/anchors/text.py's lines_digest; the first finds where moved lines went), and the commit
checked out when captured (None outside Git). Anchors sit beside a revision's SourceRef: they
say which code a fact is about, never why it is believed.

`FactStore` writes anchors inside its own transactions (remember, correct, forget) with the
statement functions here; `AnchorStore` is the anchors' own reads and the re-anchor write.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import apsw

from lecode_ls.errors import InvalidParams, NotFound, StaleRevision
from lecode_ls.memory.facts import schema
from lecode_ls.memory.facts.db import FactsDatabase
from lecode_ls.memory.facts.schema import as_int
from lecode_ls.platform.paths import path_problem

MAX_ANCHOR_LINES = 200  # one anchor covers at most this many lines
MAX_ANCHORS_PER_REVISION = 8
MAX_PATH_CHARS = 1024
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
_COMMIT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


@dataclass(frozen=True)
class NewAnchor:
    """An anchor to store: lines `start_line`..`end_line` (1-based, inclusive) of `path`."""

    path: str
    start_line: int
    end_line: int
    sha256: str
    first_sha256: str
    commit: str | None


@dataclass(frozen=True)
class StoredAnchor:
    """An anchor as stored, of one fact revision."""

    fact_id: int
    revision: int
    index: int  # 0-based position among the revision's anchors
    path: str
    start_line: int
    end_line: int
    sha256: str
    first_sha256: str
    commit: str | None
    captured_at: str


def check_path(path: object, field: str = "path") -> str:
    """A checkout-relative path as anchors store it: "/"-separated, no `.`/`..` parts."""
    if not isinstance(path, str) or not 0 < len(path) <= MAX_PATH_CHARS:
        raise InvalidParams(
            f"{field}: a relative file path of 1 to {MAX_PATH_CHARS} characters", field=field
        )
    parts = path.split("/")
    if path.startswith("/") or "\\" in path or "\x00" in path or ":" in parts[0]:
        raise InvalidParams(f"{field}: must be relative to the checkout root", field=field)
    if any(part in ("", ".", "..") for part in parts):
        raise InvalidParams(f"{field}: must not contain empty, '.' or '..' parts", field=field)
    if (problem := path_problem(path)) is not None:
        raise InvalidParams(f"{field}: the path {problem}", field=field)
    return path


def check_anchor(anchor: NewAnchor) -> NewAnchor:
    check_path(anchor.path, "anchor.path")
    start, end = anchor.start_line, anchor.end_line
    if type(start) is not int or type(end) is not int or not 1 <= start <= end:
        raise InvalidParams("anchor: lines must be 1 <= start <= end", field="anchor")
    if end - start + 1 > MAX_ANCHOR_LINES:
        raise InvalidParams(
            f"anchor: at most {MAX_ANCHOR_LINES} lines can be anchored", field="anchor"
        )
    if not (_DIGEST.fullmatch(anchor.sha256) and _DIGEST.fullmatch(anchor.first_sha256)):
        raise InvalidParams("anchor: digests must be sha256:<64 hex>", field="anchor")
    if anchor.commit is not None and not _COMMIT.fullmatch(anchor.commit):
        raise InvalidParams("anchor: commit must be a hex object name", field="anchor")
    return anchor


def check_anchors(
    anchors: Sequence[NewAnchor], redact: Callable[[str], str] = lambda path: path
) -> tuple[NewAnchor, ...]:
    """Checked anchors, each path `redact`ed (P5: a file's name can hold a token; the anchor
    then names no file, and its drift says so, but the token is not stored)."""
    if len(anchors) > MAX_ANCHORS_PER_REVISION:
        raise InvalidParams(
            f"anchors: a revision holds at most {MAX_ANCHORS_PER_REVISION}", field="anchors"
        )
    return tuple(
        replace(checked, path=redact(checked.path))
        for checked in (check_anchor(anchor) for anchor in anchors)
    )


# -- statements run inside FactStore's transactions ---------------------------------------------

_COLUMNS = (
    "a.fact_id, a.revision, a.ordinal, a.path, a.start_line, a.end_line, a.sha256, "
    "a.first_sha256, a.git_commit, a.captured_at"
)
_CURRENT = (
    f"SELECT {_COLUMNS} FROM anchors a "
    "JOIN facts f ON f.id = a.fact_id AND f.current_revision = a.revision"
)


def _from_row(row: Sequence[Any]) -> StoredAnchor:
    fact_id, revision, ordinal, path, start, end, digest, first, commit, captured = row
    return StoredAnchor(
        fact_id=as_int(fact_id),
        revision=as_int(revision),
        index=as_int(ordinal),
        path=str(path),
        start_line=as_int(start),
        end_line=as_int(end),
        sha256=str(digest),
        first_sha256=str(first),
        commit=None if commit is None else str(commit),
        captured_at=str(captured),
    )


def insert_anchors(
    conn: apsw.Connection, fact_id: int, revision: int, anchors: Iterable[NewAnchor]
) -> None:
    """Append anchors to a revision (after the ones it has)."""
    (count,) = schema.rows(
        conn,
        "SELECT count(*) FROM anchors WHERE fact_id = ? AND revision = ?",
        (fact_id, revision),
    )[0]
    now = schema.utc_now()
    for ordinal, anchor in enumerate(anchors, start=as_int(count)):
        conn.execute(
            "INSERT INTO anchors (fact_id, revision, ordinal, path, start_line, end_line, sha256, "
            "first_sha256, git_commit, captured_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                fact_id,
                revision,
                ordinal,
                anchor.path,
                anchor.start_line,
                anchor.end_line,
                anchor.sha256,
                anchor.first_sha256,
                anchor.commit,
                now,
            ),
        )


def has_anchors(conn: apsw.Connection, fact_id: int, revision: int) -> bool:
    return bool(
        schema.rows(
            conn,
            "SELECT 1 FROM anchors WHERE fact_id = ? AND revision = ? LIMIT 1",
            (fact_id, revision),
        )
    )


class AnchorStore:
    """Reads of the anchors of current revisions, and re-anchoring (see the module docstring).

    Shares the FactStore's database, lock and transactions (`FactStore.anchors`).
    """

    def __init__(self, db: FactsDatabase) -> None:
        self._db = db

    def of_facts(self, fact_ids: Iterable[int]) -> dict[int, list[StoredAnchor]]:
        """The anchors of these facts' current revisions, by fact ID (facts without any are
        left out)."""
        wanted = sorted(set(fact_ids))
        found: dict[int, list[StoredAnchor]] = {}
        with self._db.read() as conn:
            if conn is None or not wanted:
                return found
            for start in range(0, len(wanted), 500):
                chunk = wanted[start : start + 500]
                marks = ", ".join("?" * len(chunk))
                for row in schema.rows(
                    conn,
                    f"{_CURRENT} WHERE a.fact_id IN ({marks}) ORDER BY a.fact_id, a.ordinal",
                    chunk,
                ):
                    anchor = _from_row(row)
                    found.setdefault(anchor.fact_id, []).append(anchor)
        return found

    def fact_ids_in(self, paths: Sequence[str]) -> set[int]:
        """The facts whose current revision is anchored in one of these files (at most 101)."""
        wanted = [check_path(path) for path in paths[:101]]
        with self._db.read() as conn:
            if conn is None or not wanted:
                return set()
            marks = ", ".join("?" * len(wanted))
            return {
                as_int(fact_id)
                for (fact_id,) in schema.rows(
                    conn,
                    "SELECT DISTINCT a.fact_id FROM anchors a JOIN facts f ON f.id = a.fact_id "
                    f"AND f.current_revision = a.revision WHERE a.path IN ({marks})",
                    wanted,
                )
            }

    def all(self) -> list[StoredAnchor]:
        """Every current revision's anchor (what the drift tracker indexes)."""
        with self._db.read() as conn:
            if conn is None:
                return []
            rows = schema.rows(conn, f"{_CURRENT} ORDER BY a.path, a.fact_id, a.ordinal")
        return [_from_row(row) for row in rows]

    def reanchor(
        self, fact_id: int, expected_revision: int, index: int, anchor: NewAnchor
    ) -> StoredAnchor:
        """Replace anchor `index` of the fact's current revision, which must be
        `expected_revision` (F2's optimistic check); the text and revision stay as they are."""
        anchor = check_anchor(anchor)
        with self._db.write() as conn:
            current = schema.current_revision(conn, fact_id)
            if current != expected_revision:
                raise StaleRevision(
                    f"expected_revision: fact {fact_id} is at revision {current}",
                    field="expected_revision",
                )
            found = schema.rows(
                conn,
                "SELECT 1 FROM anchors WHERE fact_id = ? AND revision = ? AND ordinal = ?",
                (fact_id, current, index),
            )
            if not found:
                raise NotFound(
                    f"index: fact {fact_id} r{current} has no anchor {index}", field="index"
                )
            conn.execute(
                "UPDATE anchors SET path = ?, start_line = ?, end_line = ?, sha256 = ?, "
                "first_sha256 = ?, git_commit = ?, captured_at = ? "
                "WHERE fact_id = ? AND revision = ? AND ordinal = ?",
                (
                    anchor.path,
                    anchor.start_line,
                    anchor.end_line,
                    anchor.sha256,
                    anchor.first_sha256,
                    anchor.commit,
                    schema.utc_now(),
                    fact_id,
                    current,
                    index,
                ),
            )
            row = schema.rows(
                conn,
                f"{_CURRENT} WHERE a.fact_id = ? AND a.ordinal = ?",
                (fact_id, index),
            )
        return _from_row(row[0])
