"""Shared facts in the repository (issue 29), on real stores and a real Git checkout: a shared
file verifies on its own (digest over the bundled records, A5 support, the repository, the
anchors' paths), and every crafted file is `unverified` or skipped with its reason, in bounded
time.

# covers S1-S3 (portable evidence and its digest), F7 (a teammate's fact forgotten here), A5
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lecode_ls.config import Settings
from lecode_ls.errors import FactNotValid, NotACheckout, SecretInFact, SharedFactNotFound
from lecode_ls.memory import team
from lecode_ls.memory.injection import build_memory_section
from lecode_ls.memory.recall import list_team, recall_team
from lecode_ls.memory.selection import TurnQuery, select, turn_query
from lecode_ls.memory.team import format as f
from lecode_ls.runtime import Runtime
from tests.unit.stores import chat, make_runtime, remember

TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=Ada", "-c", "user.email=a@example.invalid", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout


@pytest.fixture
def runtime(tmp_path: Path) -> Iterator[Runtime]:
    made = make_runtime(tmp_path)
    root = made.project.root
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.name", "Ada")
    (root / "Makefile").write_text("all:\n\tmake stack-up\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "init")
    yield made
    made.close()


def shared(runtime: Runtime, text: str = "Integration tests need make stack-up first") -> str:
    session = chat(runtime, {"role": "user", "content": text})
    fact_id = remember(runtime, session, 1, 1, text)
    doc = team.build(
        runtime.facts,
        runtime.sessions,
        runtime.redactor,
        runtime.project.root,
        fact_id,
        check=runtime.check_source,
        shared_by=None,
    )
    team.write(runtime.project.root, doc)
    return doc.id


def shelf_of(runtime: Runtime) -> team.Shelf:
    return runtime.team.shelf(runtime.project.root)


def file_of(runtime: Runtime, team_id: str) -> Path:
    return runtime.project.root / f.FOLDER / f"{team_id}.json"


def rewrite(path: Path, change: Any) -> None:
    value = json.loads(path.read_text())
    change(value)
    path.write_text(json.dumps(value))


class TestSharing:
    def test_a_shared_fact_is_valid_signed_and_the_same_fact_as_its_sharers(
        self, runtime: Runtime
    ) -> None:
        team_id = shared(runtime)
        value = json.loads(file_of(runtime, team_id).read_text())
        assert value["format"] == "lecode-shared-fact" and value["version"] == 1
        assert value["sharedBy"] == "Ada"  # Git's user.name
        assert value["repository"] == git(runtime.project.root, "rev-parse", "HEAD").strip()
        [fact] = shelf_of(runtime).facts()
        assert (fact.id, fact.status, fact.reason) == (team_id, "valid", None)
        assert fact.local_fact_id == 1  # one fact, not two
        answer = recall_team(shelf_of(runtime), team_id)
        assert answer["status"] == "valid"
        assert "make stack-up" in json.loads(answer["source_text"])[0]["content"]

    def test_the_same_fact_shared_again_keeps_its_id(self, runtime: Runtime) -> None:
        session = chat(runtime, {"role": "user", "content": "We deploy on Tuesdays only"})
        fact_id = remember(runtime, session, 1, 1, "We deploy on Tuesdays only")
        ids = {
            team.build(
                runtime.facts, runtime.sessions, runtime.redactor, runtime.project.root,
                fact_id, check=runtime.check_source, shared_by="Ada",
            ).id
            for _ in range(2)
        }  # fmt: skip
        assert len(ids) == 1

    def test_a_secret_in_the_evidence_is_refused_naming_the_record(self, runtime: Runtime) -> None:
        session = chat(runtime, {"role": "user", "content": "deploys use a token"})
        fact_id = remember(runtime, session, 1, 1, "Deploys use a token")
        records = runtime.sessions.read(session, 1, 1)
        with pytest.MonkeyPatch.context() as patch:  # a record an older version kept raw
            patch.setattr(runtime.sessions, "read", lambda *a: [{**records[0], "x": TOKEN}])
            with pytest.raises(SecretInFact) as raised:
                team.build(
                    runtime.facts, runtime.sessions, runtime.redactor, runtime.project.root,
                    fact_id, check=runtime.check_source, shared_by=None,
                )  # fmt: skip
        assert raised.value.field == "evidence.records[1]"
        assert not (runtime.project.root / f.FOLDER).exists()

    def test_a_fact_without_valid_evidence_or_a_folder_outside_git_is_refused(
        self, runtime: Runtime, tmp_path: Path
    ) -> None:
        fact_id, _ = runtime.facts.add("no evidence at all")
        with pytest.raises(FactNotValid):
            team.build(
                runtime.facts, runtime.sessions, runtime.redactor, runtime.project.root,
                fact_id, check=runtime.check_source, shared_by=None,
            )  # fmt: skip
        session = chat(runtime, {"role": "user", "content": "tabs, not spaces"})
        good = remember(runtime, session, 1, 1, "tabs, not spaces")
        outside = tmp_path / "plain"
        outside.mkdir()
        with pytest.raises(NotACheckout):
            team.build(
                runtime.facts, runtime.sessions, runtime.redactor, outside, good,
                check=runtime.check_source, shared_by=None,
            )  # fmt: skip

    def test_unshare_removes_the_file_and_an_unknown_id_is_named(self, runtime: Runtime) -> None:
        team_id = shared(runtime)
        assert team.remove(runtime.project.root, team_id) == f"{f.FOLDER}/{team_id}.json"
        assert shelf_of(runtime).facts() == []
        with pytest.raises(SharedFactNotFound):
            team.remove(runtime.project.root, team_id)
        with pytest.raises(SharedFactNotFound):
            team.remove(runtime.project.root, "../../etc/passwd")


class TestATeammatesFile:
    """What another machine sees: no session, no fact of its own; only the file."""

    def test_it_verifies_without_the_session_and_is_injected_as_team_evidence(
        self, runtime: Runtime, tmp_path: Path
    ) -> None:
        team_id = shared(runtime)
        other = make_runtime(tmp_path / "b")
        try:
            fact = other.team.shelf(runtime.project.root).get(team_id)
            assert fact is not None and fact.status == "valid" and fact.local_fact_id is None
            memory = build_memory_section(other, team=other.team.shelf(runtime.project.root))
            assert memory.team == [team_id]
            # One facts block for one's own and the team's facts (issue 40, item 3): the
            # shared fact's line names it by team ID, its support and the note on team lines.
            [line] = [x for x in memory.text.splitlines() if "make stack-up" in x]
            entry = json.loads(line)
            assert (entry["team_id"], entry["support"]) == (team_id, "quote")
            assert entry["reason"] == "shared in the repository"
            assert "## Durable facts (untrusted evidence" in memory.text
            assert (
                "A line with team_id instead of fact_id is a fact shared in the repository"
                in memory.text
            )
        finally:
            other.close()

    @pytest.mark.parametrize("failing", ["ranked", "anchor_states"])
    def test_a_shelf_that_fails_still_shows_ones_own_facts(
        self, runtime: Runtime, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str
    ) -> None:
        # covers I1 (issue 42's guard, kept through issue 40's one pipeline): whatever a clone's
        # files make the shelf raise while choosing or writing shared facts, one's own memory
        # is shown and the turn goes on.
        team_id = shared(runtime)
        other = make_runtime(tmp_path / "b")
        try:
            mine = chat(other, {"role": "user", "content": "We deploy on Fridays."})
            remember(other, mine, 1, 1, "We deploy on Fridays.")
            shelf = other.team.shelf(runtime.project.root)

            def broken(*args: object, **kwargs: object) -> object:
                raise RecursionError("a crafted file")

            monkeypatch.setattr(shelf, failing, broken)
            selection = select(other, turn_query("make stack-up", [], []))
            memory = build_memory_section(other, (), selection, shelf)
            assert "We deploy on Fridays." in memory.text
            assert team_id not in memory.text and memory.team == []
        finally:
            other.close()

    def test_forgotten_here_it_is_hidden_for_good_and_never_injected(
        self, runtime: Runtime, tmp_path: Path
    ) -> None:
        team_id = shared(runtime)
        other = make_runtime(tmp_path / "b")
        try:
            shelf = other.team.shelf(runtime.project.root)
            doc = shelf.get(team_id)
            assert doc is not None and doc.doc is not None
            assert other.facts.exclude(doc.doc.evidence) is True
            assert other.facts.exclude(doc.doc.evidence) is False  # a retry changes nothing
            hidden = other.team.shelf(runtime.project.root).get(team_id)
            assert hidden is not None and hidden.status == "hidden"
            memory = build_memory_section(other, team=other.team.shelf(runtime.project.root))
            assert memory.team == [] and "make stack-up" not in memory.text
        finally:
            other.close()

    @pytest.mark.parametrize(
        ("change", "reason"),
        [
            (lambda v: v["evidence"]["records"][0].update(content="changed"), "hash to its digest"),
            (lambda v: v.update(text="something else entirely"), None),
            (lambda v: v.update(repository="0" * 40), "repository"),
            (lambda v: v.update(id="0" * 20), "file name"),
            (lambda v: v.update(version=2), "version-1"),
            (lambda v: v["evidence"].update(seqs=[0, 1]), "every record"),
            (lambda v: v.update(anchors=[_anchor("../outside.txt")]), "leads out"),
            (lambda v: v.update(anchors=[_anchor("/etc/passwd")]), "leads out"),
            (lambda v: v.update(anchors=[_anchor("Makefile", 500)]), "200 lines"),
            (lambda v: v.update(anchors=[{**_anchor("Makefile"), "sha256": "x"}]), "digest"),
            (lambda v: v.update(text=f"the deploy token is {TOKEN}"), "holds a secret"),
            (lambda v: v["evidence"]["records"][0].update(x=TOKEN), None),  # digest: changed
            (lambda v: v.update(text="x" * 5000), "4096"),
        ],
    )
    def test_a_crafted_file_is_unverified_with_its_reason(
        self, runtime: Runtime, change: Any, reason: str | None
    ) -> None:
        team_id = shared(runtime)
        rewrite(file_of(runtime, team_id), change)
        fact = shelf_of(runtime).get(team_id)
        assert fact is not None
        if reason is None and fact.status == "valid":
            # Another text over the same evidence: valid (the bundle is intact; the claim is
            # the file's, reviewed in the repository), and not the sharer's own fact.
            assert fact.local_fact_id is None
            return
        assert fact.status == "unverified" and fact.reason is not None
        assert reason is None or reason in fact.reason
        assert build_memory_section(runtime, team=shelf_of(runtime)).team == []

    def test_an_anchor_through_a_link_out_of_the_checkout_is_unverified(
        self, runtime: Runtime, tmp_path: Path
    ) -> None:
        team_id = shared(runtime)
        (tmp_path / "secret.txt").write_text("outside\n")
        (runtime.project.root / "link").symlink_to(tmp_path)
        rewrite(file_of(runtime, team_id), lambda v: v.update(anchors=[_anchor("link/secret.txt")]))
        fact = shelf_of(runtime).get(team_id)
        assert fact is not None and fact.status == "unverified"

    @pytest.mark.parametrize(
        ("data", "reason"),
        [
            (b"not json at all", "not JSON"),
            (b"<<<<<<< HEAD\n{}\n=======\n{}\n>>>>>>> theirs\n", "merge-conflict"),
            (b"[" * 100_000 + b"]" * 100_000, None),  # too deep, or over the size bound
            (b"\xff\xfe", "UTF-8"),
            (b'{"a": NaN}', "version-1"),
        ],
    )
    def test_a_file_that_is_not_a_shared_fact_is_unverified(
        self, runtime: Runtime, data: bytes, reason: str | None
    ) -> None:
        folder = runtime.project.root / f.FOLDER
        folder.mkdir(parents=True)
        (folder / f"{'a' * 20}.json").write_bytes(data)
        [fact] = shelf_of(runtime).facts()
        assert fact.status == "unverified" and fact.reason is not None
        assert reason is None or reason in fact.reason

    def test_a_ten_megabyte_file_is_not_read(self, runtime: Runtime) -> None:
        folder = runtime.project.root / f.FOLDER
        folder.mkdir(parents=True)
        (folder / f"{'b' * 20}.json").write_bytes(b" " * (10 * 1024 * 1024))
        [fact] = shelf_of(runtime).facts()
        assert fact.reason == f"over {f.MAX_FILE_BYTES} bytes"

    def test_a_linked_file_or_folder_is_not_followed(
        self, runtime: Runtime, tmp_path: Path
    ) -> None:
        team_id = shared(runtime)
        target = tmp_path / "elsewhere.json"
        target.write_bytes(file_of(runtime, team_id).read_bytes())
        (runtime.project.root / f.FOLDER / f"{'c' * 20}.json").symlink_to(target)
        facts = {fact.id: fact for fact in shelf_of(runtime).facts()}
        assert facts["c" * 20].reason == "the file is a symbolic link"
        assert facts[team_id].status == "valid"

    def test_a_hundred_thousand_files_cost_bounded_time(self, runtime: Runtime) -> None:
        folder = runtime.project.root / f.FOLDER
        folder.mkdir(parents=True)
        for number in range(100_000):
            (folder / f"{number:020x}.json").write_bytes(b"{}")
        started = time.monotonic()
        shelf = shelf_of(runtime)
        # At most MAX_ENTRIES names are looked at, MAX_FILES files listed; the rest is counted.
        assert len(shelf.facts()) + shelf.pending == f.MAX_FILES
        assert shelf.skipped == {
            f"past {f.MAX_FILES} files": f.MAX_ENTRIES - f.MAX_FILES,
            f"past {f.MAX_ENTRIES} names in the folder": 1,
        }
        assert time.monotonic() - started < 60  # a hang guard, not a speed target (bench/)


SERVICES = [
    "billing", "mailer", "search", "ledger", "invoices", "gateway", "scheduler", "catalog",
    "payroll", "notifier", "importer", "exporter", "renderer", "uploader", "crawler", "indexer",
    "tracker", "auditor", "archiver", "resizer",
]  # fmt: skip


class TestRankedForTheTurn:
    """With more shared facts than a prompt holds, the ones the turn's words match come first,
    ranked as one's own facts are (BM25, the same words and bounds)."""

    def test_the_facts_the_turn_asks_about_are_shown_whatever_their_id(
        self, runtime: Runtime, tmp_path: Path
    ) -> None:
        # covers I3 (ranked candidates), for the team's facts
        ids = {shared(runtime, f"The {name} service deploys from the {name}-prod pipeline"): name
               for name in SERVICES}  # fmt: skip
        last = max(ids)  # by ID, the last one a prompt would show
        other = make_runtime(tmp_path / "b", Settings(memory={"facts_max_bytes": 2048}))
        try:
            shelf = other.team.shelf(runtime.project.root)

            def shown(message: str) -> list[str]:
                selection = select(other, TurnQuery(message))
                return build_memory_section(other, (), selection, shelf).team

            by_id = shown("")
            assert 0 < len(by_id) < len(ids) and by_id == sorted(ids)[: len(by_id)]
            assert shown(f"how does {ids[last]} deploy?")[0] == last

            # A changed file is ranked by its new text; a removed one is gone from the ranking.
            rewrite(file_of(runtime, last), lambda v: v.update(text="Backups run at midnight"))
            other.team.shelf(runtime.project.root)
            # (short now, it may still fit at the end, by ID: it is no longer ranked first)
            assert shown(f"how does {ids[last]} deploy?")[0] != last
            assert shown("when do backups run?")[0] == last
            team.remove(runtime.project.root, last)
            other.team.shelf(runtime.project.root)
            assert last not in shown("when do backups run?")
        finally:
            other.close()


def _anchor(path: str, lines: int = 1) -> dict[str, Any]:
    digest = "sha256:" + "0" * 64
    return {
        "path": path, "startLine": 1, "endLine": lines, "sha256": digest, "firstSha256": digest,
        "commit": None, "capturedAt": "2026-12-02T00:00:00Z",
    }  # fmt: skip


def test_the_listing_pages_within_its_byte_bound(runtime: Runtime) -> None:
    for number in range(25):
        shared(runtime, f"Fact number {number}: " + "word " * 90)
    first = list_team(shelf_of(runtime), 0, lambda rel: None)
    assert first["total"] == 25 and first["next_offset"] is not None
    assert len(json.dumps(first).encode()) <= 16_384
    second = list_team(shelf_of(runtime), first["next_offset"], lambda rel: None)
    seen = {e["team_id"] for e in first["facts"]} | {e["team_id"] for e in second["facts"]}
    assert len(seen) == len(first["facts"]) + len(second["facts"])


def test_a_written_file_is_valid_against_the_documented_schema(runtime: Runtime) -> None:
    # jsonschema comes with the MCP SDK the tests use; the format is documented by this schema
    import jsonschema

    team_id = shared(runtime)
    value = json.loads(file_of(runtime, team_id).read_text())
    jsonschema.validate(value, team.SCHEMA)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**value, "version": 2}, team.SCHEMA)


def test_the_slash_commands_share_list_and_unshare(runtime: Runtime) -> None:
    # covers T5: /memory share, team and unshare, as every editor's lecode.memory runs them
    from datetime import date

    from lecode_ls.tools.slash import run_memory_command

    runtime.drift.add_folder(runtime.project.root)
    session = chat(runtime, {"role": "user", "content": "Use ruff, not flake8"})
    fact_id = remember(runtime, session, 1, 1, "Use ruff, not flake8")
    today = date(2026, 12, 2)
    shared_line = run_memory_command(runtime, f"share {fact_id}", today)
    team_id = shared_line.split("team ID ")[1].split(")")[0]
    assert file_of(runtime, team_id).is_file()
    listed = run_memory_command(runtime, "team", today)
    assert f"{team_id} valid by Ada r1: Use ruff, not flake8 (your fact #{fact_id})" in listed
    assert "Removed" in run_memory_command(runtime, f"unshare {team_id}", today)
    assert run_memory_command(runtime, "team", today) == "No shared facts."


def test_one_entry_too_large_for_a_page_is_listed_without_its_anchors(runtime: Runtime) -> None:
    team_id = shared(runtime)
    long = "d/" * 500 + "x.py"
    rewrite(file_of(runtime, team_id), lambda v: v.update(anchors=[_anchor(long)] * 16))
    page = list_team(shelf_of(runtime), 0, lambda rel: None)
    [entry] = page["facts"]
    assert entry["status"] == "valid" and "anchors" not in entry
    assert page["next_offset"] is None


def test_an_unreadable_own_store_shows_nothing_unchecked(runtime: Runtime) -> None:
    from lecode_ls.errors import StoreError

    team_id = shared(runtime)
    shelf = runtime.team.shelf(runtime.project.root)
    with pytest.MonkeyPatch.context() as patch:

        def fail(*args: object) -> None:
            raise StoreError("facts.sqlite3: busy")

        patch.setattr(runtime.facts, "excluded_in", fail)
        os.utime(file_of(runtime, team_id), ns=(1, 1))
        shelf.refresh()
        fact = shelf.get(team_id)
        assert fact is not None and fact.status == "unverified"
    shelf.refresh()  # the store answers again: it is checked again
    fact = shelf.get(team_id)
    assert fact is not None and fact.status == "valid"


def test_past_four_repositories_named_the_rest_are_unverified_without_git(
    runtime: Runtime,
) -> None:
    team_id = shared(runtime)
    good = json.loads(file_of(runtime, team_id).read_text())
    folder = runtime.project.root / f.FOLDER
    for number in range(6):
        fake = f"{number + 1:020x}"
        (folder / f"{fake}.json").write_text(
            json.dumps({**good, "id": fake, "repository": f"{number + 1:040x}"})
        )
    reasons = [fact.reason for fact in shelf_of(runtime).facts() if fact.id != team_id]
    assert sum("past the 4" in (r or "") for r in reasons) >= 2
    assert all(r is not None for r in reasons)
