"""Run a command that sees a folder read-only, for real: a read-only bind mount or permissions.

As root (CI containers), permissions stop nothing, so the command runs in a private mount
namespace (`unshare -m`) where the folder is bind-mounted read-only: writes fail with EROFS, as
on a read-only volume. As any other user, the folder's write permissions are taken away for the
duration (EACCES, as in a store owned by someone else). If neither is possible the test is
skipped, never faked.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

_MOUNT = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" "$1" && shift && exec "$@"'


def _wrap(folder: Path) -> Callable[[list[str]], list[str]]:
    def wrap(argv: list[str]) -> list[str]:
        return ["unshare", "-m", "sh", "-c", _MOUNT, "sh", str(folder), *argv]

    return wrap


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[Callable[[list[str]], list[str]]]:
    """Yield a function turning a command line into one that sees `folder` read-only."""
    if os.geteuid() == 0:
        wrap = _wrap(folder)
        if shutil.which("unshare") is None:
            pytest.skip("running as root without unshare: cannot make a read-only mount")
        probe = folder / ".write-probe"
        check = subprocess.run(
            wrap(["sh", "-c", f': > "{probe}"']), capture_output=True, text=True, check=False
        )
        if check.returncode == 0 or "Read-only" not in check.stderr:
            probe.unlink(missing_ok=True)
            pytest.skip(f"cannot make a read-only bind mount here: {check.stderr.strip()}")
        yield wrap
        return
    modes: dict[Path, int] = {}
    for path in [folder, *folder.rglob("*")]:
        if path.is_symlink():
            continue
        modes[path] = stat.S_IMODE(path.stat().st_mode)
        path.chmod(modes[path] & ~0o222)
    try:
        yield lambda argv: argv
    finally:
        for path, mode in modes.items():
            path.chmod(mode)
