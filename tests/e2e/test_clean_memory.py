"""Memory that stays clean (issue 26), black-box over LSP: a text remembered twice is one fact;
an unused fact is proposed for retirement with its reason, retired (listed, recallable, not
injected) and restored; uses are recorded and listed; every learning proposal says why.

# covers F1-F8 (a duplicate makes no second fact; nothing retired or deleted silently), I1
# (retired facts are not injected), A1-A8 (proposals in the review say why)
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.e2e.chat import Deltas, new_session, tool_chunks
from tests.e2e.conftest import Start, call, uri
from tests.e2e.facts import candidate, error_of, imported, remember, seq_of
from tests.fakes.openai_server import FakeOpenAI, Stream, text_chunks


def injected_ids(body: dict[str, Any]) -> list[int]:
    """The facts a request carries: in the system message, and in front of a user message."""
    texts = [m["content"] for m in body["messages"] if m["role"] in ("system", "user")]
    return [
        json.loads(line)["fact_id"]
        for text in texts
        for line in text.splitlines()
        if line.startswith('{"fact_id"')
    ]


class TestDuplicates:
    async def test_remembering_one_text_twice_leaves_one_fact(
        self, start: Start, repo: Path
    ) -> None:
        # covers F8
        client = await start(repo)
        session = await imported(client)
        first = await remember(client, session, 3, "We use tabs for indentation in this repo.")
        # The same key from the same evidence is a retry: the fact, unchanged (F8).
        retried = await remember(client, session, 3, "we use TABS for indentation in this repo")
        assert retried == first
        for seq, text in (
            (1, "we use TABS for indentation in this repo"),  # other evidence, other case
            (4, "  We use tabs for  indentation in this repo!  "),  # other evidence
            (4, "We use \uff54abs for indentation in this repo."),  # a fullwidth t (narrowed)
        ):
            source = await call(
                client,
                "lecode/session/snapshot",
                {"sessionId": session, "startSeq": seq, "endSeq": seq},
            )
            exc = await error_of(
                call(client, "lecode/facts/remember", {"text": text, "source": source})
            )
            assert exc.data == {"code": "duplicate_fact", "field": "text", "factId": 1}
            assert "fact 1 already says this" in exc.message
        listed = await call(client, "lecode/facts/list", {})
        assert [f["factId"] for f in listed["facts"]] == [first["factId"]]
        # a separator more says something else (issue 41): `tabs-for` is a new fact
        other = await remember(client, session, 4, "We use tabs-for indentation in this repo.")
        assert other["factId"] != first["factId"]

    async def test_remembering_a_selection_twice_leaves_one_fact(
        self, start: Start, repo: Path
    ) -> None:
        (repo / "app.py").write_text("x = 1\ny = 2\n")
        client = await start(repo)
        params = {
            "uri": uri(repo / "app.py"),
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}},
            "text": "x starts at one.",
        }
        made = await call(client, "lecode/facts/rememberSelection", params)
        exc = await error_of(
            call(client, "lecode/facts/rememberSelection", {**params, "text": "X starts at one"})
        )
        assert (exc.data["code"], exc.data["factId"]) == ("duplicate_fact", made["factId"])
        assert len((await call(client, "lecode/facts/list", {}))["facts"]) == 1


async def chat_client(start: Start, repo: Path, server: FakeOpenAI, days: int) -> LanguageClient:
    options = {
        "provider": {"base_url": server.base_url, "model": "gpt-4o", "api_key_env": ""},
        "memory": {"retire_after_days": days},
    }
    return await start(repo, options=options)


class TestRetirement:
    async def test_an_unused_fact_is_proposed_retired_kept_out_and_restored(
        self, start: Start, repo: Path
    ) -> None:
        async with FakeOpenAI(respond=lambda body: Stream(text_chunks("ok"))) as server:
            client = await chat_client(start, repo, server, 0)
            evidence = await imported(client)
            tabs = (await remember(client, evidence, 3, "We use tabs for indentation."))["factId"]
            listed = await call(client, "lecode/facts/list", {})
            [proposal] = listed["retirements"]
            assert proposal["factId"] == tabs and proposal["why"].startswith("never used since ")
            line = await call(client, "lecode/command", {"line": "/memory facts"})
            assert f"proposed retirement: #{tabs} (never used since" in line["output"]

            changed = client.protocol.wait_for_notification_async("lecode/facts/didChange")
            assert await call(client, "lecode/facts/retire", {"factId": tabs}) == {
                "factId": tabs,
                "retired": True,
                "changed": True,
            }
            await asyncio.wait_for(changed, 10)
            again = await call(client, "lecode/facts/retire", {"factId": tabs})
            assert again["changed"] is False
            listed = await call(client, "lecode/facts/list", {})
            assert listed["facts"][0]["status"] == "retired" and listed["retirements"] == []
            assert listed["facts"][0]["text"] == "We use tabs for indentation."
            recalled = await call(client, "lecode/facts/recall", {"factId": tabs})
            assert recalled["status"] == "retired" and "sourceText" in recalled

            session = await new_session(client)
            await call(client, "lecode/chat/send", {"sessionId": session, "text": "tabs?"})
            assert tabs not in injected_ids(server.bodies[-1])

            restored = await call(client, "lecode/facts/restore", {"factId": tabs})
            assert restored == {"factId": tabs, "retired": False, "changed": True}
            await call(client, "lecode/chat/send", {"sessionId": session, "text": "tabs?"})
            assert tabs in injected_ids(server.bodies[-1])
            listed = await call(client, "lecode/facts/list", {})
            assert listed["facts"][0]["status"] == "valid"

    async def test_a_fact_whose_anchors_all_drifted_is_proposed_with_its_reason(
        self, start: Start, repo: Path
    ) -> None:
        # covers F1-F7 (nothing retired silently), issue 26 item 4 (retire_drifted_after_days)
        (repo / "app.py").write_text("x = 1\ny = 2\n")
        memory = {"retire_after_days": 36500, "retire_drifted_after_days": 0}
        client = await start(repo, options={"memory": memory})
        params = {
            "uri": uri(repo / "app.py"),
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}},
            "text": "x starts at one.",
        }
        made = (await call(client, "lecode/facts/rememberSelection", params))["factId"]
        assert (await call(client, "lecode/facts/list", {}))["retirements"] == []
        (repo / "app.py").write_text("z = 3\n")  # the anchored line is gone
        listed = await call(client, "lecode/facts/list", {})
        assert listed["facts"][0]["anchors"][0]["status"] == "changed"
        [proposal] = listed["retirements"]
        assert proposal["factId"] == made
        assert proposal["why"].startswith("code anchors changed or deleted since ")
        doctor = await call(client, "lecode/memory/doctor", {})
        assert doctor["proposedRetirements"]["ids"] == [made]
        (repo / "app.py").write_text("x = 1\ny = 2\n")  # back in place: the drift clock ends
        listed = await call(client, "lecode/facts/list", {})
        assert listed["facts"][0]["anchors"][0]["status"] == "current"
        assert listed["retirements"] == []

    async def test_the_slash_line_and_the_commands_retire_and_restore(
        self, start: Start, repo: Path
    ) -> None:
        client = await start(repo)
        evidence = await imported(client)
        fact = (await remember(client, evidence, 3, "We use tabs for indentation."))["factId"]
        out = await call(client, "lecode/command", {"line": f"/memory retire {fact}"})
        assert out["output"] == f"Fact #{fact} is retired."
        listed = await call(client, "lecode/facts/list", {})
        assert listed["facts"][0]["status"] == "retired"
        assert "retirements" in listed and listed["retirements"] == []  # 28 days: none yet
        out = await call(client, "lecode/command", {"line": f"/memory restore {fact}"})
        assert out["output"] == f"Fact #{fact} is restored."
        done = await client.workspace_execute_command_async(_command("lecode.facts.retire", fact))
        assert done == {"factId": fact, "retired": True, "changed": True}
        done = await client.workspace_execute_command_async(_command("lecode.facts.restore", fact))
        assert done == {"factId": fact, "retired": False, "changed": True}

    @pytest.mark.parametrize("method", ["lecode/facts/retire", "lecode/facts/restore"])
    async def test_bad_input_names_the_field(self, start: Start, repo: Path, method: str) -> None:
        client = await start(repo)
        for params in ({}, {"factId": "3"}, {"factId": 0}, {"factId": 1.5}):
            exc = await error_of(call(client, method, params))
            assert (exc.code, exc.data["field"]) == (-32602, "factId")
        exc = await error_of(call(client, method, {"factId": 99}))
        assert (exc.data["code"], exc.data["field"]) == ("fact_not_found", "factId")
        evidence = await imported(client)
        forgotten = (await remember(client, evidence, 3, "We use tabs."))["factId"]
        await call(client, "lecode/facts/forget", {"factId": forgotten})
        exc = await error_of(call(client, method, {"factId": forgotten}))
        assert (exc.data["code"], exc.data["field"]) == ("fact_not_found", "factId")
        other = await imported(client)
        missing = (await remember(client, other, 5, "We use 4 spaces."))["factId"]
        await call(client, "lecode/session/delete", {"sessionId": other})
        exc = await error_of(call(client, method, {"factId": missing}))
        assert (exc.data["code"], exc.data["field"]) == ("fact_unavailable", "factId")
        assert f"fact {missing} is missing" in exc.message and str(repo) not in exc.message


def _command(name: str, fact_id: int) -> types.ExecuteCommandParams:
    return types.ExecuteCommandParams(command=name, arguments=[{"factId": fact_id}])


class TestUses:
    async def test_recall_and_a_query_are_uses_shown_in_listings(
        self, start: Start, repo: Path
    ) -> None:
        client = await start(repo)
        evidence = await imported(client)
        tabs = (await remember(client, evidence, 3, "We use tabs for indentation."))["factId"]
        spaces = (await remember(client, evidence, 5, "Use 4 spaces in Python files."))["factId"]
        listed = {f["factId"]: f for f in (await call(client, "lecode/facts/list", {}))["facts"]}
        assert "lastUsed" not in listed[tabs] and "uses" not in listed[tabs]
        await call(client, "lecode/facts/recall", {"factId": tabs})
        await call(client, "lecode/facts/list", {"query": "indentation tabs"})
        listed = {f["factId"]: f for f in (await call(client, "lecode/facts/list", {}))["facts"]}
        assert listed[tabs]["uses"] == 2 and listed[tabs]["lastUsed"].endswith("Z")
        assert "uses" not in listed[spaces]
        line = await call(client, "lecode/command", {"line": "/memory facts"})
        assert f"#{tabs} r1 valid used 2x, last " in line["output"]


SUMMARY = "So far: tabs for indentation in this repository; small commits with honest messages."
"""A working summary that keeps the sessions' terms (summary_check.py rejects one that keeps none)."""


def learner(found: Any) -> Any:
    """A fake provider whose extraction returns `found(payload)` as the candidates."""

    def respond(body: dict[str, Any]) -> Stream:
        messages = body["messages"]
        if messages[0]["content"].startswith("You maintain the working summary"):
            return Stream(text_chunks(SUMMARY))
        if messages[0]["content"].startswith("You extract durable project facts"):
            payload = messages[1]["content"]
            return Stream(text_chunks(json.dumps({"candidates": found(payload)})))
        return Stream(text_chunks("ok"))

    return respond


LEARNING = {"auto_learn": True, "learning": "model"}  # the model's extraction is tested
WRITE = {"permissions": {"memory_write": "allow"}}


class TestNearDuplicates:
    async def test_a_learned_near_duplicate_is_a_proposed_correction_not_a_second_fact(
        self, start: Start, repo: Path
    ) -> None:
        # covers A1-A8, F2 (a proposal resolved through correct)
        said = "We use tabs for indentation in this repository."
        payloads: list[str] = []

        def found(payload: str) -> list[dict[str, Any]]:
            payloads.append(payload)
            return [candidate(said, seq_of(payload, said))]

        async with FakeOpenAI(respond=learner(found)) as server:
            options = {
                "provider": {"base_url": server.base_url, "model": "gpt-4o", "api_key_env": ""},
                "memory": LEARNING,
                "agent": WRITE,
            }
            client = await start(repo, options=options)
            evidence = await imported(client)
            old = await remember(client, evidence, 3, "We use tabs for indentation in this repo.")
            session = await new_session(client)
            for text in (said, "q1", "q2"):
                await call(client, "lecode/chat/send", {"sessionId": session, "text": text})
            await call(client, "lecode/session/compact", {"sessionId": session})
            assert '"id": 1' in payloads[-1]  # the similar fact was shown to the extractor
            listed = await call(client, "lecode/facts/list", {"sessionId": session})
            assert [f["factId"] for f in listed["facts"]] == [old["factId"]]
            [proposal] = listed["learning"]["proposals"]
            assert proposal["why"] == f"near-duplicate of #{old['factId']}"
            assert proposal["conflicts"] == [{"factId": old["factId"], "revision": 1}]
            assert proposal["text"] == said and proposal["source"]["sessionId"] == session

    async def test_a_rules_near_duplicate_is_a_proposed_correction_too(
        self, start: Start, repo: Path
    ) -> None:
        # covers A1-A8: the rules' candidates (learning = rules) are compared like the model's
        said = "We use tabs for indentation in this repository."

        def found(payload: str) -> list[dict[str, Any]]:
            raise AssertionError("learning = rules makes no extraction call")

        async with FakeOpenAI(respond=learner(found)) as server:
            options = {
                "provider": {"base_url": server.base_url, "model": "gpt-4o", "api_key_env": ""},
                "memory": {"auto_learn": True, "learning": "rules"},
                "agent": WRITE,
            }
            client = await start(repo, options=options)
            evidence = await imported(client)
            old = await remember(client, evidence, 3, "We use tabs for indentation in this repo.")
            session = await new_session(client)
            for text in (said, "q1", "q2"):
                await call(client, "lecode/chat/send", {"sessionId": session, "text": text})
            await call(client, "lecode/session/compact", {"sessionId": session})
            listed = await call(client, "lecode/facts/list", {"sessionId": session})
            assert [f["factId"] for f in listed["facts"]] == [old["factId"]]
            [proposal] = listed["learning"]["proposals"]
            assert proposal["why"] == f"near-duplicate of #{old['factId']}"
            assert proposal["conflicts"] == [{"factId": old["factId"], "revision": 1}]

    async def test_a_retired_fact_is_not_shown_to_learning_as_known(
        self, start: Start, repo: Path
    ) -> None:
        payloads: list[str] = []

        def found(payload: str) -> list[dict[str, Any]]:
            payloads.append(payload)
            return []

        async with FakeOpenAI(respond=learner(found)) as server:
            options = {
                "provider": {"base_url": server.base_url, "model": "gpt-4o", "api_key_env": ""},
                "memory": LEARNING,
                "agent": WRITE,
            }
            client = await start(repo, options=options)
            evidence = await imported(client)
            kept = (await remember(client, evidence, 3, "We use tabs for indentation."))["factId"]
            retired = (await remember(client, evidence, 5, "We use 4 spaces."))["factId"]
            await call(client, "lecode/facts/retire", {"factId": retired})
            session = await new_session(client)
            for text in ("tabs or spaces?", "q1", "q2"):
                await call(client, "lecode/chat/send", {"sessionId": session, "text": text})
            await call(client, "lecode/session/compact", {"sessionId": session})
            assert f'"id": {kept}' in payloads[-1]
            assert f'"id": {retired}' not in payloads[-1]


class TestProposalsSayWhy:
    async def test_each_learning_proposal_carries_its_reason(
        self, start: Start, repo: Path
    ) -> None:
        # covers A1-A8 (the review queue; issue 26 item 6)
        wish = "Prefer small commits with honest messages."

        def respond(body: dict[str, Any]) -> Stream:
            messages = body["messages"]
            system, last = messages[0]["content"], messages[-1]
            if system.startswith("You maintain the working summary"):
                return Stream(text_chunks(SUMMARY))
            if system.startswith("You extract durable project facts"):
                payload = messages[1]["content"]
                found = [candidate(wish, seq_of(payload, wish), proposal=True)]
                return Stream(text_chunks(json.dumps({"candidates": found})))
            if last["role"] == "user" and last["content"] == "list":
                return Stream(tool_chunks("memory_list", {}))
            return Stream(text_chunks("ok"))

        async with FakeOpenAI(respond=respond) as server:
            options = {
                "provider": {"base_url": server.base_url, "model": "gpt-4o", "api_key_env": ""},
                "memory": LEARNING,
                "agent": WRITE,
            }
            client = await start(repo, options=options)
            session = await new_session(client)
            for text in (wish, "q1", "q2"):
                await call(client, "lecode/chat/send", {"sessionId": session, "text": text})
            await call(client, "lecode/session/compact", {"sessionId": session})
            listed = await call(client, "lecode/facts/list", {"sessionId": session})
            [proposal] = listed["learning"]["proposals"]
            assert proposal["why"] == "the model was not sure"
            line = await call(
                client, "lecode/command", {"line": "/memory facts", "sessionId": session}
            )
            assert "    why: the model was not sure" in line["output"]


class TestDoctor:
    async def test_the_doctor_reports_every_number_with_its_ids(
        self, start: Start, repo: Path
    ) -> None:
        (repo / "app.py").write_text("x = 1\ny = 2\n")
        async with FakeOpenAI(respond=lambda body: Stream(text_chunks("ok"))) as server:
            options = {
                "provider": {"base_url": server.base_url, "model": "gpt-4o", "api_key_env": ""},
                "memory": {"retire_after_days": 0, "max_bytes": 2000},
            }
            client = await start(repo, options=options)
            evidence = await imported(client)
            tabs = (await remember(client, evidence, 3, "We use tabs."))["factId"]
            spaces = (await remember(client, evidence, 5, "We use 4 spaces."))["factId"]
            other = await imported(client)
            gone = (await remember(client, other, 1, "Please fix the build."))["factId"]
            await call(client, "lecode/session/delete", {"sessionId": other})
            selection = {
                "uri": uri(repo / "app.py"),
                "range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}},
                "text": "x starts at one.",
            }
            anchored = (await call(client, "lecode/facts/rememberSelection", selection))["factId"]
            (repo / "app.py").write_text("z = 3\n")
            await call(client, "lecode/facts/retire", {"factId": spaces})
            await call(client, "lecode/facts/recall", {"factId": tabs})
            await call(
                client,
                "lecode/memory/write",
                {"file": "MEMORY.md", "content": "Long notes. " * 300},
            )

            report = await call(client, "lecode/memory/doctor", {})
            assert report["facts"] == 4
            status = report["byStatus"]
            assert status["valid"] == {"count": 2, "ids": [tabs, anchored]}
            assert status["retired"] == {"count": 1, "ids": [spaces]}
            assert status["missing"] == {"count": 1, "ids": [gone]}
            assert status["hidden"]["count"] == status["stale"]["count"] == 0
            assert report["drifted"]["ids"] == [anchored]
            assert report["neverUsed"]["ids"] == [spaces, gone, anchored]
            # 0 days: every fact not retired (or pinned) is proposed, a just used one too
            assert report["proposedRetirements"]["ids"] == [tabs, gone, anchored]
            assert report["duplicates"] == {"count": 0, "groups": []}
            [notes] = report["notes"]
            assert notes["file"] == "MEMORY.md" and notes["bytes"] == 3600
            assert 0 < notes["shown"] < 3600 and notes["cut"] == 3600 - notes["shown"]

            line = (await call(client, "lecode/command", {"line": "/memory doctor"}))["output"]
            assert f"  retired: 1 (#{spaces})" in line
            assert f"anchors drifted: 1 (#{anchored})" in line
            assert f"MEMORY.md: 3600 bytes, {notes['shown']} shown, {notes['cut']} cut" in line

            # Nothing is cut silently: the chat's memory line says so too.
            deltas = Deltas(client)
            session = await new_session(client)
            await call(client, "lecode/chat/send", {"sessionId": session, "text": "hi"})
            memory = await deltas.wait_for("memory")
            # The chat's stable part keeps room for the facts later turns add (issue 40): its
            # share of the notes may be smaller than the doctor's.
            [cut] = memory["cut"]
            assert (cut["file"], cut["bytes"]) == ("MEMORY.md", 3600) and 0 < cut["shown"] < 3600
            history = await call(client, "lecode/chat/history", {"sessionId": session})
            [event] = [item for item in history["items"] if item["kind"] == "memory"]
            assert event["cut"] == memory["cut"]

    async def test_the_doctor_gives_every_fact_the_status_the_listing_gives(
        self, start: Start, repo: Path
    ) -> None:
        # The doctor validates each source once and reads each session once (issue 26, the
        # doctor at 100,000 facts): its statuses must still be those of lecode/facts/list.
        client = await start(repo)
        damaged = await imported(client)
        texts = ("Fact one.", "Fact three.", "Fact four.", "Fact four again.", "Fact five.")
        on_damaged = [
            (await remember(client, damaged, seq, text))["factId"]
            for seq, text in zip((1, 3, 4, 4, 5), texts, strict=True)
        ]
        tampered = await imported(client)
        kept = (await remember(client, tampered, 1, "Kept one."))["factId"]
        changed = (await remember(client, tampered, 3, "Changed three."))["factId"]
        forgotten_from = await imported(client)
        forgotten = (await remember(client, forgotten_from, 1, "Forgotten one."))["factId"]
        hidden = (await remember(client, forgotten_from, 1, "Hidden one."))["factId"]
        await call(client, "lecode/facts/forget", {"factId": forgotten})
        gone_from = await imported(client)
        gone = (await remember(client, gone_from, 3, "Gone three."))["factId"]
        await call(client, "lecode/session/delete", {"sessionId": gone_from})
        sessions = Path((await call(client, "lecode/project/info"))["storePath"]) / "sessions"
        # A damaged line (seq 2) inside the range the damaged session's facts cover together,
        # outside each one's own range; an edited line inside one fact's range.
        path = sessions / f"{damaged}.jsonl"
        lines = path.read_text().splitlines(keepends=True)
        [at] = [i for i, line in enumerate(lines) if "Done: the build passes." in line]
        lines[at] = "{not json\n"
        path.write_text("".join(lines))
        path = sessions / f"{tampered}.jsonl"
        path.write_text(path.read_text().replace("tabs for", "TABS for"))

        listed = {
            f["factId"]: f["status"] for f in (await call(client, "lecode/facts/list", {}))["facts"]
        }
        report = await call(client, "lecode/memory/doctor", {})
        doctor = {
            fact_id: status
            for status, group in report["byStatus"].items()
            for fact_id in group["ids"]
        }
        assert doctor == listed
        assert listed[kept] == "valid" and listed[changed] == "stale"
        assert listed[hidden] == "hidden" and listed[gone] == "missing"
        assert forgotten not in listed
        assert [listed[f] for f in on_damaged] == ["stale"] * 5  # a damaged line: all stale

    async def test_a_damaged_store_answers_store_error(
        self, start: Start, repo: Path, isolated_config_dir: Path
    ) -> None:
        client = await start(repo)
        evidence = await imported(client)
        await remember(client, evidence, 3, "We use tabs.")
        info = await call(client, "lecode/project/info", {})
        await client.shutdown_session()
        [db] = list(Path(info["storePath"]).glob("facts.sqlite3"))
        for suffix in ("-wal", "-shm"):
            Path(str(db) + suffix).unlink(missing_ok=True)
        db.write_bytes(b"this is not a database" * 100)
        client = await start(repo)
        exc = await error_of(call(client, "lecode/memory/doctor", {}))
        assert exc.data["code"] == "store_error"
        assert "Traceback" not in exc.message and str(isolated_config_dir) not in exc.message
