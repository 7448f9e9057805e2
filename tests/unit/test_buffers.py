"""The open documents' copy (server/buffers.py): always the text the client holds, whatever the
characters and the edits, at a cost of one pass over the document per didChange.

# covers R1-R8 (hostile input: issue 23, items 3 and 4), T3
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lecode_ls.server import buffers
from lecode_ls.server.buffers import Buffers, Edit, apply_edits, column, split_keepends

# Characters Python's splitlines takes for line breaks and LSP does not, beside LSP's own.
TRICKY = ["\n", "\r", "\r\n", "\u2028", "\u2029", "\x85", "\x0c", "\x0b", "\x1c", "\x1d", "\x1e"]
WIDE = ["é", "€", "😀", "\U0001d4b3"]  # 2, 3 and 4 UTF-8 bytes; the last two are 2 UTF-16 units


def client_apply(text: str, start: tuple[int, int], end: tuple[int, int], new: str) -> str:
    """What the client holds after an edit, computed the slow obvious way: positions are
    (line, UTF-16 unit) over lines broken at \\r\\n, \\r and \\n only."""

    def offset(line: int, character: int) -> int:
        starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]
        if line >= len(starts):
            return len(text)
        begin = starts[line]
        stop = re.compile(r"\r\n|\r|\n").search(text, begin)
        content = text[begin : stop.start() if stop else len(text)]
        units = 0
        for index, char in enumerate(content):
            if units >= character:
                return begin + index
            units += 2 if ord(char) > 0xFFFF else 1
        return begin + len(content)

    a, b = sorted((start, end))
    return text[: offset(*a)] + new + text[offset(*b) :]


def positions(text: str) -> st.SearchStrategy[tuple[int, int]]:
    """Valid client positions in `text`: a line, and a column at a character boundary."""
    lines = [re.sub(r"\r\n|\r|\n", "", line) for line in split_keepends(text)] or [""]
    if text.endswith(("\n", "\r")) or not text:
        lines.append("")

    def columns(line: str) -> list[int]:
        found, units = [0], 0
        for char in line:
            units += 2 if ord(char) > 0xFFFF else 1
            found.append(units)
        return found

    return st.integers(0, len(lines) - 1).flatmap(
        lambda n: st.sampled_from(columns(lines[n])).map(lambda c: (n, c))
    )


pieces = st.lists(st.sampled_from([*TRICKY, *WIDE, "a", "b", " ", "xyz"]), max_size=30).map("".join)


class TestTheCopyIsTheClientsText:
    @settings(max_examples=400, deadline=None)
    @given(st.data(), pieces)
    def test_any_edits_on_any_text_leave_what_the_client_holds(self, data, text) -> None:  # type: ignore[no-untyped-def]
        held = text
        kept = text
        for _ in range(data.draw(st.integers(1, 6))):
            start = data.draw(positions(held))
            end = data.draw(positions(held))
            new = data.draw(pieces)
            held = client_apply(held, start, end, new)
            kept = apply_edits(kept, [Edit(new, (start, end))])
            assert kept == held

    @settings(max_examples=200, deadline=None)
    @given(st.data(), pieces)
    def test_many_edits_in_one_change_equal_them_one_by_one(self, data, text) -> None:  # type: ignore[no-untyped-def]
        held, edits = text, []
        for _ in range(data.draw(st.integers(1, 8))):
            start, end, new = (
                data.draw(positions(held)),
                data.draw(positions(held)),
                data.draw(pieces),
            )
            held = client_apply(held, start, end, new)
            edits.append(Edit(new, (start, end)))
        assert apply_edits(text, edits) == held

    def test_a_line_below_u2028_is_the_line_the_editor_shows(self) -> None:
        text = "a = 1\u2028# note\nport = 8080\n"
        assert (
            apply_edits(text, [Edit("9090", ((1, 7), (1, 11)))])
            == "a = 1\u2028# note\nport = 9090\n"
        )

    def test_a_cr_before_an_inserted_lf_is_one_line_break(self) -> None:
        assert apply_edits("x\ry", [Edit("\n", ((1, 0), (1, 0)))]) == "x\r\ny"
        # The client now sees two lines; the next edit at line 1 is on "y".
        assert apply_edits("x\ry", [Edit("\n", ((1, 0), (1, 0))), Edit("Y", ((1, 0), (1, 1)))]) == (
            "x\r\nY"
        )

    def test_a_position_past_the_end_is_the_end(self) -> None:
        assert apply_edits("abc", [Edit("!", ((9, 9), (9, 9)))]) == "abc!"
        assert apply_edits("abc\n", [Edit("!", ((0, 99), (0, 99)))]) == "abc!\n"

    def test_a_whole_document_change_replaces_the_text(self) -> None:
        assert apply_edits("old", [Edit("x\ny"), Edit("Z", ((1, 0), (1, 1)))]) == "x\nZ"

    @pytest.mark.parametrize(
        ("encoding", "character", "index"),
        [("utf-16", 3, 2), ("utf-8", 5, 2), ("utf-32", 2, 2), ("utf-16", 99, 3)],
    )
    def test_a_column_is_counted_in_the_agreed_encoding(
        self, encoding: str, character: int, index: int
    ) -> None:
        assert column("a😀b\n", character, encoding) == index


class TestOneDidChangeCostsOnePass:
    def test_two_thousand_edits_on_a_long_document_split_it_once(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # The document is split once, then only the lines each edit touches: the characters
        # split stay about the document's size plus the edits', not 2,000 times the document.
        text = "".join(f"value_{n} = {n}\n" for n in range(100_000))
        split_chars = 0

        def counting(part: str) -> list[str]:
            nonlocal split_chars
            split_chars += len(part)
            return split_keepends(part)

        monkeypatch.setattr(buffers, "split_keepends", counting)
        edits = [Edit("renamed", ((n * 50, 0), (n * 50, 5))) for n in range(2000)]
        after = apply_edits(text, edits)
        assert after.count("renamed_") == 2000
        assert split_chars < len(text) + 2000 * 40


class TestBounds:
    def test_a_document_past_the_bound_is_not_kept(self) -> None:
        kept = Buffers()
        assert not kept.open("file:///big", "x" * (Buffers.MAX_BUFFER_CHARS + 1))
        assert kept.text("file:///big") is None and kept.chars == 0

    def test_growth_past_the_bound_drops_the_document_and_its_count(self) -> None:
        kept = Buffers()
        assert kept.open("file:///a", "abc")
        assert kept.chars == 3
        big = "y" * Buffers.MAX_BUFFER_CHARS
        assert not kept.change("file:///a", [Edit(big, ((0, 0), (0, 0)))])
        assert kept.text("file:///a") is None and kept.chars == 0

    def test_the_kept_total_is_counted_as_documents_change(self) -> None:
        kept = Buffers()
        kept.open("file:///a", "abc")
        kept.open("file:///b", "de")
        kept.change("file:///a", [Edit("XYZW", ((0, 0), (0, 3)))])
        kept.open("file:///b", "d")  # a second open replaces the first
        kept.close("file:///a")
        assert kept.chars == 1 and list(kept.uris()) == ["file:///b"]
