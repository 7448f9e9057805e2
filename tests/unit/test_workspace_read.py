"""The `read` tool: the numbered-line shape learning matches (A5), paging, caps, confinement to
the workspace folder (symlinks and `..` included), binary refusal and lossy decoding."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from lecode_ls.config import SECRET_FILES
from lecode_ls.errors import BinaryFile, InvalidParams, NotFound, OutsideWorkspace
from lecode_ls.tools.read import (
    MAX_LINE_CHARS,
    MAX_SCAN_BYTES,
    READ_TOOL,
    find_line,
    read_workspace_file,
    run_read_tool,
    secret_match,
)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("import os\n\nprint('hi')\r\n")
    return root


class TestShape:
    def test_each_line_is_a_six_wide_number_a_tab_and_the_text(self, folder: Path) -> None:
        # covers A5
        assert read_workspace_file(folder, "src/a.py") == (
            "     1\timport os\n     2\t\n     3\tprint('hi')"
        )

    def test_a_quote_matches_exactly_one_numbered_line(self, folder: Path) -> None:
        # covers A5: the text after the TAB is the file's line, byte for byte
        lines = read_workspace_file(folder, "src/a.py").split("\n")
        assert [line.split("\t", 1)[1] for line in lines] == ["import os", "", "print('hi')"]

    def test_line_numbers_beyond_six_digits_still_have_a_tab(self, folder: Path) -> None:
        (folder / "big.txt").write_text("x\n" * 1_000_001)
        out = read_workspace_file(folder, "big.txt", start_line=1_000_000, max_lines=1)
        assert (
            out
            == "1000000\tx\n[output cut after line 1000000 (line limit); continue with start_line=1000001]"
        )

    def test_the_tool_definition_is_read_class_in_openai_format(self) -> None:
        definition = READ_TOOL.definition()
        assert (definition["type"], definition["function"]["name"]) == ("function", "read")
        assert READ_TOOL.tool_class == "read"


class TestPaging:
    def test_start_line_pages_and_the_cut_says_how_to_continue(self, folder: Path) -> None:
        (folder / "n.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
        first = read_workspace_file(folder, "n.txt", max_lines=4)
        assert first.split("\n")[-1] == (
            "[output cut after line 4 (line limit); continue with start_line=5]"
        )
        second = read_workspace_file(folder, "n.txt", start_line=5, max_lines=4)
        assert second.split("\n")[0] == "     5\tline 5"
        last = read_workspace_file(folder, "n.txt", start_line=9, max_lines=4)
        assert last == "     9\tline 9\n    10\tline 10"

    def test_the_byte_cap_cuts_between_lines(self, folder: Path) -> None:
        (folder / "w.txt").write_text("abcdefghij\n" * 100)
        out = read_workspace_file(folder, "w.txt", max_bytes=100)
        lines = out.split("\n")
        assert lines[-1] == "[output cut after line 5 (byte limit); continue with start_line=6]"
        assert len("\n".join(lines[:-1]).encode()) <= 100

    def test_a_very_long_line_is_cut_and_says_so(self, folder: Path) -> None:
        (folder / "min.js").write_text("x" * (MAX_LINE_CHARS + 10))
        out = read_workspace_file(folder, "min.js")
        assert out == (
            f"     1\t{'x' * MAX_LINE_CHARS}\n[line 1 was cut at {MAX_LINE_CHARS} characters]"
        )

    def test_start_line_past_the_end_and_empty_files_say_so(self, folder: Path) -> None:
        (folder / "empty.txt").write_text("")
        assert read_workspace_file(folder, "empty.txt") == "[the file is empty]"
        assert read_workspace_file(folder, "src/a.py", start_line=9) == (
            "[the file has 3 lines; start_line 9 is past its end]"
        )

    def test_invalid_utf8_is_decoded_with_replacement(self, folder: Path) -> None:
        (folder / "latin.txt").write_bytes(b"caf\xe9\n")
        assert read_workspace_file(folder, "latin.txt") == "     1\tcaf\ufffd"


class TestRefusals:
    @pytest.mark.parametrize("path", ["../outside.txt", "src/../../outside.txt"])
    def test_dot_dot_escapes_are_refused(self, folder: Path, path: str) -> None:
        (folder.parent / "outside.txt").write_text("secret\n")
        with pytest.raises(OutsideWorkspace):
            read_workspace_file(folder, path)

    def test_dot_dot_that_stays_inside_is_fine(self, folder: Path) -> None:
        assert read_workspace_file(folder, "src/../src/a.py").startswith("     1\timport os")

    def test_a_symlink_escaping_the_folder_is_refused(self, folder: Path) -> None:
        (folder.parent / "outside.txt").write_text("secret\n")
        (folder / "link.txt").symlink_to(folder.parent / "outside.txt")
        (folder / "up").symlink_to(folder.parent)
        with pytest.raises(OutsideWorkspace):
            read_workspace_file(folder, "link.txt")
        with pytest.raises(OutsideWorkspace):
            read_workspace_file(folder, "up/outside.txt")

    def test_an_escaping_path_is_refused_even_when_its_target_does_not_exist(
        self, folder: Path
    ) -> None:
        with pytest.raises(OutsideWorkspace):
            read_workspace_file(folder, "../no-such-file.txt")

    def test_a_symlink_inside_the_folder_is_followed(self, folder: Path) -> None:
        (folder / "alias.py").symlink_to(folder / "src" / "a.py")
        assert read_workspace_file(folder, "alias.py").startswith("     1\timport os")

    @pytest.mark.parametrize("path", ["/etc/passwd", "\\\\server\\share", "C:\\x.txt"])
    def test_absolute_paths_are_refused(self, folder: Path, path: str) -> None:
        with pytest.raises(OutsideWorkspace):
            read_workspace_file(folder, path)

    def test_binary_files_are_refused(self, folder: Path) -> None:
        (folder / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
        with pytest.raises(BinaryFile):
            read_workspace_file(folder, "img.png")

    def test_missing_files_and_folders_are_refused(self, folder: Path) -> None:
        with pytest.raises(NotFound):
            read_workspace_file(folder, "nope.txt")
        with pytest.raises(InvalidParams):
            read_workspace_file(folder, "src")
        with pytest.raises(InvalidParams):
            read_workspace_file(folder, "")


class TestTool:
    def test_the_tool_returns_numbered_lines(self, folder: Path) -> None:
        result = run_read_tool(folder, json.dumps({"path": "src/a.py", "start_line": 3}))
        assert (result.content, result.is_error) == ("     3\tprint('hi')", False)

    @pytest.mark.parametrize(
        ("args", "argument"),
        [
            ({}, "path"),
            ({"path": 1}, "path"),
            ({"path": "src/a.py", "start_line": 0}, "start_line"),
            ({"path": "src/a.py", "start_line": "2"}, "start_line"),
            ({"path": "src/a.py", "max_bytes": 9}, "max_bytes"),
            ({"path": "../x"}, "path"),
        ],
    )
    def test_bad_arguments_are_error_results_naming_them(
        self, folder: Path, args: dict[str, object], argument: str
    ) -> None:
        result = run_read_tool(folder, json.dumps(args))
        assert result.is_error
        assert json.loads(result.content)["message"].startswith(f"{argument}:")


class TestBoundedMemory:
    # covers the read tool's cost (issue 10.6): the same memory whatever the line lengths

    def test_a_huge_single_line_costs_what_a_short_one_does(self, folder: Path) -> None:
        with (folder / "one-line.txt").open("wb") as out:
            for _ in range(64):
                out.write(b"x" * (1 << 20))  # 64 MiB, no newline
            out.write(b"\nsecond\n")
        tracemalloc.start()
        try:
            text = read_workspace_file(folder, "one-line.txt")
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert text.splitlines() == [
            "     1\t" + "x" * MAX_LINE_CHARS,
            "     2\tsecond",
            f"[line 1 was cut at {MAX_LINE_CHARS} characters]",
        ]
        assert peak < 1 << 20

    def test_skipping_to_a_start_line_past_a_huge_line_is_bounded(self, folder: Path) -> None:
        (folder / "f.txt").write_bytes(b"y" * (8 << 20) + b"\nlast\n")
        tracemalloc.start()
        try:
            text = read_workspace_file(folder, "f.txt", start_line=2)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert text == "     2\tlast"
        assert peak < 1 << 20

    def test_a_line_of_four_byte_characters_is_cut_at_whole_characters(self, folder: Path) -> None:
        (folder / "emoji.txt").write_text("\U0001f600" * 5000)
        first = read_workspace_file(folder, "emoji.txt").splitlines()[0]
        assert first == "     1\t" + "\U0001f600" * MAX_LINE_CHARS

    def test_a_sparse_file_of_one_huge_line_is_read_only_up_to_the_scan_bound(
        self, folder: Path
    ) -> None:
        # issue 23, item 5: a one-line sparse file of 16 GiB took 68 s to skip through
        with (folder / "sparse.txt").open("wb") as out:
            out.write(b"x" * 16384)  # text where the binary check looks; then a 16 GiB hole
            out.truncate(16 << 30)
        text = read_workspace_file(folder, "sparse.txt")
        assert (
            text.splitlines()[-1]
            == f"[reading stopped after {MAX_SCAN_BYTES >> 20} MiB of the file]"
        )
        assert find_line(folder, "sparse.txt", "never there") is None


class TestSecretFiles:
    # covers T4 (issue 10.8)

    @pytest.mark.parametrize(
        ("path", "secret"),
        [
            (".env", ".env"),
            ("src/.env.local", "src/.env.local"),
            (".ENV", ".ENV"),
            ("deploy/server.pem", "deploy/server.pem"),
            (".git/config", ".git/config"),
            ("sub/.git/config", "sub/.git/config"),
            ("home/.ssh/id_ed25519", "home/.ssh/id_ed25519"),
            # issue 23, item 5: Git configs at any depth, gh, gcloud, kube, docker
            (".git/modules/lib/config", ".git/modules/lib/config"),
            (".git/modules/a/modules/b/config", ".git/modules/a/modules/b/config"),
            ("home/.config/gh/hosts.yml", "home/.config/gh/hosts.yml"),
            (".config/gcloud/credentials.db", ".config/gcloud/credentials.db"),
            (
                ".config/gcloud/application_default_credentials.json",
                ".config/gcloud/application_default_credentials.json",
            ),
            (".kube/config", ".kube/config"),
            (".docker/config.json", ".docker/config.json"),
            (".git/modules/lib/HEAD", None),
            ("src/a.py", None),
            ("src/environment.py", None),
            ("config", None),
        ],
    )
    def test_default_patterns_match_files_that_usually_hold_credentials(
        self, folder: Path, path: str, secret: str | None
    ) -> None:
        target = folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists():
            target.write_text("x\n")
        assert secret_match(folder, path, SECRET_FILES) == secret

    def test_without_a_policy_a_secret_file_is_refused(self, folder: Path) -> None:
        (folder / ".npmrc").write_text("//registry/:_authToken=abc\n")
        result = run_read_tool(folder, json.dumps({"path": ".npmrc"}), secret_files=SECRET_FILES)
        assert result.is_error
        assert json.loads(result.content)["error"] == "permission_denied"
        assert "abc" not in result.content
