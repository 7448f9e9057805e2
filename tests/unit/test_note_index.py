"""Indexed note search answers exactly what a full scan answers, and is never stale (issue 16).

The oracle here reads every listed file and matches every line with RE2, as the search did before
it had an index; the store's search must agree with it whatever the files, the pattern and the
changes made behind its back (by this process, by hand, by another process).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lecode_ls.memory.notes.index import INDEX_NAME
from lecode_ls.memory.notes.pattern import compile_pattern, required_literals
from lecode_ls.memory.notes.store import (
    MAX_FILE_BYTES,
    MAX_HIT_CHARS,
    MAX_SEARCH_HITS,
    MarkdownStore,
    SearchHit,
)
from lecode_ls.platform import watch

REPO = Path(__file__).resolve().parents[2]


def full_scan(store: MarkdownStore, pattern: str) -> tuple[list[SearchHit], bool]:
    compiled = compile_pattern(pattern)
    hits: list[SearchHit] = []
    for entry in store.list():
        if entry.bytes > MAX_FILE_BYTES:
            continue
        lines = (store.root / entry.file).read_text(encoding="utf-8").split("\n")
        if lines[-1] == "":
            lines.pop()
        for number, raw in enumerate(lines, start=1):
            line = raw.removesuffix("\r")
            if compiled.search(line) is None:
                continue
            if len(hits) == MAX_SEARCH_HITS:
                return hits, True
            hits.append(SearchHit(entry.file, number, line[:MAX_HIT_CHARS]))
    return hits, False


@pytest.fixture
def store(tmp_path: Path) -> MarkdownStore:
    made = MarkdownStore(tmp_path / "store")
    yield made
    made.close()


WORDS = ["alpha", "beta", "gamma", "delta", "uv sync", "make", "Ünïcode", "tabs", "x"]
PATTERNS = [
    "alpha",
    "beta|gamma",
    "^make",
    "uv s.nc",
    "(?i)ALPHA",
    "Ünïcode",
    "alp(ha)+",
    r"\d+",
    "[[:alpha:]]eta",
    "delta$",
    "gam+a",
    "(?:alpha|x)",
    "tabs\\b",
]


class TestSameAnswersAsAFullScan:
    @given(
        st.lists(
            st.tuples(
                st.sampled_from(["MEMORY.md", "scratchpad.md", "notes/a.md", "notes/b c.md"]),
                st.lists(st.lists(st.sampled_from(WORDS), max_size=4).map(" ".join), max_size=30),
            ),
            max_size=6,
        ),
        st.sampled_from(PATTERNS),
    )
    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    def test_any_files_any_pattern(
        self,
        tmp_path_factory: pytest.TempPathFactory,
        files: list[tuple[str, list[str]]],
        pattern: str,
    ) -> None:
        # covers T6: same hits, same order, same cap and truncation
        store = MarkdownStore(tmp_path_factory.mktemp("store"))
        try:
            for name, lines in files:
                store.write(name, "\n".join(lines), "append")
                assert store.search(pattern) == full_scan(store, pattern)
        finally:
            store.close()

    def test_more_than_fifty_hits_are_truncated_in_file_then_line_order(
        self, store: MarkdownStore
    ) -> None:
        for index in range(30):
            store.write(f"notes/n{index:02}.md", "needle\nhay\nneedle\n", "replace")
        hits, truncated = store.search("needle")
        assert (hits, truncated) == full_scan(store, "needle")
        assert truncated and len(hits) == 50 and hits[-1] == SearchHit("notes/n24.md", 3, "needle")


class TestNeverStale:
    # covers T6: today's scan saw any edit at once; the index must too

    def test_an_edit_in_place_that_keeps_size_and_mtime_is_seen(self, store: MarkdownStore) -> None:
        store.write("MEMORY.md", "first word\n", "replace")
        assert store.search("first")[0]
        path = store.root / "MEMORY.md"
        before = path.stat()
        with path.open("r+b") as handle:  # an editor writing in place
            handle.write(b"other")
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        assert store.search("first") == ([], False)
        assert store.search("other") == ([SearchHit("MEMORY.md", 1, "other word")], False)

    def test_files_added_removed_and_renamed_by_hand_are_seen(self, store: MarkdownStore) -> None:
        store.write("MEMORY.md", "start\n", "replace")
        assert store.search("needle") == ([], False)
        (store.root / "notes").mkdir()  # a folder that did not exist at the first search
        (store.root / "notes" / "new.md").write_text("a needle\n")
        assert store.search("needle")[0] == [SearchHit("notes/new.md", 1, "a needle")]
        (store.root / "notes" / "new.md").rename(store.root / "notes" / "moved.md")
        assert store.search("needle")[0] == [SearchHit("notes/moved.md", 1, "a needle")]
        (store.root / "notes" / "moved.md").unlink()
        assert store.search("needle") == ([], False)

    def test_a_write_by_another_process_is_seen_by_the_next_search(
        self, store: MarkdownStore
    ) -> None:
        store.write("MEMORY.md", "x\n", "replace")
        assert store.search("elsewhere") == ([], False)
        script = (
            "import sys; from pathlib import Path\n"
            "from lecode_ls.memory.notes.store import MarkdownStore\n"
            "MarkdownStore(Path(sys.argv[1])).write('notes/p.md', 'from elsewhere', 'append')\n"
        )
        subprocess.run([sys.executable, "-c", script, str(store.root)], cwd=REPO, check=True)
        assert store.search("elsewhere")[0] == [SearchHit("notes/p.md", 1, "from elsewhere")]

    def test_without_inotify_every_search_compares_every_file(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # What macOS and Windows do (watch.py): slower, and just as exact.
        monkeypatch.setattr(watch, "_libc", lambda: None)
        store = MarkdownStore(tmp_path / "store")
        try:
            store.write("MEMORY.md", "one\n", "replace")
            assert store.search("one")[0]
            (store.root / "MEMORY.md").write_text("two\n")
            assert store.search("one") == ([], False)
            assert store.search("two")[0] == [SearchHit("MEMORY.md", 1, "two")]
        finally:
            store.close()

    def test_a_c_library_other_than_glibc_is_found_by_the_loaders_search(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # musl names its C library otherwise: the watch must still find inotify (or do without)
        import ctypes

        real = ctypes.CDLL
        tried: list[str | None] = []

        def no_glibc(name: str | None, *args: object, **kwargs: object) -> ctypes.CDLL:
            tried.append(name)
            if len(tried) == 1:  # the soname is not there; whatever the search finds is
                raise OSError("not glibc")
            return real(name, *args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(ctypes, "CDLL", no_glibc)
        assert watch._libc() is not None
        assert len(tried) == 2


class TestNeverTrusted:
    def test_a_damaged_index_is_rebuilt(self, store: MarkdownStore) -> None:
        store.write("notes/a.md", "needle\n", "replace")
        assert store.search("needle")[0]
        store.close()  # a closed store refuses every later call: the next one is a new store
        store = MarkdownStore(store.root)
        (store.root / INDEX_NAME).write_bytes(b"not a database" * 100)
        assert store.search("needle")[0] == [SearchHit("notes/a.md", 1, "needle")]
        assert store.search("needle")[0] == [SearchHit("notes/a.md", 1, "needle")]

    def test_a_hand_edited_index_cannot_hide_a_file(self, store: MarkdownStore) -> None:
        import apsw

        store.write("notes/a.md", "needle\n", "replace")
        store.search("needle")
        store.close()
        store = MarkdownStore(store.root)
        with apsw.Connection(str(store.root / INDEX_NAME)) as db:
            db.execute("DELETE FROM texts")  # identities stay: only the text index is gone
        # Identities still match, so a lost text row would hide the file: the check on opening
        # (one text row per indexed file) catches it, and the index is rebuilt.
        assert store.search("needle")[0] == [SearchHit("notes/a.md", 1, "needle")]

    def test_an_index_that_is_a_symbolic_link_is_not_followed(
        self, store: MarkdownStore, tmp_path: Path
    ) -> None:
        store.write("notes/a.md", "needle\n", "replace")
        target = tmp_path / "elsewhere.sqlite3"
        (store.root / INDEX_NAME).symlink_to(target)
        assert store.search("needle")[0] == [SearchHit("notes/a.md", 1, "needle")]
        assert not target.exists()

    def test_the_index_file_is_not_a_memory_file(self, store: MarkdownStore) -> None:
        store.write("MEMORY.md", "x", "replace")
        store.search("x")
        assert [entry.file for entry in store.list()] == ["MEMORY.md"]


class TestRequiredLiterals:
    @pytest.mark.parametrize(
        ("pattern", "clauses"),
        [
            ("hello", [{"hello"}]),
            ("foo|barx", [{"foo", "barx"}]),
            (r"(?:foo|barx)baz\d+qux(abc)?", [{"foo", "barx"}, {"baz"}, {"qux"}]),
            ("(abc)+x", [{"abc"}]),
            ("a(?i:bcd)efg", [{"efg"}]),
            ("(?i)abc", None),
            ("[[:alpha:]]abc", None),
            (r"\pL", None),
            ("ab", None),
            ("(abc)*x", None),
            ("abc|de", None),
        ],
    )
    def test_only_what_every_match_needs(
        self, pattern: str, clauses: list[set[str]] | None
    ) -> None:
        found = required_literals(pattern)
        assert (None if found is None else [set(clause) for clause in found]) == clauses
