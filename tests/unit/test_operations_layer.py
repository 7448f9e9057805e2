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

WRITERS: dict[str, set[str]] = {
    "facts": {"remember", "correct", "forget", "exclude", "attach_source"},
    "ranking": {"pin", "unpin"},
    "retirement": {"retire", "restore"},
    "anchors": {"reanchor"},
    "sessions": {"delete", "rename", "undo", "redo", "clear", "import_records"},
    "markdown": {"write", "edit"},
    "store": {"write", "edit"},  # runtime.require_memory()'s store, as doors named it
}
"""A store's writing methods, by the name its receiver ends in. A chat turn, compaction,
learning's events and the followed transcripts append records (`sessions.append`,
`sessions.create`): that is recording, the chat's own, not an operation a door composes."""

MODULE_WRITERS: dict[str, set[str]] = {
    "lecode_ls.memory.team": {"write", "remove", "build", "succeed"},
    "lecode_ls.memory.learning_status": {"accept", "dismiss"},
    "lecode_ls.memory.scrub": {"scrub"},
}
"""The core's writing functions, by the module that defines them."""


def _receiver(node: ast.expr) -> str | None:
    """The name a receiver ends in: `runtime.facts` -> facts, `store` -> store."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def store_writes(source: str) -> list[str]:
    """The uses of a store's or the core's writing method in `source`, called or handed on
    (`asyncio.to_thread(store.write, ...)`), as `line: receiver.method`."""
    tree = ast.parse(source)
    operations: set[str] = set()  # names bound to lecode_ls.actions modules
    core: dict[str, str] = {}  # name -> core module it is bound to, or function it names
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                bound = alias.asname or alias.name
                if node.module.startswith("lecode_ls.actions") or (
                    node.module == "lecode_ls" and alias.name == "actions"
                ):
                    operations.add(bound)
                full = f"{node.module}.{alias.name}"
                if full in MODULE_WRITERS:
                    core[bound] = full
                elif alias.name in MODULE_WRITERS.get(node.module, ()):
                    core[bound] = f"{node.module}:{alias.name}"
    found = []
    for node in ast.walk(tree):  # called or handed on (`asyncio.to_thread(store.write, ...)`)
        if isinstance(node, ast.Name) and ":" in core.get(node.id, ""):
            found.append(f"{node.lineno}: {core[node.id]}")
        if not isinstance(node, ast.Attribute):
            continue
        receiver = _receiver(node.value)
        if receiver is None:
            continue
        module = core.get(receiver)
        if module is not None and node.attr in MODULE_WRITERS.get(module, ()):
            found.append(f"{node.lineno}: {module}.{node.attr}")
        elif receiver not in operations and node.attr in WRITERS.get(receiver, ()):
            found.append(f"{node.lineno}: {receiver}.{node.attr}")
    return sorted(found, key=lambda w: int(w.split(":")[0]))


class TestTheStoresAreWrittenThroughTheOperations:
    def test_there_are_doors_to_check(self) -> None:
        assert len(OUTSIDE) > 80 and len(ACTIONS) >= 6

    @pytest.mark.parametrize("path", OUTSIDE, ids=lambda p: str(p.relative_to(PACKAGE)))
    def test_no_module_outside_the_operations_calls_a_stores_writer(self, path: Path) -> None:
        assert store_writes(path.read_text(encoding="utf-8")) == []

    def test_the_operations_do_call_them(self) -> None:
        found = [w for path in ACTIONS for w in store_writes(path.read_text(encoding="utf-8"))]
        for call in ("facts.remember", "facts.forget", "sessions.delete", "store.write"):
            assert any(w.endswith(call) for w in found), call
        assert any(w.endswith("lecode_ls.memory.team.write") for w in found)

    @pytest.mark.parametrize(
        ("source", "expected"),
        [
            ("runtime.facts.remember(t, r, check=c)", ["1: facts.remember"]),
            ("facts.ranking.pin(3)", ["1: ranking.pin"]),
            ("store = runtime.require_memory()\nstore.write(n, c, m)", ["2: store.write"]),
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
