"""Ranked retrieval over facts.sqlite3 (schema migration 6): BM25 over the `facts_rank` index,
pins, and the record of when each fact was last shown to a model.

A query is untrusted text (a person's message, a model's tool argument, an MCP client's): it is
cut into words by terms.py, as the facts were, and each word is quoted on its own, so FTS5's
syntax in it (`"`, `*`, `NEAR(`, `-x`, `AND`) is words, never operators. Its cost is bounded
whatever its length: the first MAX_QUERY_CHARS characters, the first MAX_QUERY_WORDS distinct
words other than stop words, and BM25 scores at most RANK_BUDGET postings, because FTS5 scores
every row a query matches (about 3 µs a row here: a word in every one of 100,000 facts cost
150 ms to rank). So the words are taken rarest first while their postings fit the budget and
ranked by BM25; a word in more facts than that adds the newest facts holding it (with a second
such word, those holding both first), which stops early in the index's rowid order. Frequent
words weigh little in BM25 anyway (their IDF is near 0).

`Ranking` shares FactStore's database, lock and transactions (`FactStore.ranking`).
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import apsw

from lecode_ls.errors import InvalidParams
from lecode_ls.memory.facts import schema
from lecode_ls.memory.facts.db import FactsDatabase
from lecode_ls.memory.facts.model import check_fact_id
from lecode_ls.memory.facts.schema import as_int
from lecode_ls.memory.facts.terms import STOP_WORDS, Word, index_text, words

MAX_QUERY_CHARS = 16_384  # a longer query is read up to here
MAX_QUERY_WORDS = 32  # distinct words of a query looked up, at most
RANK_BUDGET = 600  # postings BM25 scores in one query, at most
MAX_RANKED_WORDS = 12
MAX_RESULTS = 200  # a query ranks at most this many facts (paging stops there)
MAX_PINNED = 50
MAX_RECENT = 50
MATCH_TERMS_SHOWN = 6  # a reason names at most this many matched words

# The tokenizer of `facts_rank`, exactly as its CREATE names it (schema migration 6).
TOKENIZER = ("porter", ["unicode61", "remove_diacritics", "2", "categories", "L* N* Co M*"])


@dataclass(frozen=True)
class QueryWord:
    """One word of a query as the index sees it."""

    token: str  # the word as terms.py spells it (what the MATCH quotes)
    stem: str  # as the index stores it (case folded, stemmed)
    shown: str  # as the query spelled it
    docs: int  # facts holding it, counted up to RANK_BUDGET + 1


@dataclass(frozen=True)
class Hit:
    """A fact a query found, and the query's words it holds (as the query spelled them)."""

    fact_id: int
    matched: tuple[str, ...]


def _stems(tokenizer: apsw.FTS5Tokenizer, text: str) -> list[str]:
    tokens = tokenizer(text.encode("utf-8", "surrogatepass"), apsw.FTS5_TOKENIZE_DOCUMENT, None)
    return [str(token[-1]) for token in tokens]  # (start, end, token)


def _phrase(token: str) -> str:
    """One word as an FTS5 string: quoted, any quote doubled, so nothing in it is syntax."""
    return '"' + token.replace('"', '""') + '"'


def check_query(query: object, field: str = "query") -> str:
    if not isinstance(query, str):
        raise InvalidParams(f"{field}: expected a string", field=field)
    return query


def _query_words(text: str) -> list[Word]:
    """The distinct words of a query worth looking up, in order: stop words only when the query
    has nothing else."""
    distinct = list({word.token: word for word in words(text[:MAX_QUERY_CHARS])}.values())
    content = [word for word in distinct if word.token not in STOP_WORDS]
    return (content or distinct)[:MAX_QUERY_WORDS]


def plan(conn: apsw.Connection, text: str) -> list[QueryWord]:
    """The query's words that some fact holds, with how many facts hold each (capped)."""
    tokenizer = conn.fts5_tokenizer(*TOKENIZER)
    found: dict[str, QueryWord] = {}
    for word in _query_words(text):
        stems = _stems(tokenizer, word.token)
        if len(stems) != 1 or stems[0] in found:
            continue
        (docs,) = schema.rows(
            conn,
            "SELECT count(*) FROM (SELECT rowid FROM facts_rank WHERE facts_rank MATCH ? LIMIT ?)",
            (_phrase(word.token), RANK_BUDGET + 1),
        )[0]
        if as_int(docs) > 0:
            found[stems[0]] = QueryWord(word.token, stems[0], word.shown, as_int(docs))
    return list(found.values())


def rank(conn: apsw.Connection, terms: Sequence[QueryWord], count: int) -> list[int]:
    """The IDs of the first `count` facts (at most MAX_RESULTS) for these words, best first."""
    count = min(count, MAX_RESULTS)
    by_docs = sorted(terms, key=lambda term: (term.docs, term.stem))
    scored: list[QueryWord] = []
    postings = 0
    for term in by_docs:
        if len(scored) < MAX_RANKED_WORDS and postings + term.docs <= RANK_BUDGET:
            scored.append(term)
            postings += term.docs
    ids: list[int] = []
    if scored:
        ids = [
            as_int(rowid)
            for (rowid,) in schema.rows(
                conn,
                "SELECT rowid FROM facts_rank WHERE facts_rank MATCH ? ORDER BY rank LIMIT ?",
                (" OR ".join(_phrase(t.token) for t in scored), count),
            )
        ]
    frequent = [term for term in by_docs if term not in scored]
    queries = []
    if len(frequent) >= 2:
        queries.append(f"{_phrase(frequent[0].token)} AND {_phrase(frequent[1].token)}")
    queries.extend(_phrase(term.token) for term in frequent[:2])
    for query in queries:
        if len(ids) >= count:
            break
        seen = set(ids)
        for (rowid,) in schema.rows(
            conn,
            "SELECT rowid FROM facts_rank WHERE facts_rank MATCH ? ORDER BY rowid DESC LIMIT ?",
            (query, count + len(seen)),
        ):
            if as_int(rowid) not in seen and len(ids) < count:
                ids.append(as_int(rowid))
    return ids


def held(
    tokenizer: apsw.FTS5Tokenizer, indexed: str, terms: Sequence[QueryWord]
) -> list[QueryWord]:
    """The query's words that a fact holds (`indexed`: its `fact_terms` words), in the query's
    order."""
    stems = set(_stems(tokenizer, indexed))
    return [term for term in terms if term.stem in stems]


def shown_words(terms: Sequence[QueryWord]) -> tuple[str, ...]:
    """Matched words as a reason names them: as the query spelled them, at most
    MATCH_TERMS_SHOWN."""
    shown = [term.shown for term in terms]
    # `billing-12` matched: its parts `billing` and `12` say nothing more.
    wholes = [word for word in shown if not word.isalnum()]
    kept = [w for w in shown if w.isalnum() is False or not any(w in whole for whole in wholes)]
    return tuple(dict.fromkeys(kept))[:MATCH_TERMS_SHOWN]


def _indexed(conn: apsw.Connection, fact_ids: Sequence[int]) -> dict[int, str]:
    """The indexed words of each of these facts (at most MAX_RESULTS)."""
    if not fact_ids:
        return {}
    marks = ", ".join("?" * len(fact_ids))
    return {
        as_int(fact_id): str(terms)
        for fact_id, terms in schema.rows(
            conn, f"SELECT fact_id, terms FROM fact_terms WHERE fact_id IN ({marks})", fact_ids
        )
    }


def search_in(conn: apsw.Connection, query: str, count: int) -> list[Hit]:
    """`Ranking.search` over any connection holding `fact_terms` and `facts_rank`."""
    terms = plan(conn, query)
    if not terms:
        return []
    ids = rank(conn, terms, count)
    found = _indexed(conn, ids)
    tokenizer = conn.fts5_tokenizer(*TOKENIZER)
    hits = [(i, held(tokenizer, found[i], terms)) for i in ids if i in found]
    # Coordination: a fact holding more of the query's words comes first, BM25 (or the newest
    # first, for the frequent words) deciding among equals. The frequent words BM25 left out
    # count here: `billing-12` ranks 20 facts alike, and "signing key" picks one.
    order = sorted(range(len(hits)), key=lambda i: (-len(hits[i][1]), i))
    return [Hit(hits[i][0], shown_words(hits[i][1])) for i in order]


class TextIndex:
    """Texts kept outside the store (the team's shared facts), ranked as the store's facts are:
    the same words (terms.py), tokenizer, index (`schema.RANK_INDEX_SQL`, in memory) and
    bounds. Keys are positive integers the caller assigns. Not thread-safe: the caller locks."""

    def __init__(self) -> None:
        self._conn = apsw.Connection(":memory:")
        self._conn.execute(
            "CREATE TABLE fact_terms (fact_id INTEGER PRIMARY KEY, terms TEXT NOT NULL);"
            + schema.RANK_INDEX_SQL
        )

    def update(self, put: Iterable[tuple[int, str]], drop: Iterable[int]) -> None:
        """Index each (key, text) of `put` (replacing what the key held) and remove `drop`."""
        rows = [(key, index_text(text)) for key, text in put]
        gone = [*((key,) for key in drop), *((key,) for key, _ in rows)]
        with self._conn:  # a delete, then an insert: the triggers keep facts_rank in step
            self._conn.executemany("DELETE FROM fact_terms WHERE fact_id = ?", gone)
            self._conn.executemany("INSERT INTO fact_terms (fact_id, terms) VALUES (?, ?)", rows)

    def search(self, query: str, count: int) -> builtins.list[Hit]:
        """The keys that rank first for `query` (at most `count`, at most MAX_RESULTS)."""
        return search_in(self._conn, query, count)


class Ranking:
    """Ranked queries, pins and uses of one store's facts (see the module docstring)."""

    def __init__(self, db: FactsDatabase) -> None:
        self._db = db

    def search(self, query: str, count: int) -> builtins.list[Hit]:
        """The facts that rank first for `query` (at most `count`, at most MAX_RESULTS), best
        first, with the words each matched. Unverified administrative read (F9): callers
        validate before showing a fact."""
        query = check_query(query)
        with self._db.read() as conn:
            return [] if conn is None else search_in(conn, query, count)

    def changes(self) -> int:
        """How many writes that can change what injection selects ever committed (0 without
        a database): a turn keeps its selection while this stays the same."""
        with self._db.read() as conn:
            return 0 if conn is None else schema.changes(conn)

    def pin(self, fact_id: int) -> bool:
        """Pin a fact: injection shows it first. False when it was pinned already; FactNotFound
        for a fact that is not stored (or was forgotten)."""
        fact_id = check_fact_id(fact_id)
        with self._db.write() as conn:
            schema.current_revision(conn, fact_id)
            if schema.rows(conn, "SELECT 1 FROM pins WHERE fact_id = ?", (fact_id,)):
                return False
            conn.execute(
                "INSERT INTO pins (fact_id, pinned_at) VALUES (?, ?)", (fact_id, schema.utc_now())
            )
            return True

    def unpin(self, fact_id: int) -> bool:
        """Unpin a fact; False when it was not pinned. FactNotFound for one not stored."""
        fact_id = check_fact_id(fact_id)
        with self._db.write() as conn:
            schema.current_revision(conn, fact_id)
            if not schema.rows(conn, "SELECT 1 FROM pins WHERE fact_id = ?", (fact_id,)):
                return False
            conn.execute("DELETE FROM pins WHERE fact_id = ?", (fact_id,))
            return True

    def pinned(self, limit: int = MAX_PINNED) -> builtins.list[int]:
        """The pinned facts in ID order (at most `limit`): the order they are shown in."""
        with self._db.read() as conn:
            if conn is None:
                return []
            return [
                as_int(fact_id)
                for (fact_id,) in schema.rows(
                    conn, "SELECT fact_id FROM pins ORDER BY fact_id LIMIT ?", (limit,)
                )
            ]

    def record_use(self, fact_ids: Iterable[int]) -> None:
        """Note that these facts were just shown to a model: their last use and count. Not a
        counted change (it does not change what the turn selected), and not fsynced at commit
        (a power loss may drop the last uses; it never corrupts the store)."""
        wanted = sorted(set(fact_ids))
        if not wanted:
            return
        now = schema.utc_now()
        with self._db.write(counted=False, durable=False) as conn:
            conn.executemany(
                "INSERT INTO uses (fact_id, used_at, count) SELECT id, ?, 1 FROM facts "
                "WHERE id = ? ON CONFLICT (fact_id) DO UPDATE SET used_at = excluded.used_at, "
                "count = count + 1",
                [(now, fact_id) for fact_id in wanted],
            )

    def uses(self, fact_ids: Iterable[int]) -> dict[int, tuple[str, int]]:
        """When each of these facts was last shown to a model and how many times (turns), by
        ID; facts never shown are left out."""
        wanted = sorted(set(fact_ids))[:MAX_RESULTS]
        with self._db.read() as conn:
            if conn is None or not wanted:
                return {}
            marks = ", ".join("?" * len(wanted))
            return {
                as_int(fact_id): (str(when), as_int(count))
                for fact_id, when, count in schema.rows(
                    conn,
                    f"SELECT fact_id, used_at, count FROM uses WHERE fact_id IN ({marks})",
                    wanted,
                )
            }

    def recent(self, limit: int = MAX_RECENT) -> builtins.list[int]:
        """The facts most recently shown to a model, written or corrected: newest first."""
        with self._db.read() as conn:
            if conn is None:
                return []
            # Each list comes from its index, newest first; merged by time.
            stamped = schema.rows(
                conn,
                "SELECT fact_id, used_at FROM uses ORDER BY used_at DESC LIMIT ?",
                (limit,),
            ) + schema.rows(
                conn, "SELECT id, updated_at FROM facts ORDER BY updated_at DESC LIMIT ?", (limit,)
            )
        newest: dict[int, str] = {}
        for fact_id, when in stamped:
            key = as_int(fact_id)
            newest[key] = max(newest.get(key, ""), str(when))
        ordered = sorted(newest.items(), key=lambda item: (item[1], item[0]), reverse=True)
        return [fact_id for fact_id, _ in ordered[:limit]]
