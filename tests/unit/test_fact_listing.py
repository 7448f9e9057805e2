"""The fact listing with its learning status (R8, A6) at its worst: escaping-heavy proposals and
facts citing 200 positions. Every page stays within 16,384 bytes with the status counted, holds
a fact while any is left (so following next_offset ends), and `/memory facts` keeps the cap in
the text it prints.

# covers R8, A6
"""

from __future__ import annotations

import json
from datetime import date
from typing import Any

from lecode_ls.memory.learning_status import MAX_STATUS_BYTES, latest_learning
from lecode_ls.memory.recall import MAX_OUTPUT_BYTES, list_facts
from lecode_ls.memory.sessions.sources import source_snapshot
from lecode_ls.runtime import Runtime
from lecode_ls.tools.slash import Invocation, run_memory_command

HEAVY = "\x01" * 512  # 512 characters, 3,072 bytes of JSON


def size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False).encode("utf-8"))


def worst_store(runtime: Runtime) -> str:
    """20 facts of HEAVY text citing 200 positions each, and a learning event with four valid
    proposals of HEAVY text; the session's ID."""
    sessions = runtime.sessions
    session = sessions.create("heavy")
    for n in range(200):
        sessions.append(session, {"kind": "message", "role": "user", "content": f"{n} {HEAVY}"})
    wide = source_snapshot(sessions, session, 1, 200, exclusions=runtime.facts)
    for n in range(20):
        runtime.facts.remember(f"{n} {HEAVY}", wide, check=runtime.check_source)
    proposals = []
    for n in range(4):
        text = f"{n} {HEAVY}"[:512]
        ref = source_snapshot(sessions, session, n + 1, n + 1, exclusions=runtime.facts)
        proposals.append(
            {
                "text": text,
                "kind": "explicit_user_preference",
                "source": ref.to_json(),
                "supersedes": [],
            }
        )
    sessions.append(
        session,
        {
            "kind": "event",
            "type": "learning",
            "status": "proposed",
            "reason_counts": {},
            "learned": [],
            "proposals": proposals,
            "compact_seq": 1,
            "generation": runtime.facts.generation(),
        },
    )
    return session


class TestTheWorstCase:
    def test_the_status_keeps_within_its_share_and_counts_what_it_leaves_out(
        self, runtime: Runtime
    ) -> None:
        session = worst_store(runtime)
        status = latest_learning(runtime.sessions, runtime.facts, session)
        assert status is not None
        assert size(status) <= MAX_STATUS_BYTES
        assert len(status["proposals"]) + status["omitted_proposals"] == 4
        assert status["omitted_proposals"] > 0

    def test_every_page_fits_with_the_status_and_paging_ends(self, runtime: Runtime) -> None:
        session = worst_store(runtime)
        status = latest_learning(runtime.sessions, runtime.facts, session)
        seen: list[int] = []
        offset: int | None = 0
        while offset is not None:
            page = list_facts(runtime.facts, runtime.sessions, offset, learning=status)
            assert size(page) <= MAX_OUTPUT_BYTES
            assert page["facts"], "a page without a fact would never end"
            seen += [fact["fact_id"] for fact in page["facts"]]
            offset = page["next_offset"]
        assert seen == list(range(1, 21))

    def test_memory_facts_keeps_the_cap_in_the_text_it_prints(self, runtime: Runtime) -> None:
        session = worst_store(runtime)
        text = run_memory_command(runtime, "facts", date.today(), Invocation(session_id=session))
        assert len(text.encode("utf-8")) <= MAX_OUTPUT_BYTES
        assert text.startswith("#1 r1 valid") and "proposal 0 " in text
        assert "more proposal(s)" in text
