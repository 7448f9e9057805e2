"""Code anchors (issue 14): line digests and locating, the checkout and its commit, storage in
facts.sqlite3, drift against buffers and the disk, and anchors captured from a verified fact's
evidence. Real files, real SQLite, real Git repositories made with the `git` command."""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
from datetime import date
from pathlib import Path

import pytest

from lecode_ls.errors import InvalidParams, NotFound, StaleRevision
from lecode_ls.memory.anchors import renames
from lecode_ls.memory.anchors.capture import make_anchor, read_paths, verified_fact_anchor
from lecode_ls.memory.anchors.drift import MAX_FILE_BYTES, state_json
from lecode_ls.memory.anchors.text import Text, lines_digest, split_lines
from lecode_ls.memory.facts.anchor_rows import NewAnchor, check_path
from lecode_ls.memory.injection import build_memory_section
from lecode_ls.memory.project.checkout import checkout_root, head_commit
from lecode_ls.memory.sessions.sources import source_snapshot
from lecode_ls.runtime import Runtime
from lecode_ls.tools.memory import run_tool
from lecode_ls.tools.permissions import PermissionPolicy
from lecode_ls.tools.slash import run_memory_command
from tests.unit.stores import chat
from tests.unit.test_identity import git, make_repo

SOURCE = "def main():\n    run()\n    return 0\n"


def anchor_of(text: str, start: int, end: int, path: str = "app.py") -> NewAnchor:
    return make_anchor(split_lines(text)[start - 1 : end], start, path, None)


def status(text: str, anchor: NewAnchor) -> tuple[str, int | None, int | None]:
    found = Text(text).locate(
        anchor.start_line, anchor.end_line, anchor.sha256, anchor.first_sha256
    )
    return found.status, found.start_line, found.end_line


class TestLinesAndDigests:
    def test_lines_split_at_lsp_line_breaks_only(self) -> None:
        assert split_lines("a\r\nb\rc\nd\u2028e\n") == ["a", "b", "c", "d\u2028e", ""]

    def test_crlf_and_lf_texts_hash_the_same(self) -> None:
        assert lines_digest(split_lines("x\r\ny")) == lines_digest(split_lines("x\ny"))

    def test_the_digest_is_sha256_of_the_lines_joined_with_newline(self) -> None:
        # A versioned contract: every stored anchor holds it.
        import hashlib

        assert lines_digest(["a", "b"]) == "sha256:" + hashlib.sha256(b"a\nb").hexdigest()


class TestLocating:
    def test_unchanged_lines_are_current(self) -> None:
        assert status(SOURCE, anchor_of(SOURCE, 2, 3)) == ("current", 2, 3)

    def test_lines_pushed_down_are_moved_and_followed(self) -> None:
        edited = "import os\n\n" + SOURCE
        assert status(edited, anchor_of(SOURCE, 2, 3)) == ("moved", 4, 5)

    def test_the_nearest_copy_wins(self) -> None:
        text = "x\nrun()\ny\nz\nrun()\n"
        anchor = anchor_of("a\nb\nc\nrun()\n", 4, 4)
        assert status(text, anchor) == ("moved", 5, 5)

    def test_lines_moved_far_are_found_by_the_whole_file_index(self) -> None:
        edited = "".join(f"# {n}\n" for n in range(100)) + SOURCE
        assert status(edited, anchor_of(SOURCE, 2, 3)) == ("moved", 102, 103)

    def test_crlf_text_is_located_like_lf_text(self) -> None:
        crlf = "x\r\n" + SOURCE.replace("\n", "\r\n")
        assert status(crlf, anchor_of(SOURCE, 2, 3)) == ("moved", 3, 4)

    def test_edited_lines_are_changed(self) -> None:
        edited = SOURCE.replace("run()", "walk()")
        assert status(edited, anchor_of(SOURCE, 2, 3)) == ("changed", None, None)

    def test_a_text_ending_before_the_lines_is_deleted(self) -> None:
        assert status("def main():\n", anchor_of(SOURCE, 3, 3)) == ("deleted", None, None)


class TestCheckout:
    def test_head_commit_follows_the_branch_and_packed_refs(self, tmp_path: Path) -> None:
        repo = make_repo(tmp_path / "repo")
        sha = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
        ).stdout.strip()
        assert head_commit(repo) == sha
        git(repo, "pack-refs", "--all")
        assert not (repo / ".git/refs/heads/main").exists()
        assert head_commit(repo) == sha

    def test_a_linked_worktree_reads_its_own_head(self, tmp_path: Path) -> None:
        repo = make_repo(tmp_path / "repo")
        git(repo, "worktree", "add", "-q", "-b", "feature", str(tmp_path / "wt"))
        (tmp_path / "wt/new.txt").write_text("x\n")
        git(tmp_path / "wt", "add", "new.txt")
        git(tmp_path / "wt", "commit", "-q", "-m", "second")
        wt = (tmp_path / "wt").resolve()
        main_sha, wt_sha = (
            subprocess.run(
                ["git", "rev-parse", "HEAD"], cwd=d, capture_output=True, text=True, check=True
            ).stdout.strip()
            for d in (repo, wt)
        )
        assert head_commit(wt) == wt_sha != main_sha
        assert checkout_root(wt / "new.txt", [wt]) == wt

    def test_a_repository_nested_in_another_is_its_own_checkout(self, tmp_path: Path) -> None:
        outer = make_repo(tmp_path / "outer").resolve()
        inner = make_repo(outer / "inner").resolve()
        assert checkout_root(inner, [inner]) == inner  # the folder itself, not the outer repo
        assert checkout_root(inner / "src/a.py", [inner]) == inner
        assert checkout_root(outer / "b.py", [outer]) == outer

    def test_outside_git_there_is_no_commit_and_the_folder_is_the_root(
        self, tmp_path: Path
    ) -> None:
        folder = tmp_path / "plain"
        (folder / "src").mkdir(parents=True)
        assert head_commit(folder) is None
        assert checkout_root(folder / "src/a.py", [folder]) == folder
        assert checkout_root(tmp_path / "elsewhere.py", [folder]) is None


class TestStorage:
    def remember(self, runtime: Runtime, text: str, anchors: list[NewAnchor]) -> int:
        session = chat(runtime, {"role": "user", "content": text})
        ref = source_snapshot(runtime.sessions, session, 1, 1, exclusions=runtime.facts)
        fact_id, _ = runtime.facts.remember(text, ref, check=runtime.check_source, anchors=anchors)
        return fact_id

    def test_anchors_are_stored_with_the_revision_and_listed_by_path(
        self, runtime: Runtime
    ) -> None:
        first = self.remember(runtime, "main runs", [anchor_of(SOURCE, 2, 2)])
        self.remember(runtime, "unanchored", [])
        third = self.remember(runtime, "main returns 0", [anchor_of(SOURCE, 3, 3, "lib/x.py")])
        page, _ = runtime.facts.list(path="app.py")
        assert [f.id for f in page] == [first]
        assert [f.id for f in runtime.facts.list(path="lib/x.py")[0]] == [third]
        stored = runtime.facts.anchors.of_facts([first, third])
        assert {k: [(a.path, a.start_line, a.end_line) for a in v] for k, v in stored.items()} == {
            first: [("app.py", 2, 2)],
            third: [("lib/x.py", 3, 3)],
        }
        assert runtime.facts.verify() == []

    def test_a_path_holding_a_token_is_stored_redacted(self, runtime: Runtime) -> None:
        # covers P5: a file's name can hold a token; the anchor then names no file (issue 42)
        token = "ghp_" + "Zy9Xw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe9Dc8Ba7"
        fact_id = self.remember(runtime, "main runs", [anchor_of(SOURCE, 2, 2, f"{token}/a.py")])
        ((stored,),) = runtime.facts.anchors.of_facts([fact_id]).values()
        assert stored.path.startswith("[secret:github-token:") and token not in stored.path

    def test_a_correction_starts_a_revision_without_the_old_anchors(self, runtime: Runtime) -> None:
        fact_id = self.remember(runtime, "main runs", [anchor_of(SOURCE, 2, 2)])
        session = chat(runtime, {"role": "user", "content": "main walks"})
        ref = source_snapshot(runtime.sessions, session, 1, 1, exclusions=runtime.facts)
        runtime.facts.correct(
            fact_id,
            "main walks",
            expected_revision=1,
            ref=ref,
            check=runtime.check_source,
            has_authored_text=runtime.has_authored_text,
        )
        assert runtime.facts.anchors.of_facts([fact_id]) == {}
        assert runtime.facts.list(path="app.py")[0] == []

    def test_forget_deletes_the_anchors(self, runtime: Runtime) -> None:
        fact_id = self.remember(runtime, "main runs", [anchor_of(SOURCE, 2, 2)])
        assert runtime.facts.forget(fact_id) is True
        assert runtime.facts.anchors.all() == []
        assert runtime.facts.verify() == []

    def test_reanchor_replaces_the_anchor_and_checks_the_revision(self, runtime: Runtime) -> None:
        fact_id = self.remember(runtime, "main runs", [anchor_of(SOURCE, 2, 2)])
        with pytest.raises(StaleRevision):
            runtime.facts.anchors.reanchor(fact_id, 2, 0, anchor_of(SOURCE, 3, 3))
        with pytest.raises(NotFound):
            runtime.facts.anchors.reanchor(fact_id, 1, 1, anchor_of(SOURCE, 3, 3))
        moved = runtime.facts.anchors.reanchor(fact_id, 1, 0, anchor_of(SOURCE, 3, 3))
        assert (moved.revision, moved.start_line, moved.sha256) == (
            1,
            3,
            lines_digest(["    return 0"]),
        )

    @pytest.mark.parametrize("path", ["/etc/passwd", "../x", "a//b", "a/./b", "C:/x", "a\\b", ""])
    def test_paths_must_be_plain_relative_paths(self, path: str) -> None:
        with pytest.raises(InvalidParams):
            check_path(path)

    def test_an_anchor_over_200_lines_is_refused(self, runtime: Runtime) -> None:
        big = "\n".join(f"line {n}" for n in range(300))
        with pytest.raises(InvalidParams, match="at most 200 lines"):
            self.remember(runtime, "big", [anchor_of(big, 1, 201)])


class TestDrift:
    @pytest.fixture
    def folder(self, tmp_path: Path, runtime: Runtime) -> Path:
        folder = (tmp_path / "work").resolve()
        folder.mkdir()
        (folder / "app.py").write_text(SOURCE)
        runtime.drift.add_folder(folder)
        return folder

    def remember(self, runtime: Runtime, anchor: NewAnchor) -> int:
        return TestStorage().remember(runtime, "main runs", [anchor])

    def test_the_disk_is_read_until_a_buffer_is_given(self, runtime: Runtime, folder: Path) -> None:
        fact_id = self.remember(runtime, anchor_of(SOURCE, 2, 2))
        [state] = runtime.drift.states(folder, "app.py")
        assert (state.located.status, state.against) == ("current", "disk")
        states, changed = runtime.drift.update_buffer(folder, "app.py", "x\n" + SOURCE)
        assert changed and [(s.located.status, s.located.start_line) for s in states] == [
            ("moved", 3)
        ]
        _, again = runtime.drift.update_buffer(folder, "app.py", "x\n" + SOURCE + "y\n")
        assert again is False  # nothing about the anchor changed
        states, changed = runtime.drift.update_buffer(folder, "app.py", "")
        assert changed and states[0].located.status == "deleted"
        runtime.drift.close_buffer(folder, "app.py")
        assert runtime.drift.fact_states([fact_id])[fact_id][0].located.status == "current"

    def test_a_changed_file_on_disk_is_noticed(self, runtime: Runtime, folder: Path) -> None:
        fact_id = self.remember(runtime, anchor_of(SOURCE, 2, 2))
        assert runtime.drift.fact_states([fact_id])[fact_id][0].located.status == "current"
        (folder / "app.py").write_text(SOURCE.replace("run()", "walk(); x = 1"))
        assert runtime.drift.fact_states([fact_id])[fact_id][0].located.status == "changed"
        (folder / "app.py").unlink()
        assert runtime.drift.fact_states([fact_id])[fact_id][0].located.status == "deleted"

    def test_large_files_and_links_out_are_unchecked(
        self, runtime: Runtime, folder: Path, tmp_path: Path
    ) -> None:
        fact_id = self.remember(runtime, anchor_of(SOURCE, 2, 2))
        (folder / "app.py").write_text("x" * (MAX_FILE_BYTES + 1))
        assert runtime.drift.fact_states([fact_id])[fact_id][0].located.status == "unchecked"
        outside = tmp_path / "outside.py"
        outside.write_text(SOURCE)
        (folder / "app.py").unlink()
        (folder / "app.py").symlink_to(outside)
        assert runtime.drift.fact_states([fact_id])[fact_id][0].located.status == "unchecked"

    def test_reload_picks_up_new_anchors(self, runtime: Runtime, folder: Path) -> None:
        assert runtime.drift.states(folder, "app.py") == []
        fact_id = self.remember(runtime, anchor_of(SOURCE, 1, 1))
        assert runtime.drift.states(folder, "app.py") == []  # the index is cached
        runtime.drift.reload()
        assert [s.anchor.fact_id for s in runtime.drift.states(folder, "app.py")] == [fact_id]

    def test_a_forget_while_a_buffer_is_checked_leaves_no_anchor_behind(
        self, runtime: Runtime, folder: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # covers E1: a check that read the anchors before a forget (another request's, on
        # another thread) must not keep them once the forget's reload is done (a drift
        # warning that never went, in a CI run of the Emacs test).
        fact_id = self.remember(runtime, anchor_of(SOURCE, 2, 2))
        runtime.drift.reload()
        check = runtime.drift._check
        forgotten = []

        def check_then_forget(*args: object) -> object:
            states = check(*args)  # type: ignore[arg-type]
            if not forgotten:  # the forget lands between the read and the keeping
                forgotten.append(runtime.facts.forget(fact_id))
                runtime.drift.reload()
            return states

        monkeypatch.setattr(runtime.drift, "_check", check_then_forget)
        states, _ = runtime.drift.update_buffer(folder, "app.py", "x\n" + SOURCE)
        assert forgotten == [True]
        assert states == [] and runtime.drift.states(folder, "app.py") == []


@pytest.fixture
def repo(tmp_path: Path, runtime: Runtime) -> Path:
    """A Git repository holding app.py (SOURCE), committed, as a folder of the runtime."""
    repo = make_repo(tmp_path / "repo")
    (repo / "app.py").write_text(SOURCE)
    git(repo, "add", "app.py")
    git(repo, "commit", "-q", "-m", "app")
    runtime.drift.add_folder(repo)
    return repo


class TestGitChanges:
    """What Git can tell: a renamed file is followed, a switch of the checkout is noticed
    (issue 14)."""

    def remember(self, runtime: Runtime, repo: Path) -> int:
        anchor = make_anchor(split_lines(SOURCE)[1:2], 2, "app.py", head_commit(repo))
        fact_id = TestStorage().remember(runtime, "main runs", [anchor])
        runtime.drift.reload()
        return fact_id

    def where(self, runtime: Runtime, fact_id: int) -> list[tuple[str, str | None, int | None]]:
        return [
            (s.located.status, s.renamed_to, s.located.start_line)
            for s in runtime.drift.fact_states([fact_id])[fact_id]
        ]

    def test_a_staged_rename_is_followed_and_shown_in_the_new_file(
        self, runtime: Runtime, repo: Path
    ) -> None:
        fact_id = self.remember(runtime, repo)
        (repo / "src").mkdir()
        git(repo, "mv", "app.py", "src/main.py")
        assert self.where(runtime, fact_id) == [("moved", "src/main.py", 2)]
        [state] = runtime.drift.states(repo, "src/main.py")  # the new file shows the fact
        assert state.anchor.fact_id == fact_id and state_json(state)["current_path"] == (
            "src/main.py"
        )
        # An unsaved edit in the new file's buffer counts.
        states, changed = runtime.drift.update_buffer(
            repo, "src/main.py", SOURCE.replace("run()", "walk()")
        )
        assert changed and [s.located.status for s in states] == ["changed"]

    def test_a_fact_of_the_new_file_and_one_followed_into_it_are_each_listed_once(
        self, runtime: Runtime, repo: Path
    ) -> None:
        followed = self.remember(runtime, repo)
        git(repo, "mv", "app.py", "main.py")
        anchor = make_anchor(split_lines(SOURCE)[0:1], 1, "main.py", head_commit(repo))
        own = TestStorage().remember(runtime, "main is defined", [anchor])
        runtime.drift.reload()
        states = runtime.drift.fact_states([followed, own])
        assert [(s.located.status, s.renamed_to) for s in states[followed]] == [
            ("moved", "main.py")
        ]
        assert [(s.located.status, s.renamed_to) for s in states[own]] == [("current", None)]
        assert len(runtime.drift.states(repo, "main.py")) == 2

    def test_a_committed_rename_is_followed_from_the_anchors_commit(
        self, runtime: Runtime, repo: Path
    ) -> None:
        fact_id = self.remember(runtime, repo)
        git(repo, "mv", "app.py", "main.py")
        git(repo, "commit", "-q", "-m", "rename")
        (repo / "main.py").write_text("# top\n" + SOURCE)
        assert self.where(runtime, fact_id) == [("moved", "main.py", 3)]
        # What the model and /memory are shown: the file the lines are in now.
        text = run_memory_command(runtime, "facts main.py", date.today())
        assert text.splitlines()[1] == "  anchored to app.py:2-2 moved now main.py:3-3"
        section = build_memory_section(runtime).text
        assert '"path":"main.py","renamed_from":"app.py","start_line":3' in section

    def test_a_move_git_was_not_told_of_stays_deleted(self, runtime: Runtime, repo: Path) -> None:
        fact_id = self.remember(runtime, repo)
        (repo / "app.py").rename(repo / "main.py")
        assert self.where(runtime, fact_id) == [("deleted", None, None)]
        git(repo, "add", "-A")  # now Git can tell
        assert self.where(runtime, fact_id) == [("moved", "main.py", 2)]

    def test_without_git_nothing_is_followed(
        self, runtime: Runtime, repo: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        fact_id = self.remember(runtime, repo)
        git(repo, "mv", "app.py", "main.py")
        monkeypatch.setenv("PATH", "")
        assert self.where(runtime, fact_id) == [("deleted", None, None)]

    def test_a_change_of_checkout_names_the_files_whose_anchors_changed(
        self, runtime: Runtime, repo: Path
    ) -> None:
        (repo / "other.py").write_text("x = 1\n")
        git(repo, "add", "other.py")
        git(repo, "commit", "-q", "-m", "other")
        git(repo, "checkout", "-q", "-b", "topic")
        (repo / "app.py").write_text(SOURCE.replace("run()", "walk()"))
        git(repo, "commit", "-q", "-am", "walk")
        git(repo, "checkout", "-q", "main")
        fact_id = self.remember(runtime, repo)
        # The set-up's commits came after add_folder recorded the state: news once.
        assert runtime.drift.poll_checkouts() == ["app.py"]
        assert self.where(runtime, fact_id) == [("current", None, 2)]
        assert runtime.drift.poll_checkouts() == []  # nothing changed
        git(repo, "checkout", "-q", "topic")
        assert runtime.drift.poll_checkouts() == ["app.py"]
        assert self.where(runtime, fact_id) == [("changed", None, None)]
        git(repo, "checkout", "-q", "-b", "same")  # HEAD moved, the anchors did not
        assert runtime.drift.poll_checkouts() == []

    def test_a_git_that_hangs_is_stopped_at_the_bound(
        self, runtime: Runtime, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        fact_id = self.remember(runtime, repo)
        git(repo, "mv", "app.py", "main.py")
        bin_dir, pid_file = tmp_path / "bin", tmp_path / "git.pid"
        bin_dir.mkdir()
        # The wrapper runs with PATH set to bin_dir alone: it names sleep by its full path.
        sleep = shutil.which("sleep")
        (bin_dir / "git").write_text(f"#!/bin/sh\necho $$ > {pid_file}\nexec {sleep} 600\n")
        (bin_dir / "git").chmod(0o755)
        monkeypatch.setenv("PATH", str(bin_dir))
        monkeypatch.setattr(renames, "GIT_TIMEOUT", 0.5)
        assert self.where(runtime, fact_id) == [("deleted", None, None)]
        with pytest.raises(ProcessLookupError):  # killed and reaped
            os.kill(int(pid_file.read_text()), 0)

    def test_no_hook_or_filter_of_the_repository_runs(
        self, runtime: Runtime, repo: Path, tmp_path: Path
    ) -> None:
        """Git reads the index only: a hostile config's fsmonitor and clean filter never run."""
        marker = tmp_path / "ran"
        git(repo, "config", "core.fsmonitor", f"touch {marker}")
        git(repo, "config", "filter.evil.clean", f"touch {marker}; cat")
        (repo / ".gitattributes").write_text("*.py filter=evil\n")
        fact_id = self.remember(runtime, repo)
        marker.unlink(missing_ok=True)  # the fixture's own git commands may have run them
        git_mv = ["git", "-c", "core.fsmonitor=false", "-c", "filter.evil.clean=cat"]
        subprocess.run([*git_mv, "mv", "app.py", "main.py"], cwd=repo, check=True)
        (repo / "main.py").write_text(SOURCE + "# edited, so the index is stat-dirty\n")
        assert self.where(runtime, fact_id) == [("moved", "main.py", 2)]
        assert not marker.exists()


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie waiting for its reaper does not: it was killed)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def ended_within(pid: int, seconds: float) -> bool:
    """Whether process `pid` has ended, or ends within `seconds` (a zombie has ended)."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        readable, _, _ = select.select([fd], [], [], seconds)
        return bool(readable) or not alive(pid)
    finally:
        os.close(fd)


def drop_blob(repo: Path, path: str, commit: str = "HEAD") -> str:
    """Remove the loose object of `path`'s blob at `commit`: what a partial clone lacks."""
    blob = subprocess.run(
        ["git", "rev-parse", f"{commit}:{path}"], cwd=repo, capture_output=True, text=True
    ).stdout.strip()
    (repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    return blob


class TestHostileRepositoryConfig:
    """Rename detection in a partial clone lacks blobs, and Git would fetch them from the
    promisor remote, running what the repository's config names (issue 23, item 1). Every
    variant leaves no marker and fetches nothing: the rename is then not followed.

    # covers R1-R8 (hostile input), P2
    """

    def renamed_without_the_old_blob(self, runtime: Runtime, repo: Path) -> int:
        fact_id = TestGitChanges().remember(runtime, repo)
        drop_blob(repo, "app.py")
        git(repo, "mv", "app.py", "main.py")
        # A different blob in the index: Git must read the old one to tell the rename.
        (repo / "main.py").write_text(SOURCE + "# more\n")
        git(repo, "add", "main.py")
        return fact_id

    def promisor(self, repo: Path, url: str, *extra: tuple[str, str]) -> None:
        git(repo, "config", "core.repositoryformatversion", "1")
        git(repo, "config", "extensions.partialClone", "evil")
        git(repo, "config", "remote.evil.promisor", "true")
        git(repo, "config", "remote.evil.url", url)
        for key, value in extra:
            git(repo, "config", key, value)

    @pytest.mark.parametrize("variant", ["sshCommand", "uploadpack", "ext"])
    def test_no_transport_command_of_the_config_runs(
        self, runtime: Runtime, repo: Path, tmp_path: Path, variant: str
    ) -> None:
        marker = tmp_path / "ran"
        touch = f"touch {marker}; false"
        fact_id = self.renamed_without_the_old_blob(runtime, repo)
        if variant == "sshCommand":
            self.promisor(repo, "ssh://git.example.invalid/x", ("core.sshCommand", touch))
        elif variant == "uploadpack":
            self.promisor(repo, f"file://{tmp_path}/nowhere", ("remote.evil.uploadpack", touch))
        else:
            self.promisor(repo, f"ext::sh -c touch% {marker}", ("protocol.ext.allow", "always"))
        assert TestGitChanges().where(runtime, fact_id) == [("deleted", None, None)]
        assert not marker.exists()

    def test_a_blobless_clone_fetches_nothing(self, runtime: Runtime, tmp_path: Path) -> None:
        origin = make_repo(tmp_path / "origin")
        (origin / "app.py").write_text(SOURCE)
        git(origin, "add", "app.py")
        git(origin, "commit", "-q", "-m", "app")
        git(origin, "mv", "app.py", "main.py")
        (origin / "main.py").write_text(SOURCE + "# more\n")
        git(origin, "commit", "-qam", "rename")
        git(origin, "config", "uploadpack.allowFilter", "true")
        clone = tmp_path / "clone"
        git(tmp_path, "clone", "-q", "--filter=blob:none", f"file://{origin}", str(clone))
        clone = clone.resolve()
        runtime.drift.add_folder(clone)
        packs = sorted((clone / ".git/objects/pack").glob("*.pack"))
        # The anchor was captured at the first commit, whose app.py the clone never fetched.
        first = subprocess.run(
            ["git", "rev-parse", "HEAD~1"], cwd=clone, capture_output=True, text=True
        ).stdout.strip()
        anchor = make_anchor(split_lines(SOURCE)[1:2], 2, "app.py", first)
        fact_id = TestStorage().remember(runtime, "main runs", [anchor])
        runtime.drift.reload()
        assert TestGitChanges().where(runtime, fact_id) == [("deleted", None, None)]
        assert sorted((clone / ".git/objects/pack").glob("*.pack")) == packs

    @pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
    def test_a_git_whose_child_holds_the_pipe_is_stopped_with_it(
        self, runtime: Runtime, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # item 5: a wrapper's child kept the output pipe open after Git was killed.
        fact_id = TestGitChanges().remember(runtime, repo)
        git(repo, "mv", "app.py", "main.py")
        bin_dir, pid_file = tmp_path / "bin", tmp_path / "child.pid"
        bin_dir.mkdir()
        sleep = shutil.which("sleep")
        (bin_dir / "git").write_text(f"#!/bin/sh\n{sleep} 600 &\necho $! > {pid_file}\nwait\n")
        (bin_dir / "git").chmod(0o755)
        monkeypatch.setenv("PATH", str(bin_dir))
        monkeypatch.setattr(renames, "GIT_TIMEOUT", 0.5)
        assert TestGitChanges().where(runtime, fact_id) == [("deleted", None, None)]
        # Before, the read waited for the child to close the pipe (600 s here); now the whole
        # group is killed at the bound, the child included. The kill is delivered, not yet
        # done, when the read returns: wait for the child's exit on a pidfd (a hang guard of
        # 10 s, not a timing; a child left running would take 600 s).
        assert ended_within(int(pid_file.read_text()), 10)


class TestVerifiedFactAnchor:
    # covers A5: the anchor is the line the evidence's read showed, at its number
    def test_the_read_line_is_anchored(self, runtime: Runtime, tmp_path: Path) -> None:
        folder = (tmp_path / "work").resolve()
        (folder / "src").mkdir(parents=True)
        (folder / "src/app.py").write_text(SOURCE)
        runtime.drift.add_folder(folder)
        text = 'src/app.py contains "    run()"'
        call = {
            "id": "c1",
            "type": "function",
            "function": {"name": "read", "arguments": json.dumps({"path": "src/app.py"})},
        }
        session = chat(
            runtime,
            {"role": "user", "content": "what does main do?"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {
                "role": "tool",
                "tool_call_id": "c1",
                "name": "read",
                "content": "     1\tdef main():\n     2\t    run()",
            },
            {"role": "assistant", "content": text},
        )
        ref = source_snapshot(runtime.sessions, session, 1, 4, exclusions=runtime.facts)
        anchor = verified_fact_anchor(text, ref, runtime.sessions, [folder])
        assert anchor == make_anchor(["    run()"], 2, "src/app.py", None)
        assert (
            verified_fact_anchor('src/app.py contains "gone"', ref, runtime.sessions, [folder])
            is None
        )
        assert verified_fact_anchor("We use tabs.", ref, runtime.sessions, [folder]) is None


class TestWhatTheModelSees:
    """Injection, memory_list and `/memory facts` with code anchors (issue 14)."""

    @pytest.fixture
    def folder(self, tmp_path: Path, runtime: Runtime) -> Path:
        folder = (tmp_path / "work").resolve()
        folder.mkdir()
        (folder / "app.py").write_text(SOURCE)
        runtime.drift.add_folder(folder)
        return folder

    def facts_of(self, runtime: Runtime, read: tuple[str, ...] = ()) -> list[dict[str, object]]:
        section = build_memory_section(runtime, read)
        return [json.loads(line) for line in section.text.splitlines() if line.startswith("{")]

    def test_a_changed_fact_is_labelled_and_can_be_withheld(
        self, runtime: Runtime, folder: Path
    ) -> None:
        plain = TestStorage().remember(runtime, "unanchored", [])
        anchored = TestStorage().remember(runtime, "main runs", [anchor_of(SOURCE, 2, 2)])
        runtime.drift.reload()
        [first, second] = self.facts_of(runtime)
        assert (first["fact_id"], "anchors" in first) == (plain, False)
        assert second["anchors"] == [
            {"path": "app.py", "start_line": 2, "end_line": 2, "status": "current"}
        ]
        assert "drift" not in second
        runtime.drift.update_buffer(folder, "app.py", SOURCE.replace("run()", "walk()"))
        [second, _] = self.facts_of(runtime)  # open in the editor now: its facts come first
        assert (second["fact_id"], second["drift"]) == (anchored, "changed")
        # What drift means is said once, in the block's header, not on every line.
        assert "drift_note" not in second
        text = build_memory_section(runtime).text
        assert text.count("check the code before relying on the fact") == 1
        runtime.settings = runtime.settings.model_copy(
            update={
                "memory": runtime.settings.memory.model_copy(update={"drifted_facts": "withhold"})
            }
        )
        assert [f["fact_id"] for f in self.facts_of(runtime)] == [plain]

    def test_facts_anchored_in_open_or_read_files_come_first(
        self, runtime: Runtime, folder: Path
    ) -> None:
        ids = [TestStorage().remember(runtime, f"fact {n}", []) for n in range(3)]
        anchored = TestStorage().remember(runtime, "main runs", [anchor_of(SOURCE, 2, 2)])
        runtime.drift.reload()
        assert [f["fact_id"] for f in self.facts_of(runtime)] == [*ids, anchored]
        assert [f["fact_id"] for f in self.facts_of(runtime, ("app.py",))] == [anchored, *ids]
        runtime.drift.update_buffer(folder, "app.py", SOURCE)  # open in the editor
        assert [f["fact_id"] for f in self.facts_of(runtime)] == [anchored, *ids]

    def test_the_conversations_reads_name_checkout_relative_paths(self, folder: Path) -> None:
        call = {
            "id": "c1",
            "type": "function",
            "function": {"name": "read", "arguments": json.dumps({"path": "app.py"})},
        }
        outside = {**call, "function": {"name": "read", "arguments": '{"path": "../x"}'}}
        records = [{"kind": "message", "role": "assistant", "tool_calls": [call, outside]}]
        assert read_paths(records, folder) == {"app.py"}
        located: dict[str, str | None] = {}
        assert read_paths(records, folder, located) == {"app.py"}
        assert located == {"app.py": "app.py", "../x": None}
        located["app.py"] = "remembered.py"  # a turn's later rounds reuse what was resolved
        assert read_paths(records, folder, located) == {"remembered.py"}

    def test_memory_list_and_memory_facts_show_drift_and_filter_by_path(
        self, runtime: Runtime, folder: Path
    ) -> None:
        TestStorage().remember(runtime, "unanchored", [])
        anchored = TestStorage().remember(runtime, "main runs", [anchor_of(SOURCE, 2, 2)])
        (folder / "app.py").write_text("# moved\n" + SOURCE)
        result = run_tool(
            runtime,
            "memory_list",
            json.dumps({"path": "app.py"}),
            policy=PermissionPolicy(default="allow"),
            readonly=False,
            child=False,
        )
        [fact] = json.loads(result.content)["facts"]
        assert fact["fact_id"] == anchored
        assert [(a["status"], a["current_start_line"]) for a in fact["anchors"]] == [("moved", 3)]
        text = run_memory_command(runtime, "facts app.py", date.today())
        assert text.splitlines()[1] == "  anchored to app.py:2-2 moved now 3-3"
        assert len(text.splitlines()) == 2  # the unanchored fact is filtered out
        with pytest.raises(InvalidParams):
            run_memory_command(runtime, "facts 0 ../x", date.today())
