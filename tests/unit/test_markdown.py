"""The Markdown memory store: allowed names, atomic writes with backups, edits, links, list, search.

Every test works on a real store folder under tmp_path. The one monkeypatched seam is
`os.replace`, to make a write fail at its last step (the tests run as root, so file permissions
cannot be used to make a write fail).
"""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import sys
import threading
from datetime import UTC, date
from pathlib import Path

import pytest

from lecode_ls.errors import (
    FileTooLarge,
    InvalidName,
    InvalidParams,
    InvalidPattern,
    NoMatch,
    NotFound,
    StoreError,
    SymlinkRefused,
)
from lecode_ls.memory.notes.store import MAX_FILE_BYTES, MarkdownStore, SearchHit, daily_name

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def store(tmp_path: Path) -> MarkdownStore:
    return MarkdownStore(tmp_path / "store")


def files_in(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


class TestNames:
    # covers L4

    @pytest.mark.parametrize(
        "name",
        [
            "MEMORY.md",
            "scratchpad.md",
            "daily/2026-11-29.md",
            "daily/2024-02-29.md",
            "notes/build.md",
            "notes/release notes.md",
            "notes/a.b-c_d.md",
            "notes/café.md",
            "notes/" + "x" * 128 + ".md",
            "notes/" + "é" * 64 + ".md",
            "notes/console.md",
            "notes/v1.2 plan.md",
            "notes/a\uff0eb.md",  # one fullwidth dot is a dot, and "a.b" is a fine name
        ],
    )
    def test_every_allowed_name_validates_to_itself(self, store: MarkdownStore, name: str) -> None:
        assert store.validate(name) == name

    def test_a_decomposed_note_name_is_normalized_to_nfc(self, store: MarkdownStore) -> None:
        assert store.validate("notes/cafe\u0301.md") == "notes/caf\u00e9.md"

    @pytest.mark.parametrize(
        ("name", "rule"),
        [
            ("", "is not a memory file"),
            ("memory.md", "is not a memory file"),
            ("MEMORY.md.bak", "is not a memory file"),
            ("notes.md", "is not a memory file"),
            ("../MEMORY.md", "is not a memory file"),
            ("./MEMORY.md", "is not a memory file"),
            ("facts.sqlite3", "is not a memory file"),
            ("/etc/passwd", "is an absolute path"),
            ("\\MEMORY.md", "is an absolute path"),
            ("C:notes/a.md", "is an absolute path"),
            ("daily/2026-02-30.md", "real calendar date"),
            ("daily/2026-1-01.md", "real calendar date"),
            ("daily/today.md", "real calendar date"),
            ("daily/2026-01-01.txt", "real calendar date"),
            ("daily/sub/2026-01-01.md", "real calendar date"),
            ("daily/\u0662\u0660\u0662\u0666-01-01.md", "real calendar date"),
            ("notes/a.txt", "note files end in .md"),
            ("notes/", "note files end in .md"),
            ("notes/.md", "empty note name"),
            ("notes/..md", "'.' and '..' name folders"),
            ("notes/...md", "'.' and '..' name folders"),
            ("notes/a/b.md", "may not contain / or \\"),
            ("notes/../MEMORY.md", "may not contain / or \\"),
            ("notes/a\\b.md", "may not contain / or \\"),
            ("notes/a..b.md", "may not contain '..'"),
            ("notes/.hidden.md", "hidden note names"),
            ("notes/a\0b.md", "control or invisible"),
            ("notes/a\nb.md", "control or invisible"),
            ("notes/a\x7fb.md", "control or invisible"),
            ("notes/a\u202eb.md", "control or invisible"),
            ("notes/a\u2028b.md", "control or invisible"),
            ("notes/" + "x" * 129 + ".md", "over 128 UTF-8 bytes"),
            ("notes/" + "é" * 65 + ".md", "over 128 UTF-8 bytes"),
            # covers L4: names that are not portable or not what they look like (issue 10.9)
            ("notes/CON.md", "Windows device name"),
            ("notes/aux.md", "Windows device name"),
            ("notes/nul.txt.md", "Windows device name"),
            ("notes/com1.md", "Windows device name"),
            ("notes/LPT\u00b9.md", "Windows device name"),
            ("notes/a:b.md", "may not contain any of"),
            ("notes/a*b?.md", "contains * ?"),
            ('notes/a"b.md', "may not contain any of"),
            ("notes/a<b>.md", "may not contain any of"),
            ("notes/a|b.md", "may not contain any of"),
            ("notes/trailing .md", "ends in a space or '.'"),
            ("notes/trailing..md", "ends in a space or '.'"),
            ("notes/\uff0e\uff0e\uff0fx.md", "looks like / or \\"),
            ("notes/a\u2215b.md", "looks like / or \\"),
            ("notes/a\u2044b.md", "looks like / or \\"),
            ("notes/a\uff3cb.md", "looks like / or \\"),
            ("notes/a\uff0e\uff0eb.md", "look-alike of '.'"),
            ("notes/\uff0ehidden.md", "look-alike of '.'"),
            ("notes/a\uff1ab.md", "may not contain any of"),
        ],
    )
    def test_refused_names_say_which_rule_they_break(
        self, store: MarkdownStore, name: str, rule: str
    ) -> None:
        with pytest.raises(InvalidName) as caught:
            store.validate(name)
        assert caught.value.field == "file"
        assert caught.value.message.startswith("file: ")
        assert rule in caught.value.message

    def test_the_generic_refusal_lists_the_allowed_names(self, store: MarkdownStore) -> None:
        with pytest.raises(InvalidName) as caught:
            store.validate("notes.md")
        assert caught.value.message == (
            'file: "notes.md" is not a memory file; use MEMORY.md, scratchpad.md, '
            "daily/YYYY-MM-DD.md or notes/<name>.md"
        )

    def test_a_refused_name_never_touches_the_disk(self, store: MarkdownStore) -> None:
        with pytest.raises(InvalidName):
            store.write("notes/a/b.md", "x", "replace")
        assert not store.root.exists()

    def test_daily_name_is_the_iso_date_under_daily(self) -> None:
        assert daily_name(date(2026, 11, 29)) == "daily/2026-11-29.md"


class TestRead:
    def test_a_missing_file_reads_empty_and_creates_nothing(self, store: MarkdownStore) -> None:
        assert store.read("MEMORY.md") == ("", False)
        assert store.list() == []
        assert store.search("x") == ([], False)
        assert not store.root.exists()

    def test_what_was_written_reads_back(self, store: MarkdownStore) -> None:
        store.write("notes/ünï.md", "héllo\r\nwörld", "replace")
        assert store.read("notes/ünï.md") == ("héllo\r\nwörld", True)

    def test_a_file_that_is_not_utf8_is_a_store_error(self, store: MarkdownStore) -> None:
        store.root.mkdir()
        (store.root / "MEMORY.md").write_bytes(b"ok\n\xff\xfe")
        with pytest.raises(StoreError) as caught:
            store.read("MEMORY.md")
        assert caught.value.message.startswith("file: MEMORY.md is not valid UTF-8")
        assert str(store.root) not in caught.value.message

    def test_a_folder_in_place_of_a_file_is_a_store_error(self, store: MarkdownStore) -> None:
        (store.root / "scratchpad.md").mkdir(parents=True)
        with pytest.raises(StoreError, match="not a regular file"):
            store.read("scratchpad.md")


class TestWrite:
    # covers L5

    def test_replace_returns_the_size_and_creates_an_owner_only_store(
        self, store: MarkdownStore
    ) -> None:
        assert store.write("daily/2026-11-29.md", "é\n", "replace") == 3
        assert stat.S_IMODE(store.root.stat().st_mode) == 0o700
        assert stat.S_IMODE((store.root / "daily").stat().st_mode) == 0o700
        assert stat.S_IMODE((store.root / "daily/2026-11-29.md").stat().st_mode) == 0o600

    def test_an_overwrite_keeps_the_previous_content_in_bak(self, store: MarkdownStore) -> None:
        store.write("MEMORY.md", "one", "replace")
        store.write("MEMORY.md", "two", "replace")
        assert (store.root / "MEMORY.md.bak").read_text() == "one"
        store.write("MEMORY.md", "three", "append")
        assert (store.root / "MEMORY.md.bak").read_text() == "two"
        assert store.read("MEMORY.md") == ("two\nthree", True)

    @pytest.mark.parametrize(
        ("before", "added", "after"),
        [
            (None, "a\n", "a\n"),
            ("", "a", "a"),
            ("x\n", "a\n", "x\na\n"),
            ("x", "a\n", "x\na\n"),  # a newline is inserted so "a" starts its own line
            ("x\n\n", "a", "x\n\na"),
        ],
    )
    def test_append_starts_the_new_text_on_its_own_line(
        self, store: MarkdownStore, before: str | None, added: str, after: str
    ) -> None:
        if before is not None:
            store.write("scratchpad.md", before, "replace")
        size = store.write("scratchpad.md", added, "append")
        assert store.read("scratchpad.md") == (after, True)
        assert size == len(after.encode())

    def test_an_unknown_mode_is_invalid_params(self, store: MarkdownStore) -> None:
        with pytest.raises(InvalidParams) as caught:
            store.write("MEMORY.md", "x", "prepend")  # type: ignore[arg-type]
        assert caught.value.field == "mode"

    def test_a_failed_write_keeps_the_original_and_leaves_no_temp_file(
        self, store: MarkdownStore, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        store.write("MEMORY.md", "original", "replace")
        real_replace = os.replace

        def failing_replace(src: str | Path, dst: str | Path) -> None:
            if str(dst).endswith(".bak"):
                real_replace(src, dst)
                return
            raise OSError(errno.ENOSPC, "No space left on device")

        monkeypatch.setattr(os, "replace", failing_replace)
        with pytest.raises(StoreError) as caught:
            store.write("MEMORY.md", "new", "replace")
        assert caught.value.message == "file: could not write MEMORY.md (No space left on device)"
        monkeypatch.undo()
        assert store.read("MEMORY.md") == ("original", True)
        assert files_in(store.root) == [".lock", "MEMORY.md", "MEMORY.md.bak"]

    def test_appending_to_a_file_that_is_not_utf8_refuses_and_keeps_it(
        self, store: MarkdownStore
    ) -> None:
        store.root.mkdir()
        (store.root / "MEMORY.md").write_bytes(b"\xff")
        with pytest.raises(StoreError, match="not valid UTF-8"):
            store.write("MEMORY.md", "more", "append")
        assert (store.root / "MEMORY.md").read_bytes() == b"\xff"


class TestEdit:
    def test_edit_replaces_every_occurrence_and_returns_the_count(
        self, store: MarkdownStore
    ) -> None:
        store.write("notes/a.md", "tabs, tabs\nand tabs", "replace")
        assert store.edit("notes/a.md", "tabs", "spaces") == 3
        assert store.read("notes/a.md") == ("spaces, spaces\nand spaces", True)
        assert (store.root / "notes/a.md.bak").read_text() == "tabs, tabs\nand tabs"

    def test_edit_of_absent_text_is_no_match_and_changes_nothing(
        self, store: MarkdownStore
    ) -> None:
        store.write("notes/a.md", "hello", "replace")
        with pytest.raises(NoMatch) as caught:
            store.edit("notes/a.md", "bye", "x")
        assert caught.value.field == "search"
        assert store.read("notes/a.md") == ("hello", True)
        assert not (store.root / "notes/a.md.bak").exists()

    def test_edit_of_a_missing_file_is_not_found_and_creates_nothing(
        self, store: MarkdownStore
    ) -> None:
        with pytest.raises(NotFound) as caught:
            store.edit("MEMORY.md", "a", "b")
        assert caught.value.message == "file: MEMORY.md does not exist in the memory store"
        assert not store.root.exists()

    def test_an_empty_search_is_invalid_params(self, store: MarkdownStore) -> None:
        store.write("MEMORY.md", "x", "replace")
        with pytest.raises(InvalidParams) as caught:
            store.edit("MEMORY.md", "", "y")
        assert caught.value.field == "search"


class TestSymlinks:
    # covers L4: the store never follows a link

    def test_a_linked_file_is_refused_for_read_write_and_edit(
        self, store: MarkdownStore, tmp_path: Path
    ) -> None:
        outside = tmp_path / "outside.md"
        outside.write_text("secret")
        store.root.mkdir()
        (store.root / "MEMORY.md").symlink_to(outside)
        with pytest.raises(SymlinkRefused):
            store.read("MEMORY.md")
        with pytest.raises(SymlinkRefused):
            store.write("MEMORY.md", "x", "replace")
        with pytest.raises(SymlinkRefused):
            store.edit("MEMORY.md", "secret", "x")
        assert outside.read_text() == "secret"
        assert store.list() == []

    def test_a_linked_notes_folder_is_refused(self, store: MarkdownStore, tmp_path: Path) -> None:
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        (elsewhere / "a.md").write_text("x")
        store.root.mkdir()
        (store.root / "notes").symlink_to(elsewhere)
        with pytest.raises(SymlinkRefused) as caught:
            store.read("notes/a.md")
        assert caught.value.message == (
            "file: notes is a symbolic link in the store; lecode-ls refuses to follow links there"
        )
        with pytest.raises(SymlinkRefused):
            store.write("notes/b.md", "x", "append")
        assert sorted(p.name for p in elsewhere.iterdir()) == ["a.md"]
        assert store.list() == []

    def test_a_linked_store_root_is_refused(self, tmp_path: Path) -> None:
        real = tmp_path / "real"
        real.mkdir()
        (real / "MEMORY.md").write_text("x")
        (tmp_path / "store").symlink_to(real)
        store = MarkdownStore(tmp_path / "store")
        for action in (
            lambda: store.read("MEMORY.md"),
            lambda: store.write("MEMORY.md", "y", "replace"),
            store.list,
            lambda: store.search("x"),
        ):
            with pytest.raises(SymlinkRefused) as caught:
                action()
            assert str(tmp_path) not in caught.value.message
        assert files_in(real) == ["MEMORY.md"]


class TestList:
    # covers L4

    def test_only_existing_memory_files_are_listed_sorted_by_name(
        self, store: MarkdownStore, tmp_path: Path
    ) -> None:
        for name in ("scratchpad.md", "notes/b.md", "notes/a.md", "daily/2026-11-29.md"):
            store.write(name, "12345", "replace")
        store.write("MEMORY.md", "one", "replace")
        store.write("MEMORY.md", "two", "replace")  # leaves MEMORY.md.bak
        (tmp_path / "target.md").write_text("x")
        for stray in ("other.md", "notes/a.txt", "notes/.hidden.md", "daily/today.md"):
            (store.root / stray).write_text("stray")
        (store.root / "notes/sub").mkdir()
        (store.root / "notes/.a.md.0123456789abcdef.tmp").write_text("torn")
        (store.root / "notes/link.md").symlink_to(tmp_path / "target.md")
        listed = store.list()
        assert [item.file for item in listed] == [
            "MEMORY.md",
            "daily/2026-11-29.md",
            "notes/a.md",
            "notes/b.md",
            "scratchpad.md",
        ]
        assert [item.bytes for item in listed] == [3, 5, 5, 5, 5]
        assert all(item.modified.tzinfo is UTC for item in listed)


class TestSearch:
    # covers T6

    def test_hits_carry_the_file_and_one_based_line_in_list_order(
        self, store: MarkdownStore
    ) -> None:
        store.write("scratchpad.md", "- [ ] use tabs\r\n", "replace")
        store.write("MEMORY.md", "intro\nWe use tabs.\n\nTabs again\n", "replace")
        hits, truncated = store.search(r"(?i)tabs")
        assert hits == [
            SearchHit("MEMORY.md", 2, "We use tabs."),
            SearchHit("MEMORY.md", 4, "Tabs again"),
            SearchHit("scratchpad.md", 1, "- [ ] use tabs"),
        ]
        assert truncated is False

    def test_at_most_fifty_hits_and_truncated_says_more_existed(self, store: MarkdownStore) -> None:
        store.write("notes/many.md", "hit\n" * 50, "replace")
        hits, truncated = store.search("hit")
        assert (len(hits), truncated) == (50, False)
        store.write("notes/more.md", "hit\n", "replace")
        hits, truncated = store.search("hit")
        assert (len(hits), truncated) == (50, True)
        assert hits[-1] == SearchHit("notes/many.md", 50, "hit")
        assert store.search("hit", limit=500)[0] == hits
        assert store.search("hit", limit=2) == (hits[:2], True)

    def test_hit_text_is_capped_at_500_characters(self, store: MarkdownStore) -> None:
        store.write("MEMORY.md", "é" * 700, "replace")
        assert store.search("é")[0] == [SearchHit("MEMORY.md", 1, "é" * 500)]

    def test_backups_and_non_markdown_files_are_not_searched(self, store: MarkdownStore) -> None:
        store.write("MEMORY.md", "needle", "replace")
        store.write("MEMORY.md", "hay", "replace")  # "needle" now lives in MEMORY.md.bak only
        (store.root / "notes.txt").write_text("needle")
        (store.root / "facts.sqlite3").write_text("needle")
        assert store.search("needle") == ([], False)

    def test_a_bad_regular_expression_is_invalid_pattern(self, store: MarkdownStore) -> None:
        with pytest.raises(InvalidPattern) as caught:
            store.search("(unclosed")
        assert caught.value.field == "pattern"
        assert caught.value.message == (
            "pattern: not a valid regular expression: missing ): (unclosed"
        )

    def test_a_nested_repeat_compile_bomb_is_refused_naming_why(self, store: MarkdownStore) -> None:
        # covers T6: 33 characters that Python's engines expand to 10^8 copies when compiling
        store.write("MEMORY.md", "aaaa\n", "replace")
        with pytest.raises(InvalidPattern) as caught:
            store.search("(?:(?:(?:a{100}){100}){100}){100}")
        assert caught.value.message.startswith("pattern: refused: invalid repetition size")
        assert "at most 1000 copies" in caught.value.message

    def test_a_pattern_too_large_to_compile_is_refused(self, store: MarkdownStore) -> None:
        with pytest.raises(InvalidPattern, match="would need more than 8 MiB"):
            store.search(r"\pL{1000}")  # any letter of Unicode, a thousand times

    @pytest.mark.parametrize("pattern", ["(?=x)a", "(?<!x)a", r"(a)\1"])
    def test_lookaround_and_backreferences_are_refused_naming_why(
        self, store: MarkdownStore, pattern: str
    ) -> None:
        with pytest.raises(InvalidPattern, match="lookaround and backreferences"):
            store.search(pattern)

    def test_a_lone_surrogate_pattern_is_invalid_pattern(self, store: MarkdownStore) -> None:
        with pytest.raises(InvalidPattern, match="not valid Unicode"):
            store.search("\ud800")

    def test_catastrophic_backtracking_patterns_answer_in_linear_time(
        self, store: MarkdownStore
    ) -> None:
        store.write("MEMORY.md", "a" * 100_000 + "!\n", "replace")
        assert store.search("^(a|a)*$") == ([], False)
        assert store.search("^(a|aa)+!$")[0][0].line == 1

    def test_the_search_stops_at_its_time_budget(
        self, store: MarkdownStore, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        store.write("MEMORY.md", "a\n", "replace")
        monkeypatch.setattr("lecode_ls.memory.notes.store.SEARCH_SECONDS", -1.0)
        with pytest.raises(InvalidPattern, match="was stopped"):
            store.search("a")

    def test_a_file_over_the_cap_is_skipped_by_search(self, store: MarkdownStore) -> None:
        store.write("MEMORY.md", "needle\n", "replace")
        big = store.root / "notes" / "big.md"
        big.parent.mkdir()
        big.write_text("needle\n" * (MAX_FILE_BYTES // 7 + 1))
        assert store.search("needle") == ([SearchHit("MEMORY.md", 1, "needle")], False)

    def test_a_pattern_over_1000_characters_is_invalid_pattern(self, store: MarkdownStore) -> None:
        store.search("a" * 1000)
        with pytest.raises(InvalidPattern, match="limit is 1000"):
            store.search("a" * 1001)

    def test_a_limit_below_one_is_invalid_params(self, store: MarkdownStore) -> None:
        with pytest.raises(InvalidParams):
            store.search("a", limit=0)


class TestSizeCap:
    """Every write is refused before anything is written when its result would pass the cap."""

    # covers L5 (issue 10.7): one append or edit must not grow a note without bound

    def test_a_replace_over_the_cap_writes_nothing(self, store: MarkdownStore) -> None:
        store.write("MEMORY.md", "keep\n", "replace")
        with pytest.raises(FileTooLarge) as caught:
            store.write("MEMORY.md", "x" * (MAX_FILE_BYTES + 1), "replace")
        assert caught.value.field == "content"
        assert store.read("MEMORY.md") == ("keep\n", True)
        assert not (store.root / "MEMORY.md.bak").exists()

    def test_a_write_of_exactly_the_cap_is_accepted(self, store: MarkdownStore) -> None:
        assert store.write("MEMORY.md", "x" * MAX_FILE_BYTES, "replace") == MAX_FILE_BYTES

    def test_an_append_that_would_pass_the_cap_writes_nothing(self, store: MarkdownStore) -> None:
        store.write("notes/log.md", "x" * (MAX_FILE_BYTES - 10), "replace")
        with pytest.raises(FileTooLarge, match="would be 1,048,577 bytes"):
            store.write("notes/log.md", "y" * 10, "append")  # 10 + the joining newline
        assert store.read("notes/log.md")[0] == "x" * (MAX_FILE_BYTES - 10)

    def test_an_edit_that_would_pass_the_cap_writes_nothing(self, store: MarkdownStore) -> None:
        store.write("notes/n.md", "ab" * 1000, "replace")
        with pytest.raises(FileTooLarge) as caught:
            store.edit("notes/n.md", "a", "z" * 2000)  # would be 2,000,000+ bytes
        assert caught.value.field == "replace"
        assert "nothing was written" in caught.value.message
        assert store.read("notes/n.md")[0] == "ab" * 1000

    def test_a_file_over_the_cap_written_by_another_program_is_refused_by_read(
        self, store: MarkdownStore
    ) -> None:
        store.write("MEMORY.md", "", "replace")
        (store.root / "MEMORY.md").write_bytes(b"x" * (MAX_FILE_BYTES + 1))
        with pytest.raises(FileTooLarge) as caught:
            store.read("MEMORY.md")
        assert caught.value.message.startswith("file: MEMORY.md is larger than the 1 MiB")


class TestConcurrentAppends:
    # covers L5: read-modify-write is serialized, so no append is lost

    def test_appends_from_eight_threads_all_land(self, store: MarkdownStore) -> None:
        start = threading.Barrier(8)

        def append_lines(worker: int) -> None:
            own = MarkdownStore(store.root)  # separate instances still share the lock file
            start.wait()
            for i in range(25):
                own.write("daily/2026-11-29.md", f"t{worker}-{i}\n", "append")

        threads = [threading.Thread(target=append_lines, args=(n,)) for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        lines = store.read("daily/2026-11-29.md")[0].splitlines()
        assert sorted(lines) == sorted(f"t{w}-{i}" for w in range(8) for i in range(25))

    def test_appends_from_four_processes_all_land(self, store: MarkdownStore) -> None:
        script = (
            "import sys; from pathlib import Path\n"
            "from lecode_ls.memory.notes.store import MarkdownStore\n"
            "store = MarkdownStore(Path(sys.argv[1]))\n"
            "for i in range(25):\n"
            "    store.write('notes/log.md', f'p{sys.argv[2]}-{i}\\n', 'append')\n"
        )
        workers = [
            subprocess.Popen([sys.executable, "-c", script, str(store.root), str(n)], cwd=REPO)
            for n in range(4)
        ]
        assert [worker.wait(timeout=60) for worker in workers] == [0, 0, 0, 0]
        lines = store.read("notes/log.md")[0].splitlines()
        assert sorted(lines) == sorted(f"p{w}-{i}" for w in range(4) for i in range(25))


class TestCachedRead:
    """`cached` answers from metadata only, and never with stale text."""

    def test_a_fresh_read_is_served_from_the_cache(self, store: MarkdownStore) -> None:
        store.write("MEMORY.md", "one\n", "replace")
        assert store.cached("MEMORY.md") is None  # written, never read: nothing cached yet
        assert store.read("MEMORY.md") == ("one\n", True)
        assert store.cached("MEMORY.md") == ("one\n", True)

    def test_a_change_by_another_writer_is_never_served_stale(self, store: MarkdownStore) -> None:
        store.write("MEMORY.md", "one\n", "replace")
        store.read("MEMORY.md")
        other = MarkdownStore(store.root)  # as another server process would
        other.write("MEMORY.md", "two\n", "replace")
        assert store.cached("MEMORY.md") is None
        assert store.read("MEMORY.md") == ("two\n", True)

    def test_a_missing_file_is_answered_without_reading(self, store: MarkdownStore) -> None:
        assert store.cached("notes/none.md") == ("", False)

    def test_a_symlinked_file_is_refused_even_from_the_cache(
        self, store: MarkdownStore, tmp_path: Path
    ) -> None:
        store.write("MEMORY.md", "one\n", "replace")
        store.read("MEMORY.md")
        target = tmp_path / "elsewhere.md"
        target.write_text("one\n")
        (store.root / "MEMORY.md").unlink()
        (store.root / "MEMORY.md").symlink_to(target)
        with pytest.raises(SymlinkRefused):
            store.cached("MEMORY.md")
