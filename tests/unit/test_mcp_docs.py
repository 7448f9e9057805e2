"""mcp.md is the contract of `lecode-ls mcp` (issue 15): generated from the tool table and the
limits the code enforces, it must be current; and the MCP tool table itself: bounded schemas, the
writers offered only as `[mcp] allow` lists them.

# covers P4 extended to MCP, T1, T2, T4
"""

from __future__ import annotations

from lecode_ls.config import validate
from lecode_ls.contract.mcp import MCP_MD, render_mcp_markdown
from lecode_ls.mcp.limits import MAX_LINE_BYTES
from lecode_ls.mcp.tools import ALL_SPECS, WRITE_TOOLS, bounded, offered, schema_of


class TestMcpMd:
    def test_mcp_md_is_what_the_tool_table_renders(self) -> None:
        assert MCP_MD.read_text(encoding="utf-8") == render_mcp_markdown(), (
            "mcp.md is stale: run `uv run python -m lecode_ls.contract`"
        )

    def test_every_tool_has_a_section_with_its_schema_and_the_limits_are_stated(self) -> None:
        text = MCP_MD.read_text(encoding="utf-8")
        for spec in ALL_SPECS:
            assert f"### `{spec.name}`" in text
        assert f"{MAX_LINE_BYTES:,} bytes" in text


class TestToolTable:
    def test_every_string_and_integer_argument_is_bounded(self) -> None:
        for spec in ALL_SPECS:
            schema = schema_of(spec.name)
            snapshot = schema["properties"].get("source_snapshot")
            for name, node in [
                *schema["properties"].items(),
                *(snapshot["properties"].items() if snapshot else []),
            ]:
                if node["type"] == "string" and "enum" not in node:
                    assert node["maxLength"] >= 1, (spec.name, name)
                if node["type"] == "integer":
                    assert 1 <= node["maximum"] <= 2**31 - 1, (spec.name, name)

    def test_bounding_keeps_the_chat_schema_unchanged(self) -> None:
        chat = ALL_SPECS[0].parameters
        before = repr(chat)
        assert bounded(chat) != chat
        assert repr(chat) == before

    def test_writers_are_offered_only_as_listed_and_nothing_when_memory_is_off(self) -> None:
        readers = [
            "memory_read", "memory_search", "memory_recall", "memory_list", "memory_doctor",
            "memory_team",
        ]  # fmt: skip
        default, _ = validate({})
        some, problems = validate({"mcp": {"allow": ["memory_forget", "memory_remember"]}})
        everything, _ = validate({"mcp": {"allow": list(WRITE_TOOLS)}})
        off, _ = validate({"memory": {"enabled": False}, "mcp": {"allow": list(WRITE_TOOLS)}})
        assert problems == []
        assert [t.name for t in offered(default)] == readers
        assert [t.name for t in offered(some)] == [
            *readers[:4],
            "memory_forget",
            "memory_doctor",
            "memory_team",
            "memory_remember",
        ]
        assert len(offered(everything)) == 11
        assert offered(off) == []

    def test_an_unknown_tool_in_allow_is_reported_naming_the_key(self) -> None:
        settings, problems = validate({"mcp": {"allow": ["memory_write", "rm_rf"]}})
        assert settings.mcp.allow == []
        assert problems[0].startswith("mcp.allow.1: ")
