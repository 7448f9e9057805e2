"""The `/memory` slash command (T5): one line in, the text a person sees out.

The same function serves the `lecode.memory` command of every editor and, later, `/memory` typed
in chat. Subcommands that need a part not built yet are not listed by `help`.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from datetime import date

from lecode_ls.errors import InvalidParams
from lecode_ls.memory.markdown import daily_name
from lecode_ls.runtime import Runtime

HELP = """\
/memory show              print MEMORY.md (capped at [memory] max_bytes)
/memory edit              print the uncapped MEMORY.md for manual editing
/memory search <pattern>  search the Markdown memory (regular expression, at most 50 hits)
/memory log [date]        print a daily log (YYYY-MM-DD; today by default)
/memory notes             list named notes
/memory help              show this help"""

TRUNCATION_MARKER = "\n[... truncated at {limit} bytes; /memory edit shows it all]"


def _cap(text: str, limit: int) -> str:
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    # Cut on a character boundary: errors="ignore" drops a split multi-byte tail.
    return data[:limit].decode("utf-8", errors="ignore") + TRUNCATION_MARKER.format(limit=limit)


def _show(runtime: Runtime, args: list[str]) -> str:
    content, exists = runtime.require_memory().read("MEMORY.md")
    if not content:
        return "MEMORY.md is empty." if exists else "MEMORY.md does not exist yet."
    return _cap(content, runtime.settings.memory.max_bytes)


def _edit(runtime: Runtime, args: list[str]) -> str:
    content, exists = runtime.require_memory().read("MEMORY.md")
    return content if exists else "MEMORY.md does not exist yet."


def _search(runtime: Runtime, args: list[str]) -> str:
    if not args:
        raise InvalidParams("text: /memory search needs a pattern", field="text")
    hits, truncated = runtime.require_memory().search(" ".join(args))
    if not hits:
        return "No matches."
    lines = [f"{hit.file}:{hit.line}: {hit.text}" for hit in hits]
    if truncated:
        lines.append(f"[only the first {len(hits)} matches are shown]")
    return "\n".join(lines)


def _log(runtime: Runtime, args: list[str], today: date) -> str:
    if len(args) > 1:
        raise InvalidParams("text: /memory log takes at most one date", field="text")
    try:
        day = date.fromisoformat(args[0]) if args else today
    except ValueError:
        raise InvalidParams(
            f"text: {args[0]!r} is not a date; use YYYY-MM-DD", field="text"
        ) from None
    name = daily_name(day)
    content, exists = runtime.require_memory().read(name)
    if not exists:
        return f"No daily log for {day.isoformat()}."
    return content or f"The daily log for {day.isoformat()} is empty."


def _notes(runtime: Runtime, args: list[str]) -> str:
    notes = [f for f in runtime.require_memory().list() if f.file.startswith("notes/")]
    if not notes:
        return "No named notes."
    return "\n".join(f"{f.file.removeprefix('notes/')[:-3]}  ({f.bytes} bytes)" for f in notes)


_SIMPLE: dict[str, Callable[[Runtime, list[str]], str]] = {
    "show": _show,
    "edit": _edit,
    "search": _search,
    "notes": _notes,
}


def run_memory_command(runtime: Runtime, text: str, today: date) -> str:
    """Run one `/memory` line (without the `/memory` prefix) and return its output."""
    text = text.strip().removeprefix("/memory").strip()
    if not text:
        return _show(runtime, [])
    # The search pattern is taken verbatim (shell quoting would eat backslashes in regexes).
    sub, _, rest = text.partition(" ")
    if sub == "search":
        return _search(runtime, [rest.strip()] if rest.strip() else [])
    try:
        args = shlex.split(rest)
    except ValueError as exc:
        raise InvalidParams(f"text: {exc}", field="text") from None
    if sub == "help":
        return HELP
    if sub == "log":
        return _log(runtime, args, today)
    handler = _SIMPLE.get(sub)
    if handler is None:
        raise InvalidParams(
            f"text: unknown /memory subcommand {sub!r}; /memory help lists them", field="text"
        )
    return handler(runtime, args)
