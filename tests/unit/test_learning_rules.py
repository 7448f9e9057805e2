"""Rule-based learning (issue 31): the person's own convention sentences become facts with their
own message as the evidence, no model call; `[memory] learning` chooses rules, model or both,
and every candidate meets the same contract.

# covers A1, A4, A7, A8, A9, A11, V1
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, Literal

import pytest

from bench.small_session import COMPACT_AFTER, CONVENTIONS, EXCHANGES, NOT_FACTS, records
from lecode_ls.agent.compaction import compact_session
from lecode_ls.agent.learning_requests import is_reported
from lecode_ls.agent.learning_rules import is_convention, rule_candidates, sentences
from lecode_ls.agent.summary_check import salient_terms
from lecode_ls.config import MemorySettings, Settings
from lecode_ls.memory.recall import recall_fact
from lecode_ls.runtime import Runtime
from lecode_ls.tools.permissions import PermissionPolicy
from lecode_ls.tools.read import number_line
from tests.fakes.scripted_provider import ScriptedProvider, text_turn
from tests.unit.stores import make_runtime
from tests.unit.test_learning import WaitingExtraction

ALLOW = PermissionPolicy({"memory_write": "allow"})
Mode = Literal["model", "rules", "both"]


def runtime_for(tmp_path: Path, mode: Mode) -> Runtime:
    return make_runtime(tmp_path, Settings(memory=MemorySettings(auto_learn=True, learning=mode)))


def append(runtime: Runtime, session: str, start: int, end: int) -> None:
    for record in records(start, end):
        extra: dict[str, Any] = {"meta": {"generation": 0}} if record["role"] != "user" else {}
        runtime.sessions.append(session, {"kind": "message", **record, **extra})


def summary_of(start: int, end: int) -> str:
    """A summary that keeps every term of exchanges [0, end): it passes the summary check."""
    texts = [text for pair in EXCHANGES[:end] for text in pair]
    return "Kept: " + ", ".join(salient_terms(texts, [u for u, _ in EXCHANGES[:end]])) + "."


def events(runtime: Runtime, session: str, kind: str) -> list[dict[str, Any]]:
    length = runtime.sessions.length(session)
    return [r for r in runtime.sessions.read(session, 1, length - 1) if r.get("type") == kind]


async def three_compactions(runtime: Runtime, provider: ScriptedProvider) -> str:
    session = runtime.sessions.create("small")
    done = 0
    for after in COMPACT_AFTER:
        append(runtime, session, done, after)
        done = after
        outcome = await compact_session(
            runtime, session, provider, model="gpt-4o", window=None, policy=ALLOW
        )
        assert outcome.status == "compacted", outcome.reason
    return session


class TestRules:
    async def test_the_conventions_are_learned_and_no_one_off_request(self, tmp_path: Path) -> None:
        runtime = runtime_for(tmp_path, "rules")
        provider = ScriptedProvider().add(*(text_turn(summary_of(0, n)) for n in COMPACT_AFTER))
        session = await three_compactions(runtime, provider)
        assert len(provider.requests) == 3  # the summaries only: the rules make no call
        facts = runtime.facts.list()[0]
        assert sorted(f.text for f in facts) == sorted(CONVENTIONS)
        assert not {f.text for f in facts} & set(NOT_FACTS)
        for fact in facts:  # each cites its own message, which says it word for word
            recalled = recall_fact(runtime.facts, runtime.sessions, fact.id)
            assert recalled["status"] == "valid" and len(recalled["source"]["seqs"]) == 1
            [record] = json.loads(recalled["source_text"])
            assert record["role"] == "user" and record["content"] == fact.text
        learning = events(runtime, session, "learning")
        assert [e["status"] for e in learning] == ["learned", "learned", "learned"]
        assert all(by == "rules" for e in learning for by in e["learned_by"])
        # the colleague's preference has its code; no usage event: no extraction call was made
        assert sum(e["reason_counts"].get("reported_preference", 0) for e in learning) == 1
        assert [e for e in events(runtime, session, "memory_usage")] == []

    async def test_model_mode_runs_no_rules(self, tmp_path: Path) -> None:
        runtime = runtime_for(tmp_path, "model")
        empty = text_turn('{"candidates": []}')
        provider = ScriptedProvider()
        for n in COMPACT_AFTER:
            provider.add(text_turn(summary_of(0, n)), empty)
        session = await three_compactions(runtime, provider)
        assert runtime.facts.list()[0] == []
        assert [e["status"] for e in events(runtime, session, "learning")] == ["no_candidates"] * 3


def candidate(text: str, seqs: list[int], kind: str = "explicit_user_preference", **kw: Any) -> Any:
    return {"text": text, "source_seqs": seqs, "kind": kind, "quote": kw.get("quote", text),
            "supersedes": [], "proposal": False}  # fmt: skip


class TestBoth:
    async def test_a_candidate_citing_a_file_never_read_is_rejected_alone(
        self, tmp_path: Path
    ) -> None:
        # The 1.5B model labelled every candidate "read from a file" (issue 31): each is
        # rejected for itself, and the rules' facts and the model's good candidate still land.
        runtime = runtime_for(tmp_path, "both")
        session = runtime.sessions.create("small")
        append(runtime, session, 0, 6)
        line = 'requires-python = ">=3.11"'
        unverified = candidate(
            f'pyproject.toml contains "{line}"'.replace('">', '\\">').replace('="', '=\\"'),
            [3, 4],
            kind="verified_project_fact",
            quote=number_line(4, line),
        )
        answer = {
            "candidates": [
                unverified,
                candidate("We use tabs for indentation in this repo.", [1]),  # also a rule's
                candidate("Fix the typo in README.md.", [7]),  # a request: proposed
                candidate("we always squash commits", [1]),  # not in that message
            ]
        }
        provider = ScriptedProvider().add(
            text_turn(summary_of(0, 6)), text_turn(json.dumps(answer))
        )
        outcome = await compact_session(
            runtime, session, provider, model="gpt-4o", window=None, policy=ALLOW
        )
        learning = outcome.learning
        assert learning is not None and learning.status == "learned"
        texts = sorted(f.text for f in runtime.facts.list()[0])
        assert texts == sorted(
            ["We use tabs for indentation in this repo.",
             "We target Python 3.11, so never use syntax newer than 3.11."]
        )  # fmt: skip
        assert learning.learned_by == ["rules", "rules"]
        assert dict(learning.reason_counts) == {
            "unverified_project_evidence": 1,
            "exact_text_mismatch": 1,
        }
        assert [p["text"] for p in learning.proposals] == ["Fix the typo in README.md."]
        [usage] = events(runtime, session, "memory_usage")
        assert usage["purpose"] == "learning"

    async def test_a_model_candidate_quoting_a_colleague_is_rejected(self, tmp_path: Path) -> None:
        runtime = runtime_for(tmp_path, "model")
        session = runtime.sessions.create("small")
        append(runtime, session, 6, 10)  # pathlib, the colleague (seq 3), the temporary one
        append(runtime, session, 12, 14)
        cropped = candidate("we always squash commits before merging.", [3])
        provider = ScriptedProvider().add(
            text_turn(summary_of(0, 10)), text_turn(json.dumps({"candidates": [cropped]}))
        )
        outcome = await compact_session(
            runtime, session, provider, model="gpt-4o", window=None, policy=ALLOW
        )
        assert outcome.learning is not None
        assert (outcome.learning.status, dict(outcome.learning.reason_counts)) == (
            "rejected",
            {"reported_preference": 1},
        )
        assert runtime.facts.list()[0] == []

    async def test_a_forget_during_the_extraction_discards_the_rules_candidates_too(
        self, tmp_path: Path
    ) -> None:
        # covers A8: the rules' snapshots were taken before the call; promotion rechecks
        runtime = runtime_for(tmp_path, "both")
        other = runtime.sessions.create("other")
        runtime.sessions.append(other, {"kind": "message", "role": "user", "content": "x"})
        from tests.unit.stores import remember

        unrelated = remember(runtime, other, 1, 1, "x")
        session = runtime.sessions.create("small")
        append(runtime, session, 0, 6)
        provider = WaitingExtraction(text_turn('{"candidates": []}'))
        task = asyncio.create_task(
            compact_session(runtime, session, provider, model="gpt-4o", window=None, policy=ALLOW)
        )
        await provider.waiting.wait()
        runtime.facts.forget(unrelated)
        provider.release.set()
        outcome = await task
        assert outcome.learning is not None and outcome.learning.status == "stale"
        assert runtime.facts.list()[0] == []


class TestSentences:
    def test_sentences_are_exact_slices_outside_code_and_quotes(self) -> None:
        text = (
            "Fix the build. We use tabs in this repo!\n"
            "```\nalways use spaces\n```\n"
            "    never indented code\n> Never a quote.\nKeep it short."
        )
        found = [text[a:b] for a, b in sentences(text)]
        assert found == ["Fix the build.", "We use tabs in this repo!", "Keep it short."]

    @pytest.mark.parametrize(
        "sentence",
        [
            "We use tabs for indentation.",
            "Always run ruff before committing.",
            "Never commit uv.lock.",
            "Prefer pathlib over os.path.",
            "Don't add dependencies without asking.",
            "I prefer f-strings.",
            "Tests must pass before merging.",
            "Run the tests with pytest -x in this repo.",
            "Please always use tabs.",
        ],
    )
    def test_conventions(self, sentence: str) -> None:
        assert is_convention(sentence)
        assert rule_candidates({1: {"role": "user", "content": sentence}})[0]

    @pytest.mark.parametrize(
        "sentence",
        [
            "Fix the typo in README.md.",
            "Read pyproject.toml and tell me its requires-python line.",
            "Can you rename parse_args to parse_options?",
            "Show me the last error in the log.",
            "The build fails on CI.",
            "Use the read tool to show me pyproject.toml.",
            "Do we always use tabs?",
            "Thanks.",
        ],
    )
    def test_one_off_requests_and_statements_are_not_candidates(self, sentence: str) -> None:
        assert rule_candidates({1: {"role": "user", "content": sentence}}) == ([], [])

    @pytest.mark.parametrize(
        ("message", "code"),
        [
            ("My colleague says we always squash commits.", "reported_preference"),
            ('"We always use spaces," my colleague wrote.', "reported_preference"),
            ("My boss wrote:\nAlways use spaces.", "reported_preference"),
            ("According to the docs, always pin versions.", "reported_preference"),
            ("For now, always use spaces.", "temporary_preference"),
            ("Always use tabs " + "really " * 100 + "everywhere.", "invalid_text"),
        ],
    )
    def test_a_convention_in_form_that_fails_a_guard_counts_its_code(
        self, message: str, code: str
    ) -> None:
        assert rule_candidates({1: {"role": "user", "content": message}}) == ([], [code])

    def test_reported_speech(self) -> None:
        message = "We use tabs. My colleague says we always use spaces."
        assert not is_reported(message, 0, 12)
        start = message.index("we always")
        assert is_reported(message, start, len(message))

    def test_at_most_sixteen_candidates(self) -> None:
        message = " ".join(f"Always run check{n} first." for n in range(40))
        candidates, _ = rule_candidates({1: {"role": "user", "content": message}})
        assert len(candidates) == 16
