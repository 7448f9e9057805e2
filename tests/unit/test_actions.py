"""The operations (lecode_ls/actions, issue 43 item 1) on real stores and a real Git checkout:
what each reports it changed, and where two doors once did different things, the one choice
every door now gets (docs/reference/protocol.md, "One operation for every door").

# covers F2 and F6 (a correction through every door), R8 (a listing for its audience), T1, T5
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from lecode_ls.actions import FACTS, NOTHING, Changed, facts, notes, sessions, team
from lecode_ls.config import MemorySettings, Settings
from lecode_ls.memory.sessions import source_snapshot
from lecode_ls.memory.team import format as f
from lecode_ls.runtime import Runtime
from lecode_ls.tools.memory import run_tool
from lecode_ls.tools.permissions import PermissionPolicy
from lecode_ls.tools.slash import Invocation, run_memory_command
from tests.unit.stores import chat, make_runtime, remember
from tests.unit.test_team import git

TODAY = date(2026, 12, 5)


@pytest.fixture
def runtime(tmp_path: Path) -> Runtime:
    settings = Settings(memory=MemorySettings(retire_after_days=0))  # every fact is proposed
    made = make_runtime(tmp_path, settings)
    root = made.project.root
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    (root / "Makefile").write_text("all:\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "init")
    made.attach_folder(root)  # the first workspace folder, as the server's first request makes it
    return made


def a_fact(runtime: Runtime, text: str = "Integration tests need make stack-up first") -> int:
    session = chat(runtime, {"role": "user", "content": text})
    return remember(runtime, session, 1, 1, text)


def shared_file(runtime: Runtime, team_id: str) -> dict[str, object]:
    path = runtime.project.root / f.FOLDER / f"{team_id}.json"
    loaded: dict[str, object] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


def correction(runtime: Runtime, text: str) -> dict[str, object]:
    session = chat(runtime, {"role": "user", "content": text})
    ref = source_snapshot(runtime.sessions, session, 1, 1, exclusions=runtime.facts)
    return ref.to_json()


class TestACorrectionReachesTheSharedFile:
    def test_the_models_memory_correct_rewrites_it_as_the_editors_correct_does(
        self, runtime: Runtime
    ) -> None:
        fact_id = a_fact(runtime)
        shared = team.share(runtime, runtime.project.root, fact_id)
        assert shared.changed == FACTS
        before = shared_file(runtime, shared.value.team_id)
        text = "Integration tests need make stack-up and make seed first"
        args = {
            "fact_id": fact_id,
            "expected_revision": 1,
            "text": text,
            "source_snapshot": correction(runtime, text),
        }
        result = run_tool(
            runtime,
            "memory_correct",
            json.dumps(args),
            policy=PermissionPolicy(default="allow"),
            readonly=False,
            child=False,
        )
        assert (json.loads(result.content), result.changed) == (
            {"fact_id": fact_id, "revision": 2},
            FACTS,
        )
        after = shared_file(runtime, shared.value.team_id)
        assert (before["text"], after["text"]) == (
            "Integration tests need make stack-up first",
            text,
        )

    def test_a_slash_correction_of_an_unshared_fact_writes_no_file(self, runtime: Runtime) -> None:
        fact_id = a_fact(runtime)
        session = chat(runtime, {"role": "user", "content": "Integration tests need make up"})
        run = Invocation(policy=PermissionPolicy(default="allow"))
        line = f"correct {fact_id} 1 {session} 1 1 Integration tests need make up"
        assert run_memory_command(runtime, line, TODAY, run).endswith("revision 2.")
        assert run.changed == FACTS
        assert not (runtime.project.root / f.FOLDER).exists()


class TestAListingIsForItsAudience:
    def test_the_person_sees_shares_and_proposed_retirements_the_model_neither(
        self, runtime: Runtime
    ) -> None:
        fact_id = a_fact(runtime)
        other = a_fact(runtime, "The release branch is cut on Mondays")
        team_id = team.share(runtime, runtime.project.root, fact_id).value.team_id
        person = facts.page(runtime, audience="person")
        model = facts.page(runtime, audience="model")
        by_id = {e["fact_id"]: e for e in person["facts"]}
        assert by_id[fact_id]["shared"]["team_id"] == team_id
        assert "shared" not in by_id[other]
        assert {p["fact_id"] for p in person["retirements"]} == {fact_id, other}
        assert "retirements" not in model
        assert all("shared" not in e for e in model["facts"])

    def test_slash_facts_prints_the_share(self, runtime: Runtime) -> None:
        fact_id = a_fact(runtime)
        team_id = team.share(runtime, runtime.project.root, fact_id).value.team_id
        listed = run_memory_command(runtime, "facts", TODAY)
        assert f"#{fact_id} r1 valid shared {team_id} " in listed


class TestWhatEachOperationChanged:
    def test_a_note_written_or_edited_names_its_file(self, runtime: Runtime) -> None:
        written = notes.write(runtime, "notes/deploy.md", "ssh prod", "append")
        assert (written.value.file, written.value.count) == ("notes/deploy.md", 8)
        assert written.changed == Changed(notes=("notes/deploy.md",))
        edited = notes.edit(runtime, "notes/deploy.md", "prod", "staging")
        assert (edited.value.count, edited.changed.notes) == (1, ("notes/deploy.md",))

    def test_a_pin_that_changes_nothing_is_no_news(self, runtime: Runtime) -> None:
        fact_id = a_fact(runtime)
        assert facts.pin(runtime, fact_id).changed == FACTS
        again = facts.pin(runtime, fact_id)
        assert (again.value, again.changed) == (False, NOTHING)

    def test_a_forget_retried_is_no_news(self, runtime: Runtime) -> None:
        fact_id = a_fact(runtime)
        first = facts.forget(runtime, fact_id)
        assert (first.value.forgotten, first.changed) == (True, FACTS)
        again = facts.forget(runtime, fact_id)
        assert (again.value.forgotten, again.changed) == (False, NOTHING)

    def test_deleting_a_session_is_fact_news_only_when_a_fact_cites_it(
        self, runtime: Runtime
    ) -> None:
        uncited = chat(runtime, {"role": "user", "content": "hello"})
        assert sessions.delete(runtime, uncited).changed == NOTHING
        session = chat(runtime, {"role": "user", "content": "We deploy on Fridays"})
        remember(runtime, session, 1, 1, "Deploys happen on Fridays")
        done = sessions.delete(runtime, session)
        assert (done.value, done.changed) == (1, FACTS)

    def test_a_slash_line_adds_up_what_it_changed(self, runtime: Runtime) -> None:
        notes.write(runtime, "MEMORY.md", "Deploys go through make release.", "append")
        token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
        with (runtime.store_path / "MEMORY.md").open("a", encoding="utf-8") as raw:
            raw.write(f"\ntoken {token}\n")  # written past the store, as an editor could
        run = Invocation()
        assert run_memory_command(runtime, "secrets scrub", TODAY, run).startswith("Scrubbed")
        assert "MEMORY.md" in run.changed.notes
