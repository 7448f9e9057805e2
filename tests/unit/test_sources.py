"""Source references: snapshots of visible messages, and their revalidation on every use.

Real transcripts on tmp_path. Tampering is done by editing the bytes on disk, as a person or a
stray tool would; the only fake is the exclusion reader, standing in for the FactStore.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lecode_ls.errors import InvalidParams, InvalidSource, SourceInvalid
from lecode_ls.memory.canonical import records_digest
from lecode_ls.memory.sessions.sources import (
    MAX_POSITIONS,
    SourceRef,
    ValidatedSource,
    source_snapshot,
    validate_source,
    validate_sources,
)
from lecode_ls.memory.sessions.store import SessionStore

A_DIGEST = "sha256:" + "0" * 64
A_VALID_ID = "20250101T120000Z-0123abcd"


class FakeExclusions:
    """The FactStore's side of forgetting: content-free excluded seqs per session."""

    def __init__(self, excluded: dict[str, frozenset[int]]) -> None:
        self.excluded = excluded

    def excluded_seqs(self, session_id: str) -> frozenset[int]:
        return self.excluded.get(session_id, frozenset())

    def scrubbed_digest(self, session_id: str, seqs: object, digest: str) -> str | None:
        return None  # no scrub here: the scrub's own tests use the real FactStore


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    return SessionStore(tmp_path / "store")


@pytest.fixture
def session(store: SessionStore) -> str:
    """Seqs 1-3 and 4-6: user message, tool-usage event, assistant message."""
    session_id = store.create("sources")
    for question in ("q1", "q2"):
        store.append(session_id, {"kind": "message", "role": "user", "content": question})
        store.append(session_id, {"kind": "event", "type": "usage", "tokens": 3})
        store.append(session_id, {"kind": "message", "role": "assistant", "content": "a"})
    return session_id


def transcript(store: SessionStore, session_id: str) -> Path:
    return store.folder / f"{session_id}.jsonl"


class TestSourceRef:
    # covers S2

    def test_it_round_trips_through_json(self) -> None:
        ref = SourceRef(A_VALID_ID, (1, 3), A_DIGEST)
        assert ref.to_json() == {"session_id": A_VALID_ID, "seqs": [1, 3], "digest": A_DIGEST}
        assert SourceRef.from_json(ref.to_json()) == ref

    @pytest.mark.parametrize(
        ("value", "field"),
        [
            ([], "source"),
            ({"session_id": "../x", "seqs": [1], "digest": A_DIGEST}, "source.session_id"),
            ({"session_id": A_VALID_ID, "seqs": [], "digest": A_DIGEST}, "source.seqs"),
            ({"session_id": A_VALID_ID, "seqs": [3, 1], "digest": A_DIGEST}, "source.seqs"),
            ({"session_id": A_VALID_ID, "seqs": [1, 1], "digest": A_DIGEST}, "source.seqs"),
            ({"session_id": A_VALID_ID, "seqs": [True], "digest": A_DIGEST}, "source.seqs"),
            ({"session_id": A_VALID_ID, "seqs": [1, 201], "digest": A_DIGEST}, "source.seqs"),
            ({"session_id": A_VALID_ID, "seqs": "1", "digest": A_DIGEST}, "source.seqs"),
            ({"session_id": A_VALID_ID, "seqs": [1], "digest": "md5:00"}, "source.digest"),
            ({"session_id": A_VALID_ID, "seqs": [1], "digest": A_DIGEST, "x": 1}, "source.x"),
        ],
        ids=["array", "id", "empty", "order", "dup", "bool", "span", "string", "digest", "key"],
    )
    def test_a_malformed_reference_is_refused_naming_its_field(
        self, value: Any, field: str
    ) -> None:
        with pytest.raises(InvalidSource) as caught:
            SourceRef.from_json(value)
        assert caught.value.field == field
        assert caught.value.message.startswith(field + ": ")

    def test_the_constructor_checks_too(self) -> None:
        with pytest.raises(InvalidSource):
            SourceRef(A_VALID_ID, (0, 200), A_DIGEST)  # 201 positions
        assert SourceRef(A_VALID_ID, (0, 199), A_DIGEST).last == 199


class TestSnapshot:
    # covers S2

    def test_it_cites_visible_messages_and_hashes_every_record_between(
        self, store: SessionStore, session: str
    ) -> None:
        ref = source_snapshot(store, session, 1, 6)
        assert ref.seqs == (1, 3, 4, 6)  # the usage events at 2 and 5 are not messages
        assert ref.digest == records_digest(store.read(session, 1, 6))

    def test_the_digest_starts_and_ends_at_the_cited_messages(
        self, store: SessionStore, session: str
    ) -> None:
        ref = source_snapshot(store, session, 2, 5)  # events at both ends
        assert ref.seqs == (3, 4)
        assert ref.digest == records_digest(store.read(session, 3, 4))

    def test_undone_cleared_and_excluded_messages_are_left_out(
        self, store: SessionStore, session: str
    ) -> None:
        store.undo(session)  # hides 4-6
        assert source_snapshot(store, session, 1, 6).seqs == (1, 3)
        forgotten = FakeExclusions({session: frozenset({1})})
        assert source_snapshot(store, session, 1, 6, exclusions=forgotten).seqs == (3,)
        store.clear(session)  # seq 8
        store.append(session, {"kind": "message", "role": "user", "content": "q3"})
        assert source_snapshot(store, session, 1, 9).seqs == (9,)
        assert source_snapshot(store, session, 1, 9).digest == records_digest(
            store.read(session, 9, 9)
        )

    def test_at_most_200_positions(self, store: SessionStore) -> None:
        session_id = store.create()
        for n in range(MAX_POSITIONS + 1):
            store.append(session_id, {"kind": "message", "role": "user", "content": str(n)})
        assert len(source_snapshot(store, session_id, 1, 200).seqs) == 200
        with pytest.raises(InvalidParams, match="at most 200") as caught:
            source_snapshot(store, session_id, 1, 201)
        assert caught.value.field == "end_seq"

    @pytest.mark.parametrize(
        ("start", "end", "field"),
        [(-1, 3, "start_seq"), (3, 2, "end_seq"), (1, 7, "end_seq"), (2, 2, "start_seq")],
        ids=["negative", "reversed", "past-the-end", "only-an-event"],
    )
    def test_a_range_without_visible_messages_is_refused(
        self, store: SessionStore, session: str, start: int, end: int, field: str
    ) -> None:
        with pytest.raises(InvalidParams) as caught:
            source_snapshot(store, session, start, end)
        assert caught.value.field == field

    def test_a_fully_hidden_range_is_refused(self, store: SessionStore, session: str) -> None:
        store.undo(session)
        with pytest.raises(SourceInvalid, match="hidden") as caught:
            source_snapshot(store, session, 4, 6)
        assert (caught.value.status, caught.value.field) == ("hidden", "start_seq")


class TestValidate:
    # covers S3, S5, S6, R7

    def check(self, store: SessionStore, ref: SourceRef, **kwargs: Any) -> tuple[str, str | None]:
        result = validate_source(store, ref, **kwargs)
        return result.status, result.reason

    def test_a_fresh_snapshot_is_valid_and_carries_its_records(
        self, store: SessionStore, session: str
    ) -> None:
        ref = source_snapshot(store, session, 1, 6)
        result = validate_source(store, ref)
        assert result == ValidatedSource(ref, "valid", None, tuple(store.read(session, 1, 6)))
        assert result.require() is result

    def test_editing_a_byte_of_a_middle_event_makes_it_stale(
        self, store: SessionStore, session: str
    ) -> None:
        ref = source_snapshot(store, session, 1, 6)
        path = transcript(store, session)
        data = path.read_bytes()
        line_start = data.index(b'{"kind":"event","seq":5')
        tokens = data.index(b'"tokens":3', line_start)
        path.write_bytes(data[:tokens] + b'"tokens":4' + data[tokens + 10 :])
        assert self.check(store, ref) == ("stale", "digest")

    def test_an_edit_that_changes_line_lengths_makes_it_stale(
        self, store: SessionStore, session: str
    ) -> None:
        ref = source_snapshot(store, session, 1, 3)
        path = transcript(store, session)
        path.write_bytes(path.read_bytes().replace(b'"content":"q1"', b'"content":"q1 edited"'))
        assert self.check(store, ref) == ("stale", "digest")

    def test_a_damaged_transcript_makes_it_stale(self, store: SessionStore, session: str) -> None:
        ref = source_snapshot(store, session, 1, 3)
        path = transcript(store, session)
        path.write_bytes(path.read_bytes().replace(b'"content":"q1"', b'"content":q1'))
        assert self.check(store, ref) == ("stale", "corrupt")

    def test_a_range_past_the_end_is_stale(self, store: SessionStore, session: str) -> None:
        ref = SourceRef(session, (5, 9), A_DIGEST)
        assert self.check(store, ref) == ("stale", "out_of_range")

    def test_a_cited_seq_that_is_not_a_message_is_stale(
        self, store: SessionStore, session: str
    ) -> None:
        ref = SourceRef(session, (2,), records_digest(store.read(session, 2, 2)))
        assert self.check(store, ref) == ("stale", "not_message")

    def test_undo_hides_it_for_both_purposes_and_redo_restores_it(
        self, store: SessionStore, session: str
    ) -> None:
        ref = source_snapshot(store, session, 4, 6)
        store.undo(session)
        assert self.check(store, ref) == ("hidden", "undone")
        assert self.check(store, ref, purpose="durable") == ("hidden", "undone")
        store.redo(session)
        assert self.check(store, ref) == ("valid", None)

    def test_clear_hides_it_from_working_context_only(
        self, store: SessionStore, session: str
    ) -> None:
        ref = source_snapshot(store, session, 1, 3)
        store.clear(session)
        assert self.check(store, ref) == ("hidden", "cleared")
        assert self.check(store, ref, purpose="durable") == ("valid", None)

    def test_an_excluded_seq_hides_it_for_both_purposes(
        self, store: SessionStore, session: str
    ) -> None:
        ref = source_snapshot(store, session, 1, 6)
        forgotten = FakeExclusions({session: frozenset({4})})
        for purpose in ("working", "durable"):
            assert self.check(store, ref, purpose=purpose, exclusions=forgotten) == (
                "hidden",
                "excluded",
            )
        unrelated = FakeExclusions({session: frozenset({2, 5})})  # events, not cited
        assert self.check(store, ref, exclusions=unrelated) == ("valid", None)

    def test_a_deleted_session_is_missing(self, store: SessionStore, session: str) -> None:
        ref = source_snapshot(store, session, 1, 3)
        store.delete(session)
        assert self.check(store, ref) == ("missing", "not_found")
        with pytest.raises(SourceInvalid) as caught:
            validate_source(store, ref).require()
        assert caught.value.status == "missing"
        assert isinstance(caught.value, InvalidSource)

    def test_another_project_is_missing(self, store: SessionStore, session: str) -> None:
        ref = source_snapshot(store, session, 1, 3)
        assert self.check(store, ref, project_root_check=lambda: False) == ("missing", "project")
        assert self.check(store, ref, project_root_check=lambda: True) == ("valid", None)

    def test_a_symlinked_transcript_is_missing(self, tmp_path: Path) -> None:
        real = SessionStore(tmp_path / "real")
        session_id = real.create()
        real.append(session_id, {"kind": "message", "role": "user", "content": "x"})
        ref = source_snapshot(real, session_id, 1, 1)
        linked = SessionStore(tmp_path / "linked")
        linked.folder.mkdir(parents=True)
        (linked.folder / f"{session_id}.jsonl").symlink_to(transcript(real, session_id))
        assert self.check(linked, ref) == ("missing", "symlink")

    def test_a_renamed_import_does_not_remap_old_references(
        self, store: SessionStore, session: str
    ) -> None:
        ref = source_snapshot(store, session, 1, 3)
        exported = store.read(session, 0, store.length(session) - 1)
        new_id, renamed_from = store.import_records(exported)
        assert renamed_from == session
        store.delete(session)
        assert self.check(store, ref) == ("missing", "not_found")
        # Re-imported under its own ID, with the exact same records, the reference holds again.
        assert store.import_records(exported) == (session, None)
        assert self.check(store, ref) == ("valid", None)
        assert new_id != session

    def test_an_unknown_purpose_is_refused(self, store: SessionStore, session: str) -> None:
        ref = source_snapshot(store, session, 1, 3)
        with pytest.raises(InvalidParams):
            validate_source(store, ref, purpose="forever")  # type: ignore[arg-type]


class TestProjectIdentityOnEveryUse:
    """S3: "validate_source rechecks project identity ... on every use", on the production path:
    the Runtime's session store carries the check, and every validation (recall, the injection's
    verdicts, a remember's source check) asks it; no caller passes it by hand (issue 41)."""

    def test_a_store_that_is_no_longer_the_projects_has_missing_sources(
        self, tmp_path: Path
    ) -> None:
        from lecode_ls.config import Settings
        from lecode_ls.memory.project import resolve_project
        from lecode_ls.memory.recall import recall_fact
        from lecode_ls.runtime import Runtime
        from tests.unit.stores import chat, remember

        outer = tmp_path / "outer"
        (outer / "app" / ".git").mkdir(parents=True)  # app is a checkout of its own
        (outer / ".git").mkdir()
        project = resolve_project(outer / "app")
        assert project.root == (outer / "app").resolve()
        runtime = Runtime(project, tmp_path / "config", Settings())
        session = chat(runtime, {"role": "user", "content": "We use tabs."})
        fact_id = remember(runtime, session, 1, 1, "We use tabs.")
        ref = source_snapshot(runtime.sessions, session, 1, 1)
        assert recall_fact(runtime.facts, runtime.sessions, fact_id)["status"] == "valid"
        generation = runtime.facts.generation()
        assert runtime.verdicts.is_valid(ref, runtime.facts, generation)  # now remembered

        (outer / "app" / ".git").rmdir()  # app is now a folder of the outer checkout
        # The injection's remembered verdict is a use too (S3: every use).
        assert not runtime.verdicts.is_valid(ref, runtime.facts, generation)
        assert runtime.verdicts.statuses([ref], runtime.facts, generation) == ["missing"]
        assert recall_fact(runtime.facts, runtime.sessions, fact_id)["status"] == "missing"
        assert validate_source(runtime.sessions, ref).reason == "project"
        assert [v.reason for v in validate_sources(runtime.sessions, [ref])] == ["project"]
        with pytest.raises(InvalidSource):
            runtime.check_source(ref, "working")
        (outer / "app" / ".git").mkdir()  # a checkout again: its sources are valid again
        assert validate_source(runtime.sessions, ref).reason is None
        runtime.close()
