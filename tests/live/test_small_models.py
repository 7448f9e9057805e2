"""What issue 31 fixed, against the real 0.5B model: the small session of bench/small_session.py
compacted three times with rule-based learning, a compaction answered with the previous summary,
and a tool call cut off by a small output cap. What is asserted is what lecode-ls did with what
the server sent (the tap's record), never the model's words.

# covers C4, A4, A9, T1, K2
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.compare.tap import Tap
from bench.small_session import COMPACT_AFTER, CONVENTIONS, EXCHANGES, NOT_FACTS, records
from lecode_ls.agent.compaction import compact_session
from lecode_ls.agent.openai import OpenAICompatible
from lecode_ls.agent.replay import complete_arguments
from lecode_ls.config import MemorySettings, Settings
from lecode_ls.memory.project.identity import Project
from lecode_ls.memory.working import working_view
from lecode_ls.runtime import Runtime
from lecode_ls.tools.permissions import PermissionPolicy
from tests.e2e.conftest import Start
from tests.e2e.test_chat import Deltas
from tests.live.conftest import MODEL_NAME, WINDOW, provider_options
from tests.live.test_live import READ, send, session
from tests.live.test_live import records as transcript

pytestmark = [pytest.mark.live, pytest.mark.timeout(900)]

ALLOW = PermissionPolicy({"memory_write": "allow"})


def covered(start: int, end: int) -> set[str]:
    return {user for user, _ in EXCHANGES[start:end]}


class TestTheSmallSession:
    async def test_summaries_keep_or_are_rejected_and_rules_learn_only_conventions(
        self, tap: Tap, tmp_path: Path
    ) -> None:
        # covers C4, A4: three compactions of a dozen exchanges, learning by rules; then a
        # fourth that the tap answers with the previous summary, as the 0.5B model did
        memory = MemorySettings(auto_learn=True, learning="rules", rules_learn="remember")
        settings = Settings(memory=memory)
        project = Project(root=tmp_path / "project", slug="small-000000000000")
        runtime = Runtime(project, tmp_path / "config", settings)
        provider = OpenAICompatible(tap.base_url, MODEL_NAME, None, read_timeout=300.0)
        try:
            sid = runtime.sessions.create("small")
            done, first_uncovered, learned_from = 0, 0, set()
            for after in COMPACT_AFTER:
                for record in records(done, after):
                    extra = {"meta": {"generation": 0}} if record["role"] != "user" else {}
                    runtime.sessions.append(sid, {"kind": "message", **record, **extra})
                before = working_view(runtime.sessions, runtime.facts, sid).summary
                calls = len(tap.calls)
                outcome = await compact_session(
                    runtime, sid, provider, model=MODEL_NAME, window=WINDOW, policy=ALLOW
                )
                [made] = [c for c in tap.calls[calls:] if c.purpose == "summary"]
                assert [c.purpose for c in tap.calls[calls:]] == ["summary"]  # rules: no call
                prior_lines = set((before or {}).get("summary", "").split("\n"))
                answer_lines = {line for line in made.text.strip().split("\n") if line.strip()}
                if before is not None and answer_lines <= prior_lines:
                    # the model gave the previous summary back: rejected, saying so
                    assert (outcome.status, outcome.reason) == ("rejected", "unchanged_summary")
                assert outcome.status in ("compacted", "rejected"), outcome.reason
                if outcome.status == "compacted":  # it covers all but the last two exchanges
                    learned_from |= covered(first_uncovered, after - 2)
                    first_uncovered = after - 2
                done = after
            facts = {f.text for f in runtime.facts.list()[0]}
            assert not facts & set(NOT_FACTS)  # no one-off request, reported or temporary one
            assert facts <= set(CONVENTIONS)
            assert facts >= set(CONVENTIONS) & learned_from  # every covered convention
            # The previous summary given back for new exchanges is rejected.
            view = working_view(runtime.sessions, runtime.facts, sid)
            for record in records(0, 2):
                runtime.sessions.append(sid, {"kind": "message", **record, "meta": {}})
            tap.faults["summary"] = "previous_summary"
            outcome = await compact_session(
                runtime, sid, provider, model=MODEL_NAME, window=WINDOW, policy=ALLOW
            )
            if view.summary is not None:
                assert (outcome.status, outcome.reason) == ("rejected", "unchanged_summary")
            else:
                assert outcome.status == "rejected"  # the tap's answer is empty: nothing prior
        finally:
            await provider.aclose()
            runtime.close()


class TestACutOffToolCall:
    async def test_a_small_output_cap_leaves_the_session_usable(
        self, start: Start, workspace: Path, tap: Tap, isolated_config_dir: Path
    ) -> None:
        # covers T1, K2: the call is cut at 16 tokens (the setting's least: a smaller cap is
        # refused and the default used); it is never run nor sent back, the turn still ends
        # with an answer, and the next turn works
        client = await start(
            workspace, options=provider_options(tap.base_url, agent={"max_output_tokens": 16})
        )
        deltas = Deltas(client)
        sid = await session(client)
        tap.keep_bodies = True
        first = await send(client, sid, READ)
        second = await send(client, sid, "Say OK.")
        for made in tap.calls:
            assert made.status == 200, made.error  # no request refused: the session lives
        assert {c.max_tokens for c in tap.calls if c.purpose == "chat"} == {16}
        for index in tap.bodies:
            if not tap.bodies[index]:  # a GET (the server's window): no body
                continue
            body = json.loads(tap.bodies[index])
            for message in body.get("messages", []):
                for call in message.get("tool_calls", []):
                    assert complete_arguments(call["function"]["arguments"])
        kept = transcript(isolated_config_dir, workspace, sid)
        cut = [r for r in kept if r.get("meta", {}).get("truncated_tool_calls")]
        if cut:  # the model's call was cut off, as intended: the turn still answered
            assert any(r.get("type") == "truncated_tool_call" for r in kept)
        for result in (first, second):
            assert result["stopReason"] in ("stop", "length", "toolLimit")
        assert deltas.text()  # the person got words
