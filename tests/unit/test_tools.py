"""The eight memory tools (T1-T4, T6): definitions per mode, dispatch, strict arguments,
permissions, readonly and child refusals, and correction/forgetting through the tools."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lecode_ls.actions import FACTS, NOTHING, Changed
from lecode_ls.config import MemorySettings, Settings
from lecode_ls.memory.project.identity import Project
from lecode_ls.memory.sessions.sources import source_snapshot
from lecode_ls.runtime import Runtime
from lecode_ls.tools.memory import (
    SPECS,
    ToolResult,
    run_tool,
    tool_definitions,
)
from lecode_ls.tools.permissions import PermissionPolicy
from tests.unit.stores import chat, remember

READERS = ["memory_read", "memory_search", "memory_recall", "memory_list"]
WRITERS = ["memory_write", "memory_edit", "memory_correct", "memory_forget"]
ALLOW = PermissionPolicy(default="allow")


def call(
    runtime: Runtime,
    name: str,
    args: dict[str, Any] | str,
    *,
    policy: PermissionPolicy = ALLOW,
    readonly: bool = False,
    child: bool = False,
) -> ToolResult:
    text = args if isinstance(args, str) else json.dumps(args)
    return run_tool(runtime, name, text, policy=policy, readonly=readonly, child=child)


def body(result: ToolResult) -> Any:
    return json.loads(result.content)


def names(definitions: list[dict[str, Any]]) -> list[str]:
    return [d["function"]["name"] for d in definitions]


@pytest.fixture
def fact(runtime: Runtime) -> tuple[int, str]:
    """A fact remembered from a user message; returns (fact_id, session_id)."""
    session = chat(
        runtime,
        {"role": "user", "content": "We use tabs."},
        {"role": "assistant", "content": "Noted."},
    )
    return remember(runtime, session, 1, 2, "The project uses tabs."), session


class TestDefinitions:
    def test_all_eight_tools_are_offered_in_openai_format(self) -> None:
        # covers T1
        definitions = tool_definitions(readonly=False, child=False, enabled=True)
        assert sorted(names(definitions)) == sorted(READERS + WRITERS)
        for definition in definitions:
            assert definition["type"] == "function"
            assert set(definition["function"]) == {"name", "description", "parameters"}
            assert definition["function"]["parameters"]["type"] == "object"
            assert definition["function"]["parameters"]["additionalProperties"] is False

    def test_classes_match_the_spec(self) -> None:
        # covers T2
        assert {s.name: s.tool_class for s in SPECS} == {
            **{n: "read" for n in READERS},
            **{n: "write" for n in WRITERS},
        }

    @pytest.mark.parametrize(("readonly", "child"), [(True, False), (False, True), (True, True)])
    def test_readonly_and_child_contexts_get_only_the_readers(
        self, readonly: bool, child: bool
    ) -> None:
        # covers T2, T3
        definitions = tool_definitions(readonly=readonly, child=child, enabled=True)
        assert sorted(names(definitions)) == sorted(READERS)

    def test_disabled_memory_offers_no_memory_tool(self) -> None:
        # covers K1
        assert tool_definitions(readonly=False, child=False, enabled=False) == []

    def test_reader_descriptions_say_results_are_untrusted_evidence(self) -> None:
        for spec in SPECS:
            if spec.tool_class == "read":
                assert "untrusted evidence" in spec.description


class TestHappyPaths:
    def test_memory_write_appends_and_replaces_and_reports_the_changed_file(
        self, runtime: Runtime
    ) -> None:
        # covers T1
        first = call(
            runtime, "memory_write", {"file": "MEMORY.md", "content": "a", "mode": "append"}
        )
        assert first == ToolResult(
            json.dumps({"file": "MEMORY.md", "mode": "append", "bytes": 1}),
            False,
            Changed(notes=("MEMORY.md",)),
        )
        call(runtime, "memory_write", {"file": "MEMORY.md", "content": "b", "mode": "append"})
        assert runtime.markdown.read("MEMORY.md") == ("a\nb", True)
        call(runtime, "memory_write", {"file": "MEMORY.md", "content": "c", "mode": "replace"})
        assert runtime.markdown.read("MEMORY.md") == ("c", True)

    def test_memory_read_returns_the_file_content(self, runtime: Runtime) -> None:
        runtime.markdown.write("notes/build.md", "run uv sync\n", "replace")
        result = call(runtime, "memory_read", {"file": "notes/build.md"})
        assert body(result) == {
            "file": "notes/build.md",
            "exists": True,
            "content": "run uv sync\n",
        }
        missing = call(runtime, "memory_read", {"file": "scratchpad.md"})
        assert body(missing) == {"file": "scratchpad.md", "exists": False, "content": ""}

    def test_memory_edit_replaces_every_occurrence(self, runtime: Runtime) -> None:
        runtime.markdown.write("MEMORY.md", "x y x", "replace")
        result = call(runtime, "memory_edit", {"file": "MEMORY.md", "search": "x", "replace": "z"})
        assert (body(result), result.changed) == (
            {"file": "MEMORY.md", "replacements": 2},
            Changed(notes=("MEMORY.md",)),
        )
        assert runtime.markdown.read("MEMORY.md") == ("z y z", True)

    def test_memory_search_returns_at_most_50_hits_over_markdown(self, runtime: Runtime) -> None:
        # covers T6
        runtime.markdown.write("MEMORY.md", "hit\n" * 60, "replace")
        result = body(call(runtime, "memory_search", {"pattern": "^hit$"}))
        assert len(result["hits"]) == 50
        assert result["truncated"] is True
        assert result["hits"][0] == {"file": "MEMORY.md", "line": 1, "text": "hit"}

    def test_memory_recall_by_fact_and_by_session(
        self, runtime: Runtime, fact: tuple[int, str]
    ) -> None:
        # covers R1, R7
        fact_id, session = fact
        by_fact = body(call(runtime, "memory_recall", {"fact_id": fact_id}))
        assert (by_fact["status"], by_fact["text"]) == ("valid", "The project uses tabs.")
        by_session = body(
            call(runtime, "memory_recall", {"session_id": session, "start_seq": 1, "end_seq": 2})
        )
        assert by_session["status"] == "valid"
        assert [r["content"] for r in json.loads(by_session["source_text"])] == [
            "We use tabs.",
            "Noted.",
        ]

    @pytest.mark.parametrize("limit", [8193, 100_000, 2**40])
    def test_memory_recall_clamps_a_large_limit_to_8192(self, runtime: Runtime, limit: int) -> None:
        # covers R3: "limit defaults to 4096 characters and is clamped to 8192" (issue 41: it
        # was refused above 8192)
        session = chat(runtime, {"role": "user", "content": "a" * 20000})
        fact_id = remember(runtime, session, 1, 1, "A long message.")
        for arguments in (
            {"fact_id": fact_id, "limit": limit},
            {"session_id": session, "start_seq": 1, "end_seq": 1, "limit": limit},
        ):
            page = body(call(runtime, "memory_recall", arguments))
            assert len(page["source_text"]) == 8192 and page["next_offset"] == 8192

    def test_memory_list_pages_facts(self, runtime: Runtime, fact: tuple[int, str]) -> None:
        # covers R8
        listed = body(call(runtime, "memory_list", {}))
        assert [(f["fact_id"], f["revision"], f["status"]) for f in listed["facts"]] == [
            (fact[0], 1, "valid")
        ]
        assert listed["next_offset"] is None

    def test_memory_correct_appends_a_revision_from_recalled_evidence(
        self, runtime: Runtime, fact: tuple[int, str]
    ) -> None:
        # covers F6, T1
        fact_id, session = fact
        runtime.sessions.append(session, {"kind": "message", "role": "user", "content": "Spaces!"})
        snapshot = body(
            call(runtime, "memory_recall", {"session_id": session, "start_seq": 3, "end_seq": 3})
        )["source"]
        args = {
            "fact_id": fact_id,
            "expected_revision": 1,
            "text": "The project uses spaces.",
            "source_snapshot": snapshot,
        }
        result = call(runtime, "memory_correct", args)
        assert (body(result), result.changed) == ({"fact_id": fact_id, "revision": 2}, FACTS)
        recalled = body(call(runtime, "memory_recall", {"fact_id": fact_id}))
        assert (recalled["revision"], recalled["text"]) == (2, "The project uses spaces.")

    def test_memory_forget_then_recall_is_not_found(
        self, runtime: Runtime, fact: tuple[int, str]
    ) -> None:
        # covers F7
        fact_id, _ = fact
        result = call(runtime, "memory_forget", {"fact_id": fact_id})
        assert (body(result), result.changed) == (
            {"fact_id": fact_id, "forgotten": True, "already_forgotten": False},
            FACTS,
        )
        recalled = call(runtime, "memory_recall", {"fact_id": fact_id})
        assert recalled.is_error
        assert body(recalled)["error"] == "fact_not_found"


class TestCorrectionEvidence:
    def test_tool_output_alone_cannot_justify_a_correction(
        self, runtime: Runtime, fact: tuple[int, str]
    ) -> None:
        # covers F6
        fact_id, session = fact
        runtime.sessions.append(
            session, {"kind": "message", "role": "tool", "tool_call_id": "c1", "content": "spaces"}
        )
        ref = source_snapshot(runtime.sessions, session, 3, 3, exclusions=runtime.facts)
        args = {
            "fact_id": fact_id,
            "expected_revision": 1,
            "text": "The project uses spaces.",
            "source_snapshot": ref.to_json(),
        }
        result = call(runtime, "memory_correct", args)
        assert result.is_error and not result.changed
        assert body(result)["error"] == "invalid_source"
        assert runtime.facts.get(fact_id).revision == 1  # type: ignore[union-attr]

    def test_a_stale_expected_revision_is_refused(
        self, runtime: Runtime, fact: tuple[int, str]
    ) -> None:
        fact_id, session = fact
        ref = source_snapshot(runtime.sessions, session, 1, 1, exclusions=runtime.facts)
        args = {
            "fact_id": fact_id,
            "expected_revision": 5,
            "text": "x",
            "source_snapshot": ref.to_json(),
        }
        assert body(call(runtime, "memory_correct", args))["error"] == "stale_revision"


SNAPSHOT = {"session_id": "20260101T000000Z-0123abcd", "seqs": [1], "digest": "0" * 64}
MALFORMED: list[tuple[str, Any, str]] = [
    ("memory_read", {}, "file"),
    ("memory_read", {"file": 3}, "file"),
    ("memory_read", {"file": "MEMORY.md", "extra": 1}, "extra"),
    ("memory_read", {"file": "../etc/passwd"}, "file"),
    ("memory_write", {"file": "MEMORY.md", "content": "x"}, "mode"),
    ("memory_write", {"file": "MEMORY.md", "content": "x", "mode": "prepend"}, "mode"),
    ("memory_write", {"file": "MEMORY.md", "content": ["x"], "mode": "append"}, "content"),
    ("memory_edit", {"file": "MEMORY.md", "search": "x"}, "replace"),
    ("memory_edit", {"file": "MEMORY.md", "search": 1, "replace": "y"}, "search"),
    ("memory_search", {}, "pattern"),
    ("memory_search", {"pattern": "("}, "pattern"),
    ("memory_search", {"pattern": "x", "limit": 0}, "limit"),
    ("memory_search", {"pattern": "x", "limit": True}, "limit"),
    ("memory_recall", {}, "session_id"),
    ("memory_recall", {"fact_id": "1"}, "fact_id"),
    ("memory_recall", {"fact_id": 1, "session_id": SNAPSHOT["session_id"]}, "session_id"),
    ("memory_recall", {"session_id": SNAPSHOT["session_id"], "start_seq": 1}, "end_seq"),
    ("memory_recall", {"fact_id": 1, "offset": -1}, "offset"),
    ("memory_list", {"offset": "0"}, "offset"),
    (
        "memory_correct",
        {"fact_id": 1, "text": "x", "source_snapshot": SNAPSHOT},
        "expected_revision",
    ),
    (
        "memory_correct",
        {"fact_id": 1, "expected_revision": 1.5, "text": "x", "source_snapshot": SNAPSHOT},
        "expected_revision",
    ),
    (
        "memory_correct",
        {"fact_id": 1, "expected_revision": 1, "text": "x", "source_snapshot": "s"},
        "source_snapshot",
    ),
    (
        "memory_correct",
        {
            "fact_id": 1,
            "expected_revision": 1,
            "text": "x",
            "source_snapshot": {**SNAPSHOT, "extra": 1},
        },
        "source_snapshot.extra",
    ),
    (
        "memory_correct",
        {"fact_id": 1, "expected_revision": 1, "text": "x", "source_snapshot": SNAPSHOT, "r": 1},
        "r",
    ),
    ("memory_forget", {}, "fact_id"),
    ("memory_forget", {"fact_id": 0}, "fact_id"),
    ("memory_forget", {"fact_id": None}, "fact_id"),
]


class TestMalformedArguments:
    @pytest.mark.parametrize(("name", "args", "argument"), MALFORMED)
    def test_a_malformed_argument_is_an_error_result_naming_it(
        self, runtime: Runtime, name: str, args: dict[str, Any], argument: str
    ) -> None:
        # covers T1
        result = call(runtime, name, args)
        assert result.is_error
        assert body(result)["message"].startswith(f"{argument}:")
        assert result.changed == NOTHING

    @pytest.mark.parametrize("text", ["{", "[]", '"x"', "null"])
    def test_arguments_that_are_not_a_json_object_are_an_error_result(
        self, runtime: Runtime, text: str
    ) -> None:
        result = call(runtime, "memory_read", text)
        assert (result.is_error, body(result)["error"]) == (True, "invalid_params")
        assert body(result)["message"].startswith("arguments:")

    def test_an_unknown_tool_is_an_error_result(self, runtime: Runtime) -> None:
        result = call(runtime, "memory_delete_all", {})
        assert result.is_error and body(result)["message"].startswith("name:")


class TestPermissions:
    def test_deny_refuses_without_mutation(self, runtime: Runtime) -> None:
        # covers T4
        runtime.markdown.write("MEMORY.md", "keep", "replace")
        policy = PermissionPolicy({"memory_write": "deny"}, default="allow")
        result = call(
            runtime,
            "memory_write",
            {"file": "MEMORY.md", "content": "gone", "mode": "replace"},
            policy=policy,
        )
        assert (result.is_error, body(result)["error"]) == (True, "permission_denied")
        assert "permission denied" in body(result)["message"]
        assert runtime.markdown.read("MEMORY.md") == ("keep", True)

    def test_ask_approved_runs_and_the_person_sees_a_one_line_summary(
        self, runtime: Runtime
    ) -> None:
        # covers T4
        asked: list[tuple[str, str]] = []

        def approve(name: str, summary: str) -> bool:
            asked.append((name, summary))
            return True

        policy = PermissionPolicy(ask=approve)
        result = call(
            runtime,
            "memory_write",
            {"file": "notes/x.md", "content": "hello", "mode": "append"},
            policy=policy,
        )
        assert not result.is_error
        assert asked == [("memory_write", "append 5 bytes to notes/x.md")]
        assert runtime.markdown.read("notes/x.md") == ("hello", True)

    def test_ask_refused_changes_nothing(self, runtime: Runtime, fact: tuple[int, str]) -> None:
        # covers T4
        fact_id, _ = fact
        runtime.markdown.write("MEMORY.md", "keep", "replace")
        policy = PermissionPolicy(ask=lambda name, summary: False)
        edit = call(
            runtime,
            "memory_edit",
            {"file": "MEMORY.md", "search": "keep", "replace": "lost"},
            policy=policy,
        )
        forget = call(runtime, "memory_forget", {"fact_id": fact_id}, policy=policy)
        assert [body(edit)["error"], body(forget)["error"]] == ["permission_denied"] * 2
        assert runtime.markdown.read("MEMORY.md") == ("keep", True)
        assert body(call(runtime, "memory_recall", {"fact_id": fact_id}))["status"] == "valid"

    def test_ask_without_a_callback_denies(self, runtime: Runtime) -> None:
        result = call(
            runtime,
            "memory_write",
            {"file": "MEMORY.md", "content": "x", "mode": "append"},
            policy=PermissionPolicy(),
        )
        assert body(result)["error"] == "permission_denied"
        assert runtime.markdown.read("MEMORY.md") == ("", False)

    def test_readers_never_ask(self, runtime: Runtime) -> None:
        def fail(name: str, summary: str) -> bool:
            raise AssertionError("asked")

        result = call(
            runtime, "memory_read", {"file": "MEMORY.md"}, policy=PermissionPolicy(ask=fail)
        )
        assert not result.is_error


class TestReadonlyAndChild:
    @pytest.mark.parametrize(("readonly", "child"), [(True, False), (False, True)])
    @pytest.mark.parametrize("name", WRITERS)
    def test_write_tools_are_refused_without_mutation(
        self,
        runtime: Runtime,
        fact: tuple[int, str],
        name: str,
        readonly: bool,
        child: bool,
    ) -> None:
        # covers T2, T3
        runtime.markdown.write("MEMORY.md", "keep", "replace")
        args = {
            "memory_write": {"file": "MEMORY.md", "content": "x", "mode": "replace"},
            "memory_edit": {"file": "MEMORY.md", "search": "keep", "replace": "x"},
            "memory_correct": {
                "fact_id": fact[0],
                "expected_revision": 1,
                "text": "x",
                "source_snapshot": SNAPSHOT,
            },
            "memory_forget": {"fact_id": fact[0]},
        }[name]
        result = call(runtime, name, args, readonly=readonly, child=child)
        assert (result.is_error, body(result)["error"]) == (True, "readonly")
        assert runtime.markdown.read("MEMORY.md") == ("keep", True)
        assert runtime.facts.get(fact[0]).revision == 1  # type: ignore[union-attr]

    def test_read_tools_work_in_readonly_mode(self, runtime: Runtime) -> None:
        # covers T2
        result = call(runtime, "memory_search", {"pattern": "x"}, readonly=True, child=True)
        assert body(result) == {"hits": [], "truncated": False}


class TestDisabled:
    @pytest.mark.parametrize("name", READERS + WRITERS)
    def test_every_tool_answers_memory_disabled(self, tmp_path: Path, name: str) -> None:
        # covers K1
        project = Project(root=tmp_path / "project", slug="project-000000000000")
        settings = Settings(memory=MemorySettings(enabled=False))
        runtime = Runtime(project, tmp_path / "config", settings)
        result = call(runtime, name, {})
        assert (result.is_error, body(result)["error"]) == (True, "memory_disabled")
        assert not (tmp_path / "config").exists() or not any((tmp_path / "config").rglob("*.md"))
