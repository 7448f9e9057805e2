"""Retirement (issue 26): a fact the person retired is kept, listed, recallable and restorable,
but not injected and not offered to learning as known. Never silent: the store only proposes a
retirement, and only the person retires. Two reasons propose one: a fact unused for `[memory]
retire_after_days`, and one whose code anchors have all been `changed` or `deleted` for
`[memory] retire_drifted_after_days`.

The `retired` table holds one row a fact: `retired` (since `at`, with the reason) or `kept` (the
person restored it or kept it against a proposal at `at`: both clocks start there). The
`drifted` table holds when a fact's anchors were first all seen drifted (`note_drift`, fed by the
drift tracker). Forget deletes both rows with the fact.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from lecode_ls.errors import FactNotFound
from lecode_ls.memory.facts import schema
from lecode_ls.memory.facts.db import FactsDatabase
from lecode_ls.memory.facts.model import check_fact_id
from lecode_ls.memory.facts.schema import as_int

MAX_PROPOSALS = 50  # retirement proposals listed at once, the longest unused first
MAX_REASON_CHARS = 200


@dataclass(frozen=True)
class Retired:
    """A retired fact: since when, and why (the proposal's reason, or the person's)."""

    fact_id: int
    at: str
    reason: str


@dataclass(frozen=True)
class RetireProposal:
    """A fact proposed for retirement: the reason in words, and since when it has been unused."""

    fact_id: int
    why: str
    since: str


def _day(stamp: str) -> str:
    return stamp[:10]


def _cutoff(now: datetime, days: int) -> str:
    """The stored-timestamp form of `days` days before `now`."""
    cutoff = now - timedelta(days=max(0, days))
    return cutoff.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Retirement:
    """Retired facts, and the facts proposed for retirement (see the module docstring)."""

    def __init__(self, db: FactsDatabase) -> None:
        self._db = db

    def _refuse_no_store(self, fact_id: int) -> None:
        if not self._db.exists():  # no write creates facts.sqlite3 for an unknown fact (F3)
            raise FactNotFound(f"fact_id: there is no fact {fact_id}", field="fact_id")

    def retire(self, fact_id: int, reason: str = "retired by the person") -> bool:
        """Retire one fact; False when it already is. Raises FactNotFound (unknown, forgotten).
        A counted change: what the next turn injects changes."""
        fact_id = check_fact_id(fact_id)
        self._refuse_no_store(fact_id)
        with self._db.write() as conn:
            schema.current_revision(conn, fact_id)
            state = schema.rows(conn, "SELECT state FROM retired WHERE fact_id = ?", (fact_id,))
            if state and state[0][0] == "retired":
                return False
            conn.execute(
                "INSERT INTO retired (fact_id, state, at, reason) VALUES (?, 'retired', ?, ?) "
                "ON CONFLICT (fact_id) DO UPDATE SET state = 'retired', at = excluded.at, "
                "reason = excluded.reason",
                (fact_id, schema.utc_now(), reason[:MAX_REASON_CHARS]),
            )
            return True

    def restore(self, fact_id: int) -> bool:
        """Bring a retired fact back (injected and known again); False when it was not retired.
        Either way its unused clock starts now. Raises FactNotFound (unknown, forgotten)."""
        fact_id = check_fact_id(fact_id)
        self._refuse_no_store(fact_id)
        with self._db.write() as conn:
            schema.current_revision(conn, fact_id)
            state = schema.rows(conn, "SELECT state FROM retired WHERE fact_id = ?", (fact_id,))
            conn.execute(
                "INSERT INTO retired (fact_id, state, at, reason) VALUES (?, 'kept', ?, '') "
                "ON CONFLICT (fact_id) DO UPDATE SET state = 'kept', at = excluded.at, reason = ''",
                (fact_id, schema.utc_now()),
            )
            return bool(state) and state[0][0] == "retired"

    def retired(self, fact_ids: Iterable[int] | None = None) -> dict[int, Retired]:
        """The retired facts (of `fact_ids`, when given), by ID."""
        wanted = None if fact_ids is None else sorted(set(fact_ids))
        with self._db.read() as conn:
            if conn is None or wanted == []:
                return {}
            sql = "SELECT fact_id, at, reason FROM retired WHERE state = 'retired'"
            found: list[tuple[object, ...]] = []
            if wanted is None:
                found = schema.rows(conn, sql)
            else:
                for start in range(0, len(wanted), 500):
                    chunk = wanted[start : start + 500]
                    marks = ", ".join("?" * len(chunk))
                    found += schema.rows(conn, sql + f" AND fact_id IN ({marks})", chunk)
        return {
            as_int(fact_id): Retired(as_int(fact_id), str(at), str(reason))
            for fact_id, at, reason in found
        }

    def census(self) -> Census:
        """Every fact in the groups the doctor reports (see Census)."""
        return census(self._db)

    def note_drift(self, seen: dict[int, tuple[int, bool]]) -> None:
        """Record what the drift tracker saw: for each fact ID, (the revision whose anchors were
        checked, whether every one was `changed` or `deleted`). A drifted fact keeps the time it
        was first seen so (a new revision starts again); one seen in place loses its row. Not a
        counted change (injection does not select by it), and not fsynced, as a use record."""
        if not seen or not self._db.exists():
            return
        now = schema.utc_now()
        with self._db.write(counted=False, durable=False) as conn:
            for fact_id, (revision, drifted) in seen.items():
                if drifted:
                    conn.execute(
                        "INSERT INTO drifted (fact_id, revision, since) SELECT id, ?, ? FROM facts "
                        "WHERE id = ? AND current_revision = ? ON CONFLICT (fact_id) DO UPDATE "
                        "SET revision = excluded.revision, since = excluded.since "
                        "WHERE drifted.revision != excluded.revision",
                        (revision, now, fact_id, revision),
                    )
                else:
                    conn.execute("DELETE FROM drifted WHERE fact_id = ?", (fact_id,))

    def proposals(
        self,
        after_days: int,
        drifted_after_days: int | None = None,
        *,
        limit: int = MAX_PROPOSALS,
        now: datetime | None = None,
    ) -> builtins.list[RetireProposal]:
        """The facts unused for `after_days` days or more (neither shown to a model, recalled,
        found by a query, written nor kept since), then, with `drifted_after_days`, those whose
        anchors have all been drifted that long (and not kept since). Not the retired, not the
        pinned ones. At most `limit` of each reason, found in the order the facts were last
        written (an index walk that stops at the limit); the longest unused first, one proposal
        a fact (the drift reason wins: it says more)."""
        moment = now or datetime.now(UTC)
        drifted = self._drifted_proposals(drifted_after_days, limit, moment)
        stamp = _cutoff(moment, after_days)
        with self._db.read() as conn:
            if conn is None:
                return []
            # In the order of the index on `updated_at`, so the LIMIT ends the walk early; a
            # fact used or kept since the cutoff is passed over.
            found = schema.rows(
                conn,
                "SELECT f.id, f.updated_at, u.used_at, k.at FROM facts f "
                "INDEXED BY facts_by_updated "
                "LEFT JOIN uses u ON u.fact_id = f.id LEFT JOIN retired k ON k.fact_id = f.id "
                "WHERE f.updated_at <= ? AND (u.used_at IS NULL OR u.used_at <= ?) "
                "AND (k.fact_id IS NULL OR (k.state = 'kept' AND k.at <= ?)) "
                "AND NOT EXISTS (SELECT 1 FROM pins p WHERE p.fact_id = f.id) "
                "ORDER BY f.updated_at, f.id LIMIT ?",
                (stamp, stamp, stamp, limit),
            )
        proposals = {p.fact_id: p for p in drifted}
        for fact_id, updated, used, kept in found:
            last = max(str(updated), str(used or ""), str(kept or ""))
            why = "unused since" if used is not None else "never used since"
            proposal = RetireProposal(as_int(fact_id), f"{why} {_day(last)}", last)
            proposals.setdefault(proposal.fact_id, proposal)
        return sorted(proposals.values(), key=lambda p: (p.since, p.fact_id))

    def _drifted_proposals(
        self, after_days: int | None, limit: int, now: datetime
    ) -> builtins.list[RetireProposal]:
        if after_days is None:
            return []
        stamp = _cutoff(now, after_days)
        with self._db.read() as conn:
            if conn is None:
                return []
            found = schema.rows(
                conn,
                "SELECT d.fact_id, d.since FROM drifted d "
                "JOIN facts f ON f.id = d.fact_id AND f.current_revision = d.revision "
                "LEFT JOIN retired k ON k.fact_id = d.fact_id "
                "WHERE d.since <= ? AND (k.fact_id IS NULL OR (k.state = 'kept' AND k.at <= ?)) "
                "AND NOT EXISTS (SELECT 1 FROM pins p WHERE p.fact_id = d.fact_id) "
                "ORDER BY d.since, d.fact_id LIMIT ?",
                (stamp, stamp, limit),
            )
        return [
            RetireProposal(
                as_int(fact_id),
                f"code anchors changed or deleted since {_day(str(since))}",
                str(since),
            )
            for fact_id, since in found
        ]


@dataclass(frozen=True)
class Census:
    """Every stored fact's ID in groups the doctor reports, read in one transaction."""

    count: int  # every fact
    unverified: tuple[int, ...]  # no source reference, not suppressed
    hidden: tuple[int, ...]  # suppressed by a forget
    retired: frozenset[int]
    never_used: tuple[int, tuple[int, ...]]  # how many, and the first MAX_CENSUS_IDS
    duplicates: tuple[tuple[int, ...], ...]  # facts whose current texts share a dedup key
    sources: dict[tuple[str, tuple[int, ...], str], list[int]] = field(default_factory=dict)
    """The sourced facts (not suppressed) by their current source reference (session ID, seqs,
    digest; seqs empty when the stored JSON is not an array of seqs): the doctor validates each
    reference once, however many facts cite it."""


MAX_CENSUS_IDS = 50  # the never-used facts listed by ID (all are counted)

# The facts suppressed by a forget (SUPPRESSED_SQL's test, for all of them at once): walked from
# the exclusions (CROSS JOIN keeps them the outer loop), usually few, so a store without any pays
# nothing per fact.
_SUPPRESSED_IDS = """
SELECT x.fact_id FROM exclusions e CROSS JOIN source_refs x ON x.session_id = e.session_id,
    json_each(CASE WHEN json_valid(x.seqs) THEN x.seqs ELSE '[]' END) j WHERE j.value = e.seq
UNION
SELECT x.fact_id FROM exclusions e CROSS JOIN provenance x ON x.session_id = e.session_id,
    json_each(CASE WHEN json_valid(x.seqs) THEN x.seqs ELSE '[]' END) j WHERE j.value = e.seq"""

# Aggregated in SQLite, so that Python handles one row a distinct source (hundreds), not one a
# fact: each current source reference with the IDs citing it, as one comma-separated string.
_BY_SOURCE = (
    "SELECT s.session_id, s.seqs, s.digest, group_concat(f.id) FROM facts f "
    "JOIN source_refs s ON s.fact_id = f.id AND s.revision = f.current_revision "
    "GROUP BY s.session_id, s.seqs, s.digest"
)
_UNSOURCED = (
    "SELECT f.id FROM facts f WHERE NOT EXISTS (SELECT 1 FROM source_refs s "
    "WHERE s.fact_id = f.id AND s.revision = f.current_revision) ORDER BY f.id"
)
_NEVER_USED = "FROM facts f WHERE NOT EXISTS (SELECT 1 FROM uses u WHERE u.fact_id = f.id)"


def _ids(joined: object) -> list[int]:
    return [int(i) for i in str(joined).split(",")]


def census(db: FactsDatabase) -> Census:
    """The doctor's store-side numbers (see Census). Blocking; one read transaction."""
    with db.read() as conn:
        if conn is None:
            return Census(0, (), (), frozenset(), (0, ()), ())
        count = as_int(schema.rows(conn, "SELECT count(*) FROM facts")[0][0])
        by_source = schema.rows(conn, _BY_SOURCE)
        unsourced = [as_int(r[0]) for r in schema.rows(conn, _UNSOURCED)]
        suppressed = {as_int(r[0]) for r in schema.rows(conn, _SUPPRESSED_IDS)}
        retired = {
            as_int(r[0])
            for r in schema.rows(conn, "SELECT fact_id FROM retired WHERE state = 'retired'")
        }
        never_used = as_int(schema.rows(conn, "SELECT count(*) " + _NEVER_USED)[0][0])
        first_unused = schema.rows(
            conn, f"SELECT f.id {_NEVER_USED} ORDER BY f.id LIMIT {MAX_CENSUS_IDS}"
        )
        groups = schema.rows(
            conn,
            # The keys any two revisions share first (an index-only walk), then the current
            # revisions among them: the same groups as grouping every fact, at a tenth the cost.
            "SELECT group_concat(f.id) FROM facts f JOIN revisions r ON r.fact_id = f.id "
            "AND r.revision = f.current_revision WHERE r.canonical IN (SELECT canonical FROM "
            "revisions GROUP BY canonical HAVING count(*) > 1) "
            "GROUP BY r.canonical HAVING count(*) > 1 ORDER BY min(f.id)",
        )
    sources: dict[tuple[str, tuple[int, ...], str], list[int]] = {}
    hidden = sorted(suppressed)
    for session_id, seqs, digest, joined in by_source:
        ids = _ids(joined)
        if suppressed:
            ids = [i for i in ids if i not in suppressed]
        if ids:
            key = (str(session_id), tuple(schema.parse_seqs(seqs) or ()), str(digest))
            sources.setdefault(key, []).extend(ids)
    return Census(
        count=count,
        unverified=tuple(i for i in unsourced if i not in suppressed),
        hidden=tuple(hidden),
        retired=frozenset(retired),
        never_used=(never_used, tuple(as_int(r[0]) for r in first_unused)),
        duplicates=tuple(tuple(sorted(_ids(g))) for (g,) in groups),
        sources=sources,
    )
