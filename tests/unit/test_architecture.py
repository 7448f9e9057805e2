"""The memory core never reaches into the server (STYLE 1: pure core, thin server)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "lecode_ls"
CORE = [
    path
    for path in sorted(PACKAGE.rglob("*.py"))
    if "server" not in path.relative_to(PACKAGE).parts and path.name not in ("cli.py",)
]
FORBIDDEN = ("pygls", "lsprotocol", "lecode_ls.server")


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


class TestPureCore:
    def test_the_core_has_modules_to_check(self) -> None:
        assert len(CORE) >= 8

    @pytest.mark.parametrize("path", CORE, ids=lambda p: str(p.relative_to(PACKAGE)))
    def test_a_core_module_imports_neither_pygls_nor_the_server(self, path: Path) -> None:
        bad = {m for m in imported_modules(path) if m.split(".")[0] in FORBIDDEN[:2]}
        bad |= {m for m in imported_modules(path) if m.startswith(FORBIDDEN[2])}
        assert bad == set()


# -- one platform layer (issue 17) --------------------------------------------------------------

PLATFORM_LAYER = PACKAGE / "platform"
OUTSIDE_PLATFORM = [
    path for path in sorted(PACKAGE.rglob("*.py")) if not path.is_relative_to(PLATFORM_LAYER)
]
# Modules that exist on one family of platforms only, and ctypes (calls into libc or Windows DLLs).
PLATFORM_MODULES = {
    "fcntl",
    "msvcrt",
    "winreg",
    "_winapi",
    "termios",
    "pwd",
    "grp",
    "resource",
    "ctypes",
}
# os names that are missing on Windows (or on POSIX), or whose meaning differs there.
PLATFORM_OS_NAMES = {
    "O_NOFOLLOW",
    "O_CLOEXEC",
    "O_DIRECTORY",
    "O_NONBLOCK",
    "O_BINARY",
    "O_NOINHERIT",
    "O_TMPFILE",
    "O_PATH",
    "pread",
    "pwrite",
    "link",
    "mkfifo",
    "fchmod",
    "fchown",
    "getuid",
    "geteuid",
    "fork",
    "setsid",
    "killpg",
    "statvfs",
    "get_blocking",
    "set_blocking",
}
# Link tests that miss junctions and other Windows reparse points: use platform.kind/is_link.
LINK_TESTS = {("stat", "S_ISLNK"), ("os.path", "islink")}


def platform_specific_uses(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] in PLATFORM_MODULES]
            found += [a.name for a in node.names if a.name == "ctypes.wintypes"]
        elif isinstance(node, ast.ImportFrom) and node.module:
            root = node.module.split(".")[0]
            if root in PLATFORM_MODULES or node.module == "ctypes.wintypes":
                found.append(node.module)
            if node.module == "os":
                found += [f"os.{a.name}" for a in node.names if a.name in PLATFORM_OS_NAMES]
        elif isinstance(node, ast.Attribute):
            owner = ast.unparse(node.value)
            if owner == "os" and node.attr in PLATFORM_OS_NAMES:
                found.append(f"os.{node.attr}")
            elif (owner, node.attr) in LINK_TESTS or node.attr == "is_symlink":
                found.append(f"{owner}.{node.attr}")
            elif owner == "ctypes" and node.attr in ("windll", "WinDLL", "WinError"):
                found.append(f"ctypes.{node.attr}")
    return found


class TestOnePlatformLayer:
    def test_the_check_finds_what_it_looks_for(self) -> None:
        windows = PLATFORM_LAYER / "windows.py"
        posix = PLATFORM_LAYER / "posix.py"
        assert "msvcrt" in platform_specific_uses(windows)
        assert {"fcntl", "os.O_NOFOLLOW", "os.pread", "stat.S_ISLNK"} <= set(
            platform_specific_uses(posix)
        )

    @pytest.mark.parametrize("path", OUTSIDE_PLATFORM, ids=lambda p: str(p.relative_to(PACKAGE)))
    def test_no_module_outside_the_platform_layer_uses_a_platform_specific_api(
        self, path: Path
    ) -> None:
        assert platform_specific_uses(path) == []
