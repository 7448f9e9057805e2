"""Sessions a person can find: `lecode/session/rename`, and `origin` in `lecode/session/list` so a
chat view can list chats apart from the sessions lecode keeps for itself.

# covers S1, S6 (issue 30, item 5)
"""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from tests.e2e.chat import new_session
from tests.e2e.conftest import Start, call, uri
from tests.e2e.facts import error_of, imported


async def listed(client: object) -> dict[str, tuple[str, str]]:
    sessions = (await call(client, "lecode/session/list"))["sessions"]
    return {s["sessionId"]: (s["title"], s["origin"]) for s in sessions}


class TestRename:
    async def test_a_renamed_session_is_listed_by_its_new_title_in_every_window(
        self, start: Start, repo: Path
    ) -> None:
        client, other = await start(repo), await start(repo)
        session = await new_session(client)
        result = await call(
            client, "lecode/session/rename", {"sessionId": session, "title": "Fix\u202e build"}
        )
        assert result == {"title": "Fix build"}
        assert (await listed(other))[session] == ("Fix build", "chat")
        back = await call(client, "lecode/session/rename", {"sessionId": session, "title": ""})
        assert back == {"title": "chat"}

    async def test_a_missing_session_or_a_bad_title_is_refused_naming_the_field(
        self, start: Start, repo: Path
    ) -> None:
        client = await start(repo)
        missing = await error_of(
            call(
                client,
                "lecode/session/rename",
                {"sessionId": "20250101T120000Z-0123abcd", "title": "x"},
            )
        )
        assert (missing.data["code"], missing.data["field"]) == ("session_not_found", "sessionId")
        session = await new_session(client)
        long = await error_of(
            call(client, "lecode/session/rename", {"sessionId": session, "title": "x" * 201})
        )
        assert (long.data["code"], long.data["field"]) == ("invalid_params", "title")


class TestOrigin:
    async def test_chats_imports_and_the_editors_session_say_what_made_them(
        self, start: Start, repo: Path
    ) -> None:
        client = await start(repo)
        chat = await new_session(client)
        old = await imported(client)
        (repo / "app.py").write_text('GREETING = "hello"\n')
        doc = uri(repo / "app.py")
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                types.TextDocumentItem(doc, "python", 1, 'GREETING = "hello"\n')
            )
        )
        line = types.Range(types.Position(0, 0), types.Position(0, 18))
        selected = await call(client, "lecode/facts/rememberSelection", {"uri": doc, "range": line})
        assert await listed(client) == {
            chat: ("chat", "chat"),
            old: ("tabs", "import"),
            selected["sessionId"]: ("Remembered in the editor", "editor"),
        }
