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
