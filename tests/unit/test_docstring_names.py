"""Every module a docstring or a comment of the package names by file (`store.py`,
`memory/facts/db.py`) exists, so the words a newcomer follows lead to code after a move
(issue 43, item 4: docstrings still named `facts_db.py` and `sessions.py` after the facts and
sessions packages were split).

A name resolves from the mentioning module's own folder or any folder above it, up to the
repository's root: `records.py` beside it, `errors.py` in `lecode_ls/`, `server/asking.py`
from `lecode_ls/`, `lecode_ls/memory/team/format.py` from the root.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).parents[2]
PACKAGE = ROOT / "lecode_ls"

# `name.py` and `folder/name.py`, not part of a longer path or dotted name.
MENTION = re.compile(r"(?<![\w./-])((?:[\w-]+/)*[A-Za-z_]\w*\.py)\b")
# Files of a person's project that examples name, not modules of lecode-ls.
EXAMPLES = {"src/app.py", "src/app/main.py"}
# Modules by their names from before the packages were split (facts_db is facts/db.py now):
# a docstring or comment naming one points at nothing.
OLD_NAMES = (
    "anchor_capture", "anchor_text", "facts_db", "facts_types", "facts_schema", "note_index",
    "workspace_read", "anchor_features", "anchor_messages", "protocol_anchors", "chat_features",
    "chat_messages", "chat_state", "anchor_docs", "facts_features", "fact_messages",
    "memory_features", "protocol_sessions", "settings_docs",
)  # fmt: skip


def texts(path: Path) -> set[tuple[int, str]]:
    """(line, text) of every docstring and comment of one module."""
    source = path.read_text(encoding="utf-8")
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                found.append((getattr(node, "lineno", 1), doc))
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            value = node.value.value  # an attribute's docstring, or a string left as a statement
            found.extend([(node.lineno, value)] if isinstance(value, str) else [])
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            found.append((token.start[0], token.string))
    return set(found)


def resolves(module: Path, name: str) -> bool:
    folder = module.parent
    while True:
        if (folder / name).is_file():
            return True
        if folder == ROOT:
            return False
        folder = folder.parent


class TestDocstringsNameModulesThatExist:
    def test_every_module_named_by_file_exists(self) -> None:
        missing = [
            f"{path.relative_to(ROOT)}:{line}: {name}"
            for path in sorted(PACKAGE.rglob("*.py"))
            for line, text in texts(path)
            for name in MENTION.findall(text)
            if name not in EXAMPLES and not resolves(path, name)
        ]
        assert missing == []

    def test_no_module_is_named_as_it_was_before_the_move(self) -> None:
        old = re.compile(r"\b(" + "|".join(OLD_NAMES) + r")\b")
        stale = [
            f"{path.relative_to(ROOT)}:{line}: {found}"
            for path in sorted(PACKAGE.rglob("*.py"))
            for line, text in texts(path)
            for found in old.findall(text)
        ]
        assert stale == []
