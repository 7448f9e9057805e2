"""Project identity: which root a path belongs to, and the slug naming its store.

Every case runs against real Git repositories, worktrees and submodules made in tmp_path with the
`git` command, and real symbolic links; the code under test never runs `git` itself.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from lecode_ls.memory.project.identity import (
    Project,
    find_project_root,
    project_slug,
    resolve_project,
)

SLUG_SHAPE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,39}-[0-9a-f]{12}")


def git_env() -> dict[str, str]:
    """An environment where the user's own Git config cannot change what the tests build."""
    env = dict(os.environ)
    env.update(
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="Test",
        GIT_AUTHOR_EMAIL="test@example.invalid",
        GIT_COMMITTER_NAME="Test",
        GIT_COMMITTER_EMAIL="test@example.invalid",
    )
    return env


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "protocol.file.allow=always", *args],
        cwd=cwd,
        env=git_env(),
        check=True,
        capture_output=True,
    )


def make_repo(path: Path) -> Path:
    """A Git repository at `path` with one commit, so worktrees and submodules can be made of it."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    (path / "README.md").write_text("hello\n", encoding="utf-8")
    git(path, "add", "README.md")
    git(path, "commit", "-q", "-m", "initial")
    return path.resolve()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo")


class TestMainCheckout:
    # covers L2
    def test_the_repository_root_is_its_own_project_root(self, repo: Path) -> None:
        assert find_project_root(repo) == repo

    def test_a_nested_folder_belongs_to_the_repository_root(self, repo: Path) -> None:
        nested = repo / "src" / "pkg"
        nested.mkdir(parents=True)
        assert find_project_root(nested) == repo

    def test_a_file_path_belongs_to_the_repository_of_its_folder(self, repo: Path) -> None:
        (repo / "src").mkdir()
        source = repo / "src" / "main.py"
        source.write_text("print()\n", encoding="utf-8")
        assert find_project_root(source) == repo

    def test_a_path_that_does_not_exist_yet_belongs_to_the_enclosing_repository(
        self, repo: Path
    ) -> None:
        assert find_project_root(repo / "not" / "yet") == repo

    def test_resolve_project_pairs_the_root_with_its_slug(self, repo: Path) -> None:
        assert resolve_project(repo / "README.md") == Project(root=repo, slug=project_slug(repo))


class TestLinkedWorktrees:
    # covers L2, L3
    def test_a_linked_worktree_shares_the_main_checkout_project(
        self, repo: Path, tmp_path: Path
    ) -> None:
        git(repo, "worktree", "add", "-q", "-b", "feature", str(tmp_path / "wt"))
        assert resolve_project(tmp_path / "wt") == resolve_project(repo)

    def test_a_folder_inside_a_linked_worktree_shares_the_main_checkout_project(
        self, repo: Path, tmp_path: Path
    ) -> None:
        git(repo, "worktree", "add", "-q", "-b", "feature", str(tmp_path / "wt"))
        nested = tmp_path / "wt" / "docs"
        nested.mkdir()
        assert find_project_root(nested) == repo

    def test_a_worktree_added_with_a_relative_path_shares_the_main_checkout_project(
        self, repo: Path
    ) -> None:
        git(repo, "worktree", "add", "-q", "-b", "feature", "../relative-wt")
        assert find_project_root(repo.parent / "relative-wt") == repo

    def test_a_worktree_of_a_bare_repository_belongs_to_the_bare_repository(
        self, repo: Path, tmp_path: Path
    ) -> None:
        git(tmp_path, "clone", "-q", "--bare", str(repo), "bare.git")
        bare = (tmp_path / "bare.git").resolve()
        git(bare, "worktree", "add", "-q", str(tmp_path / "bare-wt"), "main")
        assert find_project_root(tmp_path / "bare-wt") == bare


class TestSubmodules:
    # covers L2, L3
    @pytest.fixture
    def superproject(self, repo: Path, tmp_path: Path) -> Path:
        make_repo(tmp_path / "library")
        git(repo, "submodule", "add", "-q", str(tmp_path / "library"), "vendor/library")
        return repo

    def test_a_submodule_is_a_project_of_its_own(self, superproject: Path) -> None:
        submodule = superproject / "vendor" / "library"
        assert find_project_root(submodule) == submodule

    def test_a_submodule_has_a_slug_distinct_from_its_superproject(
        self, superproject: Path
    ) -> None:
        submodule = resolve_project(superproject / "vendor" / "library")
        assert submodule.slug != resolve_project(superproject).slug

    def test_a_folder_inside_a_submodule_belongs_to_the_submodule(self, superproject: Path) -> None:
        nested = superproject / "vendor" / "library" / "lib"
        nested.mkdir()
        assert find_project_root(nested) == superproject / "vendor" / "library"

    def test_the_superproject_folder_holding_a_submodule_stays_in_the_superproject(
        self, superproject: Path
    ) -> None:
        assert find_project_root(superproject / "vendor") == superproject

    def test_a_linked_worktree_of_a_submodule_belongs_to_the_submodule_checkout(
        self, superproject: Path, tmp_path: Path
    ) -> None:
        submodule = superproject / "vendor" / "library"
        git(submodule, "worktree", "add", "-q", "-b", "sub-feature", str(tmp_path / "sub-wt"))
        assert find_project_root(tmp_path / "sub-wt") == submodule


class TestOutsideGit:
    # covers L2
    def test_a_folder_outside_git_is_its_own_project(self, tmp_path: Path) -> None:
        folder = tmp_path / "plain"
        folder.mkdir()
        assert find_project_root(folder) == folder.resolve()

    def test_a_file_outside_git_belongs_to_its_folder(self, tmp_path: Path) -> None:
        note = tmp_path / "notes.txt"
        note.write_text("x\n", encoding="utf-8")
        assert find_project_root(note) == tmp_path.resolve()


class TestSymbolicLinks:
    # covers L2, L3
    def test_a_link_to_the_repository_gives_the_same_root_and_slug(
        self, repo: Path, tmp_path: Path
    ) -> None:
        link = tmp_path / "link-to-repo"
        link.symlink_to(repo, target_is_directory=True)
        assert resolve_project(link) == resolve_project(repo)

    def test_a_link_to_a_nested_folder_gives_the_repository_root(
        self, repo: Path, tmp_path: Path
    ) -> None:
        (repo / "deep").mkdir()
        link = tmp_path / "link-to-deep"
        link.symlink_to(repo / "deep", target_is_directory=True)
        assert find_project_root(link) == repo

    def test_a_link_to_a_folder_outside_git_gives_the_real_folder(self, tmp_path: Path) -> None:
        real = tmp_path / "real"
        real.mkdir()
        link = tmp_path / "alias"
        link.symlink_to(real, target_is_directory=True)
        assert resolve_project(link) == resolve_project(real)


class TestDamagedGitFile:
    # covers L2
    def test_a_garbled_git_file_makes_its_folder_the_root(self, tmp_path: Path) -> None:
        checkout = tmp_path / "garbled"
        (checkout / "sub").mkdir(parents=True)
        (checkout / ".git").write_bytes(b"\xff\xfe not a gitdir line\n")
        assert find_project_root(checkout / "sub") == checkout.resolve()

    def test_a_git_file_without_a_gitdir_line_makes_its_folder_the_root(
        self, tmp_path: Path
    ) -> None:
        checkout = tmp_path / "odd"
        checkout.mkdir()
        (checkout / ".git").write_text("hello\n", encoding="utf-8")
        assert find_project_root(checkout) == checkout.resolve()

    def test_a_git_file_pointing_nowhere_makes_its_folder_the_root(self, tmp_path: Path) -> None:
        checkout = tmp_path / "dangling"
        checkout.mkdir()
        (checkout / ".git").write_text("gitdir: ../missing/.git/worktrees/x\n", encoding="utf-8")
        assert find_project_root(checkout) == checkout.resolve()

    def test_a_fifo_among_the_git_files_does_not_block(self, tmp_path: Path) -> None:
        # covers P2 (issue 10, beyond its list): a cloned repository may carry any file; a FIFO
        # named like Git's config blocked the worker thread that resolves the project for ever
        checkout = tmp_path / "hostile"
        gitdir = checkout / "gd"
        common = checkout / "common"
        gitdir.mkdir(parents=True)
        common.mkdir()
        (checkout / ".git").write_text("gitdir: gd\n", encoding="utf-8")
        (gitdir / "commondir").write_text("../common\n", encoding="utf-8")
        os.mkfifo(common / "config")
        assert find_project_root(checkout) == common.resolve()  # a bare-like repository

    def test_a_huge_git_file_is_not_read(self, tmp_path: Path) -> None:
        checkout = tmp_path / "huge"
        checkout.mkdir()
        (checkout / ".git").write_bytes(b"gitdir: x\n" + b"#" * (1 << 20))
        assert find_project_root(checkout) == checkout.resolve()


class TestSlug:
    # covers L3
    def test_the_slug_is_the_readable_name_then_twelve_hex_digits(self, repo: Path) -> None:
        slug = project_slug(repo)
        assert SLUG_SHAPE.fullmatch(slug)
        assert slug.startswith("repo-")

    def test_the_slug_scheme_is_pinned(self) -> None:
        # A change here moves every user's store: this value must never change.
        root = Path("/home/ada/src/My Project")
        digest = hashlib.sha256(b"/home/ada/src/My Project").hexdigest()[:12]
        assert digest == "7a6d0203f0da"
        assert project_slug(root) == "My-Project-7a6d0203f0da"

    def test_the_slug_is_the_same_in_another_process(self, repo: Path) -> None:
        code = (
            "import sys; from pathlib import Path; "
            "from lecode_ls.memory.project.identity import resolve_project; "
            "print(resolve_project(Path(sys.argv[1])).slug)"
        )
        env = dict(os.environ, PYTHONHASHSEED="12345")
        result = subprocess.run(
            [sys.executable, "-c", code, str(repo / "README.md")],
            env=env,
            check=True,
            capture_output=True,
            text=True,
        )
        assert result.stdout.strip() == resolve_project(repo).slug

    def test_spaces_and_unicode_in_the_folder_name_give_a_safe_readable_slug(
        self, tmp_path: Path
    ) -> None:
        root = make_repo(tmp_path / "Café  Ünïcode app 日本")
        project = resolve_project(root / "README.md")
        assert project.root == root
        assert SLUG_SHAPE.fullmatch(project.slug)
        assert project.slug.startswith("Cafe-Unicode-app-")

    def test_a_name_with_nothing_readable_becomes_project(self) -> None:
        assert project_slug(Path("/srv/日本")).startswith("project-")
        assert project_slug(Path("/")).startswith("project-")

    def test_leading_dots_and_dashes_are_dropped_from_the_name(self) -> None:
        assert project_slug(Path("/home/u/.dotfiles")).startswith("dotfiles-")
        assert project_slug(Path("/home/u/--x--")).startswith("x-")

    def test_a_long_name_is_cut_to_forty_characters(self) -> None:
        slug = project_slug(Path("/work/" + "a" * 100))
        assert slug == "a" * 40 + "-" + slug[-12:]

    def test_checkouts_with_the_same_name_get_different_slugs(self, tmp_path: Path) -> None:
        first = make_repo(tmp_path / "one" / "app")
        second = make_repo(tmp_path / "two" / "app")
        assert project_slug(first) != project_slug(second)
        assert project_slug(first).startswith("app-")
        assert project_slug(second).startswith("app-")
