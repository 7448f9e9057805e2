"""Rule-based learning (issue 31): the person's own convention sentences become facts with their
own message as the evidence, no model call; `[memory] learning` chooses rules, model or both,
and every candidate meets the same contract.

# covers A1, A4, A7, A8, A9, A11, V1
"""

from __future__ import annotations

import asyncio
import json
from datetime import date
from pathlib import Path
from typing import Any, Literal

import pytest

from bench.small_session import COMPACT_AFTER, CONVENTIONS, EXCHANGES, NOT_FACTS, records
from lecode_ls.agent.compaction import compact_session
from lecode_ls.agent.learning_requests import is_reported
from lecode_ls.agent.learning_rules import (
    RULE_CODES,
    classify,
    is_convention,
    rule_candidates,
    sentences,
)
from lecode_ls.agent.summary_check import salient_terms
from lecode_ls.config import MemorySettings, Settings
from lecode_ls.errors import InvalidParams, ReadonlyMode
from lecode_ls.memory.learning_status import REASON_CODES, dismiss, latest_learning
from lecode_ls.memory.recall import recall_fact
from lecode_ls.runtime import Runtime
from lecode_ls.tools.permissions import PermissionPolicy
from lecode_ls.tools.read import number_line
from lecode_ls.tools.slash import Invocation, run_memory_command
from tests.fakes.scripted_provider import ScriptedProvider, text_turn
from tests.unit.stores import make_runtime
from tests.unit.test_learning import WaitingExtraction

ALLOW = PermissionPolicy({"memory_write": "allow"})
Mode = Literal["model", "rules", "both"]


def runtime_for(
    tmp_path: Path, mode: Mode, rules_learn: Literal["propose", "remember"] = "remember"
) -> Runtime:
    memory = MemorySettings(auto_learn=True, learning=mode, rules_learn=rules_learn)
    return make_runtime(tmp_path, Settings(memory=memory))


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
        # the model affirmed the rules' "We use tabs ...": it is the model's (issue 41)
        assert learning.learned_by == ["rules", "model"]
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
            "Always run make check before pushing in this repo.",
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
            "Run make check.",
            "The demo crashes on login.",
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


def verdict(message: str, sentence: str | None = None) -> str | None:
    sentence = message if sentence is None else sentence
    start = message.index(sentence)
    return classify(message, start, start + len(sentence))


class TestClassify:
    """Each rule of learning_rules.classify, with the sentence it decides (issue 41)."""

    # covers A4
    @pytest.mark.parametrize(
        "sentence",
        [
            "Always run make check before pushing in this repo.",  # a task verb, project scope
            "We always squash commits before merging.",  # the team's habit
            "Our team writes docs in British English in this project.",
            "From now on, put type hints on every public function.",
            "Never use print for logging in this project.",
            "Commit messages must be written in English.",  # a rule about something general
            "Make sure every new endpoint has an OpenAPI description.",
            "In this project we are always using tabs, never spaces.",  # non-native phrasing
            "Update the docs whenever you change a flag.",  # a task verb, a strong habit
            "Please write the tests in English, our team does not read French.",
            "We need every public function documented in this repo.",  # "need" is not past
        ],
    )
    def test_a_lasting_convention_of_ones_own_passes(self, sentence: str) -> None:
        assert verdict(sentence) is None

    # covers A4, A9
    @pytest.mark.parametrize(
        ("sentence", "code"),
        [
            ("Run make check.", "one_off_request"),  # a task verb without a lasting scope
            ("Run make check before pushing.", "one_off_request"),
            ("Do we always use tabs?", "one_off_request"),
            ("Use the read tool to show me pyproject.toml.", "one_off_request"),
            ("If we always used tabs, the diff would be smaller.", "hypothetical"),
            ("Maybe we should always run the slow tests too.", "hypothetical"),
            ("We used to always squash commits.", "past_practice"),
            ("At my old job we always used Jenkins.", "past_practice"),
            ("We never got the staging env to work.", "past_practice"),
            ("We always forget to run the tests.", "observation"),
            ("I always get confused by this config.", "observation"),
            ("Please never do that again.", "task_scoped"),
            ("Always double-check this migration before running it.", "task_scoped"),
            ("For now, always use spaces.", "temporary_preference"),
            ("Today we always deploy by hand.", "temporary_preference"),
            ("In this PR, always use the new logger.", "task_scoped"),
            ("Always use the mock server for this loop.", "task_scoped"),
            ("We use a lot of memory here.", "task_scoped"),
            ("Use the staging database every time you reproduce the crash.", "task_scoped"),
            ("Use the staging database to reproduce the crash.", "task_scoped"),
            ("Keep the fix small.", "task_scoped"),
            ("Use four spaces for indentation.", "no_lasting_scope"),
            ("Avoid the network call in the unit test.", "no_lasting_scope"),
            ("The demo crashes on login.", "no_convention_form"),
        ],
    )
    def test_a_sentence_that_is_not_a_lasting_convention_gets_its_code(
        self, sentence: str, code: str
    ) -> None:
        assert verdict(sentence) == code

    # covers A4: issue 41's bad input
    def test_a_convention_quoted_from_someone_else_is_reported(self) -> None:
        # covers A4, A9
        assert verdict("My lead insists we never use ORMs in this repo.") == "reported_preference"
        assert verdict("The style guide says always use four spaces.") == "reported_preference"

    def test_a_convention_negated_later_in_the_message_is_retracted(self) -> None:
        # covers A4, A9
        first = "Always use tabs in this repo."
        assert verdict(first + " Actually, never mind.", first) == "retracted_preference"
        assert verdict(first + "\nNo, we don't.", first) == "retracted_preference"
        assert verdict(first + " Thanks!", first) is None

    def test_a_sentence_over_512_bytes_is_invalid_text_and_512_passes(self) -> None:
        # covers A3, A4, A9
        head, tail = "Always use tabs in this repo", " please."
        fits = head + " x" * ((512 - len(head) - len(tail)) // 2) + tail
        fits += "." * (512 - len(fits.encode()))
        assert len(fits.encode()) == 512 and verdict(fits) is None
        assert verdict(fits + ".") == "invalid_text"

    def test_a_sentence_in_another_script_is_unsupported(self) -> None:
        # covers A4, A9
        assert verdict("\u0412 этом репозитории всегда используем табы.") == "unsupported_script"
        assert verdict("在这个项目里我们总是使用空格缩进。") == "unsupported_script"
        # Latin letters with accents are Latin: the English rules still read the sentence
        assert verdict("Always write café with an accent in this repo.") is None

    def test_every_counted_code_is_a_documented_reason_code(self) -> None:
        # covers A4, A9
        assert set(RULE_CODES) <= set(REASON_CODES)


class TestIssueSession:
    """The session of issue 41: a bug report, two requests, and filler."""

    MESSAGE = (
        "The demo crashes on login.\nUse the staging database to reproduce the crash.\n"
        "Keep the fix small."
    )

    def test_no_candidate_and_each_request_counted(self) -> None:
        # covers A4, A9
        candidates, codes = rule_candidates({1: {"role": "user", "content": self.MESSAGE}})
        assert (candidates, codes) == ([], ["task_scoped", "task_scoped"])


class TestPromotion:
    async def test_by_default_the_rules_propose_and_remember_nothing(self, tmp_path: Path) -> None:
        # covers A6, A9: rules_learn = "propose" is the default
        runtime = make_runtime(tmp_path, Settings(memory=MemorySettings(auto_learn=True)))
        assert runtime.settings.memory.rules_learn == "propose"
        empty = text_turn('{"candidates": []}')
        provider = ScriptedProvider()
        for n in COMPACT_AFTER:
            provider.add(text_turn(summary_of(0, n)), empty)
        session = await three_compactions(runtime, provider)
        assert runtime.facts.list()[0] == []
        learning = events(runtime, session, "learning")
        assert [e["status"] for e in learning] == ["proposed"] * 3
        proposed = [p["text"] for e in learning for p in e["proposals"]]
        assert sorted(proposed) == sorted(CONVENTIONS)
        assert {p["why"] for e in learning for p in e["proposals"]} == {
            "a rule found a lasting convention and no model affirmed it"
        }

    async def test_a_rule_candidate_the_model_affirms_is_a_fact(self, tmp_path: Path) -> None:
        # covers A4: the model proposing the same sentence from the same message affirms it
        runtime = runtime_for(tmp_path, "both", rules_learn="propose")
        session = runtime.sessions.create("small")
        append(runtime, session, 0, 6)
        affirmed = candidate("We use tabs for indentation in this repo.", [1])
        provider = ScriptedProvider().add(
            text_turn(summary_of(0, 6)), text_turn(json.dumps({"candidates": [affirmed]}))
        )
        outcome = await compact_session(
            runtime, session, provider, model="gpt-4o", window=None, policy=ALLOW
        )
        assert outcome.learning is not None
        assert [f.text for f in runtime.facts.list()[0]] == [affirmed["text"]]
        assert outcome.learning.learned_by == ["model"]
        assert [p["text"] for p in outcome.learning.proposals] == [
            "We target Python 3.11, so never use syntax newer than 3.11."
        ]


class TestAccept:
    """A proposal is accepted in one step (issue 41): /memory accept <n>."""

    async def proposed(self, tmp_path: Path) -> tuple[Runtime, str]:
        runtime = make_runtime(tmp_path, Settings(memory=MemorySettings(auto_learn=True)))
        provider = ScriptedProvider().add(
            text_turn(summary_of(0, 6)), text_turn('{"candidates": []}')
        )
        session = runtime.sessions.create("small")
        append(runtime, session, 0, 6)
        outcome = await compact_session(
            runtime, session, provider, model="gpt-4o", window=None, policy=ALLOW
        )
        assert outcome.learning is not None and outcome.learning.status == "proposed"
        return runtime, session

    async def test_accept_remembers_the_proposal_with_its_evidence(self, tmp_path: Path) -> None:
        # covers A6, T5
        runtime, session = await self.proposed(tmp_path)
        [learning] = events(runtime, session, "learning")
        texts = [p["text"] for p in learning["proposals"]]
        answer = run_memory_command(runtime, "accept 1", date(2026, 1, 1), Invocation())
        assert answer == "Proposal 1 is remembered as fact #1 (revision 1)."
        [fact] = runtime.facts.list()[0]
        assert fact.text == texts[1]
        recalled = recall_fact(runtime.facts, runtime.sessions, fact.id)
        assert recalled["status"] == "valid"
        assert recalled["source"]["seqs"] == learning["proposals"][1]["source"]["seqs"]
        # it is listed no more; the other proposal still is, and can be accepted in turn
        status = latest_learning(runtime.sessions, runtime.facts, session)
        assert status is not None
        assert [p["index"] for p in status["proposals"]] == [0]
        run_memory_command(runtime, "accept 0", date(2026, 1, 1), Invocation())
        assert sorted(f.text for f in runtime.facts.list()[0]) == sorted(texts)

    async def test_a_proposal_no_longer_listed_is_refused_naming_it(self, tmp_path: Path) -> None:
        runtime, session = await self.proposed(tmp_path)
        [learning] = events(runtime, session, "learning")
        dismiss(runtime.sessions, session, learning["seq"], 0)
        with pytest.raises(InvalidParams, match="index: proposal 0 is no longer listed"):
            run_memory_command(runtime, "accept 0", date(2026, 1, 1), Invocation())
        with pytest.raises(InvalidParams, match="index: the learning event has no proposal 9"):
            run_memory_command(runtime, "accept 9", date(2026, 1, 1), Invocation())
        with pytest.raises(ReadonlyMode):
            run_memory_command(runtime, "accept 1", date(2026, 1, 1), Invocation(readonly=True))
        assert runtime.facts.list()[0] == []


class TestAModelsCandidate:
    """The rules veto a model's candidate that they know is about one task (issue 41)."""

    async def test_a_task_the_model_calls_a_preference_is_rejected_with_the_rules_code(
        self, tmp_path: Path
    ) -> None:
        # covers A4: one-off and task-scoped requests are not preferences, whoever proposes them
        from tests.unit.test_learning import answer, message
        from tests.unit.test_learning import candidate as model_candidate

        runtime = runtime_for(tmp_path, "model")
        session = runtime.sessions.create("bug")
        message(runtime, session, "user", TestIssueSession.MESSAGE)
        message(runtime, session, "assistant", "I will look at the login code.")
        for n in range(3):
            message(runtime, session, "user", f"filler {n}")
            message(runtime, session, "assistant", f"ok {n}")
        extraction = answer(
            model_candidate("Keep the fix small.", [1]),
            model_candidate("Use the staging database to reproduce the crash.", [1]),
        )
        summary = (
            "The demo crashes on login; the person asked to use the staging database to "
            "reproduce the crash and to keep the fix small; then filler 0, 1 and 2."
        )
        provider = ScriptedProvider().add(text_turn(summary), extraction)
        outcome = await compact_session(
            runtime, session, provider, model="gpt-4o", window=None, policy=ALLOW
        )
        learning = outcome.learning
        assert learning is not None, outcome
        assert (learning.status, dict(learning.reason_counts)) == (
            "rejected",
            {"task_scoped": 2},
        )
        assert runtime.facts.list()[0] == [] and learning.proposals == []
