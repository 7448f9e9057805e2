"""Search patterns from people and models, compiled and matched in bounded time and memory.

A pattern is untrusted input: `memory_search` is a read-class tool that a prompt injection can call
in readonly mode. Python's `re` (and `regex`) backtrack, and expand nested counted repeats when they
compile: `(?:(?:(?:a{100}){100}){100}){100}` grew a server past 20 GB before any match began.

RE2 (the `google-re2` bindings) is the engine made for untrusted patterns:
- compiling is bounded by `MAX_PROGRAM_BYTES` (`max_mem`); a pattern that would need more, or whose
  nested repeats expand past RE2's limit of 1,000 copies, is refused;
- matching runs in time linear in the text (an automaton, no backtracking), with a bounded cache.

The syntax is Python's `re` syntax without backreferences and lookaround (RE2 has neither); such a
pattern is refused with the reason RE2 gives. The caller still bounds the text it matches (the
memory store caps its files) and the wall-clock time across lines.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lecode_ls.errors import InvalidPattern

if TYPE_CHECKING:
    import re2

MAX_PATTERN_CHARS = 1000
MAX_PROGRAM_BYTES = 8 << 20  # RE2's own default: the compiled program and its DFA caches


def compile_pattern(pattern: str) -> re2._Regexp[str]:
    """Compile `pattern`, or raise `InvalidPattern` naming why it was refused."""
    if len(pattern) > MAX_PATTERN_CHARS:
        raise InvalidPattern(
            f"pattern: the pattern is {len(pattern)} characters long; the limit is "
            f"{MAX_PATTERN_CHARS}",
            field="pattern",
        )
    # Imported on first search: the engine is not needed to start the server.
    import re2

    options = re2.Options()
    options.max_mem = MAX_PROGRAM_BYTES
    options.log_errors = False  # a refused pattern is an answer to the client, not a log line
    options.never_capture = True  # only "does this line match" is asked
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        raise InvalidPattern(f"pattern: {_reason(exc)}", field="pattern") from None
    except UnicodeEncodeError:  # a lone surrogate cannot be encoded for the engine
        raise InvalidPattern(
            "pattern: contains a character that is not valid Unicode text", field="pattern"
        ) from None


def _reason(exc: Exception) -> str:
    detail = exc.args[0] if exc.args else str(exc)
    text = detail.decode("utf-8", "replace") if isinstance(detail, bytes) else str(detail)
    if "pattern too large" in text:
        return (
            "refused: the compiled pattern would need more than "
            f"{MAX_PROGRAM_BYTES >> 20} MiB; use fewer or smaller repeats"
        )
    if "invalid repetition size" in text or "bad repetition operator" in text:
        return (
            f"refused: {text} (a counted repeat may be at most 1000, and nested repeats may "
            "expand to at most 1000 copies)"
        )
    if "invalid perl operator" in text or "invalid escape sequence" in text:
        return (
            f"not a supported regular expression: {text} (lookaround and backreferences are "
            "not supported: searches use linear-time RE2 syntax)"
        )
    return f"not a valid regular expression: {text}"


# -- what an index can use -----------------------------------------------------------------------

MIN_LITERAL_CHARS = 3  # a trigram index cannot look up anything shorter

Clause = frozenset[str]
"""Literal strings of which at least one occurs in every line the pattern matches."""


def required_literals(pattern: str) -> list[Clause] | None:
    """Clauses that every match of `pattern` satisfies (each clause: one of its strings occurs in
    the matched line), or None when nothing useful can be said (then every line is a candidate).

    Only ever a necessary condition: the index narrows candidates with it and RE2 decides. The
    pattern is parsed with Python's own parser (`re._parser`), whose syntax RE2's mostly shares;
    wherever the two could read a pattern differently, the answer is None:
    - case-insensitive parts (RE2's Unicode folding is not the index's);
    - POSIX classes (`[[:alpha:]]`: Python reads a set and a literal "]");
    - anything Python cannot parse (RE2-only syntax such as `\\pL`, `\\z`, `\\Q...\\E`).
    """
    import importlib
    import re

    # Private modules of the standard library (typeshed types neither): any surprise in them
    # only costs the narrowing, never an answer (see the except clauses).
    sre: Any = importlib.import_module("re._constants")
    parser: Any = importlib.import_module("re._parser")

    if "[:" in pattern:
        return None
    try:
        parsed = parser.parse(pattern)
    except (re.error, RecursionError, OverflowError, ValueError):
        return None
    if parsed.state.flags & sre.SRE_FLAG_IGNORECASE:
        return None

    def sequence(items: list[tuple[Any, Any]]) -> list[Clause]:
        clauses: list[Clause] = []
        run: list[str] = []

        def end_run() -> None:
            if len(run) >= MIN_LITERAL_CHARS:
                clauses.append(frozenset({"".join(run)}))
            run.clear()

        for op, arg in items:
            if op is sre.LITERAL:
                run.append(chr(arg))
                continue
            end_run()
            clauses.extend(node(op, arg))
        end_run()
        return clauses

    def node(op: Any, arg: Any) -> list[Clause]:
        if op is sre.SUBPATTERN:
            _, add_flags, _, items = arg
            if add_flags & sre.SRE_FLAG_IGNORECASE:
                return []
            return sequence(list(items))
        if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
            low, _, items = arg
            return sequence(list(items)) if low >= 1 else []
        if op is sre.ATOMIC_GROUP:
            return sequence(list(arg))
        if op is sre.BRANCH:
            _, branches = arg
            chosen: set[str] = set()
            for branch in branches:
                clauses = sequence(list(branch))
                if not clauses:
                    return []  # one branch needs no literal: the alternation needs none
                chosen |= max(clauses, key=lambda clause: min(map(len, clause)))
            return [frozenset(chosen)]
        return []  # sets, classes, anchors, any character: no literal

    try:
        clauses = sequence(list(parsed))
    except (RecursionError, TypeError, ValueError):
        return None
    return clauses or None
