"""Retirement in the store (issue 26): proposed from the use record, never done by the store
itself; a retired fact is kept, a restored one starts its unused clock again; forget removes
the row with the fact.

# covers F7 (forget stays the irreversible choice)
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from lecode_ls.errors import FactNotFound
from lecode_ls.memory.facts import FactStore
from tests.unit.test_facts import Ref, remember

LATER = datetime.now(UTC) + timedelta(days=30)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[FactStore]:
    facts = FactStore(tmp_path / "facts.sqlite3")
    yield facts
    facts.close()


def proposed(store: FactStore, days: int = 28, now: datetime = LATER) -> list[tuple[int, str]]:
    return [
        (p.fact_id, p.why.split(" since ")[0]) for p in store.retirement.proposals(days, now=now)
    ]


class TestProposals:
    def test_only_facts_unused_for_the_days_are_proposed_with_their_reason(
        self, store: FactStore
    ) -> None:
        a = remember(store, "Use uv.", Ref("s1", (1,)))[0]
        b = remember(store, "Use ruff.", Ref("s1", (2,)))[0]
        pinned = remember(store, "Use mypy.", Ref("s1", (3,)))[0]
        store.ranking.pin(pinned)
        assert proposed(store, now=datetime.now(UTC)) == []  # nothing is 28 days old yet
        store.ranking.record_use([b])
        assert proposed(store) == [(a, "never used"), (b, "unused")]
        assert proposed(store, days=31) == []
        fact = store.get(a)
        assert fact is not None and fact.retired is False  # nothing was done

    def test_a_retired_fact_is_kept_and_a_restored_one_starts_again(self, store: FactStore) -> None:
        a = remember(store, "Use uv.", Ref("s1", (1,)))[0]
        assert store.retirement.retire(a) is True and store.retirement.retire(a) is False
        fact = store.get(a)
        assert fact is not None and fact.retired and fact.text == "Use uv."
        assert proposed(store) == []  # a retired fact is not proposed again
        assert set(store.retirement.retired()) == {a}
        assert store.retirement.restore(a) is True and store.retirement.restore(a) is False
        assert proposed(store, now=datetime.now(UTC) + timedelta(days=1)) == []  # kept today
        assert proposed(store) == [(a, "never used")]
        assert store.verify() == []

    def test_a_drifted_fact_is_proposed_after_its_days_and_a_keep_starts_again(
        self, store: FactStore
    ) -> None:
        a = remember(store, "x starts at one.", Ref("s1", (1,)))[0]
        b = remember(store, "y starts at two.", Ref("s1", (2,)))[0]
        store.ranking.record_use([a, b])  # used now: never proposed as unused within 100 days
        store.retirement.note_drift({a: (1, True), b: (1, False)})

        def drifted(days_later: int) -> list[tuple[int, str, str]]:
            now = datetime.now(UTC) + timedelta(days=days_later)
            found = store.retirement.proposals(100, 7, now=now)
            return [(p.fact_id, p.why, p.since) for p in found]

        assert drifted(1) == []
        [(fact_id, why, since)] = drifted(8)
        assert fact_id == a and why == f"code anchors changed or deleted since {since[:10]}"
        store.retirement.note_drift({a: (1, True)})  # seen again: the first time is kept
        assert drifted(8) == [(a, why, since)]
        assert store.retirement.restore(a) is False  # kept: its drift clock starts again
        assert drifted(1) == [] and drifted(8) != []
        store.retirement.note_drift({a: (1, False)})  # in place again: no longer drifted
        assert drifted(30) == []
        store.retirement.note_drift({a: (2, True)})  # not the current revision: nothing noted
        assert drifted(30) == []
        store.retirement.note_drift({a: (1, True)})
        assert [p[0] for p in drifted(30)] == [a]
        assert store.forget(a) is True
        assert drifted(30) == [] and store.verify() == []

    def test_forget_removes_the_retirement_and_unknown_facts_are_refused(
        self, store: FactStore
    ) -> None:
        with pytest.raises(FactNotFound):
            store.retirement.retire(1)  # no database yet: none is created
        assert not store.path.exists()
        a = remember(store, "Use uv.", Ref("s1", (1,)))[0]
        store.retirement.retire(a)
        assert store.forget(a) is True
        assert store.retirement.retired() == {} and store.verify() == []
        for call in (store.retirement.retire, store.retirement.restore):
            with pytest.raises(FactNotFound):
                call(a)
