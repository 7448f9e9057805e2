"""`/memory` lines take text as written: `/memory correct`'s text is the rest of the line after
its five fixed arguments, apostrophes, quotes and spaces kept; `/memory recall` prints every key
`memory_recall` answers, `nextOffset: null` on the last page.

# covers T5, R1, R3 (issue 41, item 5)
"""

from __future__ import annotations

import json
from pathlib import Path

from pytest_lsp import LanguageClient

from tests.e2e.conftest import Start, call
from tests.e2e.facts import error_of, imported, remember

TEXTS = [
    "We don't use tabs",
    'say "x"  twice',
    "It's 'single', \"double\" and `code`;  two spaces\tand a tab",
    "Paths: C:\\repo\\src and ~/src/*.py # not a comment",
    'an open quote " left open',
]


async def line(client: LanguageClient, text: str) -> str:
    output: str = (await call(client, "lecode/command", {"line": text}))["output"]
    return output


async def with_a_fact(start: Start, repo: Path) -> tuple[LanguageClient, str, int]:
    client = await start(repo, options={"agent": {"permissions": {"memory_correct": "allow"}}})
    session = await imported(client)
    fact = await remember(client, session, 3, "We use tabs for indentation in this repo.")
    return client, session, fact["factId"]


class TestCorrectTakesTheTextAsWritten:
    async def test_each_text_is_stored_exactly_as_typed(self, start: Start, repo: Path) -> None:
        # covers T5: the texts shell-splitting broke ("No closing quotation") or changed
        # (quotes and double spaces removed)
        client, session, fact_id = await with_a_fact(start, repo)
        for revision, text in enumerate(TEXTS, 1):
            said = await line(client, f"/memory correct {fact_id} {revision} {session} 5 5  {text}")
            assert said == f"Fact #{fact_id} is now at revision {revision + 1}."
            recalled = await call(client, "lecode/facts/recall", {"factId": fact_id})
            assert (recalled["revision"], recalled["text"]) == (revision + 1, text)

    async def test_a_line_without_its_text_is_refused_with_the_usage(
        self, start: Start, repo: Path
    ) -> None:
        client, session, fact_id = await with_a_fact(start, repo)
        for arguments in ("", "1", f"{fact_id} 1 {session} 5", f"{fact_id} 1 {session} 5 5   "):
            error = await error_of(line(client, f"/memory correct {arguments}"))
            assert error.data == {"code": "invalid_params", "field": "text"}
            assert "usage: /memory correct <fact-id> <revision>" in error.message


class TestRecallPrintsWhatMemoryRecallAnswers:
    async def test_the_last_page_says_next_offset_null(self, start: Start, repo: Path) -> None:
        # covers R1, R3: every key memory_recall answers, as the protocol spells it
        client, _, fact_id = await with_a_fact(start, repo)
        printed = json.loads(await line(client, f"/memory recall {fact_id}"))
        recalled = await call(client, "lecode/facts/recall", {"factId": fact_id})
        assert printed["nextOffset"] is None
        assert printed == {"nextOffset": None, **recalled}
        assert set(printed) == {
            "factId", "revision", "status", "label", "text", "factTextTruncated", "source",
            "sourceText", "offset", "nextOffset",
        }  # fmt: skip

    async def test_read_prints_what_session_read_answers(self, start: Start, repo: Path) -> None:
        # covers R3: /memory read spells its keys as the protocol does, as /memory recall does
        client, session, _ = await with_a_fact(start, repo)
        printed = json.loads(await line(client, f"/memory read {session} 3 3"))
        read = await call(
            client, "lecode/session/read", {"sessionId": session, "startSeq": 3, "endSeq": 3}
        )
        assert printed == {"nextOffset": None, **read}
        assert {"sessionId", "sourceText", "nextOffset"} <= set(printed)
