"""`[memory] enabled = false` over LSP: the memory tools and the injection go, chat stays. No fact
database is created, and exclusions a forget installed earlier still keep evidence out of replay.

# covers K1, F3 (issue 11, item 3)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_lsp import LanguageClient

from lecode_ls.memory.project.identity import project_slug
from tests.e2e.chat import new_session
from tests.e2e.conftest import Start, call
from tests.e2e.facts import error_of, remember
from tests.fakes.openai_server import FakeOpenAI, Stream, text_chunks

SECRET = "The deploy password is hunter2, remember it."


def options(server: FakeOpenAI, enabled: bool) -> dict[str, Any]:
    return {
        "provider": {"base_url": server.base_url, "model": "gpt-4o", "api_key_env": ""},
        "memory": {"enabled": enabled},
    }


def store(config: Path, repo: Path) -> Path:
    return config / "memory" / project_slug(repo.resolve())


class TestChatWithoutMemory:
    async def test_chat_works_with_no_memory_tools_and_nothing_injected(
        self, start: Start, repo: Path, isolated_config_dir: Path
    ) -> None:
        notes = store(isolated_config_dir, repo)
        notes.mkdir(parents=True)
        (notes / "MEMORY.md").write_text("Injected note: always use tabs.\n")
        async with FakeOpenAI(respond=lambda body: Stream(text_chunks("Hello."))) as server:
            client = await start(repo, options=options(server, enabled=False))
            session = await new_session(client)
            result = await call(client, "lecode/chat/send", {"sessionId": session, "text": "Hi"})
            assert result["stopReason"] == "stop"

            (request,) = server.bodies
            assert [t["function"]["name"] for t in request["tools"]] == ["read"]
            system = request["messages"][0]["content"]
            assert "Project memory" not in system and "memory_" not in system
            assert "tabs" not in system
            history = await call(client, "lecode/chat/history", {"sessionId": session})
            assert [i["kind"] for i in history["items"]] == ["user", "memory", "text"]
            listed = await call(client, "lecode/session/list")
            assert [s["sessionId"] for s in listed["sessions"]] == [session]
            compact = await call(client, "lecode/session/compact", {"sessionId": session})
            assert compact["status"] == "nothing"

            # The memory itself stays off, on every path.
            for method, params in (
                ("lecode/facts/list", {}),
                ("lecode/memory/read", {"file": "MEMORY.md"}),
                ("lecode/command", {"line": "/memory show"}),
                ("lecode/chat/send", {"sessionId": session, "text": "/memory show"}),
            ):
                error = await error_of(call(client, method, params))
                assert error.data["code"] == "memory_disabled", method
        assert not (notes / "facts.sqlite3").exists()
        assert (notes / "sessions" / f"{session}.jsonl").is_file()

    async def test_exclusions_from_before_still_protect_replay(
        self, start: Start, repo: Path
    ) -> None:
        async with FakeOpenAI(respond=lambda body: Stream(text_chunks("ok"))) as server:
            before: LanguageClient = await start(repo, options=options(server, enabled=True))
            records = [
                {"role": "user", "content": SECRET},
                {"role": "assistant", "content": "Noted."},
            ]
            session = (await call(before, "lecode/session/import", {"records": records}))[
                "sessionId"
            ]
            fact = await remember(before, session, 1, "The deploy password is known.")
            await call(before, "lecode/facts/forget", {"factId": fact["factId"]})

            after = await start(repo, options=options(server, enabled=False))
            await call(after, "lecode/chat/send", {"sessionId": session, "text": "Go on."})
            (request,) = server.bodies
            contents = [m.get("content") for m in request["messages"]]
            assert contents[-1] == "Go on."
            assert not any(SECRET in str(c) for c in contents)
