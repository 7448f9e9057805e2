"""`FactStore.citing`: how many facts cite each session, what deleting a session leaves
`missing` (S6); counted by attached reference of any revision, each fact once.

# covers S6
"""

from __future__ import annotations

from lecode_ls.memory.sessions.sources import source_snapshot
from lecode_ls.runtime import Runtime
from tests.unit.stores import chat, remember

MESSAGES = ({"role": "user", "content": "We use tabs."}, {"role": "user", "content": "Spaces."})


class TestCiting:
    def test_counts_each_fact_once_by_every_revisions_source(self, runtime: Runtime) -> None:
        a, b, quiet = chat(runtime, *MESSAGES), chat(runtime, *MESSAGES), chat(runtime, *MESSAGES)
        first = remember(runtime, a, 1, 1, "tabs")
        remember(runtime, a, 2, 2, "spaces")
        # Corrected with evidence from b: the fact now cites both sessions.
        ref = source_snapshot(runtime.sessions, b, 2, 2, exclusions=runtime.facts)
        runtime.facts.correct(
            first,
            "spaces, not tabs",
            expected_revision=1,
            ref=ref,
            check=runtime.check_source,
            has_authored_text=runtime.has_authored_text,
        )
        assert runtime.facts.citing([a, b, quiet]) == {a: 2, b: 1}

    def test_asks_in_chunks_within_sqlites_parameter_limit(self, runtime: Runtime) -> None:
        session = chat(runtime, *MESSAGES)
        remember(runtime, session, 1, 1, "tabs")
        many = [f"20260101T000000Z-{n:08x}" for n in range(1200)] + [session]
        assert runtime.facts.citing(many) == {session: 1}

    def test_nothing_cites_anything_before_the_first_fact(self, runtime: Runtime) -> None:
        assert runtime.facts.citing(["20260101T000000Z-00000000"]) == {}
        assert not runtime.facts_path.exists()
