"""Embedding vectors of facts (opt-in: `[memory] embeddings_model`), in facts.sqlite3's
`fact_vectors` (schema migration 6), and the nearest facts to a query's vector.

Plain BLOBs, not the sqlite-vec extension: any SQLite opens the store, no native library is
loaded into the server, and there is no pre-1.0 dependency to follow. The cost is a scan, kept
bounded: each vector is stored twice, as its float32 values (unit length) and as a sign-bit code
(one bit a dimension), and a query reads the codes of at most MAX_SCAN facts (the newest
vectors first), ranks them by Hamming distance (one XOR and `int.bit_count` each: 20,000 codes of
384 dimensions took 18 ms on 2 busy cores), then rescores the best RESCORE by exact cosine.
Facts past MAX_SCAN are still found by BM25; a turn pays the scan once (its selection is kept). Binary
quantisation keeps most of the neighbours of sentence embeddings; the rescoring orders them.

A vector belongs to a fact revision and a model: a correction deletes it (schema.insert_revision),
a forget deletes it with the fact (vectors are derived from the text), a vector of another model
or revision counts as missing. Writing vectors is not a counted change (a turn's selection
stays), and never happens inside a turn: the server fills in missing vectors in the background.
"""

from __future__ import annotations

import builtins
import math
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from lecode_ls.errors import InvalidParams
from lecode_ls.memory.facts import schema
from lecode_ls.memory.facts.db import FactsDatabase
from lecode_ls.memory.facts.schema import as_int

MAX_DIMENSIONS = 4096
MAX_SCAN = 20_000  # codes read by one query, at most: the newest vectors
RESCORE = 200  # codes rescored by exact cosine
MAX_MODEL_CHARS = 200


@dataclass(frozen=True)
class Missing:
    """A fact whose current revision has no vector of the model yet."""

    fact_id: int
    revision: int
    text: str


def unit(vector: Sequence[float]) -> tuple[float, ...]:
    """`vector` scaled to length 1; InvalidParams for an empty, oversized, non-finite or zero
    one (a provider's answer is untrusted)."""
    if not 0 < len(vector) <= MAX_DIMENSIONS:
        raise InvalidParams(f"vector: 1 to {MAX_DIMENSIONS} dimensions", field="vector")
    if not all(isinstance(x, float | int) and not isinstance(x, bool) for x in vector):
        raise InvalidParams("vector: numbers only", field="vector")
    values = [float(x) for x in vector]
    if not all(math.isfinite(x) for x in values):
        raise InvalidParams("vector: finite numbers only", field="vector")
    norm = math.sqrt(math.fsum(x * x for x in values))
    if norm == 0.0:
        raise InvalidParams("vector: all zeros", field="vector")
    return tuple(x / norm for x in values)


def code(vector: Sequence[float]) -> int:
    """The sign-bit code of a vector: bit i set when dimension i is positive."""
    bits = 0
    for i, x in enumerate(vector):
        if x > 0:
            bits |= 1 << i
    return bits


def _pack(vector: Sequence[float]) -> bytes:
    return struct.pack(f"<{len(vector)}f", *vector)


def _unpack(blob: bytes) -> tuple[float, ...]:
    return struct.unpack(f"<{len(blob) // 4}f", blob)


def check_model(model: object) -> str:
    if not isinstance(model, str) or not 0 < len(model) <= MAX_MODEL_CHARS:
        raise InvalidParams(
            f"model: an embedding model name of 1 to {MAX_MODEL_CHARS} characters", field="model"
        )
    return model


class Vectors:
    """The vectors of one store's facts (see the module docstring). Shares FactStore's
    database, lock and transactions (`FactStore.vectors`)."""

    def __init__(self, db: FactsDatabase) -> None:
        self._db = db

    def missing(self, model: str, limit: int) -> builtins.list[Missing]:
        """Facts whose current revision has no vector of `model`, the newest first."""
        model = check_model(model)
        with self._db.read() as conn:
            if conn is None:
                return []
            rows = schema.rows(
                conn,
                "SELECT f.id, f.current_revision, r.text FROM facts f "
                "JOIN revisions r ON r.fact_id = f.id AND r.revision = f.current_revision "
                "LEFT JOIN fact_vectors v ON v.fact_id = f.id AND v.model = ? "
                "AND v.revision = f.current_revision "
                "WHERE v.fact_id IS NULL ORDER BY f.id DESC LIMIT ?",
                (model, limit),
            )
        return [Missing(as_int(i), as_int(r), str(t)) for i, r, t in rows]

    def put(self, model: str, items: Iterable[tuple[Missing, Sequence[float]]]) -> int:
        """Store vectors of `model` for these fact revisions; one whose fact was corrected or
        forgotten meanwhile is dropped. Returns how many were stored."""
        model = check_model(model)
        rows = [
            (item.fact_id, item.revision, model, _pack(v), code(v).to_bytes(len(v) // 8 + 1))
            for item, raw in items
            for v in (unit(raw),)
        ]
        if not rows:
            return 0
        stored = 0
        with self._db.write(counted=False) as conn:
            for row in rows:
                current = schema.rows(
                    conn, "SELECT current_revision FROM facts WHERE id = ?", (row[0],)
                )
                if not current or as_int(current[0][0]) != row[1]:
                    continue
                conn.execute(
                    "INSERT INTO fact_vectors (fact_id, revision, model, vector, code) "
                    "VALUES (?, ?, ?, ?, ?) ON CONFLICT (fact_id) DO UPDATE SET "
                    "revision = excluded.revision, model = excluded.model, "
                    "vector = excluded.vector, code = excluded.code",
                    row,
                )
                stored += 1
        return stored

    def count(self, model: str) -> int:
        """How many facts have a current vector of `model`."""
        with self._db.read() as conn:
            if conn is None:
                return 0
            ((found,),) = schema.rows(
                conn,
                "SELECT count(*) FROM fact_vectors v JOIN facts f ON f.id = v.fact_id "
                "AND f.current_revision = v.revision WHERE v.model = ?",
                (check_model(model),),
            )
            return as_int(found)

    def nearest(
        self, model: str, query: Sequence[float], limit: int
    ) -> builtins.list[tuple[int, float]]:
        """The facts whose current vector of `model` is nearest to `query`: (ID, cosine), the
        nearest first, at most `limit`. Bounded: the newest MAX_SCAN vectors are read."""
        model = check_model(model)
        target = unit(query)
        target_code = code(target)
        with self._db.read() as conn:
            if conn is None:
                return []
            codes = schema.rows(
                conn,
                "SELECT v.fact_id, v.code FROM fact_vectors v JOIN facts f ON f.id = v.fact_id "
                "AND f.current_revision = v.revision WHERE v.model = ? "
                "ORDER BY v.fact_id DESC LIMIT ?",
                (model, MAX_SCAN),
            )
            scored = sorted(
                (
                    ((target_code ^ int.from_bytes(blob)).bit_count(), as_int(fact_id))
                    for fact_id, blob in codes
                ),
            )[:RESCORE]
            if not scored:
                return []
            wanted = [fact_id for _, fact_id in scored]
            marks = ", ".join("?" * len(wanted))
            vectors = schema.rows(
                conn,
                f"SELECT fact_id, vector FROM fact_vectors WHERE fact_id IN ({marks})",
                wanted,
            )
        cosines = []
        for fact_id, blob in vectors:
            values = _unpack(bytes(blob))
            if len(values) == len(target):
                cosines.append(
                    (math.fsum(a * b for a, b in zip(values, target, strict=True)), as_int(fact_id))
                )
        cosines.sort(reverse=True)
        return [(fact_id, cosine) for cosine, fact_id in cosines[:limit]]
