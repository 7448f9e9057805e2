"""Reading the checkout-specific AGENTS.md of the active working folder (L7), on real files."""

from __future__ import annotations

from pathlib import Path

import pytest

from lecode_ls.errors import StoreError, SymlinkRefused
from lecode_ls.memory.project.agents import AGENTS_MAX_BYTES, TRUNCATION_MARKER, read_agents


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    folder = tmp_path / "checkout"
    folder.mkdir()
    return folder


class TestReadAgents:
    # covers L7

    def test_a_missing_agents_file_reads_empty(self, checkout: Path) -> None:
        assert read_agents(checkout) == ("", False)

    def test_the_working_folders_agents_file_is_read_as_is(self, checkout: Path) -> None:
        (checkout / "AGENTS.md").write_text("# Rules\nUse tabs.\n", encoding="utf-8")
        assert read_agents(checkout) == ("# Rules\nUse tabs.\n", True)

    def test_only_that_folder_counts_not_its_parents(self, checkout: Path) -> None:
        (checkout.parent / "AGENTS.md").write_text("parent rules")
        sub = checkout / "pkg"
        sub.mkdir()
        assert read_agents(sub) == ("", False)

    def test_a_link_to_a_file_inside_the_folder_is_followed(self, checkout: Path) -> None:
        (checkout / "docs").mkdir()
        (checkout / "docs" / "agents.md").write_text("linked rules")
        (checkout / "AGENTS.md").symlink_to(Path("docs") / "agents.md")
        assert read_agents(checkout) == ("linked rules", True)

    def test_a_link_leading_outside_the_folder_is_refused(
        self, checkout: Path, tmp_path: Path
    ) -> None:
        (tmp_path / "elsewhere.md").write_text("foreign rules")
        (checkout / "AGENTS.md").symlink_to(tmp_path / "elsewhere.md")
        with pytest.raises(SymlinkRefused) as caught:
            read_agents(checkout)
        assert caught.value.field == "file"
        assert str(tmp_path) not in caught.value.message

    def test_a_dangling_link_reads_as_missing(self, checkout: Path) -> None:
        (checkout / "AGENTS.md").symlink_to(checkout / "gone.md")
        assert read_agents(checkout) == ("", False)

    def test_a_folder_named_agents_md_is_a_store_error(self, checkout: Path) -> None:
        (checkout / "AGENTS.md").mkdir()
        with pytest.raises(StoreError, match="not a regular file"):
            read_agents(checkout)

    def test_bytes_that_are_not_utf8_become_replacement_characters(self, checkout: Path) -> None:
        (checkout / "AGENTS.md").write_bytes(b"ok \xff done")
        assert read_agents(checkout) == ("ok \ufffd done", True)


class TestAgentsCap:
    # covers L7: the file is capped at 256 KiB

    def test_a_file_of_exactly_the_cap_is_not_truncated(self, checkout: Path) -> None:
        text = "a" * AGENTS_MAX_BYTES
        (checkout / "AGENTS.md").write_text(text)
        assert read_agents(checkout) == (text, True)

    def test_a_longer_file_is_cut_at_the_cap_with_a_marker_line(self, checkout: Path) -> None:
        (checkout / "AGENTS.md").write_text("a" * (AGENTS_MAX_BYTES + 10))
        expected = "a" * AGENTS_MAX_BYTES + "\n[... AGENTS.md truncated at 262144 bytes]\n"
        assert TRUNCATION_MARKER == "[... AGENTS.md truncated at 262144 bytes]"
        assert read_agents(checkout) == (expected, True)

    def test_the_cut_never_splits_a_utf8_character(self, checkout: Path) -> None:
        # "é" is two bytes; with one ASCII byte first, the cap falls inside an "é".
        (checkout / "AGENTS.md").write_text("x" + "é" * AGENTS_MAX_BYTES, encoding="utf-8")
        text, exists = read_agents(checkout)
        body = text.removesuffix("\n" + TRUNCATION_MARKER + "\n")
        assert exists
        assert body == "x" + "é" * ((AGENTS_MAX_BYTES - 1) // 2)
        assert "\ufffd" not in text
