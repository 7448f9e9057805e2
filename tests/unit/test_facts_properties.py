"""Properties of FactStore under random use (hypothesis).

A state machine drives remember, correct, add, attach_source and forget against a real database
and a small model of what must hold: the store's invariants re-derive cleanly after every step,
exclusions only grow and match every position ever cited by a forgotten fact, excluded evidence
is refused by every write, and suppression is exactly "cites an excluded position". Two smaller
properties pin literal search and the deduplication key.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    consumes,
    initialize,
    invariant,
    multiple,
    precondition,
    rule,
)

from lecode_ls.errors import (
    DuplicateFact,
    ExcludedEvidence,
    FactNotFound,
    SourceAlreadyAttached,
    StaleRevision,
)
from lecode_ls.memory.facts.model import Purpose, SourceLike
from lecode_ls.memory.facts.schema import canonical_text
from lecode_ls.memory.facts.store import FactStore

SESSIONS = ("s1", "s2")
Position = tuple[str, int]


@dataclass(frozen=True)
class Ref:
    session_id: str
    seqs: tuple[int, ...]
    digest: str


def accept(ref: SourceLike, purpose: Purpose) -> None:
    """Accepts everything, so every refusal seen here is FactStore's own."""


def authored(ref: SourceLike) -> bool:
    return True


refs = st.builds(
    Ref,
    session_id=st.sampled_from(SESSIONS),
    seqs=st.sets(st.integers(0, 7), min_size=1, max_size=3).map(lambda s: tuple(sorted(s))),
    digest=st.sampled_from(["d1", "d2"]),
)
texts = st.sampled_from(["Use tabs.", "use  TABS.", "Use spaces.", "Run pytest.", "x y z"])


def positions(ref: Ref) -> set[Position]:
    return {(ref.session_id, seq) for seq in ref.seqs}


class FactStoreMachine(RuleBasedStateMachine):
    facts = Bundle("facts")

    def __init__(self) -> None:
        super().__init__()
        self.folder = Path(tempfile.mkdtemp(prefix="facts-"))
        self.store = FactStore(self.folder / "facts.sqlite3")
        self.revision: dict[int, int] = {}  # live fact -> current revision
        self.cited: dict[int, set[Position]] = {}  # fact -> positions any revision cites
        self.forgotten: set[int] = set()
        self.excluded: set[Position] = set()

    def teardown(self) -> None:
        self.store.close()
        shutil.rmtree(self.folder)

    def _learn(self, fact_id: int, revision: int, evidence: set[Position]) -> None:
        if fact_id not in self.revision:
            self.cited[fact_id] = set()
        self.revision[fact_id] = revision
        self.cited[fact_id] |= evidence

    @initialize()
    def start_empty(self) -> None:
        assert self.store.verify() == []

    @rule(target=facts, text=texts, ref=refs, deduplicate=st.booleans())
    def remember(self, text: str, ref: Ref, deduplicate: bool) -> object:
        try:
            fact_id, revision = self.store.remember(
                text, ref, check=accept, deduplicate=deduplicate
            )
        except ExcludedEvidence:
            assert positions(ref) & self.excluded
            return multiple()
        except DuplicateFact as refused:  # a request's duplicate names the fact that says it
            stored = self.store.get(refused.fact_id)
            assert not deduplicate and stored is not None and not stored.suppressed
            assert canonical_text(stored.text) == canonical_text(text)
            return multiple()
        assert not positions(ref) & self.excluded
        if fact_id in self.revision:  # a retry or a duplicate: the incumbent, unchanged
            assert revision == self.revision[fact_id]
            return multiple()
        assert fact_id not in self.forgotten and revision == 1
        self._learn(fact_id, 1, positions(ref))
        return fact_id

    @rule(target=facts, text=texts)
    def add(self, text: str) -> int:
        fact_id, revision = self.store.add(text)
        self._learn(fact_id, revision, set())
        return fact_id

    @rule(fact_id=facts, text=texts, ref=refs, stale=st.booleans())
    def correct(self, fact_id: int, text: str, ref: Ref, stale: bool) -> None:
        current = self.revision.get(fact_id, 1)
        expected = max(1, current - 1) if stale else current
        try:
            revision = self.store.correct(
                fact_id,
                text,
                expected_revision=expected,
                ref=ref,
                check=accept,
                has_authored_text=authored,
            )
        except FactNotFound:
            assert fact_id in self.forgotten
        except ExcludedEvidence:
            assert positions(ref) & self.excluded
        except StaleRevision:
            assert expected != self.revision[fact_id]
        else:
            assert not positions(ref) & self.excluded
            assert revision == self.revision[fact_id] + 1 and expected == self.revision[fact_id]
            self._learn(fact_id, revision, positions(ref))

    @rule(fact_id=facts, ref=refs)
    def attach_source(self, fact_id: int, ref: Ref) -> None:
        if fact_id in self.forgotten:
            with pytest.raises(FactNotFound):
                self.store.attach_source(fact_id, 1, ref, accept)
            return
        try:
            attached = self.store.attach_source(fact_id, 1, ref, accept)
        except ExcludedEvidence:
            assert positions(ref) & self.excluded
            return
        except SourceAlreadyAttached:  # revision 1 already cites something else
            return
        assert not positions(ref) & self.excluded
        if attached:
            self.cited[fact_id] |= positions(ref)

    @rule(fact_id=consumes(facts))
    def forget(self, fact_id: int) -> None:
        first = fact_id not in self.forgotten
        assert self.store.forget(fact_id) is first
        if first:
            self.forgotten.add(fact_id)
            del self.revision[fact_id]
            self.excluded |= self.cited.pop(fact_id)

    @precondition(lambda self: bool(self.forgotten))
    @rule(data=st.data())
    def forget_again(self, data: st.DataObject) -> None:
        fact_id = data.draw(st.sampled_from(sorted(self.forgotten)))
        generation = self.store.generation()
        assert self.store.forget(fact_id) is False
        assert self.store.generation() == generation

    @invariant()
    def the_store_verifies(self) -> None:
        assert self.store.verify() == []

    @invariant()
    def exclusions_are_exactly_the_forgotten_evidence(self) -> None:
        for session in SESSIONS:
            expected = {seq for s, seq in self.excluded if s == session}
            assert self.store.excluded_seqs(session) == frozenset(expected)
        assert self.store.generation() == len(self.forgotten)

    @invariant()
    def suppression_is_citing_excluded_evidence(self) -> None:
        page, _ = self.store.list(0, 50)
        assert {f.id: f.revision for f in page} == self.revision
        for fact in page:
            assert fact.suppressed == bool(self.cited[fact.id] & self.excluded)


FactStoreMachine.TestCase.settings = settings(
    max_examples=30,
    stateful_step_count=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestFactStoreMachine = FactStoreMachine.TestCase


LITERAL_ALPHABET = st.sampled_from(list("ab AB\"%_*'\\éß\n"))


class TestLiteralSearch:
    # covers F1
    @settings(max_examples=60, deadline=None)
    @given(
        stored=st.lists(st.text(LITERAL_ALPHABET, min_size=1, max_size=12), min_size=1, max_size=6),
        literal=st.text(LITERAL_ALPHABET, min_size=1, max_size=4),
    )
    def test_search_returns_exactly_the_facts_containing_the_literal(
        self, stored: list[str], literal: str
    ) -> None:
        folder = Path(tempfile.mkdtemp(prefix="facts-"))
        store = FactStore(folder / "facts.sqlite3")
        try:
            kept = [text for text in stored if text.strip()]  # add refuses blank text
            ids = [store.add(text)[0] for text in kept]
            expected = [i for i, text in zip(ids, kept, strict=True) if literal in text]
            assert [fact.id for fact in store.search(literal, limit=50)] == expected
        finally:
            store.close()
            shutil.rmtree(folder)


class TestCanonicalText:
    # covers F8
    @given(st.text(max_size=40))
    def test_the_key_is_idempotent_and_ignores_case_and_spacing(self, text: str) -> None:
        key = canonical_text(text)
        assert canonical_text(key) == key
        assert canonical_text(" \t" + text.upper().replace(" ", "  \n") + " ") == canonical_text(
            text.upper()
        )
        assert key == key.strip() and "  " not in key

    # covers F8 (issue 41): the key folds case and spacing, never a sign, an operator, a digit
    # or a separator, so two texts that say different things are never one fact.
    MEANINGS: ClassVar[list[tuple[str, str]]] = [
        ("We set LOG_LEVEL to -1 in CI.", "We set LOG_LEVEL to 1 in CI."),
        ("Compare with != here.", "Compare with = here."),
        ("Run make test-all before pushing.", "Run make test all before pushing."),
        ("Helpers live in app.utils.", "Helpers live in app/utils."),
        ("Timeouts are 30s.", "Timeouts are 300s."),
        ("Use uv < 1.0.", "Use uv 1.0."),
        ("Call get_user_id.", "Call getuserid."),
        ("Use x² for the area.", "Use x2 for the area."),
        ("Die Maße stehen in mm.", "Die Masse stehen in mm."),
    ]

    @pytest.mark.parametrize(("one", "other"), MEANINGS)
    def test_two_meanings_never_share_a_key(self, one: str, other: str) -> None:
        assert canonical_text(one) != canonical_text(other)

    SIGNIFICANT = "-+!=<>/\\._:~*#@$%&|^'\"`,;()[]{}0123456789"

    @given(
        st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=30),
        st.sampled_from(SIGNIFICANT),
        st.text(
            alphabet=st.characters(min_codepoint=32, max_codepoint=126), min_size=1, max_size=30
        ),
    )
    def test_a_sign_operator_digit_or_separator_more_is_another_key(
        self, before: str, mark: str, after: str
    ) -> None:
        # Anywhere but at the very end (where "." and "!" end a sentence), one such mark more
        # makes another text: `-1` is not `1`, `a.b` is not `ab`, `!=` is not `=`.
        assert canonical_text(before + mark + after) != canonical_text(before + after)

    @given(
        st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=126), min_size=1),
        st.integers(min_value=0),
        st.sampled_from(SIGNIFICANT),
    )
    def test_one_mark_replaced_by_another_is_another_key(
        self, text: str, at: int, mark: str
    ) -> None:
        at %= len(text)
        changed = text[:at] + mark + text[at + 1 :]
        if changed.lower() != text.lower() and at < len(text) - 1:
            assert canonical_text(changed) != canonical_text(text)

    @given(
        st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=40),
        st.sampled_from(["", ".", "!"]),
    )
    def test_case_spacing_and_a_sentence_end_are_folded(self, text: str, end: str) -> None:
        # What must collide: the same words, cased and spaced otherwise, with or without the
        # full stop that ends the sentence.
        words = text.split()
        if not words or not words[-1][-1].isalnum():
            return
        plain = " ".join(words)
        assert canonical_text(plain) == canonical_text("  " + "\t".join(words).upper() + end)
