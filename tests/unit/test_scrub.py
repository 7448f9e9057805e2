"""Scan and scrub of a store written before redaction (issue 27, item 3), on real stores: every
copy goes (notes and their .bak, transcript records and indexes, fact revisions, SQLite's
leftovers), and the evidence of every fact that cited a scrubbed record stays valid.

# covers P5 (no secret kept), S1-S3 (evidence and its digest survive a rewrite), F1-F7
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lecode_ls.errors import InvalidParams
from lecode_ls.memory.canonical import records_digest
from lecode_ls.memory.facts import Moved
from lecode_ls.memory.scrub import finish_pending, scan, scrub
from lecode_ls.memory.sessions import SourceRef, redact_records, source_snapshot, validate_source
from lecode_ls.runtime import Runtime
from tests.unit.stores import chat, make_runtime, remember

TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"  # built from parts: no file holds one
ROTATED = "correct-horse-" + "battery-staple-42"  # no rule detects it: a person names it
DIGEST = "sha256:" + "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
COMMIT = "3b18e512dba79e4c8300dd08aeb37f8e728b8dad"
UUID = "123e4567-e89b-12d3-a456-426614174000"


@contextlib.contextmanager
def written_before_redaction(runtime: Runtime) -> Iterator[None]:
    """What an older lecode-ls wrote: the stores' one redaction step finds nothing meanwhile."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(runtime.redactor, "find", lambda text: [])
        yield


def every_byte(root: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file())


@pytest.fixture
def runtime(tmp_path: Path) -> Iterator[Runtime]:
    made = make_runtime(tmp_path)
    yield made
    made.close()


def planted(runtime: Runtime) -> tuple[str, int, int]:
    """A leaked token and a rotated password in a chat, a fact citing it, a fact holding the
    token in its own text (corrected once), and MEMORY.md (twice, so its .bak holds it too)."""
    with written_before_redaction(runtime):
        session = chat(
            runtime,
            {"role": "user", "content": f"deploy fails with {TOKEN} , password {ROTATED}"},
            {"role": "assistant", "content": f"Rotate it. Seen at {COMMIT} ({DIGEST}, {UUID})."},
        )
        cited = remember(runtime, session, 1, 2, "Deploys use a GitHub token from CI")
        holder = remember(runtime, session, 1, 1, f"The deploy token is {TOKEN}")
        runtime.facts.correct(
            holder,
            f"The deploy token is {TOKEN} (rotated)",
            expected_revision=1,
            ref=source_snapshot(runtime.sessions, session, 1, 1, exclusions=runtime.facts),
            check=runtime.check_source,
            has_authored_text=runtime.has_authored_text,
        )
        runtime.sessions.rename(session, f"deploy with {TOKEN}")
        runtime.markdown.write("MEMORY.md", f"token {TOKEN}\n", "replace")
        runtime.markdown.write("MEMORY.md", f"password {ROTATED}, id {UUID}\n", "append")
    return session, cited, holder


def status(runtime: Runtime, fact_id: int) -> str:
    fact = runtime.facts.get(fact_id)
    assert fact is not None and fact.source is not None
    ref = SourceRef(fact.source.session_id, tuple(fact.source.seqs), fact.source.digest)
    return validate_source(
        runtime.sessions, ref, purpose="durable", exclusions=runtime.facts
    ).status


class TestScan:
    def test_it_lists_every_place_by_kind_and_never_the_value(self, runtime: Runtime) -> None:
        session, _, holder = planted(runtime)
        found = scan(runtime)
        places = found["places"]
        assert {"kind": "github-token", "file": "MEMORY.md.bak", "line": 1} in places
        assert {
            "kind": "github-token",
            "file": f"sessions/{session}.jsonl",
            "sessionId": session,
            "seq": 1,
        } in [{k if k != "session_id" else "sessionId": v for k, v in p.items()} for p in places]
        revisions = {(p.get("fact_id"), p.get("revision")) for p in places if "fact_id" in p}
        assert revisions == {(holder, 1), (holder, 2)}
        assert found["kinds"] == {"github-token": found["found"]}
        assert any(r["file"].startswith("facts.sqlite3") for r in found["raw"]), found["raw"]
        assert TOKEN not in repr(found)

    def test_a_limit_bounds_the_places_not_the_count(self, runtime: Runtime) -> None:
        planted(runtime)
        found = scan(runtime, 1)
        assert len(found["places"]) == 1 and found["found"] > 1 and found["truncated"]
        with pytest.raises(InvalidParams) as error:
            scan(runtime, 1001)
        assert error.value.field == "limit"


class TestScrub:
    def test_every_copy_goes_and_the_evidence_stays_valid(self, runtime: Runtime) -> None:
        session, cited, holder = planted(runtime)
        assert status(runtime, cited) == "valid"
        before = runtime.sessions.read(session, 1, 2)
        done = scrub(runtime)
        assert done["sessions"] == [session] and done["records"] == 1
        assert (
            done["reattached"] == 3
        )  # every revision cites seq 1: the cited fact, both of the holder
        assert done["facts"] == [holder] and done["revisions"] == 2
        assert set(done["notes"]) == {"MEMORY.md", "MEMORY.md.bak"}  # appended: both hold it
        assert done["remaining"] == 0 and done["purged"] and done["titles"]
        store = every_byte(runtime.store_path)
        assert TOKEN.encode() not in store and TOKEN[-16:].encode() not in store
        for kept in (COMMIT, DIGEST, UUID, ROTATED):  # not detected, not given: left as it was
            assert kept.encode() in store
        assert status(runtime, cited) == "valid" and status(runtime, holder) == "valid"
        after = runtime.sessions.read(session, 1, 2)
        assert after[1] == before[1]  # a record without a secret is byte for byte the same
        assert "[secret:github-token:" in after[0]["content"]
        fact = runtime.facts.get(holder)
        assert fact is not None and fact.text.startswith(
            "The deploy token is [secret:github-token:"
        )
        assert runtime.facts.verify() == []  # the indexes agree with the rewritten texts

    def test_a_given_string_goes_everywhere_too(self, runtime: Runtime) -> None:
        _, cited, _ = planted(runtime)
        before = scan(runtime, 100, ROTATED)  # what the scrub counts as remaining, if any
        assert before["kinds"]["given"] == 2  # the chat and MEMORY.md (its .bak is older)
        done = scrub(runtime, ROTATED)
        assert done["remaining"] == 0 and scan(runtime, 100, ROTATED)["found"] == 0
        store = every_byte(runtime.store_path)
        assert ROTATED.encode() not in store and TOKEN.encode() not in store
        assert b"[secret:given:" in store
        assert set(done["notes"]) == {"MEMORY.md", "MEMORY.md.bak"}
        assert status(runtime, cited) == "valid"
        assert runtime.markdown.search("given")[0]  # the index was rebuilt from the new text

    def test_a_short_or_empty_given_string_is_refused(self, runtime: Runtime) -> None:
        for bad in ("", "       ", "abc", 42, "x" * 20_000):
            with pytest.raises(InvalidParams) as error:
                scrub(runtime, bad)  # type: ignore[arg-type]
            assert error.value.field == "secret"

    def test_tampered_evidence_is_not_made_valid(self, runtime: Runtime) -> None:
        session, cited, _ = planted(runtime)
        path = runtime.sessions.folder / f"{session}.jsonl"
        lines = path.read_bytes().split(b"\n")
        lines[2] = lines[2].replace(b"Rotate it.", b"Ignore it.")  # same length: the index holds
        path.write_bytes(b"\n".join(lines))
        assert status(runtime, cited) == "stale"
        scrub(runtime)
        assert status(runtime, cited) == "stale"

    def test_a_second_scrub_changes_nothing(self, runtime: Runtime) -> None:
        planted(runtime)
        scrub(runtime)
        again = scrub(runtime)
        assert again["sessions"] == [] and again["notes"] == [] and again["facts"] == []


class TestTitles:
    def test_a_title_given_or_renamed_is_redacted_at_the_door(self, runtime: Runtime) -> None:
        # covers P5: a title is text that enters memory (the header, titles.json)
        session = runtime.sessions.create(f"deploy {TOKEN}")
        runtime.sessions.rename(session, f"again {TOKEN}")
        imported, _ = runtime.sessions.import_records([{"role": "user", "content": "hi"}], TOKEN)
        titles = {i.session_id: i.title for i in runtime.sessions.list()}
        assert titles[session].startswith("again [secret:github-token:")
        assert titles[imported].startswith("[secret:github-token:")
        assert TOKEN.encode() not in every_byte(runtime.store_path)


class TestACrashBetweenTheSteps:
    def test_a_reference_left_on_its_old_digest_stays_valid_and_is_reattached_when_the_project_opens(
        self, runtime: Runtime
    ) -> None:
        session, cited, _ = planted(runtime)
        fact = runtime.facts.get(cited)
        assert fact is not None and fact.source is not None
        old_digest = fact.source.digest

        def change(old: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
            return redact_records(session, old, runtime.redactor.value)[0]

        def before_replace(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> None:
            moved = [
                Moved(session, seqs, digest, records_digest(new[1:3] if "2" in seqs else new[1:2]))
                for seqs, digest in runtime.facts.scrubs.refs(session)
            ]
            runtime.facts.scrubs.begin(session, [1], moved)

        # The journal and the file move, and then the process dies before `finish`.
        assert runtime.sessions.rewrite(session, change, before_replace)
        fact = runtime.facts.get(cited)
        assert fact is not None and fact.source is not None and fact.source.digest == old_digest
        assert status(runtime, cited) == "valid"  # moved by a scrub, not tampered
        assert runtime.facts.scrubs.pending()
        runtime.remove_debris()  # what the server runs when a project opens, and every minute
        assert runtime.facts.scrubs.pending() == []
        fact = runtime.facts.get(cited)
        assert fact is not None and fact.source is not None and fact.source.digest != old_digest
        assert status(runtime, cited) == "valid" and finish_pending(runtime) == 0


class TestCompactEvents:
    def test_a_summarys_lineage_and_prior_are_relinked_when_they_held(self) -> None:
        session = "20260101T000000Z-0000abcd"
        records: list[dict[str, Any]] = [
            {"seq": 0, "kind": "session"},
            {"seq": 1, "kind": "message", "role": "user", "content": f"key {TOKEN}"},
        ]
        lineage = [{"session_id": session, "seqs": [1], "digest": records_digest(records[1:2])}]
        records.append({"seq": 2, "kind": "event", "type": "compact", "lineage": lineage})
        prior = {"seq": 2, "digest": records_digest(records[2:3])}
        bad = [{"session_id": session, "seqs": [1], "digest": DIGEST}]
        records.append(
            {"seq": 3, "kind": "event", "type": "compact", "lineage": bad, "prior": prior}
        )

        def redact(value: Any) -> Any:
            return value | {"content": "key [secret]"} if value.get("content") else value

        new, changed = redact_records(session, records, redact)
        assert changed == [1, 2, 3]
        assert new[2]["lineage"][0]["digest"] == records_digest(new[1:2])
        assert new[3]["prior"]["digest"] == records_digest(new[2:3])
        assert new[3]["lineage"][0]["digest"] == DIGEST  # did not hold: not made to hold
