"""The journal of secret scrubs in facts.sqlite3 (issue 27, schema 8), and the scrub of the
facts' own texts.

A transcript scrub crosses two stores, so it runs in three steps, each atomic (memory/scrub.py
drives them): `begin` records, in one transaction, which records are about to change and every
source reference's digest before and after (state `pending`); the transcript is then replaced
(sessions/rewrite.py); `finish` re-attaches each reference to its new digest and marks the scrub
`done`, in one transaction. A crash after the file moved and before `finish` leaves references
holding the old digest: `scrubbed_digest` tells source validation that such a digest was moved
by a scrub, so the fact stays `valid` (and not `stale`) until the next scan or scrub finishes the
journal (`pending`). Nothing here holds a secret's value: positions and digests only.

`redact_revisions` rewrites, in one transaction with SQLite's `secure_delete` on, every
revision text that holds a secret (old revisions too, and the indexes derived from them), and
`purge` then leaves no copy in SQLite's leftovers: the full-text indexes merged (FTS5 keeps a
deleted entry's data until its segments merge), a VACUUM, and the WAL checkpointed and truncated.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import apsw

from lecode_ls.memory.facts import schema
from lecode_ls.memory.facts.db import FactsDatabase, store_errors
from lecode_ls.memory.facts.schema import as_int, canonical_text, short_terms
from lecode_ls.memory.facts.terms import index_text

_FTS = ("revisions_fts", "revisions_short", "facts_rank")


@dataclass(frozen=True)
class Moved:
    """A source reference whose cited records a scrub rewrote: its digest before and after.
    `seqs` is the reference's stored JSON text, as `source_refs` holds it."""

    session_id: str
    seqs: str
    old: str
    new: str

    @property
    def positions(self) -> list[int]:
        return schema.lenient_seqs(self.seqs)


@dataclass(frozen=True)
class Scrubbed:
    """A record a scrub rewrote, as recall shows it: when, and by which scrub."""

    scrub_id: int
    at: str


class Scrubs:
    """The scrub journal and the scrub of fact texts (see the module docstring)."""

    def __init__(self, db: FactsDatabase) -> None:
        self._db = db

    # -- the transcript scrub's journal -----------------------------------------------------------

    def refs(self, session_id: str) -> builtins.list[tuple[str, str]]:
        """The distinct (seqs JSON, digest) of the source references into one session."""
        with self._db.read() as conn:
            if conn is None:
                return []
            found = schema.rows(
                conn,
                "SELECT DISTINCT seqs, digest FROM source_refs WHERE session_id = ?",
                (session_id,),
            )
            return [(str(seqs), str(digest)) for seqs, digest in found]

    def begin(self, session_id: str, seqs: Sequence[int], moved: Sequence[Moved]) -> int:
        """Record a transcript scrub about to happen (`pending`); returns its ID."""
        with self._db.write(counted=False) as conn:
            conn.execute(
                "INSERT INTO scrubs (at, state) VALUES (?, 'pending')", (schema.utc_now(),)
            )
            scrub_id = conn.last_insert_rowid()
            conn.executemany(
                "INSERT INTO scrubbed_records (scrub_id, session_id, seq) VALUES (?, ?, ?)",
                [(scrub_id, session_id, seq) for seq in seqs],
            )
            conn.executemany(
                "INSERT INTO scrubbed_refs (scrub_id, session_id, seqs, old_digest, new_digest) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET new_digest = excluded.new_digest, "
                "scrub_id = excluded.scrub_id",
                [(scrub_id, m.session_id, m.seqs, m.old, m.new) for m in moved],
            )
            return scrub_id

    def finish(self, scrub_id: int, holds: Callable[[Moved], bool]) -> int:
        """Re-attach each reference the scrub moved whose new digest `holds` for the transcript
        as it is now, and mark the scrub done; returns how many references were re-attached.
        One transaction (a counted change: what is injected may change)."""
        with self._db.write() as conn:
            moved = _moved(conn, scrub_id)
            attached = 0
            for move in moved:
                if not holds(move):
                    continue
                conn.execute(
                    "UPDATE source_refs SET digest = ? "
                    "WHERE session_id = ? AND seqs = ? AND digest = ?",
                    (move.new, move.session_id, move.seqs, move.old),
                )
                attached += conn.changes()
            conn.execute("UPDATE scrubs SET state = 'done' WHERE id = ?", (scrub_id,))
            return attached

    def pending(self) -> builtins.list[tuple[int, builtins.list[Moved]]]:
        """The scrubs a crash left `pending`, oldest first, with the references they moved."""
        with self._db.read() as conn:
            if conn is None:
                return []
            ids = schema.rows(conn, "SELECT id FROM scrubs WHERE state = 'pending' ORDER BY id")
            return [(as_int(i), _moved(conn, as_int(i))) for (i,) in ids]

    def scrubbed_digest(self, session_id: str, seqs: Sequence[int], digest: str) -> str | None:
        """The digest a scrub moved this reference's `digest` to, or None (ExclusionReader)."""
        with self._db.read() as conn:
            if conn is None:
                return None
            found = schema.rows(
                conn,
                "SELECT new_digest FROM scrubbed_refs "
                "WHERE session_id = ? AND seqs = ? AND old_digest = ?",
                (session_id, json.dumps(list(seqs)), digest),
            )
            return str(found[0][0]) if found else None

    def scrubbed(self, session_id: str, first: int, last: int) -> dict[int, Scrubbed]:
        """The records of `first` .. `last` a scrub rewrote, the latest scrub of each."""
        with self._db.read() as conn:
            if conn is None:
                return {}
            found = schema.rows(
                conn,
                "SELECT r.seq, s.id, s.at FROM scrubbed_records r JOIN scrubs s "
                "ON s.id = r.scrub_id WHERE r.session_id = ? AND r.seq BETWEEN ? AND ? "
                "ORDER BY s.id",
                (session_id, first, last),
            )
            return {as_int(seq): Scrubbed(as_int(i), str(at)) for seq, i, at in found}

    # -- the facts' own texts ---------------------------------------------------------------------

    def texts(self) -> Iterator[tuple[int, int, str]]:
        """(fact ID, revision, text) of every stored revision, for a scan."""
        with self._db.read() as conn:
            if conn is None:
                return iter(())
            found = schema.rows(
                conn, "SELECT fact_id, revision, text FROM revisions ORDER BY fact_id, revision"
            )
        return ((as_int(f), as_int(r), str(t)) for f, r, t in found)

    def anchor_paths(self) -> builtins.list[tuple[int, int, str]]:
        """(fact ID, revision, path) of every stored anchor, for a scan."""
        with self._db.read() as conn:
            if conn is None:
                return []
            found = schema.rows(
                conn, "SELECT fact_id, revision, path FROM anchors ORDER BY fact_id, revision"
            )
        return [(as_int(f), as_int(r), str(p)) for f, r, p in found]

    def redact_anchor_paths(self, redact: Callable[[str], str]) -> builtins.list[tuple[int, int]]:
        """Rewrite every anchor path `redact` changes (the anchor then names no file, and its
        drift says so); one transaction. Returns the (fact ID, revision) rewritten."""
        if not self._db.exists():
            return []
        changed: builtins.list[tuple[int, int]] = []
        with self._db.write() as conn:
            conn.pragma("secure_delete", 1)
            found = schema.rows(conn, "SELECT fact_id, revision, ordinal, path FROM anchors")
            for fact_id, revision, ordinal, path in found:
                redacted = redact(str(path))
                if redacted != path:
                    conn.execute(
                        "UPDATE anchors SET path = ? "
                        "WHERE fact_id = ? AND revision = ? AND ordinal = ?",
                        (redacted, fact_id, revision, ordinal),
                    )
                    changed.append((as_int(fact_id), as_int(revision)))
        return changed

    def redact_revisions(self, redact: Callable[[str], str]) -> builtins.list[tuple[int, int]]:
        """Rewrite every revision text `redact` changes, with the indexes derived from it; one
        transaction, recorded as a done scrub. Returns the (fact ID, revision) rewritten."""
        if not self._db.exists():
            return []
        changed: builtins.list[tuple[int, int, int, str]] = []
        with self._db.write() as conn:
            conn.pragma("secure_delete", 1)
            found = schema.rows(
                conn,
                "SELECT r.id, r.fact_id, r.revision, r.text, f.current_revision "
                "FROM revisions r JOIN facts f ON f.id = r.fact_id",
            )
            for row_id, fact_id, revision, text, current in found:
                redacted = redact(str(text))
                if redacted == text:
                    continue
                changed.append((as_int(row_id), as_int(fact_id), as_int(revision), redacted))
                conn.execute(
                    "UPDATE revisions SET text = ?, canonical = ? WHERE id = ?",
                    (redacted, canonical_text(redacted), row_id),
                )
                conn.execute(  # the trigger dropped the entry of the old text
                    "INSERT INTO revisions_short (rowid, terms) VALUES (?, ?)",
                    (row_id, short_terms(redacted)),
                )
                if revision == current:
                    conn.execute(
                        "UPDATE fact_terms SET terms = ? WHERE fact_id = ?",
                        (index_text(redacted), fact_id),
                    )
                    conn.execute("DELETE FROM fact_vectors WHERE fact_id = ?", (fact_id,))
            if changed:
                conn.execute(
                    "INSERT INTO scrubs (at, state) VALUES (?, 'done')", (schema.utc_now(),)
                )
                scrub_id = conn.last_insert_rowid()
                conn.executemany(
                    "INSERT INTO scrubbed_records (scrub_id, fact_id, revision) VALUES (?, ?, ?)",
                    [(scrub_id, fact_id, revision) for _, fact_id, revision, _ in changed],
                )
        return [(fact_id, revision) for _, fact_id, revision, _ in changed]

    def purge(self) -> bool:
        """Leave no copy of rewritten text in SQLite's leftovers: merge the full-text indexes,
        VACUUM with `secure_delete` on, and checkpoint and truncate the WAL. Returns False when
        another connection's read kept the WAL from being emptied (a later purge finishes it)."""
        with self._db.lock, store_errors():
            conn = self._db.connection(create=False)
            if conn is None:
                return True
            conn.pragma("secure_delete", 1)
            conn.execute("BEGIN IMMEDIATE")
            try:
                for table in _FTS:
                    conn.execute(f"INSERT INTO {table} ({table}) VALUES ('optimize')")
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            conn.execute("VACUUM")
            checkpoint = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            conn.pragma("secure_delete", 0)
            return checkpoint is not None and checkpoint[0] == 0


def _moved(conn: apsw.Connection, scrub_id: int) -> builtins.list[Moved]:
    found = schema.rows(
        conn,
        "SELECT session_id, seqs, old_digest, new_digest FROM scrubbed_refs WHERE scrub_id = ?",
        (scrub_id,),
    )
    return [Moved(str(s), str(q), str(o), str(n)) for s, q, o, n in found]
