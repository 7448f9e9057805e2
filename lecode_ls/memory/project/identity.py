"""Project identity: which folder a path belongs to, and the stable slug that names its store.

The project is the main Git checkout root (L2): nested folders and linked worktrees of one
repository share it, a submodule is a project of its own, and a folder outside Git is its own
project. The slug (L3) is what the store folder is called, so it must come out the same in every
process that ever looks at the project.

Git is read from the filesystem, never by running `git`: this runs on every request that names a
path, and must work where Git is not installed.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path, PurePath

from lecode_ls.memory.files import read_regular
from lecode_ls.platform.paths import canonical

_GITDIR_PREFIX = "gitdir:"
_SLUG_NAME_MAX = 40
_SLUG_HASH_HEX = 12
_UNSAFE_RUN = re.compile(r"[^A-Za-z0-9._-]+")
_DASH_RUN = re.compile(r"-{2,}")


@dataclass(frozen=True)
class Project:
    """One project: its resolved root folder and the slug of its memory store."""

    root: Path
    """The resolved main checkout root, or the resolved folder itself outside Git."""
    slug: str
    """`project_slug(root)`: the store folder's name under `<config_dir>/memory/`."""


def resolve_project(path: Path) -> Project:
    """The project that `path` (a folder or a file, through links or not) belongs to."""
    root = find_project_root(path)
    return Project(root=root, slug=project_slug(root))


def find_project_root(path: Path) -> Path:
    """The resolved root of the project holding `path`.

    A file stands for its parent folder. A path that does not exist is taken as a folder, since
    there is nothing to tell otherwise. The walk goes up from the resolved folder to the first
    folder holding a `.git` entry; with none up to the filesystem root, the folder is its own
    project. Resolved means `canonical`: links followed, and on file systems that ignore case
    (Windows, macOS by default) every name spelled as stored, so `~/Proj` and `~/proj` are one
    project with one slug.
    """
    folder = canonical(path)
    if folder.exists() and not folder.is_dir():
        folder = folder.parent
    for candidate in (folder, *folder.parents):
        dotgit = candidate / ".git"
        if dotgit.is_dir():
            return candidate
        if dotgit.is_file():
            return _root_from_gitfile(candidate, dotgit)
    return folder


def project_slug(root: PurePath) -> str:
    """A readable, filesystem-safe, stable name for the project at `root` (already resolved).

    The slug is the root's basename reduced to `[A-Za-z0-9._-]` (accents dropped, every other run
    of characters becomes one `-`, leading dots and dashes and trailing dashes stripped, at most
    40 characters, `project` if nothing is left), then `-`, then the first 12 hex digits of the
    SHA-256 of the root path's UTF-8 bytes. The hash, not the name, makes it unique: two
    checkouts both called `app` get different slugs.

    This is a versioned contract: the slug is the store folder's name, so changing anything here
    (the reduction, the hash, its length, how the path is encoded) silently moves every user's
    store to a new empty folder. A change needs a migration of the old folders.
    """
    # NFKD splits "é" into "e" plus a combining accent, which the reduction then drops: "café"
    # reads "cafe" whichever normal form the filesystem stored the name in.
    name = unicodedata.normalize("NFKD", root.name)
    name = "".join(ch for ch in name if not unicodedata.combining(ch))
    name = _DASH_RUN.sub("-", _UNSAFE_RUN.sub("-", name)).lstrip(".-")
    name = name[:_SLUG_NAME_MAX].rstrip("-") or "project"
    # surrogateescape: a Linux path that is not valid UTF-8 arrives with lone surrogates, which a
    # plain utf-8 encode rejects; this turns them back into the original bytes, and is identical
    # to plain utf-8 for every decodable path.
    digest = hashlib.sha256(str(root).encode("utf-8", "surrogateescape")).hexdigest()
    return f"{name}-{digest[:_SLUG_HASH_HEX]}"


GIT_FILE_MAX_BYTES = 64 * 1024


def read_small(path: Path) -> str | None:
    """The text of a small Git file of the workspace, or None.

    These files come with a cloned repository: a FIFO must not block the server, a gigabyte must
    not be read, and a link is not followed (read_regular). Git's own are a few hundred bytes.
    """
    try:
        data = read_regular(path, GIT_FILE_MAX_BYTES + 1)
    except OSError:
        return None
    if data is None or len(data) > GIT_FILE_MAX_BYTES:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _root_from_gitfile(folder: Path, dotgit: Path) -> Path:
    """The project root for a `folder` whose `.git` is a file (`gitdir: <path>`).

    A linked worktree's gitdir has a `commondir` file leading to the repository it shares, whose
    main checkout is the root. Without `commondir` the gitdir belongs to this checkout alone (a
    submodule, or `git init --separate-git-dir`), so `folder` is its own project.

    A `.git` file that cannot be read or parsed makes `folder` the root rather than an error: the
    marker still says "a checkout starts here", and refusing to serve the folder would lose the
    user's memory for a problem only Git can fix.
    """
    text = read_small(dotgit)
    if text is None:
        return folder
    first_line = text.splitlines()[0] if text else ""
    if not first_line.startswith(_GITDIR_PREFIX):
        return folder
    target = first_line[len(_GITDIR_PREFIX) :].strip()
    if not target:
        return folder
    # A relative gitdir is relative to the folder holding the `.git` file; joining an absolute
    # one keeps it absolute.
    gitdir = canonical(folder / target)

    commondir_file = gitdir / "commondir"
    if not commondir_file.is_file():
        return folder
    common_ref = (read_small(commondir_file) or "").strip()
    if not common_ref:
        return folder
    common = canonical(gitdir / common_ref)
    if common.name == ".git":
        return common.parent
    # The shared repository is not `<checkout>/.git`: a submodule's (under the superproject's
    # `.git/modules/`), which records its checkout in core.worktree, or a bare repository, which
    # has no checkout and so is the project itself.
    worktree = _core_worktree(common / "config")
    if worktree is None:
        return common
    return canonical(common / worktree)


def _core_worktree(config: Path) -> str | None:
    """The last `core.worktree` value in a Git config file, or None.

    A small reader for the one key needed, not a Git config parser: `include` directives are not
    followed, and a value continued over several lines with a trailing backslash is not joined.
    configparser is no help here: Git configs repeat keys and quote values in ways it rejects.
    """
    text = read_small(config)
    if text is None:
        return None
    lines = text.splitlines()
    in_core = False
    value: str | None = None
    for raw in lines:
        line = raw.strip()
        if line.startswith("["):
            # Section names are case-insensitive; `[core "x"]` is another section than `[core]`.
            header = line[1 : line.find("]")] if "]" in line else line[1:]
            in_core = header.strip().lower() == "core"
            line = line[line.find("]") + 1 :].strip() if "]" in line else ""
            if not line:
                continue
        if not in_core or "=" not in line:
            continue
        key, _, rest = line.partition("=")
        if key.strip().lower() == "worktree":
            value = _config_value(rest)
    return value


def _config_value(raw: str) -> str:
    """A Git config value: quotes removed, `\\"`, `\\\\`, `\\t`, `\\n` unescaped, comments cut."""
    out: list[str] = []
    quoted = False
    chars = iter(raw.strip())
    for ch in chars:
        if ch == "\\":
            nxt = next(chars, "")
            out.append({"t": "\t", "n": "\n", "b": "\b"}.get(nxt, nxt))
        elif ch == '"':
            quoted = not quoted
        elif ch in "#;" and not quoted:
            break
        else:
            out.append(ch)
    return "".join(out).strip()
