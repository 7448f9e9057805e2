"""Claude Code and Codex records as session records (other_agents/transcripts.py): a format that
changes between versions (a record type or item not known here) is skipped with its reason,
never guessed at, and what is known keeps converting.

# covers R1-R8 (imported text is data, bounded), S1
"""

from __future__ import annotations

import json
from pathlib import Path

from lecode_ls.memory.sessions import agent_injected
from lecode_ls.other_agents.transcripts import convert, detect, without_injected
from tests.fakes.agent_transcripts import claude_records, codex_records


def lines(records: list[dict[str, object]]) -> list[tuple[int, bytes]]:
    return list(enumerate((json.dumps(r).encode() for r in records), start=1))


def test_unknown_claude_record_types_and_blocks_are_skipped() -> None:
    records = claude_records(Path("/p"))
    future = {"type": "attachment", "uuid": "u-x", "attachment": {"kind": "new"}}
    odd_block = {
        **records[1],
        "uuid": "u-y",
        "message": {"role": "user", "content": [{"type": "video"}]},
    }
    converted = convert(lines([*records, future, odd_block]), "claude-code", "f.jsonl")
    assert [r["meta"]["origin"]["id"] for r in converted.records] == ["u-1", "u-2", "u-3", "u-4"]
    assert converted.skipped["unknown record type"] == 1
    assert converted.skipped["no text or tool call (thinking, images)"] == 1
    assert converted.version == "2.1.1"


def test_unknown_codex_items_are_skipped_and_known_ones_kept() -> None:
    records = codex_records(Path("/p"))
    future = {
        "timestamp": "t",
        "type": "response_item",
        "payload": {"type": "web_search_call", "x": 1},
    }
    newer = {"timestamp": "t", "type": "rollout_v9_thing", "payload": {}}
    converted = convert(lines([*records, future, newer]), "codex", "r.jsonl")
    assert [r["role"] for r in converted.records] == ["user", "assistant", "tool", "assistant"]
    assert converted.skipped["web_search_call item"] == 1
    assert converted.skipped["unknown record type"] == 1
    assert converted.version == "0.171.0"


def test_detect_tells_the_formats_apart_and_refuses_others() -> None:
    assert detect([b'{"role": "user", "content": "hi"}', b"nonsense"]) is None
    assert detect([json.dumps(r).encode() for r in codex_records(Path("/p"))]) == "codex"
    assert detect([json.dumps(r).encode() for r in claude_records(Path("/p"))]) == "claude-code"


def test_hostile_values_never_raise() -> None:
    hostile = [b"[" * 100_000, b"\xff\xfe", b'{"type": "user", "message": {"content": {"a": 1}}}',
               b'{"type": "response_item", "payload": {"type": "message", "role": 5}}',
               b'{"type": "assistant", "message": {"content": [{"type": "tool_use", "id": 5}]}}']  # fmt: skip
    for agent in ("claude-code", "codex"):
        converted = convert(enumerate(hostile, 1), agent, "h")  # type: ignore[arg-type]
        assert converted.records == []


class TestWhoseWords:
    """Text another agent wrote into the user's turn (issue 42). # covers A4, F6"""

    def test_claude_codes_blocks_are_removed_and_the_persons_words_kept(self) -> None:
        text = "<system-reminder>obey</system-reminder>Fix it.<command-name>/x</command-name>"
        assert without_injected(text) == ("Fix it.", ["system-reminder", "command-name"])
        assert without_injected("Plain <b>words</b>.") == ("Plain <b>words</b>.", [])
        assert without_injected("Say <local-command-stdout>rest") == (
            "Say",
            ["local-command-stdout"],
        )

    def test_many_unclosed_blocks_cost_one_pass(self) -> None:
        text = "<system-reminder>" * 200_000  # the first runs to the end: nothing left to search
        assert without_injected(text) == ("", ["system-reminder"])

    def test_a_record_an_earlier_import_kept_is_told_apart(self, tmp_path: Path) -> None:
        origin = {"meta": {"origin": {"agent": "codex", "file": "r.jsonl", "line": 3}}}
        agents_md = [{"type": "text", "text": f"# AGENTS.md instructions for {tmp_path}\n..."}]
        assert agent_injected({"role": "user", "content": agents_md, **origin})
        assert agent_injected({"role": "user", "content": "a<system-reminder>b", **origin})
        assert not agent_injected({"role": "user", "content": "We use tabs.", **origin})
        assert not agent_injected({"role": "assistant", "content": agents_md, **origin})
        # the person's own chat in lecode: no other agent's origin, so their words, whatever
        assert not agent_injected({"role": "user", "content": agents_md})
