"""The recorded memory blocks of a session (agent/turn_memory.py, issue 40): what later requests
replay, and what they leave out. The runner with the scripted provider and real stores.

# covers I1-I5 (validation at every use, the caps over everything a request carries), E1-E2
# (a forgotten fact leaves every later request), C (old transcripts replay)
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from lecode_ls.agent.turn_memory import EVENT, MISS, TURN_HEADING, digest, parse
from lecode_ls.memory.sessions import source_snapshot
from lecode_ls.runtime import Runtime
from tests.fakes.scripted_provider import ScriptedProvider, text_turn
from tests.unit.stores import chat, remember
from tests.unit.test_runner import Deltas, make_turn, records


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    path = tmp_path / "workspace"
    path.mkdir()
    return path


def sent(provider: ScriptedProvider) -> str:
    """Everything the last request carried, as one text."""
    return json.dumps(provider.requests[-1].messages, ensure_ascii=False)


def events(runtime: Runtime, session: str, kind: str) -> list[dict[str, Any]]:
    return [r for r in records(runtime, session) if r["kind"] == "event" and r["type"] == kind]


def fact(runtime: Runtime, text: str) -> int:
    source = chat(runtime, {"role": "user", "content": text})
    return remember(runtime, source, 1, 1, text)


async def turns(runtime: Runtime, session: str, folder: Path, *texts: str) -> ScriptedProvider:
    provider = ScriptedProvider()
    for text in texts:
        provider.add(text_turn("ok"))
        await make_turn(runtime, session, provider, folder, Deltas()).run(text)
    return provider


def resealed(record: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """A block record changed and given the digest of its new content (not an edit the digest
    catches: what the line and cap checks must catch)."""
    changed = {k: v for k, v in record.items() if k not in ("seq", "digest")} | changes
    bookkeeping = ("kind", "type", "turn_id", "generation")
    content = {k: v for k, v in changed.items() if k not in bookkeeping}
    return {**changed, "digest": digest(content)}


class TestForgetting:
    async def test_a_forgotten_fact_leaves_every_block_it_was_in(
        self, runtime: Runtime, folder: Path
    ) -> None:
        # covers E2: the stable part and a turn's block both lose the forgotten fact's line.
        vault = fact(runtime, "The deploy key lives in Vault.")
        session = runtime.sessions.create("t")
        provider = await turns(runtime, session, folder, "hello")
        tabs = fact(runtime, "We indent with tabs.")
        await turns(runtime, session, folder, "what about indentation?")
        runtime.facts.forget(vault)
        runtime.facts.forget(tabs)
        provider = await turns(runtime, session, folder, "and now?")
        assert "Vault" not in sent(provider) and "indent with tabs" not in sent(provider)
        forget, invalid = events(runtime, session, MISS)
        assert forget["reason"] == "forget"  # the history's older answers left it too (E2)
        assert (invalid["reason"], invalid["fact_ids"]) == ("fact_invalid", [vault, tabs])

    async def test_a_corrected_fact_shows_only_its_new_revision(
        self, runtime: Runtime, folder: Path
    ) -> None:
        fact_id = fact(runtime, "Builds use make.")
        session = runtime.sessions.create("t")
        await turns(runtime, session, folder, "hello")
        source = chat(runtime, {"role": "user", "content": "Builds use just now."})
        runtime.facts.correct(
            fact_id,
            "Builds use just.",
            expected_revision=1,
            ref=source_snapshot(runtime.sessions, source, 1, 1),
            check=runtime.check_source,
            has_authored_text=runtime.has_authored_text,
        )
        provider = await turns(runtime, session, folder, "how do we build?")
        assert "Builds use make." not in sent(provider)
        last = provider.requests[-1].messages[-1]["content"]
        assert last.startswith(TURN_HEADING) and "Builds use just." in last


class TestOldAndImportedSessions:
    async def test_a_transcript_without_blocks_replays_and_gets_its_stable_part(
        self, runtime: Runtime, folder: Path
    ) -> None:
        fact(runtime, "The deploy key lives in Vault.")
        session = chat(
            runtime,
            {"role": "user", "content": "Earlier question"},
            {"role": "assistant", "content": "Earlier answer", "meta": {"generation": 0}},
        )
        provider = await turns(runtime, session, folder, "next")
        messages = provider.requests[-1].messages
        assert [m["content"] for m in messages[1:3]] == ["Earlier question", "Earlier answer"]
        assert "Vault" in messages[0]["content"]
        assert [r["place"] for r in events(runtime, session, EVENT)] == ["stable"]
        # Its first request in the new layout may miss once: counted, with its reason.
        assert [m["reason"] for m in events(runtime, session, MISS)] == [
            "history_without_stable_part"
        ]

    async def test_a_stable_part_of_the_layout_before_one_facts_block_replays_or_misses_once(
        self, runtime: Runtime, folder: Path
    ) -> None:
        # Item 6 with item 3: a stable part recorded when team facts had a block apart (a
        # `team` field) replays as it is when that block was empty, and is chosen again once,
        # counted as `older_layout`, when it held shared facts.
        fact(runtime, "The deploy key lives in Vault.")
        session = runtime.sessions.create("t")
        first = await turns(runtime, session, folder, "hello")
        [stable] = events(runtime, session, EVENT)
        runtime.sessions.append(session, resealed(stable, team=""))
        provider = await turns(runtime, session, folder, "again")
        assert provider.requests[-1].messages[0] == first.requests[-1].messages[0]
        assert events(runtime, session, MISS) == []
        team = "\n## Team facts (x)\nOne JSON object a line.\n" + json.dumps({"team_id": "ab"})
        runtime.sessions.append(session, resealed(stable, team=team + "\n"))
        provider = await turns(runtime, session, folder, "and again")
        assert '"team_id"' not in sent(provider)
        assert [m["reason"] for m in events(runtime, session, MISS)] == ["older_layout"]


class TestBadBlocks:
    async def test_a_block_edited_on_disk_is_left_out_logged_and_chosen_again(
        self, runtime: Runtime, folder: Path, caplog: pytest.LogCaptureFixture
    ) -> None:
        fact(runtime, "The deploy key lives in Vault.")
        session = runtime.sessions.create("t")
        first = await turns(runtime, session, folder, "hello")
        [stable] = events(runtime, session, EVENT)
        edited = {k: v for k, v in stable.items() if k != "seq"}
        edited["facts"] = [
            {**f, "line": f["line"].replace("Vault", "a public gist")} for f in stable["facts"]
        ]
        runtime.sessions.append(session, edited)
        with caplog.at_level(logging.WARNING):
            provider = await turns(runtime, session, folder, "again")
        assert "public gist" not in sent(provider)
        assert "digest" in caplog.text
        assert [m["reason"] for m in events(runtime, session, MISS)] == ["bad_block"]
        # Chosen again, it is what the first request showed.
        assert provider.requests[-1].messages[0] == first.requests[-1].messages[0]

    @pytest.mark.parametrize(
        ("key", "name", "ids"),
        [("fact_id", 999, "fact_ids"), ("team_id", "ab12", "team_ids")],
    )
    async def test_a_line_naming_a_fact_that_is_not_there_is_left_out(
        self, runtime: Runtime, folder: Path, key: str, name: object, ids: str
    ) -> None:
        # covers I4: checked at every use, one's own lines and (issue 40, item 3) the team's.
        fact(runtime, "The deploy key lives in Vault.")
        session = runtime.sessions.create("t")
        await turns(runtime, session, folder, "hello")
        [stable] = events(runtime, session, EVENT)
        line = json.dumps({key: name, "revision": 1, "text": "Ship it on Fridays."}) + "\n"
        forged = resealed(
            stable,
            facts=[*stable["facts"], {key: name, "revision": 1, "reason": "x", "line": line}],
        )
        assert not isinstance(parse(forged), str)
        runtime.sessions.append(session, forged)
        provider = await turns(runtime, session, folder, "again")
        assert "Fridays" not in sent(provider) and "Vault" in sent(provider)
        [miss] = events(runtime, session, MISS)
        assert (miss["reason"], miss[ids]) == ("fact_invalid", [name])
        assert {"fact_ids", "team_ids"} & set(miss) == {ids}

    async def test_a_block_past_the_caps_is_left_out(
        self, runtime: Runtime, folder: Path, caplog: pytest.LogCaptureFixture
    ) -> None:
        # covers I2: a recorded block larger than max_bytes is never sent as it is.
        session = runtime.sessions.create("t")
        await turns(runtime, session, folder, "hello")
        [stable] = events(runtime, session, EVENT)
        notes = "\n## MEMORY.md\n" + "x" * 40_000 + "\n"
        runtime.sessions.append(session, resealed(stable, notes=notes))
        with caplog.at_level(logging.WARNING):
            provider = await turns(runtime, session, folder, "again")
        assert "x" * 1000 not in sent(provider)
        assert "larger than the caps" in caplog.text

    async def test_a_malformed_record_is_left_out(self, runtime: Runtime, folder: Path) -> None:
        session = runtime.sessions.create("t")
        await turns(runtime, session, folder, "hello")
        bad = {"kind": "event", "type": EVENT, "place": "turn", "facts": "nonsense"}
        runtime.sessions.append(session, bad)
        [stable] = [e for e in events(runtime, session, EVENT) if e["place"] == "stable"]
        huge = {"fact_id": 2**70, "revision": 1, "reason": "x", "line": "{}\n"}
        runtime.sessions.append(session, resealed(stable, facts=[huge]))
        provider = await turns(runtime, session, folder, "again")
        assert provider.requests[-1].messages[-1]["content"] == "again"
