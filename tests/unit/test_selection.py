"""Which facts fill the facts allocation, in which order, and why (memory/selection.py through
`build_memory_section`): pinned, anchored in an open or read file, ranked for the turn, recent;
the caps hold whatever is selected, and a turn keeps its selection while the store does.

# covers I3 (only which facts fill the allocation changes), I4, issue 25 items 2 and 3
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lecode_ls.config import MemorySettings, Settings
from lecode_ls.memory.anchors.capture import make_anchor
from lecode_ls.memory.anchors.text import split_lines
from lecode_ls.memory.injection import InjectedMemory, build_memory_section
from lecode_ls.memory.selection import TurnSelection, select, turn_query
from lecode_ls.memory.sessions.sources import source_snapshot
from lecode_ls.runtime import Runtime
from tests.unit import stores
from tests.unit.stores import chat


@pytest.fixture
def runtime(tmp_path: Path) -> Runtime:
    return stores.make_runtime(tmp_path)


def many(runtime: Runtime, count: int) -> list[int]:
    """`count` facts, each from its own user message in one session."""
    texts = [f"The billing-{n} service reads its signing key from Vault." for n in range(count)]
    session = chat(runtime, *({"role": "user", "content": text} for text in texts))
    ids = []
    for seq, text in enumerate(texts, start=1):
        ref = source_snapshot(runtime.sessions, session, seq, seq, exclusions=runtime.facts)
        ids.append(runtime.facts.remember(text, ref, check=runtime.check_source)[0])
    return ids


def shown(section: InjectedMemory) -> list[dict[str, Any]]:
    return [json.loads(line) for line in section.text.splitlines() if line.startswith("{")]


def for_turn(runtime: Runtime, message: str, read: tuple[str, ...] = ()) -> InjectedMemory:
    selection = select(runtime, turn_query(message, [], read))
    return build_memory_section(runtime, read, selection)


class TestTheOrder:
    def test_the_fact_the_message_asks_about_is_shown_though_it_is_old(
        self, runtime: Runtime
    ) -> None:
        ids = many(runtime, 300)
        section = for_turn(runtime, "Quick question about billing-12: what is its signing key?")
        assert ids[12] in section.fact_ids
        [line] = [entry for entry in shown(section) if entry["fact_id"] == ids[12]]
        assert line["reason"] == "matched: billing-12, signing, key"
        assert section.reasons[ids[12]] == line["reason"]
        # Without the question, only the 50 most recent are considered: it is not among them.
        assert ids[12] not in build_memory_section(runtime).fact_ids

    def test_pinned_facts_come_first_then_anchored_then_ranked_then_recent(
        self, runtime: Runtime, tmp_path: Path
    ) -> None:
        folder = (tmp_path / "work").resolve()
        folder.mkdir()
        (folder / "app.py").write_text("def main():\n    run()\n")
        runtime.drift.add_folder(folder)
        ids = many(runtime, 5)
        session = chat(runtime, {"role": "user", "content": "main runs"})
        ref = source_snapshot(runtime.sessions, session, 1, 1, exclusions=runtime.facts)
        anchor = make_anchor(split_lines("def main():\n    run()\n")[1:2], 2, "app.py", None)
        anchored, _ = runtime.facts.remember(
            "main calls run", ref, check=runtime.check_source, anchors=[anchor]
        )
        runtime.drift.reload()
        office = stores.remember(
            runtime, chat(runtime, {"role": "user", "content": "x"}), 1, 1, "The office is in Lyon."
        )
        runtime.facts.ranking.pin(ids[3])
        section = for_turn(runtime, "what about billing-1?", read=("app.py",))
        reasons = [(entry["fact_id"], entry["reason"]) for entry in shown(section)]
        assert reasons[:3] == [
            (ids[3], "pinned"),
            (anchored, "anchored in app.py"),
            (ids[1], "matched: billing-1"),
        ]
        # The other billing facts match "billing" only; then the recent ones; each fact once.
        assert [r for _, r in reasons[3:]] == ["matched: billing"] * 3 + ["recent"]
        assert reasons[-1][0] == office
        assert sorted(i for i, _ in reasons) == sorted([*ids, anchored, office])

    def test_the_caps_hold_whatever_is_selected(self, runtime: Runtime) -> None:
        many(runtime, 100)
        runtime.settings = Settings(memory=MemorySettings(max_bytes=32768, facts_max_bytes=1024))
        section = for_turn(runtime, "billing-7 billing-8 billing-9 signing key")
        block = section.text[section.text.index("## Durable facts") :]
        assert len(("\n" + block).encode("utf-8")) <= 1024
        assert 0 < len(section.fact_ids) < 10


class TestATurnKeepsItsSelection:
    def test_the_selection_is_kept_until_the_store_changes(self, runtime: Runtime) -> None:
        ids = many(runtime, 60)
        turn = TurnSelection()
        query = turn_query("billing-3 signing key", [], [])
        first = turn.refresh(runtime, query)
        assert turn.refresh(runtime, turn_query("something else", [], [])) is first
        runtime.facts.ranking.record_use(ids[:5])  # shown to a model: not a change
        assert turn.refresh(runtime, query) is first
        runtime.facts.ranking.pin(ids[0])
        second = turn.refresh(runtime, query)
        assert second is not first and [p.fact_id for p in second.pinned] == [ids[0]]
        # The turn's own query is kept: the first one it was given.
        assert [p.fact_id for p in second.ranked][:1] == [ids[3]]

    def test_facts_shown_to_a_model_become_recent(self, runtime: Runtime) -> None:
        ids = many(runtime, 60)
        assert ids[0] not in build_memory_section(runtime).fact_ids
        runtime.facts.ranking.record_use([ids[0]])
        section = build_memory_section(runtime)
        assert ids[0] in section.fact_ids and section.reasons[ids[0]] == "recent"
