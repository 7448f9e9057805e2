"""FactStore: source-linked facts, revisions, forgetting and exclusions in facts.sqlite3.

Every test runs on a real SQLite file under tmp_path. Source validation is not FactStore's job, so
the `check` and `has_authored_text` callbacks are plain functions here; a test that needs the
store's own enforcement passes a check that accepts everything, so only FactStore can refuse.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.queues
import stat
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import apsw
import pytest

from lecode_ls.errors import (
    DuplicateFact,
    ExcludedEvidence,
    FactNotFound,
    InvalidParams,
    InvalidSource,
    LecodeError,
    RevisionNotFound,
    SourceAlreadyAttached,
    StaleGeneration,
    StaleRevision,
    StoreError,
    SymlinkRefused,
)
from lecode_ls.memory.facts.model import (
    Fact,
    Positions,
    Purpose,
    RevisionEvidence,
    SourceLike,
    StoredRef,
)
from lecode_ls.memory.facts.schema import SCHEMA_VERSION
from lecode_ls.memory.facts.store import FactStore


@dataclass(frozen=True)
class Ref:
    """Stands in for sources.SourceRef: FactStore only needs these three read-only fields."""

    session_id: str
    seqs: tuple[int, ...]
    digest: str = "sha256:aa"


def accept(ref: SourceLike, purpose: Purpose) -> None:
    """A source check that accepts everything."""


def authored(ref: SourceLike) -> bool:
    return True


def tool_output_only(ref: SourceLike) -> bool:
    return False


class Refuse(LecodeError):
    code = "test_refusal"


def refuse(ref: SourceLike, purpose: Purpose) -> None:
    raise Refuse("source_snapshot: the digest does not match")


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "memory" / "facts.sqlite3"


@pytest.fixture
def store(db: Path) -> Iterator[FactStore]:
    facts = FactStore(db)
    yield facts
    facts.close()


def remember(store: FactStore, text: str, ref: Ref, **options: Any) -> tuple[int, int]:
    return store.remember(text, ref, check=accept, **options)


def correct(
    store: FactStore, fact_id: int, text: str, revision: int, ref: Ref, **options: Any
) -> int:
    return store.correct(
        fact_id,
        text,
        expected_revision=revision,
        ref=ref,
        check=accept,
        has_authored_text=authored,
        **options,
    )


def table(db: Path, sql: str) -> list[Any]:
    """Read the database directly, as another process would."""
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return list(conn.execute(sql).fetchall())
    finally:
        conn.close()


class TestTheApi:
    # covers F1, F7
    def test_the_public_operations_are_the_spec_ones_and_no_bulk_deletion(self) -> None:
        public = {name for name in vars(FactStore) if not name.startswith("_")}
        assert public == {
            "remember", "correct", "forget", "generation", "add", "get", "revise", "provenance",
            "list", "search", "attach_source", "source", "is_excluded", "excluded_seqs",
            "suppressed", "verify", "close", "sharing_evidence",
            "citing",  # a read: how many facts a session's deletion leaves missing (S6)
            "get_many",  # `get` of several facts in one read (injection's candidates)
            "scrubbed_digest",  # a read: a reference's digest a secret scrub moved (issue 27)
            "exclude",  # a teammate's shared fact forgotten here: its evidence only (issue 29)
            "holding",  # a read: the facts citing exactly a shared fact's evidence (issue 29)
            "excluded_in",  # excluded_seqs of many sessions in one read (shared facts)
            "stamp",  # what changes when the database is written (caches of it)
        }  # fmt: skip


class TestLazyCreation:
    # covers F3
    def test_reads_of_a_missing_database_are_empty_and_create_nothing(
        self, store: FactStore, tmp_path: Path
    ) -> None:
        assert store.generation() == 0
        assert store.list() == ([], None)
        assert store.search("anything") == []
        assert store.search("a") == []
        assert store.get(1) is None
        assert store.is_excluded("s1", 1) is False
        assert store.excluded_seqs("s1") == frozenset()
        assert store.verify() == []
        with pytest.raises(FactNotFound):
            store.provenance(1)
        with pytest.raises(FactNotFound):
            store.forget(1)
        with pytest.raises(FactNotFound):
            correct(store, 1, "x", 1, Ref("s1", (1,)))
        assert list(tmp_path.iterdir()) == []

    def test_the_first_write_creates_an_owner_only_database(
        self, store: FactStore, db: Path
    ) -> None:
        assert not db.exists()
        store.add("first")
        assert stat.S_IMODE(db.stat().st_mode) == 0o600
        assert stat.S_IMODE(db.parent.stat().st_mode) == 0o700

    def test_a_refused_write_still_leaves_no_file_behind_only_when_it_never_reached_sqlite(
        self, store: FactStore, db: Path
    ) -> None:
        with pytest.raises(InvalidParams):
            store.add("   ")
        with pytest.raises(Refuse):
            store.remember("x", Ref("s1", (1,)), check=refuse)
        assert not db.exists()

    def test_a_database_made_by_another_store_is_seen_by_reads(self, db: Path) -> None:
        reader = FactStore(db)
        assert reader.list() == ([], None)
        writer = FactStore(db)
        writer.add("shared")
        assert [fact.text for fact in reader.list()[0]] == ["shared"]
        writer.close()
        reader.close()


class TestOpening:
    def test_the_database_uses_wal_and_records_its_schema_version(
        self, store: FactStore, db: Path
    ) -> None:
        store.add("x")
        assert table(db, "PRAGMA journal_mode") == [("wal",)]
        assert table(db, "PRAGMA user_version") == [(SCHEMA_VERSION,)]

    def test_a_linked_database_is_refused_for_reads_and_writes(
        self, tmp_path: Path, db: Path
    ) -> None:
        elsewhere = FactStore(tmp_path / "elsewhere.sqlite3")
        elsewhere.add("x")
        elsewhere.close()
        db.parent.mkdir()
        db.symlink_to(elsewhere.path)
        store = FactStore(db)
        with pytest.raises(SymlinkRefused):
            store.list()
        with pytest.raises(SymlinkRefused):
            store.add("y")

    def test_a_linked_wal_file_is_refused(self, store: FactStore, db: Path, tmp_path: Path) -> None:
        db.parent.mkdir()
        Path(f"{db}-wal").symlink_to(tmp_path / "target")
        with pytest.raises(SymlinkRefused):
            store.add("x")

    def test_a_linked_folder_under_the_store_root_is_refused(self, tmp_path: Path) -> None:
        (tmp_path / "real").mkdir()
        (tmp_path / "root").mkdir()
        (tmp_path / "root" / "project").symlink_to(tmp_path / "real")
        store = FactStore(tmp_path / "root" / "project" / "facts.sqlite3", root=tmp_path / "root")
        with pytest.raises(SymlinkRefused):
            store.add("x")
        assert list((tmp_path / "real").iterdir()) == []

    def test_links_above_the_store_root_are_followed(self, tmp_path: Path) -> None:
        # A symlinked ~/.config (dotfiles) or macOS's /var -> /private/var must keep working.
        (tmp_path / "real-config").mkdir()
        (tmp_path / "config").symlink_to(tmp_path / "real-config")
        root = tmp_path / "config" / "memory" / "project"
        store = FactStore(root / "facts.sqlite3", root=root)
        assert store.add("x") == (1, 1)
        store.close()
        assert (tmp_path / "real-config" / "memory" / "project" / "facts.sqlite3").exists()

    def test_a_file_that_is_not_sqlite_is_a_store_error(self, db: Path) -> None:
        db.parent.mkdir()
        db.write_bytes(b"these are not the facts you are looking for" * 100)
        with pytest.raises(StoreError, match=r"^facts\.sqlite3 is damaged"):
            FactStore(db).list()

    def test_a_database_from_a_newer_version_is_refused(self, store: FactStore, db: Path) -> None:
        store.add("x")
        store.close()
        conn = apsw.Connection(str(db))
        conn.pragma("user_version", 99)
        conn.close()
        with pytest.raises(StoreError, match="schema version 99, newer than"):
            FactStore(db).list()

    def test_a_closed_store_refuses_every_call_and_close_is_idempotent(
        self, store: FactStore
    ) -> None:
        store.add("x")
        store.close()
        store.close()
        with pytest.raises(StoreError, match="closed"):
            store.list()


class TestRemember:
    # covers F6
    def test_remember_creates_revision_one_with_its_source(self, store: FactStore) -> None:
        assert remember(store, "We use tabs.", Ref("s1", (3, 4), "sha256:ab")) == (1, 1)
        fact = store.get(1)
        assert fact == Fact(
            id=1,
            revision=1,
            text="We use tabs.",
            origin="remembered",
            source=StoredRef("s1", (3, 4), "sha256:ab"),
            suppressed=False,
            created_at=fact.created_at if fact else "",
            updated_at=fact.updated_at if fact else "",
        )
        assert store.source(1, 1) == StoredRef("s1", (3, 4), "sha256:ab")

    def test_the_source_is_checked_for_working_use_before_anything_is_stored(
        self, store: FactStore
    ) -> None:
        seen: list[tuple[SourceLike, Purpose]] = []
        ref = Ref("s1", (1,))
        store.remember("x", ref, check=lambda r, purpose: seen.append((r, purpose)))
        # The first fact's check runs before the database is created, and again inside.
        assert seen == [(ref, "working")] * 2
        with pytest.raises(Refuse):
            store.remember("y", Ref("s1", (2,)), check=refuse)
        assert [fact.text for fact in store.list()[0]] == ["x"]

    @pytest.mark.parametrize("method", ["remember", "correct", "attach_source"])
    def test_the_source_is_checked_inside_the_write_transaction(
        self, store: FactStore, db: Path, method: str
    ) -> None:
        # covers A8: evidence is checked as it is when the fact is written, not a moment before:
        # while the check runs, this store holds the database's write lock.
        store.add("seed")
        held: list[bool] = []

        def probe(ref: SourceLike, purpose: Purpose) -> None:
            other = apsw.Connection(str(db))
            try:
                other.execute("BEGIN IMMEDIATE")
                other.execute("ROLLBACK")
                held.append(False)
            except apsw.BusyError:
                held.append(True)
            finally:
                other.close()

        ref = Ref("s1", (1,))
        if method == "remember":
            store.remember("x", ref, check=probe)
        elif method == "correct":
            store.correct(
                1, "y", expected_revision=1, ref=ref, check=probe, has_authored_text=lambda r: True
            )
        else:
            store.attach_source(1, 1, ref, probe)
        assert held == [True]

    @pytest.mark.parametrize(
        ("ref", "message"),
        [
            (Ref("", (1,)), "session_id must be an exact, non-empty session ID"),
            (Ref("s1", ()), "seqs must list 1 to 200"),
            (Ref("s1", tuple(range(201))), "seqs must list 1 to 200"),
            (Ref("s1", (2, 1)), "ascending"),
            (Ref("s1", (1, 1)), "distinct"),
            (Ref("s1", (-1,)), "non-negative"),
            (Ref("s1", (True,)), "integers"),
            (Ref("s1", (1,), ""), "digest must be a non-empty string"),
        ],
    )
    def test_a_malformed_reference_is_an_invalid_source(
        self, store: FactStore, ref: Ref, message: str
    ) -> None:
        with pytest.raises(InvalidSource, match=message) as raised:
            remember(store, "x", ref)
        assert raised.value.field == "source_snapshot"

    @pytest.mark.parametrize(
        ("text", "message"),
        [
            ("", "non-empty"),
            (" \n\t", "non-empty"),
            ("x" * 4097, "4097 UTF-8 bytes; a fact holds at most 4096"),
            ("\ud800", "lone surrogate"),
        ],
    )
    def test_unusable_text_is_invalid_params_naming_text(
        self, store: FactStore, text: str, message: str
    ) -> None:
        with pytest.raises(InvalidParams, match=message) as raised:
            remember(store, text, Ref("s1", (1,)))
        assert raised.value.field == "text"

    def test_a_retry_with_the_same_text_and_source_returns_the_same_fact(
        self, store: FactStore
    ) -> None:
        # covers F8
        ref = Ref("s1", (5,), "sha256:55")
        assert remember(store, "Use uv.", ref) == (1, 1)
        assert remember(store, "  use   UV. ", ref) == (1, 1)
        correct(store, 1, "Use uv and ruff.", 1, Ref("s1", (6,)))
        assert remember(store, "Use uv.", ref) == (1, 2)  # the fact's current revision
        assert len(store.list()[0]) == 1

    def test_a_request_remembering_a_stored_text_again_is_refused_naming_the_fact(
        self, store: FactStore
    ) -> None:
        # covers F8 (issue 26: remembering one text twice leaves one fact)
        assert remember(store, "Use uv.", Ref("s1", (1,))) == (1, 1)
        for text, ref in (
            ("Use uv.", Ref("s1", (2,))),
            ("use UV", Ref("s1", (1,), "sha256:other")),
            ("\uff35se  uv!", Ref("s2", (3,))),  # a fullwidth U: NFKC folds it
        ):
            with pytest.raises(DuplicateFact) as refused:
                remember(store, text, ref)
            assert refused.value.fact_id == 1 and refused.value.field == "text"
        assert len(store.list()[0]) == 1
        assert remember(store, "Use uv < 1.0.", Ref("s1", (4,))) == (2, 1)  # symbols count

    def test_a_text_equal_only_to_a_superseded_revision_is_a_new_fact(
        self, store: FactStore
    ) -> None:
        remember(store, "Use uv.", Ref("s1", (1,)))
        store.revise(1, "Use pip.", expected_revision=1)
        assert remember(store, "use uv", Ref("s1", (2,))) == (2, 1)

    def test_deduplication_returns_the_incumbent_unchanged_without_its_new_source(
        self, store: FactStore
    ) -> None:
        # covers F8
        remember(store, "We use TABS\tfor indentation.", Ref("s1", (1,)))
        before = store.provenance(1)
        found = remember(store, "we use tabs for  indentation.", Ref("s2", (9,)), deduplicate=True)
        assert found == (1, 1)
        assert store.provenance(1) == before
        assert len(store.list()[0]) == 1

    def test_deduplication_matches_corrected_away_text_and_does_not_revert_it(
        self, store: FactStore
    ) -> None:
        # covers F8
        remember(store, "Indent with tabs.", Ref("s1", (1,)))
        correct(store, 1, "Indent with spaces.", 1, Ref("s1", (2,)))
        assert remember(store, "indent with tabs.", Ref("s3", (7,)), deduplicate=True) == (1, 2)
        fact = store.get(1)
        assert fact is not None and fact.text == "Indent with spaces."
        assert [e.revision for e in store.provenance(1)] == [1, 2]

    def test_deduplication_also_matches_unverified_facts_and_is_exact_otherwise(
        self, store: FactStore
    ) -> None:
        store.add("Run tests with pytest.")
        assert remember(store, "run tests with PYTEST.", Ref("s1", (1,)), deduplicate=True) == (
            1,
            1,
        )
        assert remember(store, "Run tests with pytest!", Ref("s1", (1,)), deduplicate=True) == (
            1,
            1,
        )  # punctuation is set aside (issue 26)
        assert remember(store, "Run tests with pytest -x", Ref("s1", (1,)), deduplicate=True) == (
            2,
            1,
        )

    def test_evidence_excluded_by_a_forget_is_refused(self, store: FactStore) -> None:
        # covers F7
        remember(store, "secret", Ref("s1", (4, 5)))
        store.forget(1)
        with pytest.raises(ExcludedEvidence, match="positions 5 of session s1 were excluded"):
            remember(store, "other text", Ref("s1", (5, 6)))
        assert remember(store, "other text", Ref("s1", (6,))) == (2, 1)

    def test_a_stale_expected_generation_is_refused_inside_the_transaction(
        self, store: FactStore
    ) -> None:
        # covers E4, F6
        remember(store, "unrelated", Ref("s9", (1,)))
        generation = store.generation()  # read before the (simulated) model call
        store.forget(1)  # a forget lands while the candidate is in flight
        with pytest.raises(StaleGeneration, match="generation is 1, not 0") as raised:
            remember(store, "candidate", Ref("s1", (1,)), expected_generation=generation)
        assert raised.value.field == "expected_generation"
        assert store.list() == ([], None)
        assert remember(store, "candidate", Ref("s1", (1,)), expected_generation=1) == (2, 1)


class TestCorrect:
    # covers F2, F6
    def test_correct_appends_the_next_revision_with_its_own_source(self, store: FactStore) -> None:
        remember(store, "Use black.", Ref("s1", (1,), "d1"))
        assert correct(store, 1, "Use ruff format.", 1, Ref("s1", (8, 9), "d2")) == 2
        fact = store.get(1)
        assert fact is not None
        assert (fact.revision, fact.text) == (2, "Use ruff format.")
        assert fact.source == StoredRef("s1", (8, 9), "d2")
        assert [(e.revision, e.source) for e in store.provenance(1)] == [
            (1, StoredRef("s1", (1,), "d1")),
            (2, StoredRef("s1", (8, 9), "d2")),
        ]

    def test_a_stale_expected_revision_names_the_current_one(self, store: FactStore) -> None:
        remember(store, "a", Ref("s1", (1,)))
        correct(store, 1, "b", 1, Ref("s1", (2,)))
        with pytest.raises(StaleRevision) as raised:
            correct(store, 1, "c", 1, Ref("s1", (3,)))
        assert raised.value.message == "expected_revision: fact 1 is at revision 2"
        assert raised.value.field == "expected_revision"
        assert store.get(1) is not None and store.get(1).text == "b"  # type: ignore[union-attr]

    def test_tool_output_alone_cannot_justify_a_correction(self, store: FactStore) -> None:
        remember(store, "a", Ref("s1", (1,)))
        with pytest.raises(InvalidSource, match="tool output alone cannot justify it"):
            store.correct(
                1,
                "b",
                expected_revision=1,
                ref=Ref("s1", (2,)),
                check=accept,
                has_authored_text=tool_output_only,
            )
        assert [e.revision for e in store.provenance(1)] == [1]

    def test_a_source_that_fails_its_check_changes_nothing(self, store: FactStore) -> None:
        remember(store, "a", Ref("s1", (1,)))
        with pytest.raises(Refuse):
            store.correct(
                1, "b", expected_revision=1, ref=Ref("s1", (2,)), check=refuse,
                has_authored_text=authored,
            )  # fmt: skip
        assert [e.revision for e in store.provenance(1)] == [1]

    def test_unknown_and_forgotten_facts_are_not_found(self, store: FactStore) -> None:
        remember(store, "a", Ref("s1", (1,)))
        with pytest.raises(FactNotFound, match="fact_id: there is no fact 7"):
            correct(store, 7, "b", 1, Ref("s1", (2,)))
        store.forget(1)
        with pytest.raises(FactNotFound, match="fact_id: fact 1 was forgotten"):
            correct(store, 1, "b", 1, Ref("s1", (2,)))

    def test_excluded_evidence_cannot_correct_another_fact(self, store: FactStore) -> None:
        # covers F7
        remember(store, "a", Ref("s1", (1,)))
        remember(store, "b", Ref("s1", (2,)))
        store.forget(1)
        with pytest.raises(ExcludedEvidence):
            correct(store, 2, "b2", 1, Ref("s1", (1, 2)))

    def test_a_correction_from_an_old_request_fails_its_epoch_check(self, store: FactStore) -> None:
        # covers E4
        remember(store, "a", Ref("s1", (1,)))
        remember(store, "b", Ref("s2", (1,)))
        epoch = store.generation()
        store.forget(2)
        with pytest.raises(StaleGeneration):
            correct(store, 1, "a2", 1, Ref("s1", (3,)), expected_generation=epoch)
        assert correct(store, 1, "a2", 1, Ref("s1", (3,)), expected_generation=epoch + 1) == 2

    def test_a_bad_expected_revision_is_invalid_params(self, store: FactStore) -> None:
        remember(store, "a", Ref("s1", (1,)))
        with pytest.raises(
            InvalidParams, match="expected_revision: must be an integer of at least 1"
        ):
            correct(store, 1, "b", 0, Ref("s1", (2,)))


class TestForget:
    # covers F7
    def test_forget_returns_true_then_false_on_retry(self, store: FactStore) -> None:
        remember(store, "a", Ref("s1", (1,)))
        assert store.forget(1) is True
        assert store.forget(1) is False
        assert store.generation() == 1  # a retry does not advance the generation

    def test_forgetting_an_unknown_id_fails_clearly(self, store: FactStore) -> None:
        remember(store, "a", Ref("s1", (1,)))
        with pytest.raises(FactNotFound, match="fact_id: there is no fact 2"):
            store.forget(2)
        assert store.generation() == 0

    def test_forget_excludes_every_position_of_every_revision_and_legacy_provenance(
        self, store: FactStore
    ) -> None:
        store.add("a", provenance=Positions("legacy", (1, 2)))
        store.attach_source(1, 1, Ref("s1", (10,)), accept)
        store.revise(1, "b", 1, provenance=Positions("legacy", (3,)))
        correct(store, 1, "c", 2, Ref("s1", (11, 13)))
        assert store.forget(1) is True
        assert store.excluded_seqs("legacy") == frozenset({1, 2, 3})
        assert store.excluded_seqs("s1") == frozenset({10, 11, 13})
        assert store.is_excluded("s1", 13) and not store.is_excluded("s1", 12)

    def test_forget_deletes_the_fact_its_revisions_sources_and_search_entries(
        self, store: FactStore, db: Path
    ) -> None:
        remember(store, "the launch code is 1234", Ref("s1", (1,)))
        correct(store, 1, "the launch code is 5678", 1, Ref("s1", (2,)))
        store.forget(1)
        assert store.get(1) is None
        assert store.list() == ([], None)
        assert store.search("launch") == []
        for name in ("facts", "revisions", "provenance", "source_refs"):
            assert table(db, f"SELECT count(*) FROM {name}") == [(0,)]
        assert table(db, "SELECT count(*) FROM revisions_fts WHERE revisions_fts MATCH 'code'") == [
            (0,)
        ]
        # Content-free: only positions, a generation and the fact ID remain.
        assert table(db, "SELECT * FROM exclusions") == [("s1", 1, 1), ("s1", 2, 1)]
        assert table(db, "SELECT * FROM forgotten") == [(1,)]
        assert store.verify() == []

    def test_an_overlapping_fact_is_kept_but_suppressed(self, store: FactStore) -> None:
        remember(store, "a", Ref("s1", (1, 2)))
        remember(store, "b", Ref("s1", (2, 3)))
        remember(store, "c", Ref("s1", (3, 4)))
        store.forget(1)
        assert store.suppressed(2) is True
        assert store.suppressed(3) is False
        assert [(f.id, f.suppressed) for f in store.list()[0]] == [(2, True), (3, False)]
        assert store.verify() == []

    def test_excluded_evidence_is_refused_everywhere_and_after_reopening(
        self, store: FactStore, db: Path
    ) -> None:
        remember(store, "a", Ref("s1", (1,)))
        store.add("b")
        store.forget(1)
        store.close()
        reopened = FactStore(db)
        evidence = Ref("s1", (1,))
        with pytest.raises(ExcludedEvidence):
            reopened.remember("a", evidence, check=accept)
        with pytest.raises(ExcludedEvidence):
            correct(reopened, 2, "b2", 1, evidence)
        with pytest.raises(ExcludedEvidence):
            reopened.attach_source(2, 1, evidence, accept)
        with pytest.raises(ExcludedEvidence):
            reopened.add("c", provenance=Positions("s1", (1,)))
        with pytest.raises(ExcludedEvidence):
            reopened.revise(2, "b2", 1, provenance=Positions("s1", (0, 1)))
        assert [(f.id, f.revision) for f in reopened.list()[0]] == [(2, 1)]
        reopened.close()

    def test_forgotten_ids_are_never_reused(self, store: FactStore) -> None:
        remember(store, "a", Ref("s1", (1,)))
        store.forget(1)
        assert store.add("b") == (2, 1)
        assert store.forget(1) is False


class TestAttachSource:
    # covers F5
    def test_a_source_is_attached_once_to_its_revision(self, store: FactStore) -> None:
        store.add("a")
        store.revise(1, "b", 1)
        assert store.attach_source(1, 1, Ref("s1", (1,)), accept) is True
        assert store.source(1, 1) == StoredRef("s1", (1,), "sha256:aa")
        assert store.source(1, 2) is None
        assert store.attach_source(1, 1, Ref("s1", (1,)), accept) is False  # idempotent
        with pytest.raises(SourceAlreadyAttached, match="already has a different source"):
            store.attach_source(1, 1, Ref("s1", (2,)), accept)
        assert store.source(1, 1) == StoredRef("s1", (1,), "sha256:aa")

    def test_the_source_is_checked_for_working_use(self, store: FactStore) -> None:
        store.add("a")
        purposes: list[Purpose] = []
        store.attach_source(1, 1, Ref("s1", (1,)), lambda ref, purpose: purposes.append(purpose))
        assert purposes == ["working"]
        store.revise(1, "b", 1)
        with pytest.raises(Refuse):
            store.attach_source(1, 2, Ref("s1", (2,)), refuse)
        assert store.source(1, 2) is None

    def test_a_missing_revision_or_fact_is_not_found(self, store: FactStore) -> None:
        store.add("a")
        with pytest.raises(RevisionNotFound, match="revision: fact 1 has revisions 1 to 1, not 2"):
            store.attach_source(1, 2, Ref("s1", (1,)), accept)
        with pytest.raises(FactNotFound):
            store.attach_source(9, 1, Ref("s1", (1,)), accept)
        with pytest.raises(RevisionNotFound):
            store.source(1, 5)


class TestUnverifiedStorage:
    # covers F1, F2
    def test_add_stores_an_unverified_fact_with_untrusted_provenance(
        self, store: FactStore
    ) -> None:
        assert store.add("a", provenance=Positions("s1", (4,))) == (1, 1)
        fact = store.get(1)
        assert fact is not None and (fact.origin, fact.source) == ("unverified", None)
        [evidence] = store.provenance(1)
        assert evidence == RevisionEvidence(
            revision=1,
            created_at=evidence.created_at,
            source=None,
            provenance=(Positions("s1", (4,)),),
            text="a",
        )

    def test_revise_checks_the_expected_revision(self, store: FactStore) -> None:
        store.add("a")
        assert store.revise(1, "b", 1) == 2
        with pytest.raises(StaleRevision, match="expected_revision: fact 1 is at revision 2"):
            store.revise(1, "c", 1)
        with pytest.raises(FactNotFound):
            store.revise(2, "c", 1)

    def test_an_origin_label_must_be_short_and_lower_case(self, store: FactStore) -> None:
        with pytest.raises(InvalidParams, match="origin"):
            store.add("a", origin="Robert'); DROP TABLE facts;--")
        assert store.add("a", origin="learned") == (1, 1)


class TestListAndGet:
    # covers F1, F9
    def test_list_pages_by_offset_in_id_order(self, store: FactStore) -> None:
        for n in range(5):
            store.add(f"fact {n}")
        page, next_offset = store.list(0, 2)
        assert ([f.id for f in page], next_offset) == ([1, 2], 2)
        page, next_offset = store.list(2, 2)
        assert ([f.id for f in page], next_offset) == ([3, 4], 4)
        page, next_offset = store.list(4, 2)
        assert ([f.id for f in page], next_offset) == ([5], None)
        assert store.list(10) == ([], None)

    def test_list_returns_at_most_fifty_and_twenty_by_default(self, store: FactStore) -> None:
        for n in range(60):
            store.add(f"fact {n}")
        assert len(store.list()[0]) == 20
        page, next_offset = store.list(0, 1000)
        assert (len(page), next_offset) == (50, 50)

    @pytest.mark.parametrize(("offset", "limit", "field"), [(-1, 5, "offset"), (0, 0, "limit")])
    def test_a_negative_offset_or_empty_page_is_invalid_params(
        self, store: FactStore, offset: int, limit: int, field: str
    ) -> None:
        with pytest.raises(InvalidParams) as raised:
            store.list(offset, limit)
        assert raised.value.field == field


class TestSearch:
    # covers F1, F9
    @pytest.fixture
    def texts(self, store: FactStore) -> FactStore:
        for text in [
            'say "hello" twice',
            "100% sure",
            "snake_case names",
            "glob *.py files",
            "Tabs, not spaces",
            "it's quoted",
            "NEAR(a b) AND c OR d",
        ]:
            store.add(text)
        return store

    @pytest.mark.parametrize(
        ("literal", "ids"),
        [
            ('"hello"', [1]),
            ('"', [1]),
            ("%", [2]),
            ("0%", [2]),
            ("100%", [2]),
            ("_", [3]),
            ("e_c", [3]),
            ("*", [4]),
            ("*.py", [4]),
            ("'", [6]),
            ("it's", [6]),
            ("NEAR(a b)", [7]),
            ("AND", [7]),
            ("s", [1, 2, 3, 4, 5, 6]),
            ("Tabs", [5]),
            ("tabs", []),  # literal: case matters
            ("a%", []),  # no wildcards
            ("s*", []),
        ],
    )
    def test_search_finds_the_literal_substring(
        self, texts: FactStore, literal: str, ids: list[int]
    ) -> None:
        assert [fact.id for fact in texts.search(literal)] == ids

    def test_only_the_current_text_is_searched(self, store: FactStore) -> None:
        store.add("use black")
        store.revise(1, "use ruff", 1)
        assert store.search("black") == []
        assert [f.id for f in store.search("ruff")] == [1]

    def test_search_is_bounded(self, store: FactStore) -> None:
        for n in range(60):
            store.add(f"item {n}")
        assert len(store.search("item")) == 20
        assert len(store.search("item", limit=500)) == 50
        assert len(store.search("it", limit=3)) == 3

    @pytest.mark.parametrize(
        ("literal", "ids"),
        [
            ("Ω", [2]),
            ("Ωm", [2]),
            ("mΩ", []),
            ("🦀", [3]),
            ("🦀 ", [3]),
            ("\x00", [4]),
            ("a\x00", [4]),
            ("C", [1]),
            ("CI", [1]),
            ("IC", []),
            ("I", [1, 4]),
        ],
    )
    def test_one_and_two_character_literals_are_served_by_their_index(
        self, store: FactStore, db: Path, literal: str, ids: list[int]
    ) -> None:
        for text in ("CI runs scripts/test", "10 Ωm copper", "🦀 rust", "a\x00b INDEX"):
            store.add(text)
        assert [fact.id for fact in store.search(literal)] == ids
        # The index itself answers: every revision holds each of its characters and pairs.
        term = literal.encode().hex()
        assert table(
            db, f"SELECT rowid FROM revisions_short WHERE revisions_short MATCH '\"{term}\"'"
        ) == [(i,) for i in ids]

    def test_a_forgotten_facts_characters_leave_the_short_index(
        self, store: FactStore, db: Path
    ) -> None:
        remember(store, "the code is Zq", Ref("s1", (1,)))
        correct(store, 1, "the code is Xw", 1, Ref("s1", (2,)))
        store.add("keep")
        assert [f.id for f in store.search("Xw")] == [1]
        store.forget(1)
        assert store.search("Xw") == [] and store.search("Zq") == []
        assert table(db, "SELECT rowid FROM revisions_short") == [(3,)]
        assert store.verify() == []

    def test_an_empty_literal_is_invalid_params(self, store: FactStore) -> None:
        with pytest.raises(InvalidParams, match="literal: search text must not be empty"):
            store.search("")


class TestVerify:
    def test_a_store_used_in_every_way_verifies(self, store: FactStore) -> None:
        remember(store, "a", Ref("s1", (1,)))
        correct(store, 1, "b", 1, Ref("s1", (2,)))
        store.add("c", provenance=Positions("s2", (1,)))
        store.attach_source(2, 1, Ref("s2", (1,)), accept)
        remember(store, "d", Ref("s1", (2, 3)))
        store.forget(1)
        assert store.verify() == []

    def test_verify_reports_a_text_edited_behind_the_stores_back(
        self, store: FactStore, db: Path
    ) -> None:
        store.add("use tabs")
        conn = apsw.Connection(str(db))
        conn.execute("UPDATE revisions SET text = 'use spaces', canonical = 'use spaces'")
        conn.close()
        assert store.verify() == [
            "revisions_short: the short-literal index is out of step with revisions",
            "fact_terms: fact 1's words are not those of its text",
        ]
        assert store.search("sp") == []  # an unindexed edit is never served as a hit

    def test_verify_reports_broken_invariants(self, store: FactStore, db: Path) -> None:
        remember(store, "a", Ref("s1", (1,)))
        remember(store, "b", Ref("s1", (2,)))
        store.add("c")
        store.forget(1)
        conn = apsw.Connection(str(db))
        conn.execute("PRAGMA foreign_keys = OFF")
        # A ref attached behind the store's back after its evidence was excluded.
        conn.execute(
            "INSERT INTO source_refs VALUES (3, 1, 's1', '[1]', 'd', (SELECT value FROM meta))"
        )
        conn.execute("UPDATE facts SET current_revision = 3 WHERE id = 2")
        conn.execute(
            "INSERT INTO revisions_fts (revisions_fts, rowid, text) VALUES ('delete', 3, 'c')"
        )
        conn.close()
        assert store.verify() == [
            "fact 2: revisions are not exactly 1..3",
            "source_refs: fact 3 r1: attached after s1:1 was excluded",
            "revisions_fts: the literal-search index is out of step with revisions",
        ]


class TestConcurrency:
    # covers F2
    def test_threads_sharing_one_store_lose_no_update(self, store: FactStore) -> None:
        store.add("counter 0")
        errors: list[BaseException] = []

        def bump(worker: int) -> None:
            try:
                for n in range(10):
                    remember(store, f"w{worker} n{n}", Ref(f"w{worker}", (n,)))
                    _correct_until_it_lands(
                        store, 1, f"w{worker} bump {n}", Ref(f"w{worker}", (100 + n,))
                    )
            except BaseException as error:  # re-raised in the test thread
                errors.append(error)

        threads = [threading.Thread(target=bump, args=(w,)) for w in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        assert store.get(1) is not None and store.get(1).revision == 41  # type: ignore[union-attr]
        assert len(store.list(0, 50)[0]) == 41
        assert store.verify() == []

    def test_four_processes_lose_no_update_and_never_see_a_locked_database(
        self, store: FactStore, db: Path
    ) -> None:
        # PITFALLS "SQLite": deferred transactions fail here with "database is locked".
        store.add("counter 0")
        context = multiprocessing.get_context("spawn")
        start = context.Event()
        results: multiprocessing.queues.Queue[tuple[int, str]] = context.Queue()
        workers = [
            context.Process(target=_process_worker, args=(str(db), w, start, results))
            for w in range(4)
        ]
        for worker in workers:
            worker.start()
        start.set()
        outcomes = sorted(results.get(timeout=60) for _ in workers)
        for worker in workers:
            worker.join(timeout=60)
        assert outcomes == [(w, "ok") for w in range(4)]
        fact = store.get(1)
        assert fact is not None and fact.revision == 1 + 4 * PROCESS_CORRECTIONS
        assert [e.revision for e in store.provenance(1)] == list(range(1, fact.revision + 1))
        assert len(store.list(0, 50)[0]) == 1 + 4 * PROCESS_FACTS
        assert store.verify() == []


PROCESS_FACTS = 8
PROCESS_CORRECTIONS = 8


def _correct_until_it_lands(store: FactStore, fact_id: int, text: str, ref: Ref) -> int:
    """The optimistic read-modify-write loop a client runs: re-read on StaleRevision."""
    while True:
        current = store.get(fact_id)
        assert current is not None
        try:
            return correct(store, fact_id, text, current.revision, ref)
        except StaleRevision:
            continue


def _process_worker(
    db: str, worker: int, start: Any, results: multiprocessing.queues.Queue[tuple[int, str]]
) -> None:
    """Runs in a spawned process: remembers its own facts and corrects the shared fact 1."""
    store = FactStore(Path(db))
    try:
        start.wait(30)
        for n in range(PROCESS_FACTS):
            remember(store, f"process {worker} fact {n}", Ref(f"p{worker}", (n,)))
        for n in range(PROCESS_CORRECTIONS):
            text = f"process {worker} bump {n}"
            _correct_until_it_lands(store, 1, text, Ref(f"p{worker}", (100 + n,)))
        results.put((worker, "ok"))
    except BaseException as error:
        results.put((worker, f"{type(error).__name__}: {error}"))
    finally:
        store.close()
