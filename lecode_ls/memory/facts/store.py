"""Source-linked facts: `FactStore`, the only owner of a project's facts.sqlite3 (F1-F9).

A fact is an ID with numbered revisions of text. A revision may carry one validated source
reference (session ID, transcript sequence positions, SHA-256 digest of the referenced records)
and, in databases from before source-linked recall, unverified legacy provenance. Forgetting a
fact installs content-free exclusions for every position its evidence ever cited; excluded
evidence can never be remembered, corrected with, or attached again, and other facts citing it
stay stored but are suppressed from recall.

Durability and concurrency are db.py's: WAL, `synchronous=FULL`, every write one
`BEGIN IMMEDIATE` transaction, one connection per store behind a lock, so every public method is
safe to call from any thread and they run one at a time.

Source validation (transcript reads, digests, visibility) is not done here: callers pass a
`SourceCheck`. It runs inside the write transaction (A8: the evidence is checked against the
transcript as it is when the fact is inserted, not a moment before), and may read this store
(`excluded_seqs`, `generation`): those reads see the transaction. Exclusions and the generation
are checked again by the transaction itself.
"""

from __future__ import annotations

import builtins
import contextlib
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import astuple
from pathlib import Path

import apsw

from lecode_ls.errors import (
    DuplicateFact,
    FactNotFound,
    InvalidParams,
    InvalidSource,
    RevisionNotFound,
    SourceAlreadyAttached,
    StaleRevision,
)
from lecode_ls.memory.facts import schema
from lecode_ls.memory.facts.anchor_rows import (
    AnchorStore,
    NewAnchor,
    check_anchors,
    check_path,
    has_anchors,
    insert_anchors,
)
from lecode_ls.memory.facts.db import FactsDatabase
from lecode_ls.memory.facts.model import (
    SOURCE_FIELD,
    AuthoredCheck,
    Fact,
    Positions,
    PositionsLike,
    RevisionEvidence,
    SourceCheck,
    SourceLike,
    StoredRef,
    check_fact_id,
    check_int,
    check_origin,
    check_positions,
    check_ref,
    check_text,
    fact_from_row,
    to_ref,
)
from lecode_ls.memory.facts.ranked import Ranking
from lecode_ls.memory.facts.retire import Retirement
from lecode_ls.memory.facts.schema import as_int, canonical_text
from lecode_ls.memory.facts.scrubs import Scrubs
from lecode_ls.memory.facts.vectors import Vectors
from lecode_ls.memory.facts.verify import verify as verify_store
from lecode_ls.memory.secrets import Redactor

MAX_PAGE = 50  # list/search never return more than this many facts
MAX_ALSO_PATHS = 100  # list(path=..., also=...): the files renamed to one file, at most
DEFAULT_PAGE = 20


# -- queries used inside transactions ------------------------------------------------------------

_SUPPRESSED = schema.SUPPRESSED_SQL

_FACT_COLUMNS = f"""
SELECT f.id, f.current_revision, r.text, f.origin, s.session_id, s.seqs, s.digest,
       {_SUPPRESSED}, f.created_at, f.updated_at,
       EXISTS (SELECT 1 FROM pins p WHERE p.fact_id = f.id),
       EXISTS (SELECT 1 FROM retired k WHERE k.fact_id = f.id AND k.state = 'retired'),
       (SELECT u.used_at FROM uses u WHERE u.fact_id = f.id),
       (SELECT u.count FROM uses u WHERE u.fact_id = f.id)
"""
_FACT_SELECT = (
    _FACT_COLUMNS
    + """FROM facts f
JOIN revisions r ON r.fact_id = f.id AND r.revision = f.current_revision
LEFT JOIN source_refs s ON s.fact_id = f.id AND s.revision = f.current_revision
"""
)


def _indexed_search(index: str) -> str:
    """A search driven by an FTS5 index over revisions in its own (rowid) order, so a LIMIT stops
    the walk early; `instr()` confirms each candidate exactly."""
    return (
        _FACT_COLUMNS
        + f"""FROM {index}
JOIN revisions r ON r.id = {index}.rowid
JOIN facts f ON f.id = r.fact_id AND f.current_revision = r.revision
LEFT JOIN source_refs s ON s.fact_id = f.id AND s.revision = f.current_revision
WHERE {index} MATCH ? AND instr(r.text, ?) > 0
ORDER BY {index}.rowid LIMIT ?
"""
    )


_FACT_SEARCH = _indexed_search("revisions_fts")  # 3 characters or more: trigrams
_FACT_SHORT_SEARCH = _indexed_search("revisions_short")  # 1 or 2: characters and pairs


class FactStore:
    """The facts of one project, in `<store>/facts.sqlite3` (see the module docstring).

    The constructor touches no file. Reads of a missing database return empty results and do not
    create it (F3); the first write creates it (mode 0600, parent folders 0700). Opening an
    existing database runs the pending migrations. A symbolic link at the database path (or, when
    `root` is given, anywhere from the store folder `root` down to it) is refused.
    """

    def __init__(
        self,
        path: Path,
        *,
        root: Path | None = None,
        read_only: bool = False,
        redactor: Redactor | None = None,
    ) -> None:
        self.path = path
        self.redactor = redactor or Redactor(root or path.parent)
        """Every fact text passes through it before it is stored (P5)."""
        self._db = FactsDatabase(path, root=root, read_only=read_only)
        self.anchors = AnchorStore(self._db)
        """The code anchors of the facts' current revisions (anchor_rows.py)."""
        self.ranking = Ranking(self._db)
        """Ranked queries, pins and uses (ranked.py)."""
        self.vectors = Vectors(self._db)
        """Embedding vectors, opt-in (vectors.py)."""
        self.retirement = Retirement(self._db)
        """Retired facts and retirement proposals (retire.py)."""
        self.scrubs = Scrubs(self._db)
        """The journal of secret scrubs and the scrub of fact texts (scrubs.py)."""

    def close(self) -> None:
        """Close the connection. Idempotent; later calls raise StoreError."""
        self._db.close()

    @contextlib.contextmanager
    def _checked_write(self, check: SourceCheck, ref: SourceLike) -> Iterator[apsw.Connection]:
        """A write transaction that first runs `check(ref, "working")` inside it (A8). Before the
        database exists, the check also runs before it is created: refused evidence leaves no
        file behind (F3)."""
        if not self._db.exists():
            check(ref, "working")
        with self._db.write() as conn:
            check(ref, "working")
            yield conn

    # -- generation and exclusions ---------------------------------------------------------------

    def generation(self) -> int:
        """The monotonic exclusion generation: how many forgets ever committed (0 without a DB)."""
        with self._db.read() as conn:
            return 0 if conn is None else schema.generation(conn)

    def is_excluded(self, session_id: str, seq: int) -> bool:
        """Whether a forget excluded this source position. Works with memory disabled (F3)."""
        with self._db.read() as conn:
            if conn is None:
                return False
            return bool(
                schema.rows(
                    conn,
                    "SELECT 1 FROM exclusions WHERE session_id = ? AND seq = ?",
                    (session_id, seq),
                )
            )

    def excluded_seqs(self, session_id: str) -> frozenset[int]:
        """Every excluded position of one session; the exclusion reader of source validation."""
        with self._db.read() as conn:
            if conn is None:
                return frozenset()
            rows = schema.rows(
                conn, "SELECT seq FROM exclusions WHERE session_id = ?", (session_id,)
            )
            return frozenset(as_int(seq) for (seq,) in rows)

    def scrubbed_digest(self, session_id: str, seqs: Sequence[int], digest: str) -> str | None:
        """The digest a secret scrub moved a reference's `digest` to (the exclusion reader of
        source validation: a reference a crash left on its old digest is still recognised)."""
        return self.scrubs.scrubbed_digest(session_id, seqs, digest)

    # -- source-linked writes --------------------------------------------------------------------

    def remember(
        self,
        text: str,
        ref: SourceLike,
        *,
        check: SourceCheck,
        deduplicate: bool = False,
        expected_generation: int | None = None,
        origin: str = "remembered",
        anchors: Sequence[NewAnchor] = (),
    ) -> tuple[int, int]:
        """Create a fact whose revision 1 carries `ref`, atomically (F6). Returns (id, revision).

        One transaction runs `check(ref, "working")`, refuses excluded evidence and a stale
        `expected_generation`, returns the existing fact for a retry (same canonical text
        and same session, seqs and digest), and with `deduplicate` returns the lowest-ID fact
        having any revision (superseded ones too) with the same canonical text, unchanged and
        without attaching `ref` (F8). Without `deduplicate` (a person's or model's request), a
        text whose key equals the current revision of a stored, unsuppressed fact (retired ones
        too) raises DuplicateFact naming it (issue 26): no second fact. The returned revision is
        that fact's current one.
        `anchors` go with revision 1 in the same transaction; a returned existing fact gets them
        only when its current revision has none.
        """
        text = self.redactor.text(check_text(text))
        stored = check_ref(ref)
        origin = check_origin(origin)
        new_anchors = check_anchors(anchors, self.redactor.text)
        key = canonical_text(text)
        with self._checked_write(check, ref) as conn:
            schema.refuse_excluded(conn, stored.session_id, stored.seqs, SOURCE_FIELD)
            schema.check_generation(conn, expected_generation)
            found = schema.rows(
                conn,
                "SELECT f.id, f.current_revision FROM revisions r "
                "JOIN source_refs s ON s.fact_id = r.fact_id AND s.revision = r.revision "
                "JOIN facts f ON f.id = r.fact_id "
                "WHERE r.canonical = ? AND s.session_id = ? AND s.seqs = ? AND s.digest = ? "
                "ORDER BY f.id LIMIT 1",
                (key, stored.session_id, json.dumps(list(stored.seqs)), stored.digest),
            )
            if not found and deduplicate:
                found = schema.rows(
                    conn,
                    "SELECT f.id, f.current_revision FROM revisions r "
                    "JOIN facts f ON f.id = r.fact_id WHERE r.canonical = ? "
                    "ORDER BY f.id LIMIT 1",
                    (key,),
                )
            if not found and not deduplicate:
                same = schema.rows(
                    conn,
                    "SELECT f.id FROM facts f JOIN revisions r ON r.fact_id = f.id "
                    f"AND r.revision = f.current_revision WHERE r.canonical = ? AND NOT {_SUPPRESSED} "
                    "ORDER BY f.id LIMIT 1",
                    (key,),
                )
                if same:
                    existing = as_int(same[0][0])
                    raise DuplicateFact(
                        f"text: fact {existing} already says this (the same text once case, "
                        "spacing and a final full stop are set aside); recall, correct "
                        "or restore it instead",
                        fact_id=existing,
                    )
            if found:
                fact_id, revision = as_int(found[0][0]), as_int(found[0][1])
                if not has_anchors(conn, fact_id, revision):
                    insert_anchors(conn, fact_id, revision, new_anchors)
                return fact_id, revision
            fact_id = schema.insert_fact(conn, text, origin)
            schema.insert_ref(conn, fact_id, 1, *astuple(stored))
            insert_anchors(conn, fact_id, 1, new_anchors)
            return fact_id, 1

    def correct(
        self,
        fact_id: int,
        text: str,
        *,
        expected_revision: int,
        ref: SourceLike,
        check: SourceCheck,
        has_authored_text: AuthoredCheck,
        expected_generation: int | None = None,
        anchors: Sequence[NewAnchor] = (),
    ) -> int:
        """Append revision current+1 with `ref` as its evidence (F6); returns the new revision.

        Fails with FactNotFound (unknown or forgotten), and inside the transaction with whatever
        `check(ref, "working")` raises, InvalidSource when the ref cites no persisted user or
        assistant text, StaleGeneration (E4), ExcludedEvidence or StaleRevision (F2). Checks
        evidence identity, not whether the claim is true. The new revision carries `anchors`
        (none by default: the old revision's anchors described the old claim).
        """
        fact_id = check_fact_id(fact_id)
        text = self.redactor.text(check_text(text))
        expected_revision = check_int(expected_revision, "expected_revision", 1)
        stored = check_ref(ref)
        new_anchors = check_anchors(anchors, self.redactor.text)
        with self._db.read() as conn:  # a clear answer for a missing fact before reading sources
            if conn is None:
                raise FactNotFound(f"fact_id: there is no fact {fact_id}", field="fact_id")
            schema.current_revision(conn, fact_id)
        with self._checked_write(check, ref) as conn:
            if not has_authored_text(ref):
                raise InvalidSource(
                    f"{SOURCE_FIELD}: a correction needs persisted user or assistant text in its "
                    "source range; tool output alone cannot justify it",
                    field=SOURCE_FIELD,
                )
            current = schema.current_revision(conn, fact_id)
            schema.check_generation(conn, expected_generation)
            schema.refuse_excluded(conn, stored.session_id, stored.seqs, SOURCE_FIELD)
            if expected_revision != current:
                raise StaleRevision(
                    f"expected_revision: fact {fact_id} is at revision {current}",
                    field="expected_revision",
                )
            schema.insert_revision(conn, fact_id, current + 1, text, schema.utc_now())
            schema.insert_ref(conn, fact_id, current + 1, *astuple(stored))
            insert_anchors(conn, fact_id, current + 1, new_anchors)
            return current + 1

    def attach_source(
        self, fact_id: int, revision: int, ref: SourceLike, check: SourceCheck
    ) -> bool:
        """Attach `ref` to an existing revision that has none (F5).

        Validates with `check(ref, "working")` and refuses excluded evidence, in the transaction.
        A revision holds one reference: attaching the identical reference again is a no-op that
        returns False; a different one raises SourceAlreadyAttached. True when attached.
        """
        fact_id = check_fact_id(fact_id)
        revision = check_int(revision, "revision", 1)
        stored = check_ref(ref)
        with self._checked_write(check, ref) as conn:
            current = schema.current_revision(conn, fact_id)
            if revision > current:
                raise RevisionNotFound(
                    f"revision: fact {fact_id} has revisions 1 to {current}, not {revision}",
                    field="revision",
                )
            schema.refuse_excluded(conn, stored.session_id, stored.seqs, SOURCE_FIELD)
            existing = schema.rows(
                conn,
                "SELECT session_id, seqs, digest FROM source_refs WHERE fact_id = ? AND revision = ?",
                (fact_id, revision),
            )
            if existing:
                if to_ref(*existing[0]) == stored:
                    return False
                raise SourceAlreadyAttached(
                    f"revision: fact {fact_id} revision {revision} already has a different source; "
                    "correct the fact to cite new evidence",
                    field="revision",
                )
            schema.insert_ref(conn, fact_id, revision, *astuple(stored))
            return True

    def sharing_evidence(self, fact_id: int) -> builtins.list[int]:
        """The other facts a forget of `fact_id` would hide: their current revision cites a
        position the forget excludes. Raises FactNotFound for an unknown or forgotten fact."""
        fact_id = check_fact_id(fact_id)
        with self._db.read() as conn:
            if conn is None:
                raise FactNotFound(f"fact_id: there is no fact {fact_id}", field="fact_id")
            schema.current_revision(conn, fact_id)
            return schema.sharing_evidence(conn, fact_id)

    def forget(self, fact_id: int) -> bool:
        """Forget one fact in one BEGIN IMMEDIATE transaction (F7). False when already forgotten.

        Excludes every position cited by every revision's refs and legacy provenance (superseded
        revisions too), records a content-free retry marker, advances the generation, and deletes
        the fact, its revisions, provenance, refs and search-index entries. Raises FactNotFound
        for an ID that was never stored. There is deliberately no bulk or pattern variant.
        """
        fact_id = check_fact_id(fact_id)
        with self._db.lock:
            if not self._db.exists():
                raise FactNotFound(f"fact_id: there is no fact {fact_id}", field="fact_id")
            with self._db.write() as conn:
                if schema.rows(conn, "SELECT 1 FROM forgotten WHERE fact_id = ?", (fact_id,)):
                    return False
                schema.current_revision(conn, fact_id)
                cited = schema.rows(
                    conn,
                    "SELECT session_id, seqs FROM source_refs WHERE fact_id = ? "
                    "UNION ALL SELECT session_id, seqs FROM provenance WHERE fact_id = ?",
                    (fact_id, fact_id),
                )
                generation = schema.generation(conn) + 1
                conn.execute("UPDATE meta SET value = ? WHERE key = 'generation'", (generation,))
                conn.executemany(
                    "INSERT OR IGNORE INTO exclusions (session_id, seq, generation) VALUES (?, ?, ?)",
                    [
                        (str(session_id), seq, generation)
                        for session_id, seqs in cited
                        for seq in schema.lenient_seqs(seqs)
                    ],
                )
                conn.execute("INSERT INTO forgotten (fact_id) VALUES (?)", (fact_id,))
                for table in (
                    "anchors", "source_refs", "provenance", "pins", "uses", "fact_terms",
                    "fact_vectors", "retired", "drifted", "revisions",
                ):  # fmt: skip
                    conn.execute(f"DELETE FROM {table} WHERE fact_id = ?", (fact_id,))
                conn.execute("DELETE FROM facts WHERE id = ?", (fact_id,))
                # Merge index segments so the forgotten text's terms leave the indexes now.
                for index in ("revisions_fts", "revisions_short", "facts_rank"):
                    conn.execute(f"INSERT INTO {index} ({index}) VALUES ('optimize')")
                return True

    def exclude(self, source: PositionsLike) -> bool:
        """Exclude evidence that is no fact of this store (a teammate's shared fact, forgotten
        here: memory/team) as forget excludes a fact's (F7): content-free exclusions of its
        positions and generation + 1, in one BEGIN IMMEDIATE transaction. False, and nothing
        written, when every position was excluded already."""
        session_id, seqs = check_positions(source, "source")
        with self._db.lock, self._db.write() as conn:
            known = {
                as_int(seq)
                for (seq,) in schema.rows(
                    conn, "SELECT seq FROM exclusions WHERE session_id = ?", (session_id,)
                )
            }
            if known.issuperset(seqs):
                return False
            generation = schema.generation(conn) + 1
            conn.execute("UPDATE meta SET value = ? WHERE key = 'generation'", (generation,))
            conn.executemany(
                "INSERT OR IGNORE INTO exclusions (session_id, seq, generation) VALUES (?, ?, ?)",
                [(session_id, seq, generation) for seq in seqs],
            )
            return True

    def holding(
        self, cited: Iterable[tuple[str, str]]
    ) -> dict[tuple[str, str], builtins.list[int]]:
        """For each (session ID, digest), the facts whose current revision cites exactly that
        evidence, in ID order; pairs no fact cites are left out. A shared fact's bundle names
        the sharer's own fact so (memory/team). One read for all. Unverified (F9)."""
        wanted = list(dict.fromkeys(cited))
        found: dict[tuple[str, str], builtins.list[int]] = {}
        with self._db.read() as conn:
            if conn is None or not wanted:
                return found
            for start in range(0, len(wanted), 400):  # within SQLite's bound-parameter limit
                chunk = wanted[start : start + 400]
                marks = ", ".join("(?, ?)" for _ in chunk)
                for session_id, digest, fact_id in schema.rows(
                    conn,
                    "SELECT r.session_id, r.digest, r.fact_id FROM source_refs r "
                    "JOIN facts f ON f.id = r.fact_id AND f.current_revision = r.revision "
                    f"WHERE (r.session_id, r.digest) IN (VALUES {marks}) ORDER BY r.fact_id",
                    tuple(value for pair in chunk for value in pair),
                ):
                    found.setdefault((str(session_id), str(digest)), []).append(as_int(fact_id))
        return found

    def excluded_in(self, session_ids: Iterable[str]) -> dict[str, frozenset[int]]:
        """`excluded_seqs` of many sessions in one read; sessions with none are left out."""
        wanted = list(dict.fromkeys(session_ids))
        found: dict[str, set[int]] = {}
        with self._db.read() as conn:
            if conn is None or not wanted:
                return {}
            for start in range(0, len(wanted), 500):
                chunk = wanted[start : start + 500]
                marks = ", ".join("?" * len(chunk))
                for session_id, seq in schema.rows(
                    conn,
                    f"SELECT session_id, seq FROM exclusions WHERE session_id IN ({marks})",
                    tuple(chunk),
                ):
                    found.setdefault(str(session_id), set()).add(as_int(seq))
        return {session_id: frozenset(seqs) for session_id, seqs in found.items()}

    def stamp(self) -> tuple[int, ...]:
        """What changes whenever the database is written, by anyone (its file's and its WAL's
        modification time and size): for caches of what it holds."""
        stamp: list[int] = []
        for path in (self.path, self.path.with_name(self.path.name + "-wal")):
            try:
                info = path.stat()
            except OSError:
                stamp += [0, 0]
            else:
                stamp += [info.st_mtime_ns, info.st_size]
        return tuple(stamp)

    # -- unverified storage ----------------------------------------------------------------------

    def add(
        self, text: str, *, origin: str = "unverified", provenance: PositionsLike | None = None
    ) -> tuple[int, int]:
        """Store a fact with no validated source; returns (id, 1). Unverified storage (F1).

        With `provenance`, it is recorded as untrusted legacy provenance and refused, inside the
        transaction, when it cites excluded evidence.
        """
        text = self.redactor.text(check_text(text))
        origin = check_origin(origin)
        positions = None if provenance is None else check_positions(provenance, "provenance")
        with self._db.write() as conn:
            if positions is not None:
                schema.refuse_excluded(conn, *positions, "provenance")
            fact_id = schema.insert_fact(conn, text, origin)
            schema.insert_provenance(conn, fact_id, 1, positions)
            return fact_id, 1

    def revise(
        self,
        fact_id: int,
        text: str,
        expected_revision: int,
        *,
        provenance: PositionsLike | None = None,
    ) -> int:
        """Append an unverified revision after an optimistic revision check (F2); returns it."""
        fact_id = check_fact_id(fact_id)
        text = self.redactor.text(check_text(text))
        expected_revision = check_int(expected_revision, "expected_revision", 1)
        positions = None if provenance is None else check_positions(provenance, "provenance")
        with self._db.write() as conn:
            current = schema.current_revision(conn, fact_id)
            if positions is not None:
                schema.refuse_excluded(conn, *positions, "provenance")
            if expected_revision != current:
                raise StaleRevision(
                    f"expected_revision: fact {fact_id} is at revision {current}",
                    field="expected_revision",
                )
            schema.insert_revision(conn, fact_id, current + 1, text, schema.utc_now())
            schema.insert_provenance(conn, fact_id, current + 1, positions)
            return current + 1

    # -- administrative reads (unverified, F9) ---------------------------------------------------

    def get(self, fact_id: int) -> Fact | None:
        """The fact's current revision, or None. An unverified administrative read (F9):
        model-facing consumers must go through source-validated recall instead."""
        with self._db.read() as conn:
            if conn is None:
                return None
            rows = schema.rows(conn, _FACT_SELECT + "WHERE f.id = ?", (check_fact_id(fact_id),))
            return fact_from_row(rows[0]) if rows else None

    def get_many(
        self, fact_ids: Iterable[int], *, max_text_bytes: int | None = None
    ) -> dict[int, Fact]:
        """The current revision of each of these facts that is stored (and, with
        `max_text_bytes`, whose text is no longer in UTF-8), by ID. Unverified administrative
        read (F9), as `get`."""
        wanted = sorted({check_fact_id(fact_id) for fact_id in fact_ids})
        size = "" if max_text_bytes is None else " AND length(CAST(r.text AS BLOB)) <= ?"
        bound: tuple[int, ...] = () if max_text_bytes is None else (max_text_bytes,)
        found: dict[int, Fact] = {}
        with self._db.read() as conn:
            if conn is None:
                return found
            for start in range(0, len(wanted), 500):  # within SQLite's bound-parameter limit
                chunk = wanted[start : start + 500]
                marks = ", ".join("?" * len(chunk))
                for row in schema.rows(
                    conn, _FACT_SELECT + f"WHERE f.id IN ({marks}){size}", (*chunk, *bound)
                ):
                    fact = fact_from_row(row)
                    found[fact.id] = fact
        return found

    def suppressed(self, fact_id: int) -> bool:
        """Whether evidence of any revision of the fact was excluded: keep it, hide it (F7)."""
        fact = self.get(fact_id)
        if fact is None:
            raise FactNotFound(f"fact_id: there is no fact {fact_id}", field="fact_id")
        return fact.suppressed

    def list(
        self,
        offset: int = 0,
        limit: int = DEFAULT_PAGE,
        *,
        path: str | None = None,
        also: Sequence[str] = (),
    ) -> tuple[builtins.list[Fact], int | None]:
        """One page of facts in ID order, and the offset of the next page (None at the end).

        `limit` is clamped to 1..50. With `path` (checkout-relative), only the facts whose current
        revision is anchored in that file, or in one of the files `also` names (at most
        MAX_ALSO_PATHS: the files Git says were renamed to it). Unverified administrative read
        (F9).
        """
        offset = check_int(offset, "offset", 0)
        limit = min(check_int(limit, "limit", 1), MAX_PAGE)
        ids = "SELECT id FROM facts ORDER BY id LIMIT ? OFFSET ?"
        bindings: tuple[object, ...] = (limit + 1, offset)
        if path is not None:
            paths = [check_path(p) for p in (path, *also[:MAX_ALSO_PATHS])]
            ids = (
                "SELECT DISTINCT a.fact_id FROM anchors a JOIN facts g ON g.id = a.fact_id "
                f"AND g.current_revision = a.revision WHERE a.path IN ({', '.join('?' * len(paths))}) "
                "ORDER BY a.fact_id LIMIT ? OFFSET ?"
            )
            bindings = (*paths, limit + 1, offset)
        with self._db.read() as conn:
            if conn is None:
                return [], None
            # The page's IDs first: OFFSET then skips bare IDs, not rows of the three-way join
            # (47 ms against 2 ms for the last page of 100,000 facts; bench/facts.py).
            rows = schema.rows(
                conn, _FACT_SELECT + f"WHERE f.id IN ({ids}) ORDER BY f.id", bindings
            )
        items = [fact_from_row(row) for row in rows[:limit]]
        return items, (offset + limit if len(rows) > limit else None)

    def search(self, literal: str, limit: int = DEFAULT_PAGE) -> builtins.list[Fact]:
        """Facts whose current text contains `literal` exactly (case-sensitive, no wildcards).

        At most `limit` (clamped to 1..50), returned in ID order; when more match, the first found
        (oldest revisions first). Three or more characters use the trigram index; one or two use
        the index of characters and pairs; only a longer literal holding NUL scans. Unverified
        administrative read (F9).
        """
        if not isinstance(literal, str) or not literal:
            raise InvalidParams("literal: search text must not be empty", field="literal")
        limit = min(check_int(limit, "limit", 1), MAX_PAGE)
        # instr() is exact for every character, so '%', '_', '*' and quotes need no escaping;
        # the FTS5 string form '"..."' (with '"' doubled) makes the index query a single phrase.
        bindings: tuple[object, ...]
        if len(literal) <= 2:
            query = _FACT_SHORT_SEARCH
            bindings = (f'"{schema.short_term(literal)}"', literal, limit)
        elif "\x00" not in literal:
            phrase = '"' + literal.replace('"', '""') + '"'
            query = _FACT_SEARCH
            bindings = (phrase, literal, limit)
        else:
            query = _FACT_SELECT + "WHERE instr(r.text, ?) > 0 ORDER BY f.id LIMIT ?"
            bindings = (literal, limit)
        with self._db.read() as conn:
            if conn is None:
                return []
            rows = schema.rows(conn, query, bindings)
        # The index yields matches in storage order: the first `limit` found, returned by ID.
        # (Sorting every match of a common literal first cost 59 ms at 100,000 facts.)
        return sorted((fact_from_row(row) for row in rows), key=lambda fact: fact.id)

    def citing(self, session_ids: Iterable[str]) -> dict[str, int]:
        """How many facts cite each session, by an attached reference of any revision (what a
        session's deletion leaves `missing`); sessions no fact cites are left out. Unverified
        administrative read (F9): the references are counted, not validated."""
        wanted = list(dict.fromkeys(session_ids))
        with self._db.read() as conn:
            if conn is None or not wanted:
                return {}
            found: dict[str, int] = {}
            for start in range(0, len(wanted), 500):  # within SQLite's bound-parameter limit
                chunk = wanted[start : start + 500]
                marks = ", ".join("?" * len(chunk))
                for session_id, count in schema.rows(
                    conn,
                    "SELECT session_id, COUNT(DISTINCT fact_id) FROM source_refs "
                    f"WHERE session_id IN ({marks}) GROUP BY session_id",
                    tuple(chunk),
                ):
                    found[str(session_id)] = as_int(count)
            return found

    def provenance(self, fact_id: int) -> builtins.list[RevisionEvidence]:
        """What each revision cites, oldest first. References are returned unvalidated."""
        fact_id = check_fact_id(fact_id)
        with self._db.read() as conn:
            if conn is None:
                raise FactNotFound(f"fact_id: there is no fact {fact_id}", field="fact_id")
            schema.current_revision(conn, fact_id)
            revisions = schema.rows(
                conn,
                "SELECT r.revision, r.created_at, s.session_id, s.seqs, s.digest, r.text "
                "FROM revisions r "
                "LEFT JOIN source_refs s ON s.fact_id = r.fact_id AND s.revision = r.revision "
                "WHERE r.fact_id = ? ORDER BY r.revision",
                (fact_id,),
            )
            legacy: dict[int, builtins.list[Positions]] = {}
            for revision, session_id, seqs in schema.rows(
                conn,
                "SELECT revision, session_id, seqs FROM provenance WHERE fact_id = ? ORDER BY id",
                (fact_id,),
            ):
                positions = Positions(str(session_id), tuple(schema.lenient_seqs(seqs)))
                legacy.setdefault(as_int(revision), []).append(positions)
        return [
            RevisionEvidence(
                revision=as_int(revision),
                created_at=str(created),
                source=to_ref(session_id, seqs, digest),
                provenance=tuple(legacy.get(as_int(revision), ())),
                text=str(text),
            )
            for revision, created, session_id, seqs, digest, text in revisions
        ]

    def source(self, fact_id: int, revision: int) -> StoredRef | None:
        """The reference attached to one revision, unvalidated; None when it has none."""
        for evidence in self.provenance(fact_id):
            if evidence.revision == revision:
                return evidence.source
        raise RevisionNotFound(
            f"revision: fact {fact_id} has no revision {revision}", field="revision"
        )

    def verify(self) -> builtins.list[str]:
        """Re-derive the invariants (see verify.py); [] when sound or absent.

        Takes the write lock and rolls back: FTS5's content check is issued as an INSERT.
        """
        with self._db.rolled_back() as conn:
            return [] if conn is None else verify_store(conn)
