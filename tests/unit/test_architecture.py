"""The shape of the package (STYLE 1, 2): the memory core never reaches into the chat agent or
the server, the import graph has no cycles, the parts of the core and the features of the server
keep to their rooms, and no module grows past 800 lines.

# covers the layering of STYLE.md (issue 11, item 8) and the rooms of issue 22
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "lecode_ls"
ARCHITECTURE = PACKAGE.parent / "docs" / "development" / "architecture.md"
MODULES = sorted(PACKAGE.rglob("*.py"))
CORE = [
    path
    for path in MODULES
    if not {"server", "contract"} & set(path.relative_to(PACKAGE).parts)
    and path.name not in ("cli.py",)
]
MEMORY = sorted((PACKAGE / "memory").rglob("*.py"))
FORBIDDEN = ("pygls", "lsprotocol", "lecode_ls.server")
MAX_LINES = 800
"""Packages give a split its natural seam; past this, a module is a room to divide."""

# The parts of the memory core, and the parts each may import (files and canonical are shared
# primitives, below every part). The reads that cross parts (recall, injection, working,
# learning_status) sit above them all.
PARTS: dict[str, set[str]] = {
    "secrets": set(),  # the redaction step (P5), below every store
    "notes": {"secrets"},
    "sessions": {"secrets"},
    "facts": {"secrets"},
    "project": {"notes"},  # the store layout copies legacy notes
    "anchors": {"facts", "sessions", "project"},
    "team": {"anchors", "facts", "sessions", "secrets"},  # shared facts (issue 29)
}
CROSSING = ("recall", "injection", "selection", "working", "learning_status", "scrub")
FEATURES = ("notes", "sessions", "facts", "chat", "anchors", "questions", "secrets", "team")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


KNOWN = {module_name(path) for path in MODULES}


def imported_modules(path: Path) -> set[str]:
    """Every module `path` imports, at any depth of the file (TYPE_CHECKING and function-level
    imports included: a cycle through them is still a cycle a reader has to untangle).
    `from package import module` imports the module; `from module import name`, the module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                inner = f"{node.module}.{alias.name}"
                names.add(inner if inner in KNOWN else node.module)
    return names


def import_graph() -> dict[str, set[str]]:
    graph = {}
    for path in MODULES:
        name = module_name(path)
        graph[name] = {m for m in imported_modules(path) if m in KNOWN} - {name, "lecode_ls"}
    return graph


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


def _room(module: str, prefix: str) -> str | None:
    """The room (`notes`, `chat`, ...) of `module` under `prefix` (`lecode_ls.memory.`), if any."""
    if not module.startswith(prefix):
        return None
    return module[len(prefix) :].split(".")[0]


def part_violations(graph: dict[str, set[str]]) -> list[str]:
    """Imports between the core's parts that PARTS does not allow, and imports of the reads
    that cross parts from inside a part."""
    found = []
    prefix = "lecode_ls.memory."
    for module, deps in sorted(graph.items()):
        part = _room(module, prefix)
        if part not in PARTS:
            continue
        for dep in sorted(deps):
            other = _room(dep, prefix)
            if other in PARTS and other != part and other not in PARTS[part]:
                found.append(f"{module} imports {dep}")
            if other in CROSSING:
                found.append(f"{module} imports {dep}, a read above the parts")
    return found


def face_violations(graph: dict[str, set[str]], faces: dict[str, set[str]]) -> list[str]:
    """Imports from outside a part of the core that pass its face: an inner module, or a name
    the face's `__all__` does not list. `faces` maps a part's package to its `__all__`."""
    found = []
    for module, deps in sorted(graph.items()):
        for package in faces:
            if module == package or module.startswith(package + "."):
                continue
            found += [f"{module} imports {dep}" for dep in deps if dep.startswith(package + ".")]
    return found


def names_from_faces(path: Path, faces: dict[str, set[str]]) -> list[str]:
    """Names `path` imports from a face that its `__all__` does not list."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        f"{node.module}.{alias.name}"
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module in faces
        for alias in node.names
        if alias.name not in faces[node.module] and f"{node.module}.{alias.name}" not in KNOWN
    ]


def feature_violations(graph: dict[str, set[str]]) -> list[str]:
    """A server feature importing another feature's handlers."""
    prefix = "lecode_ls.server."
    return [
        f"{module} imports {dep}"
        for module, deps in sorted(graph.items())
        if (feature := _room(module, prefix)) in FEATURES
        for dep in sorted(deps)
        if (other := _room(dep, prefix)) in FEATURES
        and other != feature
        and dep.endswith(".handlers")
    ]


def features_reached(graph: dict[str, set[str]], start: str) -> list[str]:
    """The modules of server features that `start` imports, directly or through other modules."""
    seen: set[str] = set()
    stack = [start]
    while stack:
        module = stack.pop()
        if module not in seen:
            seen.add(module)
            stack.extend(graph.get(module, ()))
    return sorted(m for m in seen if _room(m, "lecode_ls.server.") in FEATURES)


def faces() -> dict[str, set[str]]:
    """Each part's package and the names its `__init__.py` lists in `__all__`."""
    listed = {}
    for part in PARTS:
        tree = ast.parse((PACKAGE / "memory" / part / "__init__.py").read_text(encoding="utf-8"))
        names: set[str] = set()
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(
                isinstance(target, ast.Name) and target.id == "__all__" for target in node.targets
            ):
                names = set(ast.literal_eval(node.value))
        listed[f"lecode_ls.memory.{part}"] = names
    return listed


ABOVE_THE_CORE = (
    "lecode_ls.config",
    "lecode_ls.actions",
    "lecode_ls.runtime",
    "lecode_ls.server",
    "lecode_ls.agent",
    "lecode_ls.tools",
    "lecode_ls.mcp",
    "lecode_ls.other_agents",
    "lecode_ls.cli",
    "lecode_ls.contract",
)
"""What sits above lecode_ls/memory: none of it may be imported from there."""


def above_the_core(imports: set[str]) -> set[str]:
    return {
        m
        for m in imports
        if m in ABOVE_THE_CORE or m.startswith(tuple(p + "." for p in ABOVE_THE_CORE))
    }


class TestPureCore:
    def test_the_core_has_modules_to_check(self) -> None:
        assert len(CORE) >= 8

    @pytest.mark.parametrize("path", CORE, ids=lambda p: str(p.relative_to(PACKAGE)))
    def test_a_core_module_imports_neither_pygls_nor_the_server(self, path: Path) -> None:
        bad = {m for m in imported_modules(path) if m.split(".")[0] in FORBIDDEN[:2]}
        bad |= {m for m in imported_modules(path) if m.startswith(FORBIDDEN[2])}
        assert bad == set()

    @pytest.mark.parametrize("path", MEMORY, ids=lambda p: str(p.relative_to(PACKAGE)))
    def test_the_memory_core_imports_nothing_above_it(self, path: Path) -> None:
        # The settings model too (issue 43, item 2): config.py validates with the core's checks,
        # so a core module that took the model would tie the two into a cycle. A core module
        # states what it reads of the settings as a Protocol (injection.MemoryLimits).
        assert above_the_core(imported_modules(path)) == set()

    def test_the_check_of_the_core_finds_an_import_from_above(self) -> None:
        imports = {"lecode_ls.config", "lecode_ls.other_agents.hooks", "lecode_ls.memory.files"}
        assert above_the_core(imports) == {"lecode_ls.config", "lecode_ls.other_agents.hooks"}

    @pytest.mark.parametrize(
        "path",
        sorted((PACKAGE / "tools").glob("*.py")),
        ids=lambda p: str(p.relative_to(PACKAGE)),
    )
    def test_the_tools_import_neither_the_agent_nor_a_front_door(self, path: Path) -> None:
        above = ("lecode_ls.agent", "lecode_ls.server", "lecode_ls.mcp")
        assert {m for m in imported_modules(path) if m.startswith(above)} == set()


class TestRooms:
    """The parts of the core (memory/project, notes, sessions, facts, anchors) and the features
    of the server (server/notes, sessions, facts, chat, anchors)."""

    def test_the_parts_of_the_core_import_only_the_parts_they_may(self) -> None:
        assert part_violations(import_graph()) == []

    def test_outside_a_part_only_its_face_is_imported(self) -> None:
        graph = {m: d for m, d in import_graph().items()}
        assert face_violations(graph, faces()) == []

    @pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
    def test_a_face_is_imported_only_for_what_it_lists(self, path: Path) -> None:
        assert names_from_faces(path, faces()) == []

    def test_a_server_feature_imports_no_other_features_handlers(self) -> None:
        assert feature_violations(import_graph()) == []

    def test_the_server_reaches_no_feature(self) -> None:
        # Issue 43, item 2: server.py holds the features' rooms (server/rooms.py), which the
        # wiring fills; it imports no feature, not even for a type, nor does what it imports.
        assert features_reached(import_graph(), "lecode_ls.server.server") == []

    def test_each_part_and_feature_is_a_package_with_a_docstring(self) -> None:
        for folder in [PACKAGE / "memory" / p for p in PARTS] + [
            PACKAGE / "server" / f for f in FEATURES
        ]:
            tree = ast.parse((folder / "__init__.py").read_text(encoding="utf-8"))
            assert ast.get_docstring(tree), folder

    # The checks above must be able to fail: each is shown a graph that breaks its rule.
    def test_the_part_check_finds_a_forbidden_import(self) -> None:
        graph = {
            "lecode_ls.memory.notes.store": {"lecode_ls.memory.facts.store"},
            "lecode_ls.memory.facts.store": {"lecode_ls.memory.recall"},
            "lecode_ls.memory.anchors.drift": {"lecode_ls.memory.facts.store"},
        }
        assert part_violations(graph) == [
            "lecode_ls.memory.facts.store imports lecode_ls.memory.recall, a read above the parts",
            "lecode_ls.memory.notes.store imports lecode_ls.memory.facts.store",
        ]

    def test_the_face_checks_find_an_import_past_the_face(self, tmp_path: Path) -> None:
        graph = {"lecode_ls.runtime": {"lecode_ls.memory.facts.store", "lecode_ls.memory.facts"}}
        listed = {"lecode_ls.memory.facts": {"FactStore"}}
        assert face_violations(graph, listed) == [
            "lecode_ls.runtime imports lecode_ls.memory.facts.store"
        ]
        source = tmp_path / "user.py"
        source.write_text("from lecode_ls.memory.facts import FactStore, as_int\n")
        assert names_from_faces(source, listed) == ["lecode_ls.memory.facts.as_int"]

    def test_the_reach_check_finds_a_feature_behind_another_module(self) -> None:
        graph = {
            "lecode_ls.server.server": {"lecode_ls.server.rooms", "lecode_ls.errors"},
            "lecode_ls.server.rooms": {"lecode_ls.server.chat.state"},
            "lecode_ls.server.chat.state": {"lecode_ls.server.server"},
        }
        assert features_reached(graph, "lecode_ls.server.server") == ["lecode_ls.server.chat.state"]

    def test_the_feature_check_finds_another_features_handlers(self) -> None:
        graph = {
            "lecode_ls.server.chat.handlers": {
                "lecode_ls.server.notes.handlers",
                "lecode_ls.server.facts.messages",
            }
        }
        assert feature_violations(graph) == [
            "lecode_ls.server.chat.handlers imports lecode_ls.server.notes.handlers"
        ]


class TestLayering:
    def test_the_import_graph_has_no_cycles(self) -> None:
        assert cycles(import_graph()) == []

    def test_the_cycle_finder_finds_a_cycle(self) -> None:
        graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
        assert cycles(graph) == [["a", "b", "c"]]

    @pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
    def test_no_module_passes_800_lines(self, path: Path) -> None:
        lines = len(path.read_text(encoding="utf-8").splitlines())
        assert lines <= MAX_LINES, f"{path.name} has {lines} lines"


def layout_entries() -> dict[str, str]:
    """docs/development/architecture.md's Layout block, by the `lecode_ls/<package>/` line each entry starts with."""
    block = ARCHITECTURE.read_text(encoding="utf-8").split("## Layout", 1)[1].split("```")[1]
    entries: dict[str, str] = {}
    current = None
    for line in block.splitlines():
        if match := re.match(r"(lecode_ls/[\w/]+/)", line):
            current = match.group(1)
            entries[current] = ""
        if current is not None:
            entries[current] += line + "\n"
    return entries


class TestTheReadmeLayout:
    def test_it_names_every_package_and_every_part_of_one(self) -> None:
        entries = layout_entries()
        for package in sorted(p.parent for p in PACKAGE.glob("*/__init__.py")):
            entry = entries.get(f"lecode_ls/{package.name}/")
            assert entry is not None, (
                f"architecture.md Layout does not name lecode_ls/{package.name}/"
            )
            for sub in sorted(p.parent.name for p in package.glob("*/__init__.py")):
                assert f"{sub}/" in entry, (
                    f"architecture.md Layout: lecode_ls/{package.name}/ lacks {sub}/"
                )


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
