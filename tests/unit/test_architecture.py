"""The shape of the package (STYLE 1, 2): the memory core never reaches into the chat agent or
the server, the import graph has no cycles, and no module grows past 600 lines.

# covers the layering of STYLE.md (issue 11, item 8)
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "lecode_ls"
MODULES = sorted(PACKAGE.rglob("*.py"))
CORE = [
    path
    for path in MODULES
    if not {"server", "contract"} & set(path.relative_to(PACKAGE).parts)
    and path.name not in ("cli.py",)
]
MEMORY = sorted((PACKAGE / "memory").glob("*.py"))
FORBIDDEN = ("pygls", "lsprotocol", "lecode_ls.server")
MAX_LINES = 600


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path) -> set[str]:
    """Every module `path` imports, at any depth of the file (TYPE_CHECKING and function-level
    imports included: a cycle through them is still a cycle a reader has to untangle)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def import_graph() -> dict[str, set[str]]:
    known = {module_name(path) for path in MODULES}
    graph = {}
    for path in MODULES:
        name = module_name(path)
        found = {m for m in imported_modules(path) if m in known}
        # `from package import module` depends on the module, not on the package's face.
        faces = {m.rsplit(".", 1)[0] for m in found if m.rsplit(".", 1)[0] in known}
        faces -= {m for m in found if m in known and _imports_names_of(path, m)}
        graph[name] = found - faces - {name, "lecode_ls"}
    return graph


def _imports_names_of(path: Path, module: str) -> bool:
    """Whether `path` imports a name that is not a module from `module` (`from m import X`)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    known = {module_name(p) for p in MODULES}
    return any(
        isinstance(node, ast.ImportFrom)
        and node.module == module
        and any(f"{module}.{alias.name}" not in known for alias in node.names)
        for node in ast.walk(tree)
    )


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                other = stack.pop()
                component.append(other)
                if other == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


class TestPureCore:
    def test_the_core_has_modules_to_check(self) -> None:
        assert len(CORE) >= 8

    @pytest.mark.parametrize("path", CORE, ids=lambda p: str(p.relative_to(PACKAGE)))
    def test_a_core_module_imports_neither_pygls_nor_the_server(self, path: Path) -> None:
        bad = {m for m in imported_modules(path) if m.split(".")[0] in FORBIDDEN[:2]}
        bad |= {m for m in imported_modules(path) if m.startswith(FORBIDDEN[2])}
        assert bad == set()

    @pytest.mark.parametrize("path", MEMORY, ids=lambda p: p.name)
    def test_the_memory_core_imports_neither_the_agent_nor_the_runtime(self, path: Path) -> None:
        above = (
            "lecode_ls.agent",
            "lecode_ls.server",
            "lecode_ls.runtime",
            "lecode_ls.tools.slash",
        )
        # injection.py names the Runtime in a type annotation only (TYPE_CHECKING).
        allowed = (
            {"lecode_ls.runtime", "lecode_ls.runtime.Runtime"}
            if path.name == "injection.py"
            else set()
        )
        bad = {m for m in imported_modules(path) if m.startswith(above)} - allowed
        assert bad == set()


class TestLayering:
    def test_the_import_graph_has_no_cycles(self) -> None:
        assert cycles(import_graph()) == []

    def test_the_cycle_finder_finds_a_cycle(self) -> None:
        graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
        assert cycles(graph) == [["a", "b", "c"]]

    @pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
    def test_no_module_passes_600_lines(self, path: Path) -> None:
        lines = len(path.read_text(encoding="utf-8").splitlines())
        assert lines <= MAX_LINES, f"{path.name} has {lines} lines"


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


# -- the MCP SDK stays an optional extra (issue 15) ---------------------------------------------

SDK_ROOTS = ("mcp", "mcp_types", "anyio", "starlette", "uvicorn")
SDK_USERS = {PACKAGE / "mcp" / "app.py", PACKAGE / "mcp" / "stdio.py"}


class TestTheMcpSdkIsOptional:
    @pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
    def test_only_the_mcp_wiring_imports_the_sdk(self, path: Path) -> None:
        found = {m for m in imported_modules(path) if m.split(".")[0] in SDK_ROOTS}
        assert (found != set()) == (path in SDK_USERS), found

    def test_the_language_server_reaches_the_mcp_package_only_through_the_command(self) -> None:
        # cli.py starts `lecode-ls mcp`; contract/mcp.py renders mcp.md (no SDK: the rule above).
        graph = import_graph()
        users = {
            name
            for name, deps in graph.items()
            if not name.startswith("lecode_ls.mcp")
            and any(d.startswith("lecode_ls.mcp") for d in deps)
        }
        assert users == {"lecode_ls.cli", "lecode_ls.contract.mcp"}

    def test_nothing_in_the_package_imports_the_contract_renderers(self) -> None:
        graph = import_graph()
        users = {
            name
            for name, deps in graph.items()
            if not name.startswith("lecode_ls.contract")
            and any(d.startswith("lecode_ls.contract") for d in deps)
        }
        assert users == set()
