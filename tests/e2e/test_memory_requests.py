"""The Markdown-memory requests, through the real server over stdio."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pygls.exceptions import JsonRpcException

from tests.e2e.conftest import Start, call, command, uri


class TestNotes:
    async def test_write_then_read_returns_the_content(self, start: Start, repo: Path) -> None:
        # covers L4, P3
        client = await start(repo)
        written = await call(
            client, "lecode/memory/write", {"file": "notes/build.md", "content": "Run make.\n"}
        )
        assert written == {"file": "notes/build.md", "bytes": 10}
        read = await call(client, "lecode/memory/read", {"file": "notes/build.md"})
        assert read == {"file": "notes/build.md", "content": "Run make.\n", "exists": True}

    async def test_a_missing_file_reads_as_absent(self, start: Start, repo: Path) -> None:
        client = await start(repo)
        read = await call(client, "lecode/memory/read", {"file": "MEMORY.md"})
        assert read == {"file": "MEMORY.md", "content": "", "exists": False}

    async def test_append_adds_to_the_end(self, start: Start, repo: Path) -> None:
        client = await start(repo)
        for line in ("- one\n", "- two\n"):
            await call(
                client,
                "lecode/memory/write",
                {"file": "scratchpad.md", "content": line, "mode": "append"},
            )
        read = await call(client, "lecode/memory/read", {"file": "scratchpad.md"})
        assert read["content"] == "- one\n- two\n"

    async def test_an_overwrite_keeps_the_previous_content_in_bak(
        self, start: Start, repo: Path
    ) -> None:
        # covers L5
        client = await start(repo)
        await call(client, "lecode/memory/write", {"file": "MEMORY.md", "content": "old\n"})
        await call(client, "lecode/memory/write", {"file": "MEMORY.md", "content": "new\n"})
        info = await call(client, "lecode/project/info")
        store = Path(info["storePath"])
        assert (store / "MEMORY.md").read_text() == "new\n"
        assert (store / "MEMORY.md.bak").read_text() == "old\n"

    async def test_edit_replaces_every_occurrence(self, start: Start, repo: Path) -> None:
        client = await start(repo)
        await call(client, "lecode/memory/write", {"file": "MEMORY.md", "content": "a b a\n"})
        edited = await call(
            client, "lecode/memory/edit", {"file": "MEMORY.md", "search": "a", "replace": "c"}
        )
        assert edited == {"file": "MEMORY.md", "replacements": 2}
        read = await call(client, "lecode/memory/read", {"file": "MEMORY.md"})
        assert read["content"] == "c b c\n"

    async def test_list_shows_every_memory_file(self, start: Start, repo: Path) -> None:
        client = await start(repo)
        for name in ("MEMORY.md", "daily/2026-11-29.md", "notes/x.md"):
            await call(client, "lecode/memory/write", {"file": name, "content": "hi\n"})
        listed = await call(client, "lecode/memory/list")
        assert [f["file"] for f in listed["files"]] == [
            "MEMORY.md",
            "daily/2026-11-29.md",
            "notes/x.md",
        ]
        assert all(f["bytes"] == 3 and f["modified"].endswith("Z") for f in listed["files"])

    async def test_memory_survives_a_restart(self, start: Start, repo: Path) -> None:
        # covers L4: the store lives on disk, not in the server
        first = await start(repo)
        await call(first, "lecode/memory/write", {"file": "notes/keep.md", "content": "kept\n"})
        await first.shutdown_session()
        second = await start(repo)
        read = await call(second, "lecode/memory/read", {"file": "notes/keep.md"})
        assert read["content"] == "kept\n"


class TestSearch:
    async def test_search_finds_lines_with_1_based_numbers(self, start: Start, repo: Path) -> None:
        # covers T6
        client = await start(repo)
        await call(
            client, "lecode/memory/write", {"file": "notes/a.md", "content": "x\nuse tabs\n"}
        )
        found = await call(client, "lecode/memory/search", {"pattern": "ta+bs"})
        assert found == {
            "hits": [{"file": "notes/a.md", "line": 2, "text": "use tabs"}],
            "truncated": False,
        }

    async def test_search_stops_at_50_hits(self, start: Start, repo: Path) -> None:
        # covers T6
        client = await start(repo)
        await call(client, "lecode/memory/write", {"file": "MEMORY.md", "content": "hit\n" * 60})
        found = await call(client, "lecode/memory/search", {"pattern": "hit"})
        assert len(found["hits"]) == 50
        assert found["truncated"] is True


class TestChangeNotification:
    async def test_a_write_notifies_did_change(self, start: Start, repo: Path) -> None:
        client = await start(repo)
        waiting = client.protocol.wait_for_notification_async("lecode/memory/didChange")
        await call(client, "lecode/memory/write", {"file": "scratchpad.md", "content": "x"})
        note = await asyncio.wait_for(waiting, 10)
        assert note == {
            "workspaceUri": uri(repo),
            "projectRoot": str(repo.resolve()),
            "files": ["scratchpad.md"],
        }


class TestMemoryCommand:
    async def test_show_prints_memory_md(self, start: Start, repo: Path) -> None:
        # covers T5
        client = await start(repo)
        await call(client, "lecode/memory/write", {"file": "MEMORY.md", "content": "# Facts\n"})
        assert await command(client, "show") == "# Facts\n"

    async def test_search_log_notes_and_help(self, start: Start, repo: Path) -> None:
        # covers T5
        client = await start(repo)
        await call(client, "lecode/memory/write", {"file": "notes/ci.md", "content": "uv run\n"})
        await call(
            client, "lecode/memory/write", {"file": "daily/2026-11-28.md", "content": "did x\n"}
        )
        assert await command(client, "search uv\\s+run") == "notes/ci.md:1: uv run"
        assert await command(client, "log 2026-11-28") == "did x\n"
        assert await command(client, "log 2026-11-27") == "No daily log for 2026-11-27."
        assert await command(client, "notes") == "ci  (7 bytes)"
        assert "/memory search <pattern>" in await command(client, "help")

    async def test_an_unknown_subcommand_is_an_error(self, start: Start, repo: Path) -> None:
        client = await start(repo)
        try:
            await command(client, "frobnicate")
        except JsonRpcException as exc:
            assert exc.code == -32602
            assert "frobnicate" in exc.message
        else:
            raise AssertionError("expected an error")
