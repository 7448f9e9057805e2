"""Searching facts, for the model and the person: memory_list's `query` (one of the eight tools,
still), `/memory facts <query>` beside `/memory facts <path>`, and `/memory pin` / `unpin`.

# covers T1 (the tool set stays eight), R8 (pages and caps), T2 (readonly), issue 25 item 4
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from lecode_ls.errors import FactNotFound, ReadonlyMode
from lecode_ls.mcp.remember import Exchange
from lecode_ls.mcp.tools import call_tool
from lecode_ls.memory.recall import MAX_OUTPUT_BYTES
from lecode_ls.runtime import Runtime
from lecode_ls.tools.memory import SPECS, run_tool
from lecode_ls.tools.permissions import PermissionPolicy
from lecode_ls.tools.slash import Invocation, run_memory_command
from tests.unit.stores import chat, remember


def facts(runtime: Runtime, count: int) -> list[int]:
    texts = [f"The billing-{n} service reads its signing key from Vault." for n in range(count)]
    session = chat(runtime, *({"role": "user", "content": text} for text in texts))
    return [remember(runtime, session, n + 1, n + 1, text) for n, text in enumerate(texts)]


def listed(runtime: Runtime, **arguments: Any) -> dict[str, Any]:
    result = run_tool(
        runtime,
        "memory_list",
        json.dumps(arguments),
        policy=PermissionPolicy(default="deny"),
        readonly=True,
        child=False,
    )
    assert not result.is_error, result.content
    answer: dict[str, Any] = json.loads(result.content)
    return answer


def slash(runtime: Runtime, line: str, *, readonly: bool = False) -> str:
    return run_memory_command(runtime, line, date.today(), Invocation(readonly=readonly))


class TestMemoryListQuery:
    def test_the_model_finds_a_fact_the_memory_section_did_not_show(self, runtime: Runtime) -> None:
        ids = facts(runtime, 120)
        answer = listed(runtime, query="signing key of billing-77")
        first = answer["facts"][0]
        assert (first["fact_id"], first["status"]) == (ids[77], "valid")
        assert first["matched"] == ["signing", "key", "billing-77"]
        assert len(SPECS) == 8  # a query is an argument, not a ninth tool

    def test_a_query_pages_through_at_most_200_ranked_facts_within_the_cap(
        self, runtime: Runtime
    ) -> None:
        facts(runtime, 230)
        offset: int | None = 0
        seen: list[int] = []
        while offset is not None:
            page = listed(runtime, query="billing vault", offset=offset)
            assert len(json.dumps(page).encode("utf-8")) <= MAX_OUTPUT_BYTES
            seen += [fact["fact_id"] for fact in page["facts"]]
            offset = page["next_offset"]
        assert len(seen) == len(set(seen)) == 200

    @pytest.mark.parametrize("query", ['"', "*", "NEAR(", "-x", "x" * 102_400, ""])
    def test_a_hostile_query_answers(self, runtime: Runtime, query: str) -> None:
        facts(runtime, 3)
        assert listed(runtime, query=query)["facts"] == []

    def test_over_mcp_the_same_query_is_bounded_and_answers(
        self, runtime: Runtime, tmp_path: Path
    ) -> None:
        ids = facts(runtime, 30)
        exchange = Exchange(tmp_path)
        result = call_tool(runtime, exchange, "memory_list", {"query": "billing-12 NEAR( *"})
        assert json.loads(result.content)["facts"][0]["fact_id"] == ids[12]
        too_long = call_tool(runtime, exchange, "memory_list", {"query": "x" * 300_000})
        assert too_long.is_error and json.loads(too_long.content)["message"].startswith("query:")


class TestTheSlashCommand:
    def test_facts_with_words_is_a_query_and_one_path_like_word_a_path(
        self, runtime: Runtime
    ) -> None:
        ids = facts(runtime, 30)
        text = slash(runtime, "facts billing-12 signing key")
        assert text.splitlines()[0].startswith(f"#{ids[12]} r1 valid")
        assert text.splitlines()[1] == "  matched: billing-12, signing, key"
        assert slash(runtime, "facts vault").startswith("#")  # one plain word: a query
        assert slash(runtime, "facts app.py") == "No facts."  # a path: none anchored there
        paged = slash(runtime, "facts billing vault")
        assert paged.splitlines()[-1] == "[more: /memory facts 20 billing vault]"
        assert slash(runtime, "facts 20 billing vault").count("\n  matched: ") == 10

    def test_pin_and_unpin(self, runtime: Runtime) -> None:
        [fact] = facts(runtime, 1)
        assert slash(runtime, f"pin {fact}") == f"Fact #{fact} is pinned."
        assert slash(runtime, f"pin {fact}") == f"Fact #{fact} was pinned already."
        assert slash(runtime, "facts").startswith(f"#{fact} r1 valid pinned ")
        assert slash(runtime, f"unpin {fact}") == f"Fact #{fact} is unpinned."
        assert slash(runtime, f"unpin {fact}") == f"Fact #{fact} was not pinned."
        with pytest.raises(FactNotFound):
            slash(runtime, "pin 99")
        with pytest.raises(ReadonlyMode):
            slash(runtime, f"pin {fact}", readonly=True)
        assert "/memory pin <fact-id>" in slash(runtime, "help")
