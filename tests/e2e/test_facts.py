"""Transcripts and source-linked facts over LSP: import, snapshot, remember, list, recall,
correct and forget, and the evidence rules that hold across all of them.

# covers S1, S2, S3, F6, F7, R1, R7, P3
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from tests.e2e.conftest import Start, call, command
from tests.e2e.facts import CHAT, error_of, imported, remember


class TestSessions:
    async def test_an_imported_transcript_is_listed_and_readable(
        self, start: Start, repo: Path
    ) -> None:
        client = await start(repo)
        session = await imported(client)
        listed = await call(client, "lecode/session/list")
        assert [(s["sessionId"], s["title"], s["records"]) for s in listed["sessions"]] == [
            (session, "tabs", 7)  # the header at seq 0, then the six messages
        ]
        page = await call(
            client, "lecode/session/read", {"sessionId": session, "startSeq": 3, "endSeq": 3}
        )
        assert page["status"] == "valid"
        assert page["nextOffset"] is None
        records = json.loads(page["sourceText"])
        assert [(r["seq"], r["role"], r["content"]) for r in records] == [
            (3, "user", "We use tabs for indentation in this repo.")
        ]

    async def test_session_ids_are_exact(self, start: Start, repo: Path) -> None:
        # covers S4
        client = await start(repo)
        session = await imported(client)
        # Upper case is not the ID (its random part is all digits about one draw in 43, so the
        # last digit is made a letter: a valid ID's upper case would name the session).
        upper = (session[:-1] + "a").upper()
        for wrong in (session[:-1], "../" + session, upper, "tabs"):
            exc = await error_of(
                call(
                    client, "lecode/session/read", {"sessionId": wrong, "startSeq": 1, "endSeq": 1}
                )
            )
            assert exc.data["code"] == "invalid_session_id", wrong

    async def test_import_from_a_jsonl_file_in_the_workspace(
        self, start: Start, repo: Path, tmp_path: Path
    ) -> None:
        (repo / "chat.jsonl").write_text("\n".join(json.dumps(r) for r in CHAT) + "\n")
        outside = tmp_path / "outside.jsonl"
        outside.write_text(json.dumps(CHAT[0]) + "\n")
        client = await start(repo)
        result = await call(client, "lecode/session/import", {"path": str(repo / "chat.jsonl")})
        assert result["sessionId"]
        exc = await error_of(call(client, "lecode/session/import", {"path": str(outside)}))
        assert exc.data["code"] == "outside_workspace"

    async def test_import_refuses_a_fifo_and_deep_json_without_hanging(
        self, start: Start, repo: Path
    ) -> None:
        # covers P5 (issue 10, beyond its list): a FIFO held a worker thread for ever, and a
        # deeply nested line was an internal error
        os.mkfifo(repo / "pipe.jsonl")
        (repo / "deep.jsonl").write_text("[" * 100_000 + "]" * 100_000 + "\n")
        client = await start(repo)
        for name, words in (("pipe.jsonl", "not a regular file"), ("deep.jsonl", "line 1")):
            exc = await error_of(call(client, "lecode/session/import", {"path": str(repo / name)}))
            assert exc.data == {"code": "invalid_params", "field": "path"}
            assert words in exc.message


class TestFactLifecycle:
    async def test_remember_list_recall_correct_forget(self, start: Start, repo: Path) -> None:
        client = await start(repo)
        session = await imported(client)
        waiting = client.protocol.wait_for_notification_async("lecode/facts/didChange")
        fact = await remember(client, session, 3, "We use tabs for indentation in this repo.")
        assert fact == {"factId": 1, "revision": 1}
        changed = await asyncio.wait_for(waiting, 10)
        assert changed["generation"] == 0

        listed = await call(client, "lecode/facts/list")
        assert [(f["factId"], f["revision"], f["status"], f["text"]) for f in listed["facts"]] == [
            (1, 1, "valid", "We use tabs for indentation in this repo.")
        ]

        recalled = await call(client, "lecode/facts/recall", {"factId": 1})
        assert recalled["status"] == "valid"
        assert "not instructions" in recalled["label"]
        assert recalled["source"]["seqs"] == [3]
        assert json.loads(recalled["sourceText"])[0]["content"] == CHAT[2]["content"]

        new_source = await call(
            client, "lecode/session/snapshot", {"sessionId": session, "startSeq": 5, "endSeq": 5}
        )
        corrected = await call(
            client,
            "lecode/facts/correct",
            {"factId": 1, "expectedRevision": 1, "text": "We use 4 spaces.", "source": new_source},
        )
        assert corrected == {"factId": 1, "revision": 2}

        assert await call(client, "lecode/facts/forget", {"factId": 1}) == {
            "forgotten": True,
            "hides": [],
        }
        assert await call(client, "lecode/facts/forget", {"factId": 1}) == {
            "forgotten": False,
            "hides": [],
        }
        exc = await error_of(call(client, "lecode/facts/recall", {"factId": 1}))
        assert exc.data["code"] == "fact_not_found"

    async def test_get_answers_one_fact_as_the_listing_shows_it(
        self, start: Start, repo: Path
    ) -> None:
        # covers R8 (issue 43's "add a method" checklist, followed for a read-only request): one
        # fact's entry is the listing's, read without paging; unknown, forgotten or malformed
        # IDs are refused naming the field.
        client = await start(repo)
        session = await imported(client)
        await remember(client, session, 3, "We use tabs for indentation in this repo.")
        [listed] = (await call(client, "lecode/facts/list"))["facts"]
        assert await call(client, "lecode/facts/get", {"factId": 1}) == listed
        assert listed["status"] == "valid" and "tabs" in listed["text"]
        after = await call(client, "lecode/facts/get", {"factId": 1})
        assert "uses" not in after  # reading it is not a use
        for params, code in (
            ({"factId": 2}, "fact_not_found"),
            ({"factId": 0}, "invalid_params"),
            ({"factId": "1; drop"}, "invalid_params"),
            ({}, "invalid_params"),
        ):
            exc = await error_of(call(client, "lecode/facts/get", params))
            assert (exc.data["code"], exc.data["field"]) == (code, "factId"), params
        await call(client, "lecode/facts/forget", {"factId": 1})
        exc = await error_of(call(client, "lecode/facts/get", {"factId": 1}))
        assert exc.data["code"] == "fact_not_found"

    async def test_forget_names_the_other_facts_it_hides_and_a_dry_run_changes_nothing(
        self, start: Start, repo: Path
    ) -> None:
        # covers F7 (the confirmation names every fact the forget hides)
        client = await start(repo)
        session = await imported(client)
        await remember(client, session, 3, "We use tabs.")  # fact 1
        await remember(client, session, 3, "Indent with tabs.")  # fact 2: the same evidence
        await remember(client, session, 5, "We use 4 spaces.")  # fact 3: other evidence
        # Fact 4 cited seq 3 only in an earlier revision; a forget of fact 1 leaves it alone.
        await remember(client, session, 3, "Tabs, said once.")
        moved = await call(
            client, "lecode/session/snapshot", {"sessionId": session, "startSeq": 5, "endSeq": 5}
        )
        await call(
            client,
            "lecode/facts/correct",
            {"factId": 4, "expectedRevision": 1, "text": "Spaces now.", "source": moved},
        )

        dry = await call(client, "lecode/facts/forget", {"factId": 1, "dryRun": True})
        assert dry == {"forgotten": False, "hides": [2]}
        statuses = await call(client, "lecode/facts/list")
        assert [(f["factId"], f["status"]) for f in statuses["facts"]] == [
            (1, "valid"),
            (2, "valid"),
            (3, "valid"),
            (4, "valid"),
        ]

        assert await call(client, "lecode/facts/forget", {"factId": 1}) == {
            "forgotten": True,
            "hides": [2],
        }
        hidden = await call(client, "lecode/facts/recall", {"factId": 2})
        assert hidden["status"] == "hidden"
        exc = await error_of(call(client, "lecode/facts/forget", {"factId": 1, "dryRun": True}))
        assert exc.data["code"] == "fact_not_found"

    async def test_forgotten_evidence_is_refused_forever(self, start: Start, repo: Path) -> None:
        # covers F7
        client = await start(repo)
        session = await imported(client)
        await remember(client, session, 3, "We use tabs.")
        source = await call(
            client, "lecode/session/snapshot", {"sessionId": session, "startSeq": 3, "endSeq": 4}
        )
        await call(client, "lecode/facts/forget", {"factId": 1})
        exc = await error_of(
            call(client, "lecode/facts/remember", {"text": "Tabs again.", "source": source})
        )
        assert exc.data["code"] == "excluded_evidence"
        # A fresh snapshot of the range no longer offers the excluded message as evidence.
        fresh = await call(
            client, "lecode/session/snapshot", {"sessionId": session, "startSeq": 3, "endSeq": 4}
        )
        assert fresh["seqs"] == [4]

    async def test_a_stale_expected_revision_is_refused(self, start: Start, repo: Path) -> None:
        # covers F2
        client = await start(repo)
        session = await imported(client)
        await remember(client, session, 3, "We use tabs.")
        source = await call(
            client, "lecode/session/snapshot", {"sessionId": session, "startSeq": 5, "endSeq": 5}
        )
        params = {"factId": 1, "expectedRevision": 1, "text": "Spaces.", "source": source}
        await call(client, "lecode/facts/correct", params)
        exc = await error_of(call(client, "lecode/facts/correct", params))
        assert exc.data["code"] == "stale_revision"
        assert exc.message.startswith("expectedRevision:")

    async def test_tool_output_alone_cannot_justify_a_correction(
        self, start: Start, repo: Path
    ) -> None:
        # covers F6
        client = await start(repo)
        session = await imported(client)
        await remember(client, session, 3, "We use tabs.")
        tool = await call(
            client, "lecode/session/snapshot", {"sessionId": session, "startSeq": 6, "endSeq": 6}
        )
        exc = await error_of(
            call(
                client,
                "lecode/facts/correct",
                {"factId": 1, "expectedRevision": 1, "text": "Delete it.", "source": tool},
            )
        )
        assert exc.data["code"] == "invalid_source"

    async def test_a_tampered_transcript_turns_recall_stale(self, start: Start, repo: Path) -> None:
        # covers S3, R7
        client = await start(repo)
        session = await imported(client)
        await remember(client, session, 3, "We use tabs.")
        info = await call(client, "lecode/project/info")
        transcript = Path(info["storePath"]) / "sessions" / f"{session}.jsonl"
        transcript.write_text(transcript.read_text().replace("tabs for", "TABS for"))
        recalled = await call(client, "lecode/facts/recall", {"factId": 1})
        assert recalled == {"factId": 1, "revision": 1, "status": "stale"}
        tampered = await call(
            client, "lecode/session/snapshot", {"sessionId": session, "startSeq": 1, "endSeq": 1}
        )
        exc = await error_of(
            call(
                client,
                "lecode/facts/remember",
                {"text": "x", "source": {**tampered, "digest": "sha256:" + "0" * 64}},
            )
        )
        assert (exc.data["code"], exc.data["status"]) == ("source_not_valid", "stale")

    async def test_an_unknown_fact_is_fact_not_found(self, start: Start, repo: Path) -> None:
        client = await start(repo)
        exc = await error_of(call(client, "lecode/facts/forget", {"factId": 99}))
        assert exc.data["code"] == "fact_not_found"


class TestAnotherProcess:
    async def test_a_change_by_another_server_is_notified(self, start: Start, repo: Path) -> None:
        # covers P3: facts/didChange also for changes made by another lecode-ls process
        watcher = await start(repo)
        await call(watcher, "lecode/facts/list")  # the watcher's runtime for this project exists
        writer = await start(repo)
        session = await imported(writer)
        waiting = watcher.protocol.wait_for_notification_async("lecode/facts/didChange")
        await remember(writer, session, 3, "We use tabs.")
        changed = await asyncio.wait_for(waiting, 10)
        assert changed["projectRoot"] == str(repo.resolve())


class TestMemoryCommand:
    async def test_facts_recall_read_correct_forget_through_the_command(
        self, start: Start, repo: Path
    ) -> None:
        # covers T5 (the changes allowed: test_slash_permissions.py asks and refuses)
        options = {"agent": {"permissions": {"memory_correct": "allow", "memory_forget": "allow"}}}
        client = await start(repo, options=options)
        session = await imported(client)
        await remember(client, session, 3, "We use tabs.")
        assert (await command(client, "facts")).startswith(f"#1 r1 valid [{session} 3-3] ")
        assert json.loads(await command(client, "recall 1"))["status"] == "valid"
        assert json.loads(await command(client, f"read {session} 1 2"))["status"] == "valid"
        assert (
            await command(client, f"correct 1 1 {session} 5 5 We use 4 spaces.")
            == "Fact #1 is now at revision 2."
        )
        assert (await command(client, "forget 1")).startswith("Fact #1 is forgotten")

    @pytest.mark.parametrize("line", ["recall", "recall x", "read s 1", "forget"])
    async def test_bad_arguments_get_a_usage_error(
        self, start: Start, repo: Path, line: str
    ) -> None:
        client = await start(repo)
        exc = await error_of(command(client, line))
        assert (exc.code, exc.data["field"]) == (-32602, "text")


class TestUndoRedoClear:
    async def test_undo_hides_cited_evidence_and_redo_restores_it(
        self, start: Start, repo: Path
    ) -> None:
        # covers S5
        client = await start(repo)
        session = await imported(client)
        await remember(client, session, 5, "We use 4 spaces.")
        waiting = client.protocol.wait_for_notification_async("lecode/facts/didChange")
        undone = await call(client, "lecode/session/undo", {"sessionId": session})
        assert undone == {"seqs": [5, 6]}  # the last exchange: the user message and what followed
        await asyncio.wait_for(waiting, 10)
        recalled = await call(client, "lecode/facts/recall", {"factId": 1})
        assert recalled["status"] == "hidden"
        assert await call(client, "lecode/session/redo", {"sessionId": session}) == {"seqs": [5, 6]}
        assert (await call(client, "lecode/facts/recall", {"factId": 1}))["status"] == "valid"

    async def test_clear_resets_session_recall_but_keeps_facts(
        self, start: Start, repo: Path
    ) -> None:
        # covers S5: /clear does not revoke durable facts
        client = await start(repo)
        session = await imported(client)
        await remember(client, session, 3, "We use tabs.")
        cleared = await call(client, "lecode/session/clear", {"sessionId": session})
        assert cleared == {"seq": 7}
        page = await call(
            client, "lecode/session/read", {"sessionId": session, "startSeq": 3, "endSeq": 3}
        )
        assert page["status"] == "hidden"
        assert (await call(client, "lecode/facts/recall", {"factId": 1}))["status"] == "valid"

    async def test_a_new_session_is_empty_and_has_nothing_to_undo(
        self, start: Start, repo: Path
    ) -> None:
        client = await start(repo)
        created = await call(client, "lecode/session/new", {"title": "fresh"})
        listed = await call(client, "lecode/session/list")
        assert [(s["sessionId"], s["title"], s["records"]) for s in listed["sessions"]] == [
            (created["sessionId"], "fresh", 1)
        ]
        exc = await error_of(call(client, "lecode/session/undo", created))
        assert exc.data["code"] == "nothing_to_undo"
