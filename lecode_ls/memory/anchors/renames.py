"""Renames Git can tell: where an anchored file went once it is gone from its place.

A file renamed with `git mv`, or in a commit made since the anchor was captured, is found by
Git's own rename detection between the anchor's commit and the index:

    git diff-index --cached -M --diff-filter=R -z --name-status <commit> --

The index, never the working tree, so no clean filter, fsmonitor hook or diff driver that a
repository's config may name is run, and nothing is written (GIT_OPTIONAL_LOCKS=0). Nor does Git
reach any other repository: in a partial clone (`extensions.partialClone`, a promisor remote)
rename detection would fetch the blobs it lacks, and that fetch runs whatever the repository's
config names (`core.sshCommand`, `remote.<name>.uploadpack`, an `ext::` URL). Every transport is
refused (GIT_ALLOW_PROTOCOL empty, which overrides every `protocol.*` setting; GIT_NO_LAZY_FETCH
where Git knows it), so a missing blob fails the run instead: nothing is followed. No hook, pager
or external diff runs either. A file moved without telling Git (a plain `mv`, not added) is not
followed: Git cannot tell either. Without `git` on PATH, or when it fails (a commit this clone
lacks, a blob it does not have, a repository Git refuses), nothing is followed and the anchor
stays `deleted`.

This is the one place lecode-ls runs Git (identity and checkouts read its files; `run_git`
runs every command), and it is bounded: rename detection runs only when some anchored file is
missing, once per state of the checkout (see `git_stamp`), for at most MAX_COMMITS commits and
GIT_TIMEOUT seconds in all, each run stopped after MAX_OUTPUT bytes of output. Shared facts
(memory/team) ask three more things through `run_git`, each as bounded: the repository's root
commit and `user.name` when a fact is shared, and whether a shared file's repository commit is
in this clone, once per such commit and state of the checkout.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from lecode_ls.memory.facts import StoredAnchor
from lecode_ls.memory.project import SHA, git_dir, read_small

log = logging.getLogger(__name__)

MAX_COMMITS = 8
GIT_TIMEOUT = 5.0
MAX_OUTPUT = 4 * 1024 * 1024

FileKey = tuple[int, int, int]
Stamp = tuple[str | None, FileKey, FileKey]


def _key(path: Path) -> FileKey:
    try:
        info = path.stat()
    except OSError:
        return (0, -1, 0)
    return (info.st_mtime_ns, info.st_size, info.st_ino)


def git_stamp(checkout: Path) -> Stamp | None:
    """What changes when Git moves HEAD or stages a change (None outside Git): HEAD's text, and
    the time and size of the index and of HEAD's reflog (a commit, a checkout, a reset each add a
    line to it). One read of a 41-byte file and three stats: cheap enough for every keystroke. A
    commit in a repository that keeps no reflog, staging nothing, is not seen."""
    found = git_dir(checkout)
    if found is None:
        return None
    return (read_small(found / "HEAD"), _key(found / "index"), _key(found / "logs" / "HEAD"))


def _git_env() -> dict[str, str]:
    """The server's environment without any GIT_* variable that could point Git elsewhere, and
    with every transport refused (see the module docstring)."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("GIT_")}
    env.update(
        GIT_OPTIONAL_LOCKS="0",
        GIT_TERMINAL_PROMPT="0",
        GIT_ALLOW_PROTOCOL="",  # set and empty: no transport at all, whatever the config says
        GIT_NO_LAZY_FETCH="1",  # Git 2.45+: a missing object is not fetched
        GIT_PAGER="cat",
    )
    return env


def run_git(checkout: Path, args: Sequence[str], timeout: float = GIT_TIMEOUT) -> bytes | None:
    """Git's output for `git <args>` in `checkout`, run as the module docstring says (no hook,
    fsmonitor, pager, external diff, textconv or transport); None when Git is absent, fails or
    passes a bound. Every Git run of lecode-ls goes through here."""
    import shutil  # here: 11 ms of imports (bz2, lzma) that `lecode-ls context` never needs

    git = shutil.which("git")
    if git is None:
        return None
    command = [
        git, "--no-pager", "-C", str(checkout),
        "-c", "core.fsmonitor=false", "-c", "protocol.allow=never",
        "-c", f"core.hooksPath={os.devnull}", *args,
    ]  # fmt: skip
    try:
        from lecode_ls.platform.process import run_bounded  # subprocess: only when Git runs

        run = run_bounded(command, env=_git_env(), timeout=timeout, max_output=MAX_OUTPUT)
    except OSError as exc:
        log.debug("git not run: %s", exc.strerror)
        return None
    if run.code != 0 or run.timed_out or len(run.output) > MAX_OUTPUT:
        return None
    return run.output


def git_renames(checkout: Path, commit: str, timeout: float = GIT_TIMEOUT) -> dict[str, str] | None:
    """Git's renames from `commit` (or "HEAD") to the index of `checkout`: old path -> new path,
    "/"-separated and relative to the checkout; None when Git is absent, fails or passes a
    bound."""
    args = [
        "diff-index", "--cached", "-M", "--diff-filter=R", "-z", "--name-status",
        "--no-ext-diff", "--no-textconv", commit, "--",
    ]  # fmt: skip
    output = run_git(checkout, args, timeout)
    if output is None:
        return None
    fields = output.decode("utf-8", "surrogateescape").split("\0")
    renames: dict[str, str] = {}
    for at in range(0, len(fields) - 2, 3):
        status, old, new = fields[at : at + 3]
        if status.startswith("R"):
            renames[old] = new
    return renames


MAX_ROOTS = 64
"""Parentless commits reachable from HEAD that are read (a repository that merged unrelated
histories has several)."""


def root_commits(checkout: Path) -> frozenset[str]:
    """The parentless commits reachable from HEAD (at most MAX_ROOTS), or none."""
    output = run_git(
        checkout, ["rev-list", "--max-parents=0", f"--max-count={MAX_ROOTS}", "HEAD", "--"]
    )
    lines = output.decode("ascii", "replace").split() if output else []
    return frozenset(line for line in lines if SHA.fullmatch(line))


def root_commit(checkout: Path) -> str | None:
    """The first parentless commit reachable from HEAD (what every clone of the repository
    shares: a shared fact names its repository by it), or None."""
    roots = root_commits(checkout)
    return min(roots) if roots else None


def has_commit(checkout: Path, commit: str) -> bool:
    """Whether the repository of `checkout` holds `commit` (a full SHA; never fetched)."""
    if not SHA.fullmatch(commit):
        return False
    return run_git(checkout, ["cat-file", "-e", f"{commit}^{{commit}}"]) is not None


def git_user_name(checkout: Path) -> str | None:
    """Git's `user.name` in `checkout` (its config is read; nothing runs), or None."""
    output = run_git(checkout, ["config", "--get", "user.name"], timeout=2.0)
    name = output.decode("utf-8", "replace").strip() if output else ""
    return name or None


class Renames:
    """The anchored files of each checkout that Git says were renamed, kept while the checkout's
    state stays the same (one per DriftTracker; `clear` when the anchors change)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._generation = 0
        self._held: dict[Path, tuple[tuple[Stamp, int], dict[str, str]]] = {}

    def clear(self) -> None:
        """The anchors changed. Takes no lock: the event loop calls it while Git may be running."""
        self._generation += 1

    def followed(
        self, checkout: Path, by_path: Mapping[str, Sequence[StoredAnchor]]
    ) -> tuple[dict[str, str], bool]:
        """Old path -> new path for each anchored file missing from `checkout` that Git says was
        renamed to a file that exists; also whether that differs from the last answer."""
        stamp = git_stamp(checkout)
        if stamp is None:
            return {}, False
        key = (stamp, self._generation)
        with self._lock:  # one Git run at a time; the others wait for its answer
            held = self._held.get(checkout)
            if held is not None and held[0] == key:
                return held[1], False
            found = self._find(checkout, by_path)
            self._held[checkout] = (key, found)
            return found, found != (held[1] if held is not None else {})

    @staticmethod
    def _find(checkout: Path, by_path: Mapping[str, Sequence[StoredAnchor]]) -> dict[str, str]:
        missing = {
            path: anchors
            for path, anchors in by_path.items()
            if not os.path.lexists(checkout / path)
        }
        if not missing:
            return {}
        # The commits the missing files' anchors were captured at, the most shared first.
        counts: dict[str, int] = {}
        for anchors in missing.values():
            for anchor in anchors:
                commit = anchor.commit if anchor.commit and SHA.fullmatch(anchor.commit) else "HEAD"
                counts[commit] = counts.get(commit, 0) + 1
        commits = sorted(counts, key=lambda c: -counts[c])[:MAX_COMMITS]
        found: dict[str, str] = {}
        deadline = time.monotonic() + GIT_TIMEOUT
        for commit in commits:
            left = deadline - time.monotonic()
            if left <= 0:
                log.info("renames: Git took over %s s; the rest are not followed", GIT_TIMEOUT)
                break
            renames = git_renames(checkout, commit, left) or {}
            for old in missing:
                new = renames.get(old)
                if old not in found and new is not None and (checkout / new).is_file():
                    found[old] = new
            if len(found) == len(missing):
                break
        return found
