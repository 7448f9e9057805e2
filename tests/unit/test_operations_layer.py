"""The operations layer (lecode_ls/actions, issue 43 item 1): every door reaches the stores'
writers through it, and it sits between the runtime and the doors.

A static check, as the room tests are: every call in the package outside lecode_ls/actions and
the core (lecode_ls/memory, whose stores and cross-part scrub are the writers themselves) is
read from its syntax tree, and a call of a store's writing method is a violation. A receiver is
known by the name it ends in (`runtime.facts.remember`, `facts.ranking.pin`, a local `store`
from `require_memory()`); a name bound to an import of lecode_ls.actions is an operation, not a
store (`facts.remember(runtime, ...)`).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "lecode_ls"
OUTSIDE = sorted(
    path
    for path in PACKAGE.rglob("*.py")
    if path.relative_to(PACKAGE).parts[0] not in ("actions", "memory")
)
ACTIONS = sorted((PACKAGE / "actions").glob("*.py"))

FACT_WRITERS = {"remember", "correct", "forget", "exclude", "attach_source", "add", "revise"}
NOTE_WRITERS = {"write", "edit", "scrub"}
WRITERS: dict[str, set[str]] = {
    "facts": FACT_WRITERS,
    "ranking": {"pin", "unpin"},
    "retirement": {"retire", "restore"},
    "anchors": {"reanchor"},
    "sessions": {"delete", "rename", "undo", "redo", "clear", "import_records"},
    "markdown": NOTE_WRITERS,
    "store": FACT_WRITERS | NOTE_WRITERS,  # what doors named require_facts()'s or _memory()'s
}
"""A store's writing methods, by the name its receiver ends in. A chat turn, compaction,
learning's events and the followed transcripts append records (`sessions.append`,
`sessions.create`): that is recording, the chat's own, not an operation a door composes."""

REQUIRED = {("require_memory", None): "markdown", ("require_facts", 0): "sessions",
            ("require_facts", 1): "facts"}  # fmt: skip
"""What the runtime's `require_*` hand back: `runtime.require_facts()[1].forget(...)`."""

MODULE_WRITERS: dict[str, set[str]] = {
    "lecode_ls.memory.team": {"write", "remove", "build", "succeed"},
    "lecode_ls.memory.learning_status": {"accept", "dismiss"},
    "lecode_ls.memory.scrub": {"scrub"},
}
"""The core's writing functions, by the module that defines them."""


class _Reader:
    """What the names of one module stand for: operations, core modules and functions, and
    local names bound to a store (`f = runtime.facts`, `sessions, store = runtime.require_facts()`)."""

    def __init__(self, tree: ast.Module) -> None:
        self.operations: set[str] = set()
        self.core: dict[str, str] = {}
        self.aliases: dict[str, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                for alias in node.names:
                    self._imported(node.module, alias.name, alias.asname or alias.name)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname and alias.name in MODULE_WRITERS:
                        self.core[alias.asname] = alias.name
            elif isinstance(node, ast.Assign) and len(node.targets) == 1:
                self._assigned(node.targets[0], node.value)

    def _imported(self, module: str, name: str, bound: str) -> None:
        if module.startswith("lecode_ls.actions") or (module, name) == ("lecode_ls", "actions"):
            self.operations.add(bound)
        elif f"{module}.{name}" in MODULE_WRITERS:
            self.core[bound] = f"{module}.{name}"
        elif name in MODULE_WRITERS.get(module, ()):
            self.core[bound] = f"{module}:{name}"

    def _assigned(self, target: ast.expr, value: ast.expr) -> None:
        if isinstance(target, ast.Name) and (kind := self.kind(value)) is not None:
            self.aliases[target.id] = kind
        elif isinstance(target, ast.Tuple) and _required(value) == "require_facts":
            for index, item in enumerate(target.elts):
                if isinstance(item, ast.Name):
                    self.aliases[item.id] = REQUIRED["require_facts", index]

    def kind(self, node: ast.expr) -> str | None:
        """The store `node` stands for, by WRITERS' names; None for anything else."""
        if isinstance(node, ast.Name):
            if node.id in self.operations:
                return None
            return self.aliases.get(node.id, node.id if node.id in WRITERS else None)
        if isinstance(node, ast.Attribute):
            return node.attr if node.attr in WRITERS else None
        if _required(node) == "require_memory":
            return "markdown"
        if isinstance(node, ast.Subscript) and _required(node.value) == "require_facts":
            index = node.slice.value if isinstance(node.slice, ast.Constant) else None
            return REQUIRED.get(("require_facts", index))
        return None


def _required(node: ast.expr) -> str | None:
    """`require_memory` or `require_facts` when `node` calls the runtime's method of that name."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("require_memory", "require_facts")
    ):
        return node.func.attr
    return None


def store_writes(source: str) -> list[str]:
    """The uses of a store's or the core's writing method in `source`, called or handed on
    (`asyncio.to_thread(store.write, ...)`), as `line: receiver.method`."""
    tree = ast.parse(source)
    names = _Reader(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and ":" in names.core.get(node.id, ""):
            found.append(f"{node.lineno}: {names.core[node.id]}")
        if not isinstance(node, ast.Attribute):
            continue
        module = names.core.get(node.value.id) if isinstance(node.value, ast.Name) else None
        kind = names.kind(node.value)
        if module is not None and node.attr in MODULE_WRITERS.get(module, ()):
            found.append(f"{node.lineno}: {module}.{node.attr}")
        elif kind is not None and node.attr in WRITERS[kind]:
            found.append(f"{node.lineno}: {kind}.{node.attr}")
    return sorted(found, key=lambda w: int(w.split(":")[0]))


class TestTheStoresAreWrittenThroughTheOperations:
    def test_there_are_doors_to_check(self) -> None:
        assert len(OUTSIDE) > 80 and len(ACTIONS) >= 6

    @pytest.mark.parametrize("path", OUTSIDE, ids=lambda p: str(p.relative_to(PACKAGE)))
    def test_no_module_outside_the_operations_calls_a_stores_writer(self, path: Path) -> None:
        assert store_writes(path.read_text(encoding="utf-8")) == []

    def test_the_operations_do_call_them(self) -> None:
        found = [w for path in ACTIONS for w in store_writes(path.read_text(encoding="utf-8"))]
        for call in ("facts.remember", "facts.forget", "sessions.delete", "markdown.write"):
            assert any(w.endswith(call) for w in found), call
        assert any(w.endswith("lecode_ls.memory.team.write") for w in found)

    @pytest.mark.parametrize(
        ("source", "expected"),
        [
            ("runtime.facts.remember(t, r, check=c)", ["1: facts.remember"]),
            ("facts.ranking.pin(3)", ["1: ranking.pin"]),
            ("store = runtime.require_memory()\nstore.write(n, c, m)", ["2: markdown.write"]),
            (
                "from lecode_ls.memory import team\nteam.write(c, d)",
                ["2: lecode_ls.memory.team.write"],
            ),
            (
                "from lecode_ls.memory.learning_status import accept\naccept(s, f, i, q, n, r)",
                ["2: lecode_ls.memory.learning_status:accept"],
            ),
            ("from lecode_ls.actions import facts\nfacts.remember(runtime, t, r)", []),
            ("from lecode_ls.actions import team\nteam.share(runtime, c, 1)", []),
            ("handle.write(data)\nitems.clear()\nnames.remove(x)", []),
            ("asyncio.to_thread(runtime.sessions.undo, session_id)", ["1: sessions.undo"]),
            # An operation's module of the same name does not hide the store (helper review)
            (
                "from lecode_ls.actions import facts, sessions\n"
                "runtime.facts.remember(t, r)\nruntime.sessions.delete(s)",
                ["2: facts.remember", "3: sessions.delete"],
            ),
            ("runtime.require_memory().write(n, c, m)", ["1: markdown.write"]),
            ("runtime.require_facts()[1].forget(3)", ["1: facts.forget"]),
            ("f = runtime.facts\nf.remember(t, r)", ["2: facts.remember"]),
            ("_, store = runtime.require_facts()\nstore.remember(t, r)", ["2: facts.remember"]),
            (
                "import lecode_ls.memory.team as t\nt.write(c, d)",
                ["2: lecode_ls.memory.team.write"],
            ),
            ("runtime.facts.add('legacy claim')", ["1: facts.add"]),
        ],
    )
    def test_the_check_tells_a_store_from_an_operation(
        self, source: str, expected: list[str]
    ) -> None:
        assert store_writes(source) == expected


class TestTheOperationsSitBetween:
    DOORS = (
        "lecode_ls.server",
        "lecode_ls.tools",
        "lecode_ls.mcp",
        "lecode_ls.other_agents",
        "lecode_ls.agent",
        "lecode_ls.cli",
    )

    @pytest.mark.parametrize("path", ACTIONS, ids=lambda p: p.name)
    def test_an_operation_imports_no_door(self, path: Path) -> None:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {
            node.module
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module
        } | {a.name for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names}
        assert {m for m in imported if m.startswith(self.DOORS)} == set()

    def test_the_lsp_door_tells_the_client_in_one_place(self) -> None:
        # The handlers once called facts_changed after each write (26 sites): now server/act.py
        # turns an operation's `changed` into news; only the polls that notice another
        # process's writes (facts/watch.py, team/watch.py, sessions/follow.py) call it.
        callers = sorted(
            str(path.relative_to(PACKAGE))
            for path in (PACKAGE / "server").rglob("*.py")
            if "await facts_changed(" in path.read_text(encoding="utf-8")
        )
        assert callers == [
            "server/act.py",
            "server/facts/watch.py",
            "server/sessions/follow.py",
            "server/team/watch.py",
        ]
