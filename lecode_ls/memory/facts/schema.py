"""The schema of facts.sqlite3: migrations, the dedup key, and the SQL statements (`verify()`
is verify.py's).

`FactStore` (store.py) is the only user of this module. It owns the connection and the
transactions; the statement functions at the end run inside them and never begin or commit one.

`migrate` is the exception: it runs when the store opens a database, and applies each pending
migration in one `BEGIN IMMEDIATE` transaction with the `PRAGMA user_version` bump that records
it, so two processes opening an old database at once apply it exactly once. Never edit a
released migration: append a new one.
"""

from __future__ import annotations

import itertools
import json
import re
import unicodedata
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

import apsw

from lecode_ls.errors import ExcludedEvidence, FactNotFound, StaleGeneration, StoreError
from lecode_ls.memory.facts.terms import index_text

# Migration 1: the schema before source-linked recall. `provenance` holds unverified
# (session_id, seqs) claims; it is never trusted and never backfilled into `source_refs` (F4).
# Seqs are JSON arrays of transcript sequence positions, as the session store numbers them.
# `facts.id` is AUTOINCREMENT so a forgotten ID is never reused: its retry marker stays meaningful.
# `revisions.canonical` is `canonical_text(text)`, the deduplication key (F8).
# `exclusions.generation` is the generation the forget that installed the exclusion produced;
# it carries no content.
_MIGRATION_1 = """
CREATE TABLE meta (
    key TEXT PRIMARY KEY,
    value INTEGER NOT NULL
);
INSERT INTO meta (key, value) VALUES ('generation', 0);
CREATE TABLE facts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    current_revision INTEGER NOT NULL CHECK (current_revision >= 1),
    origin TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE revisions (
    id INTEGER PRIMARY KEY,
    fact_id INTEGER NOT NULL REFERENCES facts (id),
    revision INTEGER NOT NULL CHECK (revision >= 1),
    text TEXT NOT NULL,
    canonical TEXT NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (fact_id, revision)
);
CREATE INDEX revisions_by_canonical ON revisions (canonical);
CREATE TABLE provenance (
    id INTEGER PRIMARY KEY,
    fact_id INTEGER NOT NULL,
    revision INTEGER NOT NULL,
    session_id TEXT NOT NULL,
    seqs TEXT NOT NULL,
    FOREIGN KEY (fact_id, revision) REFERENCES revisions (fact_id, revision)
);
CREATE INDEX provenance_by_revision ON provenance (fact_id, revision);
CREATE TABLE exclusions (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    generation INTEGER NOT NULL,
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
CREATE TABLE forgotten (
    fact_id INTEGER PRIMARY KEY
);
"""

# Migration 2: at most one validated SourceRef per revision (F4, F5). `generation` is the
# exclusion generation when the ref was attached; verify() uses it to prove no ref was attached
# after its evidence was excluded. Existing rows are not touched and nothing is backfilled.
_MIGRATION_2 = """
CREATE TABLE source_refs (
    fact_id INTEGER NOT NULL,
    revision INTEGER NOT NULL,
    session_id TEXT NOT NULL,
    seqs TEXT NOT NULL,
    digest TEXT NOT NULL,
    generation INTEGER NOT NULL,
    PRIMARY KEY (fact_id, revision),
    FOREIGN KEY (fact_id, revision) REFERENCES revisions (fact_id, revision)
) WITHOUT ROWID;
CREATE INDEX source_refs_by_session ON source_refs (session_id);
"""

# Migration 3: literal substring search backed by an FTS5 trigram index over every revision's
# text. External content (the index stores no copy of the text), kept in step by triggers, so
# deleting a revision deletes its index entries in the same transaction. Case-sensitive, so that
# index hits and the exact `instr()` confirmation agree.
_MIGRATION_3 = """
CREATE VIRTUAL TABLE revisions_fts USING fts5 (
    text, content = 'revisions', content_rowid = 'id', tokenize = 'trigram case_sensitive 1'
);
CREATE TRIGGER revisions_fts_insert AFTER INSERT ON revisions BEGIN
    INSERT INTO revisions_fts (rowid, text) VALUES (new.id, new.text);
END;
CREATE TRIGGER revisions_fts_delete AFTER DELETE ON revisions BEGIN
    INSERT INTO revisions_fts (revisions_fts, rowid, text) VALUES ('delete', old.id, old.text);
END;
CREATE TRIGGER revisions_fts_update AFTER UPDATE ON revisions BEGIN
    INSERT INTO revisions_fts (revisions_fts, rowid, text) VALUES ('delete', old.id, old.text);
    INSERT INTO revisions_fts (rowid, text) VALUES (new.id, new.text);
END;
INSERT INTO revisions_fts (revisions_fts) VALUES ('rebuild');
"""


def short_terms(text: str) -> str:
    """The `revisions_short` terms of a text: each distinct character and pair of adjacent
    characters, written as the hex of its UTF-8 so that any character makes one plain ASCII
    token (and no FTS5 query syntax can be spelled by one)."""
    grams = set(text)
    grams.update(a + b for a, b in itertools.pairwise(text))
    return " ".join(short_term(gram) for gram in grams)


def short_term(gram: str) -> str:
    return gram.encode("utf-8", "surrogatepass").hex()


# Migration 4: literal search for 1- and 2-character literals, which no trigram can serve.
# Contentless (no copy of the text) and `detail = none` (no positions: a term either occurs in a
# revision or not), so the index holds only which revisions contain each character and each
# pair: about 150 bytes a fact. Rows are added by `insert_revision`, which computes the terms;
# deletes follow the revisions table through the trigger, and an edit of a revision's text
# behind the store's back drops its entry, which `verify()` reports.
_MIGRATION_4_SQL = """
CREATE VIRTUAL TABLE revisions_short USING fts5 (
    terms, content = '', contentless_delete = 1, detail = none, tokenize = 'ascii'
);
CREATE TRIGGER revisions_short_delete AFTER DELETE ON revisions BEGIN
    DELETE FROM revisions_short WHERE rowid = old.id;
END;
CREATE TRIGGER revisions_short_update AFTER UPDATE OF text ON revisions BEGIN
    DELETE FROM revisions_short WHERE rowid = old.id;
END;
"""


def _migration_4(conn: apsw.Connection) -> None:
    conn.execute(_MIGRATION_4_SQL)
    conn.executemany(
        "INSERT INTO revisions_short (rowid, terms) VALUES (?, ?)",
        [
            (rowid, short_terms(text))
            for rowid, text in rows(conn, "SELECT id, text FROM revisions")
        ],
    )


Migration = str | Callable[[apsw.Connection], None]
"""SQL run as one script, or a function for a step that needs Python (it runs inside the same
transaction)."""


# Migration 5: code anchors (anchor_rows.py): lines of a file a revision is about, beside its
# evidence. Lines are 1-based and inclusive; `path` is relative to the file's checkout root;
# `sha256` is anchors/text.py's lines_digest of the lines, `first_sha256` of the first line alone;
# `git_commit` is NULL outside Git. Forgetting a fact deletes its anchors with its revisions.
_MIGRATION_5 = """
CREATE TABLE anchors (
    fact_id INTEGER NOT NULL,
    revision INTEGER NOT NULL,
    ordinal INTEGER NOT NULL CHECK (ordinal >= 0),
    path TEXT NOT NULL,
    start_line INTEGER NOT NULL CHECK (start_line >= 1),
    end_line INTEGER NOT NULL CHECK (end_line >= start_line),
    sha256 TEXT NOT NULL,
    first_sha256 TEXT NOT NULL,
    git_commit TEXT,
    captured_at TEXT NOT NULL,
    PRIMARY KEY (fact_id, revision, ordinal),
    FOREIGN KEY (fact_id, revision) REFERENCES revisions (fact_id, revision)
) WITHOUT ROWID;
CREATE INDEX anchors_by_path ON anchors (path);
"""

# Migration 6: ranked retrieval (ranked.py). `fact_terms` holds, for each fact's current revision,
# the words its text is cut into (terms.index_text: identifiers split and kept joined, scripts
# without spaces as characters and pairs, punctuation as hex), and `facts_rank` indexes them for
# BM25 with SQLite's porter + unicode61 tokenizer (case folded, diacritics dropped, English
# stemmed; marks are token characters, so Devanagari and the like stay whole). External content
# kept in step by triggers, as revisions_fts is: one row a fact (rowid = fact ID), replaced in the
# transaction that writes a revision and deleted in the one that forgets the fact. The words are
# kept so that a hit's matched words are read back without cutting its text again, and so that
# verify() re-derives every row. `detail=full`: BM25 needs each term's frequency, which `column`
# and `none` do not keep (they score 0). `pins`: the facts the person pinned (injected first);
# `uses`: when each fact was last shown to a model and how often (the "recent" candidates, and
# what hygiene will read); `fact_vectors`: the embedding of a fact's current revision by one
# model, opt-in (vectors.py: float32 values and a sign-bit code); all three are deleted with their
# fact, and a vector with its revision. `meta.changes` counts every write
# that can change what is injected (not a use being recorded): a turn keeps its selection while
# it stays the same.
RANK_INDEX_SQL = """
CREATE VIRTUAL TABLE facts_rank USING fts5 (
    terms, content = 'fact_terms', content_rowid = 'fact_id',
    tokenize = "porter unicode61 remove_diacritics 2 categories 'L* N* Co M*'"
);
CREATE TRIGGER fact_terms_insert AFTER INSERT ON fact_terms BEGIN
    INSERT INTO facts_rank (rowid, terms) VALUES (new.fact_id, new.terms);
END;
CREATE TRIGGER fact_terms_delete AFTER DELETE ON fact_terms BEGIN
    INSERT INTO facts_rank (facts_rank, rowid, terms) VALUES ('delete', old.fact_id, old.terms);
END;
CREATE TRIGGER fact_terms_update AFTER UPDATE ON fact_terms BEGIN
    INSERT INTO facts_rank (facts_rank, rowid, terms) VALUES ('delete', old.fact_id, old.terms);
    INSERT INTO facts_rank (rowid, terms) VALUES (new.fact_id, new.terms);
END;
"""
"""The ranked index over `fact_terms`: also made in memory for texts kept outside the store
(`ranked.TextIndex`: the team's shared facts), so both rank alike."""
_MIGRATION_6_SQL = (
    """
CREATE TABLE fact_terms (
    fact_id INTEGER PRIMARY KEY REFERENCES facts (id),
    terms TEXT NOT NULL
);
"""
    + RANK_INDEX_SQL
    + """CREATE TABLE pins (
    fact_id INTEGER PRIMARY KEY REFERENCES facts (id),
    pinned_at TEXT NOT NULL
);
CREATE TABLE uses (
    fact_id INTEGER PRIMARY KEY REFERENCES facts (id),
    used_at TEXT NOT NULL,
    count INTEGER NOT NULL CHECK (count >= 1)
);
CREATE INDEX uses_by_time ON uses (used_at);
CREATE INDEX facts_by_updated ON facts (updated_at);
CREATE TABLE fact_vectors (
    fact_id INTEGER PRIMARY KEY REFERENCES facts (id),
    revision INTEGER NOT NULL,
    model TEXT NOT NULL,
    vector BLOB NOT NULL,
    code BLOB NOT NULL
);
INSERT INTO meta (key, value) VALUES ('changes', 0);
"""
)


def _migration_6(conn: apsw.Connection) -> None:
    conn.execute(_MIGRATION_6_SQL)
    conn.executemany(
        "INSERT INTO fact_terms (fact_id, terms) VALUES (?, ?)",
        [
            (fact_id, index_text(str(text)))
            for fact_id, text in rows(
                conn,
                "SELECT f.id, r.text FROM facts f JOIN revisions r "
                "ON r.fact_id = f.id AND r.revision = f.current_revision",
            )
        ],
    )


# Issue 26: `retired` holds the facts the person retired (not injected, not offered to
# learning as known; listed, recallable, restorable) and, with `state = 'kept'`, the facts they
# restored or kept against a retirement proposal (the unused clock starts again there).
# `drifted` holds, for a fact whose every code anchor was seen `changed` or `deleted`, the
# revision seen so and since when (the first time: drift itself is computed, never stored); the
# row goes when an anchor is seen in place again. Source references are indexed by the whole
# reference (it still serves lookups by session), so that the doctor groups the facts citing
# each one from the index alone (retire.census). The dedup key changes (NFKC, punctuation ignored): every stored key is recomputed.
_MIGRATION_7_SQL = """
CREATE TABLE retired (
    fact_id INTEGER PRIMARY KEY REFERENCES facts (id),
    state TEXT NOT NULL CHECK (state IN ('retired', 'kept')),
    at TEXT NOT NULL,
    reason TEXT NOT NULL
);
CREATE TABLE drifted (
    fact_id INTEGER PRIMARY KEY REFERENCES facts (id),
    revision INTEGER NOT NULL,
    since TEXT NOT NULL
);
DROP INDEX source_refs_by_session;
CREATE INDEX source_refs_by_source ON source_refs (session_id, seqs, digest);
"""


def _migration_7(conn: apsw.Connection) -> None:
    conn.execute(_MIGRATION_7_SQL)
    conn.executemany(
        "UPDATE revisions SET canonical = ? WHERE id = ?",
        [
            (canonical_text(str(text)), row_id)
            for row_id, text in rows(conn, "SELECT id, text FROM revisions")
        ],
    )


# Migration 8 (issue 27): the journal of secret scrubs (scrubs.py). `scrubs` holds one row a scrub
# (`pending` from before its files move until its evidence is re-attached, then `done`);
# `scrubbed_records` the transcript records and fact revisions it rewrote (positions only, never
# a value); `scrubbed_refs` each source reference it re-attached, with its digest before and
# after, so that a reference still holding the old digest (a crash between the file's rewrite
# and the re-attachment) is recognised as scrubbed, not tampered.
_MIGRATION_8 = """
CREATE TABLE scrubs (
    id INTEGER PRIMARY KEY,
    at TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('pending', 'done'))
);
CREATE TABLE scrubbed_records (
    scrub_id INTEGER NOT NULL REFERENCES scrubs (id),
    session_id TEXT,
    seq INTEGER,
    fact_id INTEGER,
    revision INTEGER,
    note TEXT
);
CREATE INDEX scrubbed_records_by_session ON scrubbed_records (session_id, seq);
CREATE TABLE scrubbed_refs (
    scrub_id INTEGER NOT NULL REFERENCES scrubs (id),
    session_id TEXT NOT NULL,
    seqs TEXT NOT NULL,
    old_digest TEXT NOT NULL,
    new_digest TEXT NOT NULL,
    PRIMARY KEY (session_id, seqs, old_digest)
) WITHOUT ROWID;
"""


# Migration 9 (issue 41): the dedup key keeps signs, operators, digits and separators (F8's exact
# text, case and spacing folded); schema 7's dropped punctuation, merging `-1` and `1`. Every
# stored key is recomputed; no row is merged or split, since the key only decides what a later
# remember finds.
def _migration_9(conn: apsw.Connection) -> None:
    conn.executemany(
        "UPDATE revisions SET canonical = ? WHERE id = ?",
        [
            (canonical_text(str(text)), row_id)
            for row_id, text in rows(conn, "SELECT id, text FROM revisions")
        ],
    )


MIGRATIONS: tuple[Migration, ...] = (
    _MIGRATION_1,
    _MIGRATION_2,
    _MIGRATION_3,
    _migration_4,
    _MIGRATION_5,
    _migration_6,
    _migration_7,
    _MIGRATION_8,
    _migration_9,
)
SCHEMA_VERSION = len(MIGRATIONS)


# A fact is suppressed when any position cited by any of its revisions' refs or legacy provenance
# is excluded. Malformed legacy JSON counts as citing nothing (verify() reports it).
SUPPRESSED_SQL = """(
    EXISTS (SELECT 1 FROM source_refs x,
                json_each(CASE WHEN json_valid(x.seqs) THEN x.seqs ELSE '[]' END) j
            JOIN exclusions e ON e.session_id = x.session_id AND e.seq = j.value
            WHERE x.fact_id = f.id)
    OR EXISTS (SELECT 1 FROM provenance x,
                json_each(CASE WHEN json_valid(x.seqs) THEN x.seqs ELSE '[]' END) j
            JOIN exclusions e ON e.session_id = x.session_id AND e.seq = j.value
            WHERE x.fact_id = f.id))"""


def canonical_text(text: str) -> str:
    """The deduplication key of a fact's text (F8: "case-folded, whitespace-collapsed exact
    text"): Unicode NFC, lower-cased, whitespace runs collapsed, and one sentence-ending `.` or
    `!` after a word left out. "We use tabs." and "we  use TABS" share a key. Everything else is
    kept, because a sign, an operator, a digit or a separator changes what a text says: `-1` and
    `1`, `!=` and `=`, `test-all` and `test all`, `app.utils` and `app/utils` stay apart (issue
    41; schema 7's key dropped punctuation and merged them).

    Not NFKC and not `casefold()`: both merge texts that say different things (NFKC makes `x²`
    `x2`; casefold makes "Maße" "masse"). NFC only joins spellings Unicode defines as the same,
    and the fullwidth and halfwidth forms (U+FF00-U+FFEF, an input method's `\uff35se`) are
    narrowed, as they say the same.

    A versioned contract: it is stored in `revisions.canonical`, so changing it needs a migration
    that recomputes that column (schemas 7 and 9 did). Only exact equality of keys counts.
    """
    narrow = "".join(
        unicodedata.normalize("NFKC", ch) if "\uff00" <= ch <= "\uffef" else ch for ch in text
    )
    key = " ".join(unicodedata.normalize("NFC", narrow).lower().split())
    return _SENTENCE_END.sub("", key)


_SENTENCE_END = re.compile(r"(?<=[\w)\]`'\"])[.!]\Z")
"""One `.` or `!` ending the text right after a word, a closing bracket or a quote: "Use tabs."
is "Use tabs". Not after another mark (an ellipsis, `..`, `?!` stay) nor alone."""


def parse_seqs(raw: object) -> list[int] | None:
    """The positions of a stored seqs JSON array, or None when it is not an array of ints >= 0."""
    if not isinstance(raw, str):
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(value, list) or not value:
        return None
    seqs: list[int] = []
    for item in value:
        if type(item) is not int or item < 0:
            return None
        seqs.append(item)
    return seqs


def as_int(value: object) -> int:
    """An INTEGER column's value; SQLite's types are dynamic, so check rather than cast."""
    if type(value) is not int:
        raise StoreError(f"facts.sqlite3 holds {type(value).__name__} where an integer belongs")
    return value


def user_version(conn: apsw.Connection) -> int:
    return as_int(conn.pragma("user_version"))


def migrate(conn: apsw.Connection) -> None:
    """Bring the database to SCHEMA_VERSION. Refuses a database from a newer lecode-ls."""
    if user_version(conn) == SCHEMA_VERSION:
        return  # the common case takes no write lock
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = user_version(conn)  # another process may have migrated meanwhile
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"facts.sqlite3 has schema version {version}, newer than this lecode-ls "
                f"understands ({SCHEMA_VERSION}); upgrade lecode-ls"
            )
        for number in range(version + 1, SCHEMA_VERSION + 1):
            step = MIGRATIONS[number - 1]
            if isinstance(step, str):
                conn.execute(step)
            else:
                step(conn)
            conn.pragma("user_version", number)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def rows(conn: apsw.Connection, sql: str, bindings: Sequence[Any] = ()) -> list[Any]:
    """Every row of a query, as tuples."""
    return list(conn.execute(sql, tuple(bindings)).fetchall())


# -- statements FactStore runs inside its transactions ----------------------------------------


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def lenient_seqs(raw: object) -> list[int]:
    """Every position a stored seqs value names, however malformed; forget excludes them all."""
    try:
        value = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        return []
    items = value if isinstance(value, list) else [value]
    return [item for item in items if type(item) is int and item >= 0]


def generation(conn: apsw.Connection) -> int:
    return as_int(rows(conn, "SELECT value FROM meta WHERE key = 'generation'")[0][0])


def changes(conn: apsw.Connection) -> int:
    return as_int(rows(conn, "SELECT value FROM meta WHERE key = 'changes'")[0][0])


def count_change(conn: apsw.Connection) -> None:
    """Count a write that can change what injection selects (`FactStore.changes`)."""
    conn.execute("UPDATE meta SET value = value + 1 WHERE key = 'changes'")


def sharing_evidence(conn: apsw.Connection, fact_id: int) -> list[int]:
    """The other facts whose current revision cites a position that forgetting `fact_id` would
    exclude (any revision's refs and provenance of `fact_id`): the facts that forget hides."""
    cited = rows(
        conn,
        "SELECT session_id, seqs FROM source_refs WHERE fact_id = ? "
        "UNION ALL SELECT session_id, seqs FROM provenance WHERE fact_id = ?",
        (fact_id, fact_id),
    )
    excluded = {(str(session), seq) for session, seqs in cited for seq in lenient_seqs(seqs)}
    if not excluded:
        return []
    sessions = sorted({session for session, _ in excluded})
    marks = ", ".join("?" * len(sessions))
    others = rows(
        conn,
        "SELECT f.id, c.session_id, c.seqs FROM facts f JOIN ("
        "SELECT fact_id, revision, session_id, seqs FROM source_refs "
        "UNION ALL SELECT fact_id, revision, session_id, seqs FROM provenance"
        f") c ON c.fact_id = f.id AND c.revision = f.current_revision "
        f"WHERE f.id != ? AND c.session_id IN ({marks})",
        (fact_id, *sessions),
    )
    return sorted(
        {
            as_int(other)
            for other, session, seqs in others
            if any((str(session), seq) in excluded for seq in lenient_seqs(seqs))
        }
    )


def current_revision(conn: apsw.Connection, fact_id: int) -> int:
    """The fact's current revision, or FactNotFound naming whether it was forgotten."""
    row = rows(conn, "SELECT current_revision FROM facts WHERE id = ?", (fact_id,))
    if row:
        return as_int(row[0][0])
    if rows(conn, "SELECT 1 FROM forgotten WHERE fact_id = ?", (fact_id,)):
        raise FactNotFound(f"fact_id: fact {fact_id} was forgotten", field="fact_id")
    raise FactNotFound(f"fact_id: there is no fact {fact_id}", field="fact_id")


def refuse_excluded(
    conn: apsw.Connection, session_id: str, seqs: tuple[int, ...], field: str
) -> None:
    hits = [
        as_int(seq)
        for (seq,) in rows(
            conn,
            "SELECT seq FROM exclusions WHERE session_id = ? "
            "AND seq IN (SELECT value FROM json_each(?)) ORDER BY seq",
            (session_id, json.dumps(list(seqs))),
        )
    ]
    if hits:
        shown = ", ".join(str(seq) for seq in hits[:5]) + (", ..." if len(hits) > 5 else "")
        raise ExcludedEvidence(
            f"{field}: positions {shown} of session {session_id} were excluded by a forget; "
            "excluded evidence can never be used again",
            field=field,
        )


def check_generation(conn: apsw.Connection, expected: int | None) -> None:
    if expected is None:
        return
    current = generation(conn)
    if current != expected:
        raise StaleGeneration(
            f"expected_generation: the exclusion generation is {current}, not {expected}; "
            "something was forgotten since the evidence was read",
            field="expected_generation",
        )


def insert_fact(conn: apsw.Connection, text: str, origin: str) -> int:
    """Insert a fact with revision 1; returns its new ID.

    AUTOINCREMENT already never reuses an ID; the ID is also kept above every retry marker, so
    that even a hand-edited counter cannot give a new fact a forgotten fact's ID (forget of it
    would then wrongly answer "already forgotten").
    """
    now = utc_now()
    conn.execute(
        "INSERT INTO facts (id, current_revision, origin, created_at, updated_at) VALUES ("
        "1 + max((SELECT coalesce(max(id), 0) FROM facts),"
        " (SELECT coalesce(max(fact_id), 0) FROM forgotten),"
        " (SELECT coalesce(max(seq), 0) FROM sqlite_sequence WHERE name = 'facts')),"
        " 1, ?, ?, ?)",
        (origin, now, now),
    )
    fact_id = conn.last_insert_rowid()
    insert_revision(conn, fact_id, 1, text, now)
    return fact_id


def insert_revision(
    conn: apsw.Connection, fact_id: int, revision: int, text: str, now: str
) -> None:
    conn.execute(
        "INSERT INTO revisions (fact_id, revision, text, canonical, created_at) VALUES (?, ?, ?, ?, ?)",
        (fact_id, revision, text, canonical_text(text), now),
    )
    conn.execute(
        "INSERT INTO revisions_short (rowid, terms) VALUES (?, ?)",
        (conn.last_insert_rowid(), short_terms(text)),
    )
    conn.execute(
        "UPDATE facts SET current_revision = ?, updated_at = ? WHERE id = ?",
        (revision, now, fact_id),
    )
    # The ranked index holds the current revision only: the new one replaces the old.
    conn.execute(
        "INSERT INTO fact_terms (fact_id, terms) VALUES (?, ?) "
        "ON CONFLICT (fact_id) DO UPDATE SET terms = excluded.terms",
        (fact_id, index_text(text)),
    )
    conn.execute("DELETE FROM fact_vectors WHERE fact_id = ?", (fact_id,))  # of the old text


def insert_ref(
    conn: apsw.Connection,
    fact_id: int,
    revision: int,
    session_id: str,
    seqs: tuple[int, ...],
    digest: str,
) -> None:
    """Attach a source reference to a revision, stamped with the current generation."""
    conn.execute(
        "INSERT INTO source_refs (fact_id, revision, session_id, seqs, digest, generation) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (
            fact_id,
            revision,
            session_id,
            json.dumps(list(seqs)),
            digest,
            generation(conn),
        ),
    )


def insert_provenance(
    conn: apsw.Connection,
    fact_id: int,
    revision: int,
    positions: tuple[str, tuple[int, ...]] | None,
) -> None:
    if positions is not None:
        conn.execute(
            "INSERT INTO provenance (fact_id, revision, session_id, seqs) VALUES (?, ?, ?, ?)",
            (fact_id, revision, positions[0], json.dumps(list(positions[1]))),
        )
