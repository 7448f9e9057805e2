"""`verify()` of facts.sqlite3: the store's invariants re-derived from its rows, one sentence per
violation (FactStore.verify runs it inside a rolled-back write transaction: FTS5's checks are
issued as INSERTs)."""

from __future__ import annotations

import apsw

from lecode_ls.memory.facts.schema import (
    SCHEMA_VERSION,
    as_int,
    canonical_text,
    parse_seqs,
    rows,
    user_version,
)
from lecode_ls.memory.facts.terms import index_text


def verify(conn: apsw.Connection) -> list[str]:
    """Re-derive the store's invariants; one sentence per violation, an empty list when sound.

    Run inside a read transaction so that every check sees one snapshot.
    """
    problems: list[str] = []
    version = user_version(conn)
    if version != SCHEMA_VERSION:
        problems.append(f"schema version is {version}, expected {SCHEMA_VERSION}")
    for (row,) in rows(conn, "PRAGMA quick_check"):
        if row != "ok":
            problems.append(f"SQLite quick_check: {row}")
    for fact_id, current, count, low, high in rows(
        conn,
        "SELECT f.id, f.current_revision, count(r.id), min(r.revision), max(r.revision) "
        "FROM facts f LEFT JOIN revisions r ON r.fact_id = f.id GROUP BY f.id",
    ):
        if not (count == current and low == 1 and high == current):
            problems.append(f"fact {fact_id}: revisions are not exactly 1..{current}")
    for table in ("revisions", "provenance", "source_refs", "anchors"):
        for (fact_id,) in rows(
            conn,
            f"SELECT DISTINCT fact_id FROM {table} WHERE fact_id NOT IN (SELECT id FROM facts)",
        ):
            problems.append(f"{table}: rows for fact {fact_id}, which does not exist")
    for table in ("provenance", "source_refs", "anchors"):
        for fact_id, revision in rows(
            conn,
            f"SELECT t.fact_id, t.revision FROM {table} t LEFT JOIN revisions r "
            "ON r.fact_id = t.fact_id AND r.revision = t.revision WHERE r.id IS NULL",
        ):
            problems.append(f"{table}: fact {fact_id} has no revision {revision}")
    for rowid, fact_id, revision, text, canonical in rows(
        conn, "SELECT id, fact_id, revision, text, canonical FROM revisions"
    ):
        if not isinstance(text, str) or canonical != canonical_text(text):
            problems.append(f"revision row {rowid} (fact {fact_id} r{revision}): stale canonical")
    problems.extend(_verify_sources(conn))
    problems.extend(_verify_forgetting(conn))
    try:
        conn.execute(
            "INSERT INTO revisions_fts (revisions_fts, rank) VALUES ('integrity-check', 1)"
        )
    except apsw.Error:
        problems.append("revisions_fts: the literal-search index is out of step with revisions")
    indexed = {rowid for (rowid,) in rows(conn, "SELECT rowid FROM revisions_short")}
    stored = {rowid for (rowid,) in rows(conn, "SELECT id FROM revisions")}
    if indexed != stored:
        problems.append("revisions_short: the short-literal index is out of step with revisions")
    problems.extend(_verify_ranking(conn))
    return problems


def _verify_ranking(conn: apsw.Connection) -> list[str]:
    """Every fact's indexed words are those of its current text, the index holds exactly those
    words, pins and uses name stored facts, and the changes counter exists."""
    problems: list[str] = []
    for fact_id, text, terms in rows(
        conn,
        "SELECT f.id, r.text, t.terms FROM facts f "
        "JOIN revisions r ON r.fact_id = f.id AND r.revision = f.current_revision "
        "LEFT JOIN fact_terms t ON t.fact_id = f.id",
    ):
        if terms != index_text(str(text)):
            problems.append(f"fact_terms: fact {fact_id}'s words are not those of its text")
    try:  # external content: the index is checked against fact_terms
        conn.execute("INSERT INTO facts_rank (facts_rank, rank) VALUES ('integrity-check', 1)")
    except apsw.Error:
        problems.append("facts_rank: the ranked index is out of step with fact_terms")
    for table in ("fact_terms", "pins", "uses", "fact_vectors", "retired", "drifted"):
        for (fact_id,) in rows(
            conn, f"SELECT fact_id FROM {table} WHERE fact_id NOT IN (SELECT id FROM facts)"
        ):
            problems.append(f"{table}: a row for fact {fact_id}, which does not exist")
    if len(rows(conn, "SELECT 1 FROM meta WHERE key = 'changes'")) != 1:
        problems.append("meta: there is no single changes row")
    return problems


def _verify_sources(conn: apsw.Connection) -> list[str]:
    problems: list[str] = []
    excluded: dict[tuple[str, int], int] = {
        (str(session), as_int(seq)): as_int(cutoff)
        for session, seq, cutoff in rows(conn, "SELECT session_id, seq, generation FROM exclusions")
    }
    for fact_id, revision, session, raw, digest, attached in rows(
        conn, "SELECT fact_id, revision, session_id, seqs, digest, generation FROM source_refs"
    ):
        seqs = parse_seqs(raw)
        where = f"source_refs: fact {fact_id} r{revision}"
        if seqs is None or seqs != sorted(set(seqs)):
            problems.append(f"{where}: seqs is not an ascending array of positions")
            continue
        if not session or not digest:
            problems.append(f"{where}: empty session_id or digest")
        for seq in seqs:
            cutoff = excluded.get((str(session), seq))
            # A ref may cite excluded evidence only if it was attached before that exclusion
            # (the fact is then suppressed); excluded evidence can never be attached again.
            if cutoff is not None and as_int(attached) >= cutoff:
                problems.append(f"{where}: attached after {session}:{seq} was excluded")
    for fact_id, revision, raw in rows(conn, "SELECT fact_id, revision, seqs FROM provenance"):
        if parse_seqs(raw) is None:
            problems.append(f"provenance: fact {fact_id} r{revision}: seqs is not parseable")
    return problems


def _verify_forgetting(conn: apsw.Connection) -> list[str]:
    problems: list[str] = []
    generations = rows(conn, "SELECT value FROM meta WHERE key = 'generation'")
    (forgotten,) = rows(conn, "SELECT count(*) FROM forgotten")[0]
    if len(generations) != 1:
        problems.append("meta: there is no single generation row")
    else:
        current = as_int(generations[0][0])
        if current < as_int(forgotten):
            problems.append(f"generation {current} is below the {forgotten} forgotten facts")
        (newest,) = rows(conn, "SELECT coalesce(max(generation), 0) FROM exclusions")[0]
        if as_int(newest) > current:
            problems.append(f"an exclusion has generation {newest}, above {current}")
    for (fact_id,) in rows(
        conn, "SELECT fact_id FROM forgotten WHERE fact_id IN (SELECT id FROM facts)"
    ):
        problems.append(f"fact {fact_id} is both stored and forgotten")
    return problems
