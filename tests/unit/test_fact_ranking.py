"""Ranked retrieval of facts (facts/terms.py, facts/ranked.py): the words a fact is indexed as,
BM25 over the current revisions, a query as untrusted text, and pins, uses and changes.

# covers I3 (which facts fill the allocation), F7 (forgotten text leaves the index), issue 25
# items 1 and 4
"""

from __future__ import annotations

from pathlib import Path

import apsw
import pytest

from lecode_ls.errors import FactNotFound, InvalidParams
from lecode_ls.memory.facts.model import Purpose, SourceLike, StoredRef
from lecode_ls.memory.facts.ranked import MAX_RESULTS, RANK_BUDGET
from lecode_ls.memory.facts.store import FactStore
from lecode_ls.memory.facts.terms import index_text


def accept(ref: SourceLike, purpose: Purpose) -> None:
    """A source check that accepts everything."""


def authored(ref: SourceLike) -> bool:
    return True


@pytest.fixture
def store(tmp_path: Path) -> FactStore:
    facts = FactStore(tmp_path / "facts.sqlite3")
    yield facts  # type: ignore[misc]
    assert facts.verify() == []
    facts.close()


def remember(store: FactStore, text: str, seq: int = 1) -> int:
    fact_id, _ = store.remember(text, StoredRef("s1", (seq,), f"d{seq}"), check=accept)
    return fact_id


def found(store: FactStore, query: str, count: int = 10) -> list[int]:
    return [hit.fact_id for hit in store.ranking.search(query, count)]


def vocabulary(path: Path) -> set[str]:
    """Every term the ranked index holds, read as another process would."""
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        conn.execute("CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, facts_rank, row)")
        return {str(term) for (term,) in conn.execute("SELECT term FROM temp.v")}
    finally:
        conn.close()


class TestTheWordsOfAText:
    def test_identifiers_are_split_and_kept_joined(self) -> None:
        assert index_text("billing-12 getUserName user_name HTTPServer2") == (
            "billing 12 billing12 get user name getusername user name username "
            "http server 2 httpserver2"
        )

    def test_a_path_gives_its_components_and_its_file_name_joined(self) -> None:
        assert index_text("src/app/main.py") == "src app main py mainpy"
        assert index_text(r"C:\tools\run.sh") == "c tools run sh runsh"

    def test_scripts_without_spaces_give_characters_and_pairs(self) -> None:
        assert index_text("数据库") == "数 据 库 数据 据库"

    def test_punctuation_is_spelled_in_hex_and_full_width_letters_fold(self) -> None:
        assert index_text("->") == "0x2d3e 0x2d 0x3e"
        assert index_text("\uff42\uff49\uff4c\uff4c\uff49\uff4e\uff47") == "billing"  # full width


class TestRanking:
    def test_the_fact_a_question_needs_ranks_first_among_similar_ones(
        self, store: FactStore
    ) -> None:
        for n in range(1, 40):
            remember(store, f"The billing-{n} service reads its signing key from Vault.", n)
            remember(store, f"The billing-{n} service logs to Loki.", 100 + n)
        target = remember(store, "The search-12 service reads its signing key from Vault.", 500)
        hits = store.ranking.search(
            "Quick question about search-12: what do we use for its signing key?", 5
        )
        assert hits[0].fact_id == target
        assert hits[0].matched == ("search-12", "signing", "key")

    def test_english_words_match_their_other_forms(self, store: FactStore) -> None:
        fact = remember(store, "Releases are signed by the deploy bot.")
        assert found(store, "who signs a release when deploying?") == [fact]

    def test_any_script_and_single_characters_are_found(self, store: FactStore) -> None:
        cat = remember(store, "猫", 1)
        db = remember(store, "数据库连接使用连接池", 2)
        greek = remember(store, "\u0397 \u0392\u0386\u03a3\u0397 is PostgreSQL", 3)  # Greek
        assert found(store, "猫") == [cat]
        assert found(store, "连接") == [db]
        assert found(store, "βάση") == [greek]

    def test_a_fact_of_punctuation_is_indexed_and_found(self, store: FactStore) -> None:
        arrows = remember(store, "-> => !== ???", 1)
        remember(store, "Plain words only.", 2)
        assert found(store, "!==") == [arrows]
        assert found(store, "what does -> mean") == [arrows]

    def test_a_correction_replaces_the_indexed_text(self, store: FactStore) -> None:
        fact = remember(store, "The cache lives in Redis.")
        store.correct(
            fact, "The cache lives in Memcached.", expected_revision=1,
            ref=StoredRef("s1", (2,), "d2"), check=accept, has_authored_text=authored,
        )  # fmt: skip
        assert found(store, "redis") == []
        assert found(store, "memcached") == [fact]

    def test_a_forgotten_facts_words_leave_the_index(self, store: FactStore) -> None:
        fact = remember(store, "The zebrafish cluster runs nightly.", 1)
        other = remember(store, "The nightly job is cron.", 2)
        assert "zebrafish" in vocabulary(store.path)
        assert store.forget(fact) is True
        assert found(store, "zebrafish nightly") == [other]
        assert "zebrafish" not in vocabulary(store.path)
        assert "nightli" in vocabulary(store.path)  # the other fact's words stay

    def test_a_forgotten_facts_words_are_in_no_byte_of_the_store(self, tmp_path: Path) -> None:
        # Not only unfindable: the index's pages hold neither the word nor its stem once the
        # store is closed (its WAL checkpointed), and the other facts' words are still there.
        store = FactStore(tmp_path / "facts.sqlite3")
        for n in range(40):
            remember(store, f"Filler fact {n} about the nightly quokkas.", n + 2)
        fact = remember(store, "The zebrafish cluster runs nightly.", 1)
        assert store.forget(fact) is True
        store.close()
        data = b"".join(path.read_bytes() for path in tmp_path.iterdir())
        assert b"zebrafish" not in data and b"zebrafi" not in data
        assert b"quokka" in data


class TestAQueryIsUntrustedText:
    @pytest.mark.parametrize(
        "query", ['"', "*", "NEAR(", "-x", "a AND", "OR OR", "col:x", "^x", "(", "{x}", "\x00"]
    )
    def test_fts5_syntax_is_words_never_an_error(self, store: FactStore, query: str) -> None:
        remember(store, "Use x for NEAR queries and col as a column.")
        store.ranking.search(query, 10)  # answers, whatever it finds

    def test_operators_are_matched_as_words(self, store: FactStore) -> None:
        near = remember(store, "NEAR is a keyword of FTS5.", 1)
        remember(store, "Something else.", 2)
        assert found(store, "NEAR(") == [near]

    def test_a_100_kb_query_answers_within_its_bounds(self, store: FactStore) -> None:
        fact = remember(store, "The widget builds with make.")
        query = "make " + " ".join(f"w{i}" for i in range(20_000))
        assert len(query) > 100_000
        assert found(store, query) == [fact]

    def test_a_query_must_be_a_string(self, store: FactStore) -> None:
        with pytest.raises(InvalidParams, match="query"):
            store.ranking.search(42, 10)  # type: ignore[arg-type]

    def test_a_word_in_more_facts_than_the_budget_still_finds_the_newest(
        self, store: FactStore
    ) -> None:
        ids = [remember(store, f"common word number {n}", n) for n in range(RANK_BUDGET + 5)]
        assert found(store, "common", 3) == ids[::-1][:3]
        assert len(found(store, "common", MAX_RESULTS + 50)) == MAX_RESULTS

    def test_without_a_database_nothing_is_found_and_nothing_is_created(
        self, tmp_path: Path
    ) -> None:
        store = FactStore(tmp_path / "facts.sqlite3")
        assert store.ranking.search("anything", 10) == []
        assert store.ranking.pinned() == [] and store.ranking.recent() == []
        assert store.ranking.changes() == 0
        assert not (tmp_path / "facts.sqlite3").exists()
        store.close()


class TestPinsUsesAndChanges:
    def test_pinning_is_idempotent_and_forget_removes_the_pin(self, store: FactStore) -> None:
        first, second = remember(store, "one", 1), remember(store, "two", 2)
        assert store.ranking.pin(second) is True
        assert store.ranking.pin(first) is True
        assert store.ranking.pin(second) is False
        assert store.ranking.pinned() == [first, second]
        assert store.ranking.unpin(second) is True and store.ranking.unpin(second) is False
        store.forget(first)
        assert store.ranking.pinned() == []
        with pytest.raises(FactNotFound, match="forgotten"):
            store.ranking.pin(first)
        with pytest.raises(FactNotFound, match="no fact 99"):
            store.ranking.unpin(99)

    def test_recent_is_the_newest_use_or_write_first(self, store: FactStore) -> None:
        old, middle, new = (remember(store, text, n) for n, text in enumerate("abc", 1))
        assert store.ranking.recent() == [new, middle, old]
        store.ranking.record_use([old])
        # Now as recent as the newest write (the same millisecond, or later): before `middle`.
        assert set(store.ranking.recent()[:2]) == {old, new}
        store.ranking.record_use([old])
        assert [(f, n) for f, (_, n) in store.ranking.uses([old, new]).items()] == [(old, 2)]

    def test_writes_count_as_changes_and_recording_a_use_does_not(self, store: FactStore) -> None:
        fact = remember(store, "a")
        before = store.ranking.changes()
        store.ranking.record_use([fact, 999])  # an unknown ID is ignored
        assert store.ranking.changes() == before
        store.ranking.pin(fact)
        assert store.ranking.changes() == before + 1
        store.forget(fact)
        assert store.ranking.changes() == before + 2
