"""Summaries in the person's language, over LSP: the summariser is asked for the session's
language, and a faithful summary compacts whether it is in that language or in English.

# covers C4 (issue 41, item 4)
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lecode_ls.agent.language import guess_language
from tests.e2e.chat import new_session
from tests.e2e.conftest import Start, call
from tests.fakes.openai_server import FakeOpenAI, Stream, text_chunks

GERMAN = [
    "Wir formatieren den Code immer mit `ruff format`, und die Tests liegen in tests/unit.",
    "Bitte benenne parse_args in src/cli.py um, denn der Name ist nicht mehr klar für uns.",
    "Die Fehler werden auf stderr geschrieben und nicht in eine Datei, das ist wichtig.",
    "Danke, das ist alles für heute und wir machen morgen mit der Dokumentation weiter.",
]
ANSWER = "Erledigt: die Änderung ist drin, und die Tests sind grün."
SUMMARIES = {
    "english": "The person formats code with `ruff format`; tests live in tests/unit. "
    "parse_args in src/cli.py was renamed; errors go to stderr, not to a file.",
    "german": "Die Person formatiert den Code mit `ruff format`; die Tests liegen in tests/unit. "
    "parse_args in src/cli.py wurde umbenannt; Fehler gehen auf stderr und nicht in eine Datei.",
}


def responder(summary: str, asked: list[str]) -> Callable[[dict[str, Any]], Stream]:
    """A model that summarises with `summary` (keeping each summary request's system prompt in
    `asked`) and answers every chat message in German."""

    def respond(body: dict[str, Any]) -> Stream:
        system = body["messages"][0]["content"]
        if system.startswith("You maintain the working summary"):
            asked.append(system)
            return Stream(text_chunks(summary))
        return Stream(text_chunks(ANSWER))

    return respond


class TestAGermanSession:
    def test_the_session_reads_as_german(self) -> None:
        assert guess_language("\n".join([*GERMAN, ANSWER])) == "de"

    @pytest.mark.parametrize("language", ["english", "german"])
    async def test_it_compacts_with_a_faithful_summary_in_either_language(
        self, start: Start, repo: Path, language: str
    ) -> None:
        asked: list[str] = []
        async with FakeOpenAI(respond=responder(SUMMARIES[language], asked)) as server:
            options = {"provider": {"base_url": server.base_url, "model": "gpt-4o"}}
            client = await start(repo, options={**options, "memory": {"auto_learn": False}})
            session = await new_session(client)
            for text in GERMAN:
                await call(client, "lecode/chat/send", {"sessionId": session, "text": text})
            result = await call(client, "lecode/session/compact", {"sessionId": session})
        # The request says the session's language (it said nothing before).
        assert asked[0].endswith("Write the summary in German, the language the person writes in.")
        # An English summary of it was `other_language` before; both are kept now.
        assert (result["status"], result.get("message")) == ("compacted", None)
        assert result["coveredThrough"] > 0
