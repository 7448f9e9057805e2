"""Paths and URIs of every platform, run here: drive letters, `file:///c%3A/...` as VS Code sends
it, UNC shares, and folders that ignore case, in project identity, containment and the slug.

Windows' rules run on `PureWindowsPath` and `windows=True`; a case-insensitive file system is a
stand-in `CaseProbe` (a dict of folders), since the file systems here are case-sensitive.
"""

from __future__ import annotations

import os
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path, PurePath, PurePosixPath, PureWindowsPath

import pytest

from lecode_ls.memory.project.identity import project_slug, resolve_project
from lecode_ls.platform.paths import (
    canonical,
    canonical_anchor,
    is_within,
    path_to_uri,
    true_case,
    uri_to_path,
)

# -- URIs -------------------------------------------------------------------------------------------

WINDOWS_URIS = [
    # VS Code: lower-case drive letter, colon escaped, spaces and non-ASCII escaped
    ("file:///c%3A/Users/me/My%20Project", r"C:\Users\me\My Project"),
    ("file:///c%3A/Users/me/caf%C3%A9", "C:\\Users\\me\\café"),
    ("file:///d%3A/", "D:\\"),
    ("file:///d%3A", "D:\\"),
    # other clients: the colon as is, upper-case, localhost, the legacy bar
    ("file:///C:/Users/me", r"C:\Users\me"),
    ("file://localhost/c:/x", r"C:\x"),
    ("file://LOCALHOST/c:/x", r"C:\x"),
    ("file:///c|/x", r"C:\x"),
    ("FILE:///c:/x", r"C:\x"),
    # UNC shares, as VS Code writes them and with four slashes
    ("file://server/share/dir/x", r"\\server\share\dir\x"),
    ("file://server/share", "\\\\server\\share\\"),
    ("file:////server/share/dir", r"\\server\share\dir"),
    ("file://wsl.localhost/Ubuntu/home/me", r"\\wsl.localhost\Ubuntu\home\me"),
    # an escaped backslash is a separator on Windows; `..` is left for resolution to judge
    ("file:///c%3A/a%5Cb", r"C:\a\b"),
]

WINDOWS_REFUSED = [
    "file:///home/me",  # no drive, no share
    "file://server",  # a server without a share
    "file://server/",
    "file:////./pipe/lecode",  # the device namespace
    "file:////%3F/c:/x",
    "file:///c%3A/a%00b",  # NUL
    "file:///c%3A/a%FFb",  # not UTF-8
    "file:///c:/x?query",
    "file:///c:/x#fragment",
    "untitled:Untitled-1",
    "vscode-remote://ssh-remote+box/home/me",
    "http://example.com/c:/x",
]


@pytest.mark.parametrize(("uri", "path"), WINDOWS_URIS)
def test_windows_uris_give_windows_paths(uri: str, path: str) -> None:
    assert uri_to_path(uri, windows=True) == path


@pytest.mark.parametrize("uri", WINDOWS_REFUSED)
def test_windows_uris_naming_no_local_file_are_refused(uri: str) -> None:
    assert uri_to_path(uri, windows=True) is None


@pytest.mark.parametrize(
    ("uri", "path"),
    [
        ("file:///home/me/a%20b", "/home/me/a b"),
        ("file://localhost/home/me", "/home/me"),
        ("file:///Users/me/caf%C3%A9", "/Users/me/café"),
        ("file:///c%3A/x", "/c:/x"),  # a legal POSIX name
        ("file:///home/a%5Cb", "/home/a\\b"),  # a backslash is a character here
    ],
)
def test_posix_uris_give_posix_paths(uri: str, path: str) -> None:
    assert uri_to_path(uri, windows=False) == path


def test_posix_bytes_that_are_not_utf8_survive_as_the_file_system_encodes_them() -> None:
    path = uri_to_path("file:///home/x%FFy", windows=False)
    assert path is not None and os.fsencode(path) == b"/home/x\xffy"
    assert path_to_uri(path, windows=False) == "file:///home/x%FFy"


@pytest.mark.parametrize(
    "uri", ["file://otherhost/home/me", "file:///home/a%00b", "file:relative", "file:///x#f"]
)
def test_posix_uris_naming_no_local_file_are_refused(uri: str) -> None:
    assert uri_to_path(uri, windows=False) is None


@pytest.mark.parametrize(
    ("path", "uri"),
    [
        (r"C:\Users\me\My Project", "file:///c%3A/Users/me/My%20Project"),
        ("C:\\", "file:///c%3A/"),
        ("d:\\x\\caf\u00e9", "file:///d%3A/x/caf%C3%A9"),
        ("C:\\a+b\\(1)\\#x", "file:///c%3A/a%2Bb/%281%29/%23x"),
        (r"\\Server\Share\dir", "file://server/Share/dir"),
        ("\\\\server\\share\\", "file://server/share/"),
    ],
)
def test_windows_paths_give_the_uri_vs_code_writes(path: str, uri: str) -> None:
    # VS Code's Uri.toString(): drive letter and authority lower-cased, everything but
    # [A-Za-z0-9-._~/] percent-encoded. A notification's URI must equal the editor's string.
    assert path_to_uri(PureWindowsPath(path), windows=True) == uri
    assert path_to_uri(path, windows=True) == uri


@pytest.mark.parametrize(
    "path", [r"C:\Users\me\My Project", r"\\server\share\dir\x", "E:\\caf\u00e9\\\u6587"]
)
def test_windows_paths_round_trip(path: str) -> None:
    assert uri_to_path(path_to_uri(path, windows=True), windows=True) == path


def test_posix_paths_give_uris_and_round_trip() -> None:
    assert path_to_uri(PurePosixPath("/home/me/a b"), windows=False) == "file:///home/me/a%20b"
    for path in ("/home/me/a b", "/tmp/caf\u00e9/#1?", "/x/50%"):
        assert uri_to_path(path_to_uri(path, windows=False), windows=False) == path


# -- one spelling per folder ------------------------------------------------------------------------


@dataclass(frozen=True)
class Ident:
    st_dev: int
    st_ino: int


@dataclass
class FoldingDisk:
    """A file system that stores names as given and compares them without regard to case and
    Unicode normalization (NTFS, default APFS). `folders` maps a folder to its stored names."""

    flavour: type[PurePath]
    folders: dict[str, list[str]]
    insensitive: bool = True
    listed: list[str] = field(default_factory=list)

    def _key(self, path: PurePath) -> str:
        text = str(path)
        if self.insensitive:
            text = unicodedata.normalize("NFC", unicodedata.normalize("NFD", text).casefold())
        return text

    def _stored(self) -> dict[str, int]:
        ids: dict[str, int] = {}
        for folder, names in self.folders.items():
            ids.setdefault(self._key(self.flavour(folder)), len(ids) + 1)
            for name in names:
                ids.setdefault(self._key(self.flavour(folder) / name), len(ids) + 1)
        return ids

    def lstat(self, path: PurePath) -> Ident | None:
        number = self._stored().get(self._key(path))
        return None if number is None else Ident(1, number)

    def listdir(self, path: PurePath) -> list[str]:
        self.listed.append(str(path))
        for folder, names in self.folders.items():
            if self._key(self.flavour(folder)) == self._key(path):
                return list(names)
        return []


WINDOWS_DISK = {
    "C:\\": ["Users"],
    "C:\\Users": ["Me", "Public"],
    "C:\\Users\\Me": ["Projects"],
    "C:\\Users\\Me\\Projects": ["Lecode", "other"],
}


class TestTrueCase:
    def test_a_windows_path_in_any_case_gets_the_stored_spelling(self) -> None:
        disk = FoldingDisk(PureWindowsPath, WINDOWS_DISK)
        for typed in (
            r"c:\users\me\projects\lecode",
            r"C:\USERS\ME\PROJECTS\LECODE",
            r"C:\Users\Me\Projects\Lecode",
        ):
            found = true_case(PureWindowsPath(typed), disk)
            assert str(found) == r"C:\Users\Me\Projects\Lecode"

    def test_names_from_the_first_missing_one_on_are_kept_as_given(self) -> None:
        disk = FoldingDisk(PureWindowsPath, WINDOWS_DISK)
        found = true_case(PureWindowsPath(r"c:\users\me\NEW\Sub"), disk)
        assert str(found) == r"C:\Users\Me\NEW\Sub"

    def test_a_share_anchor_is_lower_cased_and_its_folders_take_their_stored_case(self) -> None:
        disk = FoldingDisk(
            PureWindowsPath, {"\\\\nas\\team\\": ["Docs"], "\\\\nas\\team\\Docs": []}
        )
        found = true_case(PureWindowsPath(r"\\NAS\Team\docs"), disk)
        assert str(found) == r"\\nas\team\Docs"
        assert canonical_anchor(PureWindowsPath(r"\\NAS\Team\x")) == "\\\\nas\\team\\"
        assert canonical_anchor(PureWindowsPath(r"c:\x")) == "C:\\"

    def test_macos_folders_ignore_case_and_unicode_normalization(self) -> None:
        # APFS keeps the name as created (here decomposed, as HFS+ stored it) but finds it by
        # either form; VS Code sends NFC.
        decomposed = "Cafe\u0301"
        disk = FoldingDisk(
            PurePosixPath, {"/": ["Users"], "/Users": ["me"], "/Users/me": [decomposed]}
        )
        found = true_case(PurePosixPath("/users/ME/caf\u00e9"), disk)
        assert found == PurePosixPath("/Users/me") / decomposed

    def test_a_case_sensitive_file_system_is_left_alone_and_never_listed(self) -> None:
        disk = FoldingDisk(
            PurePosixPath,
            {"/": ["home"], "/home": ["me"], "/home/me": ["Proj", "proj"]},
            insensitive=False,
        )
        assert true_case(PurePosixPath("/home/me/proj"), disk) == PurePosixPath("/home/me/proj")
        assert true_case(PurePosixPath("/home/me/Proj"), disk) == PurePosixPath("/home/me/Proj")
        assert disk.listed == []

    def test_two_spellings_give_one_project_slug(self) -> None:
        disk = FoldingDisk(PureWindowsPath, WINDOWS_DISK)
        slugs = {
            project_slug(true_case(PureWindowsPath(typed), disk))
            for typed in (r"c:\users\me\projects\lecode", r"C:\Users\ME\Projects\LECODE")
        }
        assert len(slugs) == 1
        assert slugs.pop().startswith("Lecode-")


class TestWindowsSlugsAndContainment:
    def test_slugs_of_windows_roots(self) -> None:
        assert project_slug(PureWindowsPath(r"C:\Users\me\Café App")).startswith("Cafe-App-")
        assert project_slug(PureWindowsPath("C:\\")).startswith("project-")
        assert project_slug(PureWindowsPath(r"\\server\share")).startswith("project-")
        assert project_slug(PureWindowsPath(r"\\server\share\repo")).startswith("repo-")
        # the drive letter is part of the identity: another drive is another project
        assert project_slug(PureWindowsPath(r"C:\x\app")) != project_slug(
            PureWindowsPath(r"D:\x\app")
        )

    def test_a_slug_is_stable_across_platforms_for_the_same_text(self) -> None:
        # The hash covers the path's text, so one path always gives one slug, whichever
        # platform computes it; Windows paths keep their backslashes.
        assert project_slug(PureWindowsPath(r"C:\x\app")) == project_slug(
            PureWindowsPath("C:/x/app")
        )

    @pytest.mark.parametrize(
        ("path", "folder", "inside"),
        [
            (r"C:\Users\Me\Proj\src\a.py", r"c:\users\me\proj", True),
            (r"C:\Users\Me\Proj", r"C:\Users\Me\Proj", True),
            (r"C:\Users\Me\Project2", r"C:\Users\Me\Proj", False),
            (r"D:\Users\Me\Proj\x", r"C:\Users\Me\Proj", False),
            (r"\\server\share\repo\x", r"\\SERVER\Share\repo", True),
            (r"\\server\other\repo\x", r"\\server\share\repo", False),
        ],
    )
    def test_windows_containment_ignores_case_and_respects_drives_and_shares(
        self, path: str, folder: str, inside: bool
    ) -> None:
        assert is_within(PureWindowsPath(path), PureWindowsPath(folder)) is inside

    def test_a_vs_code_uri_lands_inside_its_workspace_folder(self) -> None:
        folder = uri_to_path("file:///c%3A/Users/me/Proj", windows=True)
        file = uri_to_path("file:///C:/Users/me/Proj/src/main.py", windows=True)
        assert folder is not None and file is not None
        assert is_within(PureWindowsPath(file), PureWindowsPath(folder))


class TestCanonicalOnThisMachine:
    def test_links_are_resolved_and_existing_names_kept(self, tmp_path: Path) -> None:
        (tmp_path / "Real").mkdir()
        (tmp_path / "link").symlink_to(tmp_path / "Real")
        assert (
            canonical(tmp_path / "link" / "new")
            == Path(os.path.realpath(tmp_path)) / "Real" / "new"
        )

    def test_identity_uses_the_canonical_root(self, tmp_path: Path) -> None:
        (tmp_path / "proj" / ".git").mkdir(parents=True)
        (tmp_path / "alias").symlink_to(tmp_path / "proj")
        assert resolve_project(tmp_path / "alias" / "src") == resolve_project(tmp_path / "proj")
