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

from typing import TYPE_CHECKING

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
