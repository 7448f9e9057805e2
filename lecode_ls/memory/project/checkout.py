"""The checkout a file belongs to, and the commit checked out there, read from the filesystem.

Code anchors name a file by its path relative to its checkout root (the folder holding its
`.git`, a directory or a linked worktree's `gitdir:` file), so every worktree of a repository
finds the same anchors at the same relative paths; outside Git the workspace folder is the root.
Like identity.py, Git is read, never run: no `git` process, small files only, no link followed
(anchors/renames.py alone runs Git, bounded, to follow a renamed file).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from lecode_ls.memory.files import read_regular
from lecode_ls.memory.project.identity import read_small
from lecode_ls.platform.paths import canonical, is_within

SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_REF = re.compile(r"refs/[A-Za-z0-9._/-]{1,200}")
PACKED_REFS_MAX_BYTES = 8 * 1024 * 1024


def checkout_root(path: Path, folders: Iterable[Path]) -> Path | None:
    """The checkout root of `path` (resolved), or None when it lies in no workspace folder.

    The nearest folder above the file holding a `.git` entry (the walk identity.py makes, so a
    workspace folder inside a repository anchors relative to the repository's top); outside Git,
    the innermost workspace folder holding it.
    """
    inside = [folder for folder in folders if is_within(path, folder)]
    if not inside:
        return None
    # The path itself first: a workspace folder that is a repository nested in another one is
    # its own checkout (for a file, `<file>/.git` simply does not exist).
    for candidate in (path, *path.parents):
        if (candidate / ".git").exists():
            return candidate
    return max(inside, key=lambda folder: len(folder.parts))


def relative(path: Path, root: Path) -> str | None:
    """`path` relative to `root`, "/"-separated, or None when it is not inside it."""
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        return None
    return str(PurePosixPath(*parts)) if parts else None


def git_dir(checkout: Path) -> Path | None:
    """The Git directory of a checkout (a linked worktree's own), or None outside Git."""
    dotgit = checkout / ".git"
    if dotgit.is_dir():
        return dotgit
    text = read_small(dotgit)
    if text is None or not text.startswith("gitdir:"):
        return None
    target = text.splitlines()[0][len("gitdir:") :].strip()
    return canonical(checkout / target) if target else None


def head_commit(checkout: Path) -> str | None:
    """The commit checked out in `checkout` (hex), or None outside Git or when it cannot be read
    (an unborn branch, a damaged or unusual repository: the anchor then records no commit)."""
    found = git_dir(checkout)
    if found is None:
        return None
    head = (read_small(found / "HEAD") or "").strip()
    if SHA.fullmatch(head):
        return head
    if not head.startswith("ref:"):
        return None
    ref = head[len("ref:") :].strip()
    if not _REF.fullmatch(ref) or ".." in ref:
        return None
    common_text = (read_small(found / "commondir") or "").strip()
    common = canonical(found / common_text) if common_text else found
    for base in dict.fromkeys((found, common)):
        loose = (read_small(base / ref) or "").strip()
        if SHA.fullmatch(loose):
            return loose
    for line in _packed_refs(common / "packed-refs").splitlines():
        sha, _, name = line.partition(" ")
        if name.strip() == ref and SHA.fullmatch(sha):
            return sha
    return None


def _packed_refs(path: Path) -> str:
    """The packed-refs file's text; empty when absent, unreadable or over 8 MiB."""
    try:
        data = read_regular(path, PACKED_REFS_MAX_BYTES + 1)
    except OSError:
        return ""
    if data is None or len(data) > PACKED_REFS_MAX_BYTES:
        return ""
    return data.decode("utf-8", "replace")
