"""Where stores live: the config folder (L1), a project's store folder (L4), and the one-time
import of Markdown from the stores older lecode kept per working directory (L6).

Nothing here creates a store on its own: `store_dir` only names the folder, and
`migrate_legacy` creates it only when it has legacy Markdown to put in it.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from lecode_ls import platform
from lecode_ls.errors import InvalidName, StoreError
from lecode_ls.memory.files import atomic_write, read_regular, refuse_symlinks
from lecode_ls.memory.notes import validate_name
from lecode_ls.memory.project.identity import Project, find_project_root, project_slug

log = logging.getLogger(__name__)

CONFIG_DIR_ENV = "LECODE_CONFIG_DIR"
"""Environment variable naming the config folder, overriding the platform's (tests, users)."""

LEGACY_IMPORTS = ".legacy-imports"
"""Store file listing, one per line, the legacy slugs already imported into the store."""

_TOP_LEVEL = ("MEMORY.md", "scratchpad.md")


def config_dir(environ: Mapping[str, str]) -> Path:
    """The lecode config folder: `$LECODE_CONFIG_DIR` if set and non-empty, else the platform's.

    `environ` is passed in (normally `os.environ`) so that callers and tests choose it. The
    platform folder is `platformdirs.user_config_dir("lecode")`, the folder lecode itself uses,
    so the agent and the server share one store.
    """
    override = environ.get(CONFIG_DIR_ENV, "")
    if override:
        return Path(override).expanduser().resolve()
    import platformdirs  # only when there is no override: kept out of start-up otherwise

    return Path(platformdirs.user_config_dir("lecode"))


def store_dir(config_dir: Path, project: Project) -> Path:
    """The folder of `project`'s memory store. Not created here: stores are made on first write."""
    return config_dir / "memory" / project.slug


def migrate_legacy(
    config_dir: Path,
    project: Project,
    cwd: Path,
    redact: Callable[[str], str] | None = None,
) -> list[str]:
    """Copy the legacy store of working directory `cwd` into `project`'s store, once.

    Older lecode keyed its store by the resolved working directory, so a session started in a
    subfolder or a linked worktree of a repository has its notes under that folder's slug. A
    `cwd` that does not belong to `project` imports nothing. Each legacy Markdown file
    (MEMORY.md, scratchpad.md, daily/YYYY-MM-DD.md, notes/<name>.md) is copied only where the
    project store has no file of that name: nothing is merged, nothing is overwritten, and the
    legacy files are left as they are. SQLite databases, `.bak` files, symbolic links and any
    other file are never copied. `redact` (the store's redaction step, P5) runs over each
    file's text before it is written, as over every note write.

    The legacy slug is then recorded in `.legacy-imports`, so a file the user deletes from the
    project store later does not come back on the next start. Returns the store-relative names
    copied, sorted. Raises `StoreError` if the project store cannot be written, and
    `SymlinkRefused` if a folder of it is a symbolic link.
    """
    legacy_root = Path(os.path.realpath(cwd))
    # A cwd of another project (a caller's mistake) must not pour that project's notes in here.
    if legacy_root == project.root or find_project_root(legacy_root) != project.root:
        return []
    legacy_slug = project_slug(legacy_root)
    legacy = config_dir / "memory" / legacy_slug
    if platform.is_link(legacy):
        log.warning("legacy memory store %s is a symbolic link; not importing it", legacy)
        return []
    if not legacy.is_dir():
        return []

    store = store_dir(config_dir, project)
    imported = _read_imports(store)
    if legacy_slug in imported:
        return []
    candidates = sorted(_legacy_markdown(legacy))
    if not candidates:
        return []

    copied: list[str] = []
    complete = True
    for name in candidates:
        destination = store / name
        # Only the folders: a link at the destination itself is skipped below as present.
        refuse_symlinks(store, destination.parent)
        # lexists: a dangling link in the store is still a file of that name, and not ours to
        # replace. The check and the replace are not atomic; the window only matters if another
        # process writes this very file during start-up, and two servers importing at once copy
        # the same bytes.
        if os.path.lexists(destination):
            continue
        data = _read_legacy(legacy / name)
        if data is None:
            complete = False
            continue
        if redact is not None:
            with contextlib.suppress(UnicodeDecodeError):  # not text: the store refuses to read it
                data = redact(data.decode("utf-8")).encode("utf-8")
        try:
            atomic_write(destination, data, backup=False)
        except OSError as exc:
            raise StoreError(
                f"could not import legacy memory file {name}: {exc.strerror or type(exc).__name__}"
            ) from exc
        copied.append(name)

    # An unreadable legacy file leaves the slug unrecorded, so the next start tries it again
    # (the files already copied are then present and skipped).
    if complete:
        _record_import(store, imported, legacy_slug)
    if copied:
        log.info("imported %d legacy memory file(s) from %s", len(copied), legacy)
    return copied


def _legacy_markdown(legacy: Path) -> Iterator[str]:
    """Store-relative names of the legacy Markdown files worth importing (links logged, skipped).

    A name the store would refuse stays in the legacy store (which is never changed).
    """
    for name in _TOP_LEVEL:
        if _is_regular(legacy / name):
            yield name
    for folder in ("daily", "notes"):
        sub = legacy / folder
        if platform.is_link(sub):
            log.warning("legacy memory folder %s is a symbolic link; not importing it", sub)
            continue
        if not sub.is_dir():
            continue
        try:
            entries = sorted(entry.name for entry in os.scandir(sub))
        except OSError as exc:
            log.warning("cannot list legacy memory folder %s: %s", sub, exc)
            continue
        for entry in entries:
            name = f"{folder}/{entry}"
            try:
                if validate_name(name) != name:
                    continue
            except InvalidName:
                continue
            if _is_regular(sub / entry):
                yield name


def _is_regular(path: Path) -> bool:
    """True for a regular file; a symbolic link is logged and refused, whatever it points at."""
    try:
        found = platform.kind(path)
    except OSError:
        return False
    if found == "link":
        log.warning("legacy memory file %s is a symbolic link; not importing it", path)
        return False
    return found == "file"


def _read_legacy(path: Path) -> bytes | None:
    """The bytes of a legacy file, or None (logged) if it vanished or turned into a link."""
    try:
        return read_regular(path)
    except OSError as exc:
        log.warning("cannot read legacy memory file %s: %s", path, exc)
        return None


def _read_imports(store: Path) -> set[str]:
    path = store / LEGACY_IMPORTS
    if platform.is_link(path):
        # Not trusted; `_record_import` refuses to write through it, so the import stops there.
        return set()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return set()
    except (OSError, UnicodeDecodeError) as exc:
        log.warning("cannot read %s: %s", path, exc)
        return set()
    return {line.strip() for line in text.splitlines() if line.strip()}


def _record_import(store: Path, imported: set[str], legacy_slug: str) -> None:
    path = store / LEGACY_IMPORTS
    refuse_symlinks(store, path)
    lines = sorted(imported | {legacy_slug})
    try:
        atomic_write(path, "".join(f"{line}\n" for line in lines).encode("utf-8"), backup=False)
    except OSError as exc:
        raise StoreError(
            f"could not record the legacy memory import: {exc.strerror or type(exc).__name__}"
        ) from exc
