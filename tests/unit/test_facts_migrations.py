"""facts.sqlite3 migrations: FactStore opens every older schema and upgrades it in place.

The older schemas are frozen here as literal SQL, exactly as they were released, so a test fails
if anyone edits a released migration instead of appending a new one. Each test builds a real
database file from one of them, fills it the way that version did, and opens it with FactStore.
"""

from __future__ import annotations

import threading
import unicodedata
from pathlib import Path
from typing import Any

import apsw
import pytest

from lecode_ls.errors import ExcludedEvidence
from lecode_ls.memory.facts.anchor_rows import NewAnchor
from lecode_ls.memory.facts.model import Positions, Purpose, SourceLike, StoredRef
from lecode_ls.memory.facts.schema import MIGRATIONS, SCHEMA_VERSION, canonical_text
from lecode_ls.memory.facts.store import FactStore

# Schema version 1, before source-linked recall: no source_refs, no search index.
LEGACY_SCHEMA_V1 = """
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

# Version 2 added source_refs.
SCHEMA_V2_ADDITION = """
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

# Version 3 added the trigram index; version 4 (current) adds the short-literal index.
SCHEMA_V3_ADDITION = """
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

# Version 5 added code anchors.
SCHEMA_V5_ADDITION = """
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

# One forgotten fact (4) left an exclusion on legacy:9; fact 1 has two revisions with legacy
# provenance; fact 2 cites the excluded position, so it must come out suppressed.
LEGACY_ROWS = """
UPDATE meta SET value = 1 WHERE key = 'generation';
INSERT INTO facts VALUES (1, 2, 'unverified', '2025-01-01T00:00:00Z', '2025-01-02T00:00:00Z');
INSERT INTO facts VALUES (2, 1, 'unverified', '2025-01-01T00:00:00Z', '2025-01-01T00:00:00Z');
INSERT INTO revisions VALUES (1, 1, 1, 'Use Tabs.', 'use tabs.', '2025-01-01T00:00:00Z');
INSERT INTO revisions VALUES (2, 1, 2, 'Use spaces.', 'use spaces.', '2025-01-02T00:00:00Z');
INSERT INTO revisions VALUES (3, 2, 1, 'Deploy on Fridays.', 'deploy on fridays.', '2025-01-01T00:00:00Z');
INSERT INTO provenance VALUES (1, 1, 1, 'legacy', '[1, 2]');
INSERT INTO provenance VALUES (2, 1, 2, 'legacy', '[5]');
INSERT INTO provenance VALUES (3, 2, 1, 'legacy', '[8, 9]');
INSERT INTO exclusions VALUES ('legacy', 9, 1);
UPDATE sqlite_sequence SET seq = 4 WHERE name = 'facts';
INSERT INTO forgotten VALUES (4);
"""

LEGACY_TABLES = ("meta", "facts", "revisions", "provenance", "exclusions", "forgotten")


def accept(ref: SourceLike, purpose: Purpose) -> None:
    """A source check that accepts everything."""


def build(db: Path, version: int) -> None:
    """A database exactly as lecode-ls at schema `version` left it, with the legacy rows."""
    db.parent.mkdir(parents=True, exist_ok=True)
    conn = apsw.Connection(str(db))
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("BEGIN IMMEDIATE")
    conn.execute(LEGACY_SCHEMA_V1)
    if version >= 2:
        conn.execute(SCHEMA_V2_ADDITION)
    conn.execute(LEGACY_ROWS)
    if version >= 3:  # its index is rebuilt over the rows already there
        conn.execute(SCHEMA_V3_ADDITION)
    conn.execute(f"PRAGMA user_version = {version}")
    conn.execute("COMMIT")
    conn.close()


def dump(db: Path, *, rekey: bool = False) -> dict[str, list[Any]]:
    """Every legacy table's rows; with `rekey`, each revision's dedup key as schema 7 recomputes
    it (what the migrated database must then hold)."""
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        tables = {
            name: sorted(conn.execute(f"SELECT * FROM {name}").fetchall()) for name in LEGACY_TABLES
        }
    finally:
        conn.close()
    if rekey:
        tables["revisions"] = sorted(
            (*row[:4], canonical_text(row[3]), *row[5:]) for row in tables["revisions"]
        )
    return tables


def names(db: Path) -> set[str]:
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return {str(row[0]) for row in conn.execute("SELECT name FROM sqlite_schema")}
    finally:
        conn.close()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "facts.sqlite3"


class TestReleasedMigrationsAreFrozen:
    def test_migrations_1_to_3_and_5_are_exactly_the_released_sql(self) -> None:
        assert SCHEMA_VERSION == 9
        released = (LEGACY_SCHEMA_V1, SCHEMA_V2_ADDITION, SCHEMA_V3_ADDITION)
        for step, sql in zip(MIGRATIONS, released, strict=False):
            assert isinstance(step, str) and step.strip() == sql.strip()
        assert (
            isinstance(MIGRATIONS[4], str) and MIGRATIONS[4].strip() == SCHEMA_V5_ADDITION.strip()
        )


class TestOpeningALegacyDatabase:
    # covers F4
    @pytest.mark.parametrize("version", [1, 2, 3])
    def test_opening_adds_the_new_tables_and_keeps_every_old_row(
        self, db: Path, version: int
    ) -> None:
        build(db, version)
        before = dump(db, rekey=True)
        store = FactStore(db)
        assert store.verify() == []
        store.close()
        after = dump(db)
        assert after.pop("meta") == [("changes", 0), *before.pop("meta")]  # one row added (6)
        assert after == before
        assert {"source_refs", "revisions_fts", "revisions_short", "anchors"} <= names(db)
        conn = apsw.Connection(str(db))
        assert conn.pragma("user_version") == SCHEMA_VERSION
        conn.close()

    def test_legacy_provenance_is_not_backfilled_or_trusted(self, db: Path) -> None:
        build(db, 1)
        store = FactStore(db)
        fact = store.get(1)
        assert fact is not None and (fact.revision, fact.text, fact.source) == (
            2,
            "Use spaces.",
            None,
        )
        assert [(e.revision, e.source, e.provenance) for e in store.provenance(1)] == [
            (1, None, (Positions("legacy", (1, 2)),)),
            (2, None, (Positions("legacy", (5,)),)),
        ]
        assert store.source(1, 1) is None
        store.close()

    def test_old_exclusions_and_forget_markers_still_hold(self, db: Path) -> None:
        build(db, 1)
        store = FactStore(db)
        assert store.generation() == 1
        assert store.excluded_seqs("legacy") == frozenset({9})
        assert store.suppressed(2) is True and store.suppressed(1) is False
        assert store.forget(4) is False
        with pytest.raises(ExcludedEvidence):
            store.remember("new", StoredRef("legacy", (9,), "d"), check=accept)
        store.close()

    def test_legacy_facts_can_be_attached_searched_and_forgotten(self, db: Path) -> None:
        build(db, 1)
        store = FactStore(db)
        assert [f.id for f in store.search("spaces")] == [1]
        assert [f.id for f in store.search("Tabs")] == []  # superseded text is not searched
        assert store.attach_source(1, 2, StoredRef("s1", (3,), "d"), accept) is True
        assert store.forget(1) is True
        assert store.excluded_seqs("legacy") == frozenset({1, 2, 5, 9})
        assert store.excluded_seqs("s1") == frozenset({3})
        assert store.search("spaces") == []
        assert store.add("next") == (5, 1)  # IDs keep counting past the forgotten 4
        assert store.verify() == []
        store.close()

    # covers F9
    @pytest.mark.parametrize("version", [1, 3])
    def test_short_literals_find_the_facts_of_an_older_store_once_migrated(
        self, db: Path, version: int
    ) -> None:
        build(db, version)
        store = FactStore(db)
        assert [f.id for f in store.search("Fr")] == [2]  # "Deploy on Fridays."
        assert [f.id for f in store.search("p")] == [1, 2]
        assert [f.id for f in store.search("T")] == []  # only in fact 1's superseded revision
        assert store.add("Ta") == (5, 1)
        assert [f.id for f in store.search("Ta")] == [5]
        assert store.verify() == []
        store.close()

    def test_a_new_fact_never_takes_a_forgotten_id_even_if_the_counter_is_behind(
        self, db: Path
    ) -> None:
        build(db, 1)
        conn = apsw.Connection(str(db))
        conn.execute("UPDATE sqlite_sequence SET seq = 2 WHERE name = 'facts'")
        conn.close()
        store = FactStore(db)
        assert store.add("next") == (5, 1)
        assert store.forget(5) is True
        store.close()

    def test_stores_opening_one_old_database_at_once_migrate_it_once(self, db: Path) -> None:
        build(db, 1)
        barrier = threading.Barrier(4)
        results: list[object] = []

        def open_and_read() -> None:
            store = FactStore(db)
            barrier.wait()
            try:
                results.append(store.generation())
            except BaseException as error:
                results.append(error)
            finally:
                store.close()

        threads = [threading.Thread(target=open_and_read) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert results == [1, 1, 1, 1]
        store = FactStore(db)
        assert store.verify() == []
        store.close()


class TestSchema4ToAnchors:
    """Schema 4 (the release before code anchors: every earlier migration, exactly as released)
    with source-linked facts in it."""

    def test_facts_with_sources_survive_and_can_be_anchored(self, db: Path) -> None:
        build(db, 3)
        conn = apsw.Connection(str(db))
        conn.execute("BEGIN IMMEDIATE")
        step_4 = MIGRATIONS[3]
        assert callable(step_4)
        step_4(conn)
        conn.execute("INSERT INTO source_refs VALUES (2, 1, 's1', '[1]', 'sha256:ab', 1)")
        conn.execute("PRAGMA user_version = 4")
        conn.execute("COMMIT")
        conn.close()
        before = dump(db, rekey=True)
        store = FactStore(db)
        assert store.verify() == []
        fact = store.get(2)
        assert fact is not None and fact.source == StoredRef("s1", (1,), "sha256:ab")
        assert [f.id for f in store.search("Fridays")] == [2]
        assert [f.id for f in store.search("Fr")] == [2]  # schema 4's short-literal index
        assert store.anchors.all() == []
        anchor = NewAnchor("src/app.py", 3, 4, "sha256:" + "1" * 64, "sha256:" + "2" * 64, None)
        fact_id, _ = store.remember(
            "app runs on port 80", StoredRef("s2", (1,), "d"), check=accept, anchors=[anchor]
        )
        assert [(a.fact_id, a.path, a.start_line, a.end_line) for a in store.anchors.all()] == [
            (fact_id, "src/app.py", 3, 4)
        ]
        assert store.verify() == []
        store.close()
        after = dump(db)
        assert {k: v for k, v in after.items() if k not in ("facts", "revisions", "meta")} == {
            k: v for k, v in before.items() if k not in ("facts", "revisions", "meta")
        }
        assert set(before["facts"]) <= set(after["facts"])
        assert set(before["revisions"]) <= set(after["revisions"])


class TestSchema5ToRanking:
    """Schema 5 (the release before ranked retrieval) with source-linked, corrected and anchored
    facts: opening it indexes every fact's current revision for ranking, and nothing else moves.

    # covers F4 (migrations keep every row), issue 25 item 1
    """

    def build_v5(self, db: Path) -> None:
        build(db, 3)
        conn = apsw.Connection(str(db))
        conn.execute("BEGIN IMMEDIATE")
        step_4 = MIGRATIONS[3]
        assert callable(step_4)
        step_4(conn)
        conn.execute(SCHEMA_V5_ADDITION)
        conn.execute("INSERT INTO source_refs VALUES (2, 1, 's1', '[1]', 'sha256:ab', 1)")
        conn.execute(
            "INSERT INTO anchors VALUES (2, 1, 0, 'deploy/friday.sh', 1, 2, 'sha256:"
            + "1" * 64
            + "', 'sha256:"
            + "2" * 64
            + "', NULL, '2025-01-01T00:00:00Z')"
        )
        conn.execute("PRAGMA user_version = 5")
        conn.execute("COMMIT")
        conn.close()

    def test_every_current_revision_is_ranked_and_old_rows_stay(self, db: Path) -> None:
        self.build_v5(db)
        before = dump(db, rekey=True)
        store = FactStore(db)
        assert store.verify() == []
        # Fact 1's current text is "Use spaces."; its superseded "Use Tabs." is not indexed.
        assert [(h.fact_id, h.matched) for h in store.ranking.search("spaces", 10)] == [
            (1, ("spaces",))
        ]
        assert store.ranking.search("tabs", 10) == []
        assert [h.fact_id for h in store.ranking.search("deploying on a Friday?", 10)] == [2]
        assert store.ranking.changes() == 0
        assert store.ranking.pin(2) is True
        assert store.get(2) is not None and store.get(2).pinned  # type: ignore[union-attr]
        assert store.ranking.changes() == 1
        assert store.anchors.all()[0].path == "deploy/friday.sh"
        store.close()
        after = dump(db)
        assert {k: v for k, v in after.items() if k != "meta"} == {
            k: v for k, v in before.items() if k != "meta"
        }
        assert set(before["meta"]) < set(after["meta"])  # the changes counter is new
        assert {"facts_rank", "fact_terms", "pins", "uses", "fact_vectors"} <= names(db)


def schema_7_key(text: str) -> str:
    """The dedup key as schemas 7 and 8 computed it (frozen here): NFKC, case-folded,
    punctuation ignored."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    kept = "".join(" " if unicodedata.category(ch)[0] in "PZC" else ch for ch in folded)
    return " ".join(kept.split()) or " ".join(folded.split())


class TestSchema8ToExactKeys:
    """Schema 8 stored keys without punctuation, so `-1` and `1` shared one: opening it
    recomputes every stored key (F8's exact text, case and spacing folded), and a later learning
    of the other meaning is a new fact.

    # covers F8 (issue 41, item 3)
    """

    def build_v8(self, db: Path) -> None:
        store = FactStore(db)
        store.remember("We set LOG_LEVEL to -1 in CI.", StoredRef("s1", (1,), "d"), check=accept)
        store.remember("Helpers live in app.utils.", StoredRef("s1", (2,), "d"), check=accept)
        store.close()
        conn = apsw.Connection(str(db))
        conn.execute("BEGIN IMMEDIATE")
        for row_id, text in conn.execute("SELECT id, text FROM revisions").fetchall():
            conn.execute(
                "UPDATE revisions SET canonical = ? WHERE id = ?", (schema_7_key(text), row_id)
            )
        conn.execute("PRAGMA user_version = 8")
        conn.execute("COMMIT")
        conn.close()

    def test_every_stored_key_is_recomputed_and_two_meanings_part(self, db: Path) -> None:
        self.build_v8(db)
        store = FactStore(db)
        assert store.verify() == []  # verify() re-derives each key: none is left from schema 8
        assert store.remember(
            "We set LOG_LEVEL to 1 in CI.",
            StoredRef("s2", (1,), "d"),
            check=accept,
            deduplicate=True,
        ) == (3, 1)
        assert store.remember(
            "Helpers live in app/utils.", StoredRef("s2", (2,), "d"), check=accept, deduplicate=True
        ) == (4, 1)
        # the same text, cased and spaced otherwise, is still the stored fact
        assert store.remember(
            "we set log_level to -1  in ci",
            StoredRef("s2", (3,), "d"),
            check=accept,
            deduplicate=True,
        ) == (1, 1)
        store.close()
        conn = apsw.Connection(str(db))
        assert conn.pragma("user_version") == SCHEMA_VERSION
        conn.close()
