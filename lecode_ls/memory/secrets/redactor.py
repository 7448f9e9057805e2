"""The one redaction step where text enters memory (P5).

Every store runs what it is given through `Redactor.text` (or `.value` for a record) before it
writes or digests anything, so what is stored, what is digested and what a model is later shown
are the same redacted text. A found secret becomes a marker, `[secret:<kind>:<8 hex>]`: the
8 hex digits are an HMAC-SHA256 of the secret under a key of this store (`secrets.key`, 32
random bytes, mode 0600, created by the first secret found), so equal secrets get equal markers
and no marker can be tested against a guessed value without the key.

Structure-aware: a JSON text held in a string (a tool call's arguments, a tool's JSON output, a
Claude Code `Write` input) escapes its newlines, quotes and slashes, so a PEM block there is one
line of `\\n`-joined text. Such a string (one that starts and ends like a JSON object or array,
and holds a backslash: without one its strings are its own bytes) is parsed, its keys and values
redacted as decoded text, and encoded again when something was found; then the rules run on
the text as it is too. Keys are redacted as well as values: a name can hold a token. `find_all`
and `find_value` report exactly what `text` and `value` replace, so the scan and the scrub
(memory/scrub.py) count what the redaction sees.

Bounded: a text is at most what the stores accept (1 MiB files, bounded records), each rule is
an RE2 automaton (linear time), rules run only where one of their keywords occurs, and a record
is walked to at most MAX_DEPTH levels (deeper values are bounded by the record's own checks).
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import hmac
import json
import secrets as random
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lecode_ls import platform
from lecode_ls.errors import StoreError
from lecode_ls.memory.files import (
    fsync_dir,
    make_dirs,
    read_regular,
    refuse_symlinks,
    temp_path,
    write_all,
)
from lecode_ls.memory.secrets.known import secret_values
from lecode_ls.memory.secrets.rules import Rule, builtin_rules, compile_rule

KEY_FILE = "secrets.key"
KEY_BYTES = 32
MAX_DEPTH = 64
MAX_ALLOW = 200
MAX_EXTRA_PATTERNS = 32
MAX_PATTERN_CHARS = 1000
"""As for search patterns (notes/pattern.py)."""
MAX_FINDINGS = 10_000
"""Past this many secrets in one text, the rest of the text is replaced by one marker: 100,000
near-misses cost a scan, never 100,000 markers."""

MAX_CLEAN_KEYS = 4096
MAX_CLEAN_KEY_CHARS = 64
"""JSON keys remembered as holding no secret (bounded: a hostile record's keys churn it)."""

MARKER_PREFIX = "[secret:"


@dataclass(frozen=True)
class Finding:
    kind: str
    start: int
    end: int


def check_extra_pattern(pattern: str) -> str:
    """`[privacy] extra_patterns` entries: RE2, bounded like search patterns; raises ValueError."""
    import re2

    if len(pattern) > MAX_PATTERN_CHARS:
        raise ValueError(f"a pattern may be at most {MAX_PATTERN_CHARS} characters")
    if not pattern:
        raise ValueError("a pattern must not be empty")
    try:
        compiled = compile_rule(pattern)
    except re2.error as error:
        raise ValueError(f"not an RE2 pattern the rules accept: {error}") from None
    except UnicodeEncodeError:
        raise ValueError("contains a character that is not valid Unicode text") from None
    if compiled.search(b"") is not None:
        raise ValueError("the pattern matches the empty string")
    return pattern


class Redactor:
    """Finds secrets in text and replaces each by its marker; one per project store."""

    def __init__(
        self,
        store_root: Path | None,
        *,
        extra_patterns: Sequence[str] = (),
        allow: Iterable[str] = (),
        key: bytes | None = None,
    ) -> None:
        """`store_root` is where the key lives (None: `key`, or a random key for this process,
        as for the server's log)."""
        self.root = store_root
        self._key = (
            key if key is not None or store_root is not None else random.token_bytes(KEY_BYTES)
        )
        self._lock = threading.Lock()
        self._extra: list[Rule] = []
        self._allow: tuple[str, ...] = ()
        self._given: str | None = None
        self.configure(extra_patterns, allow)

    def with_given(self, secret: str | None) -> Redactor:
        """This redactor, also finding the exact string `secret` (kind `given`: a token the
        person just rotated, detectable or not), wherever the rules look: the scrub's and its
        scan's. Itself when `secret` is None."""
        if secret is None:
            return self
        other = copy.copy(self)
        other._given = secret
        other._clean_keys = set()  # a key clean of the rules may hold the given string
        return other

    def configure(self, extra_patterns: Sequence[str], allow: Iterable[str]) -> None:
        """Take `[privacy] extra_patterns` and `allow` (again, when config.toml changed)."""
        self._extra = [
            Rule("custom", compile_rule(check_extra_pattern(p)), ())
            for p in extra_patterns[:MAX_EXTRA_PATTERNS]
        ]
        self._allow = tuple(a for a in list(allow)[:MAX_ALLOW] if a)
        self._clean_keys: set[str] = set()  # what was clean under the old rules may not be

    # -- finding -----------------------------------------------------------------------------

    def find(self, text: str) -> list[Finding]:
        """The secrets in `text`, in order and not overlapping (the longest of overlapping ones)."""
        if not text:
            return []
        data = text.encode("utf-8", "surrogatepass")
        spans: list[tuple[str, int, int, Rule]] = []
        for rule in [*builtin_rules().candidates(data), *self._extra]:
            for match in rule.regex.finditer(data):
                start, end = match.span(rule.group)
                if start < 0 or start == end:
                    continue
                if (
                    rule.word_end
                    and end < len(data)
                    and (chr(data[end]).isalnum() or data[end] == 95)
                ):
                    continue
                if len(spans) >= MAX_FINDINGS:  # the rest of the text goes under one marker
                    spans.append((rule.kind, start, len(data), rule))
                    break
                spans.append((rule.kind, start, end, rule))
        known = secret_values()
        if not spans and self._given is None and not any(form in text for form in known):
            return []
        found = []
        for kind, start, end, rule in _as_chars(data, spans, ascii=len(data) == len(text)):
            if rule.check is None or rule.check(text[start:end]) or end - start > 100_000:
                found.append(Finding(kind, start, end))
        found = self._unallowed(text, found)
        # Literals first (the sort is stable, so their spans keep their kind): the string the
        # person gave, and the provider's key as configured (known.py), whatever its format.
        literals = [("given", self._given)] if self._given is not None else []
        literals += [("api-key", form) for form in known if form in text]
        given: list[Finding] = []
        for kind, literal in literals:
            at = text.find(literal)
            while at >= 0 and len(given) < MAX_FINDINGS:
                given.append(Finding(kind, at, at + len(literal)))
                at = text.find(literal, at + len(literal))
        found = given + found
        found.sort(key=lambda f: (f.start, -(f.end - f.start)))
        kept: list[Finding] = []
        for finding in found:
            if kept and finding.start < kept[-1].end:
                if finding.end > kept[-1].end:  # overlapping: one marker covers both
                    kept[-1] = Finding(kept[-1].kind, kept[-1].start, finding.end)
                continue
            kept.append(finding)
        return kept

    def _unallowed(self, text: str, found: list[Finding]) -> list[Finding]:
        if not self._allow:
            return found
        spans: list[tuple[int, int]] = []
        for literal in self._allow:
            at = text.find(literal)
            while at >= 0 and len(spans) < MAX_FINDINGS:
                spans.append((at, at + len(literal)))
                at = text.find(literal, at + 1)
        return [f for f in found if not any(s <= f.start and f.end <= e for s, e in spans)]

    def find_all(self, text: str) -> list[Finding]:
        """What `text` replaces: the findings of `find`, and of the strings of a JSON text
        (spanning the whole text: a decoded string has no place in the encoded one)."""
        found: list[Finding] = []
        self._text(text, 0, found)
        return found

    def find_value(self, value: Any) -> list[Finding]:
        """What `value` replaces in a JSON value's keys and strings (spans of no use)."""
        found: list[Finding] = []
        self._value(value, 0, found)
        return found

    # -- replacing ---------------------------------------------------------------------------

    def text(self, text: str) -> str:
        """`text` with every secret replaced by its marker (the same object when none is found),
        a JSON text's strings and keys as decoded (the module docstring)."""
        return self._text(text, 0, None)

    def value(self, value: Any) -> Any:
        """A JSON value with every string and key in it redacted."""
        return self._value(value, 0, None)

    def _text(self, text: str, depth: int, found: list[Finding] | None) -> str:
        original = text
        inner: list[Finding] = []
        if depth < MAX_DEPTH and _json_text(text):
            decoded = _loads(text)
            if isinstance(decoded, (dict, list)):
                redacted = self._value(decoded, depth + 1, inner)
                if inner:
                    text = json.dumps(redacted, ensure_ascii=False, separators=_separators(text))
        spans = self.find(text)
        if found is not None:
            if inner:  # positions in the re-encoded text are none in the original
                found.extend(Finding(f.kind, 0, len(original)) for f in [*inner, *spans])
            else:
                found.extend(spans)
        if not spans:
            return text
        parts: list[str] = []
        at = 0
        for finding in spans:
            parts.append(text[at : finding.start])
            parts.append(self.marker(finding.kind, text[finding.start : finding.end]))
            at = finding.end
        parts.append(text[at:])
        return "".join(parts)

    def _redact_key(self, key: str, depth: int, found: list[Finding] | None) -> str:
        """A record's key redacted; the few keys every record repeats (`role`, `content`,
        `meta`...) are remembered clean, so a 100,000-record scan runs the rules on each once."""
        if key in self._clean_keys:
            return key
        redacted = self._text(key, depth, found)
        if redacted is key and len(key) <= MAX_CLEAN_KEY_CHARS:
            if len(self._clean_keys) >= MAX_CLEAN_KEYS:
                self._clean_keys.clear()
            self._clean_keys.add(key)
        return redacted

    def _value(self, value: Any, depth: int, found: list[Finding] | None) -> Any:
        if isinstance(value, str):
            return self._text(value, depth, found)
        if depth >= MAX_DEPTH:  # deeper than any record: redacted as its JSON text, in one pass
            dumped = json.dumps(value, ensure_ascii=False)
            redacted = self._text(dumped, MAX_DEPTH, found)
            if redacted is dumped:
                return value
            try:
                return json.loads(redacted)
            except ValueError:  # a marker took a quote with it: the text is what is kept
                return redacted
        if isinstance(value, dict):
            return {
                self._redact_key(key, depth + 1, found): self._value(item, depth + 1, found)
                for key, item in value.items()
            }
        if isinstance(value, list):
            return [self._value(item, depth + 1, found) for item in value]
        return value

    def marker(self, kind: str, secret: str) -> str:
        digest = hmac.new(self.key(), secret.encode("utf-8", "surrogatepass"), hashlib.sha256)
        return f"{MARKER_PREFIX}{kind}:{digest.hexdigest()[:8]}]"

    # -- the key -----------------------------------------------------------------------------

    def key(self) -> bytes:
        """This store's key, created on first use with the store's file rules."""
        if self._key is not None:
            return self._key
        with self._lock:
            if self._key is None:
                assert self.root is not None
                try:
                    self._key = _load_or_create(self.root)
                except OSError as error:
                    raise StoreError(
                        f"could not read or create the store's {KEY_FILE} "
                        f"({error.strerror or type(error).__name__})"
                    ) from None
        return self._key


def _json_text(text: str) -> bool:
    """Whether `text` may be a JSON object or array whose strings differ from its bytes: it
    starts and ends like one and holds an escape (without one, the rules see its strings as they
    are). O(1) but for the backslash search, which stops at the first."""
    head, tail = text[:64].lstrip(), text[-64:].rstrip()
    return (
        bool(head)
        and bool(tail)
        and (head[0], tail[-1]) in (("{", "}"), ("[", "]"))
        and "\\" in text
    )


def _loads(text: str) -> object:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # not JSON after all, or nested past Python's limit
        return None


def _separators(text: str) -> tuple[str, str]:
    """The separators the text was written with, as far as a glance tells (Codex writes
    compact JSON, Python's `json.dumps` spaced JSON)."""
    return (", ", ": ") if '": ' in text[:4096] else (",", ":")


def _as_chars(
    data: bytes, spans: list[tuple[str, int, int, Rule]], *, ascii: bool
) -> list[tuple[str, int, int, Rule]]:
    """Byte offsets of UTF-8 `data` as character offsets, in one pass over the text."""
    if ascii:
        return spans
    points = sorted({offset for _, start, end, _ in spans for offset in (start, end)})
    chars: dict[int, int] = {}
    at = count = 0
    for point in points:
        count += len(data[at:point].decode("utf-8", "surrogatepass"))
        chars[point] = count
        at = point
    return [(kind, chars[start], chars[end], rule) for kind, start, end, rule in spans]


def _load_or_create(root: Path) -> bytes:
    path = root / KEY_FILE
    make_dirs(root)
    refuse_symlinks(root, path)
    existing = read_regular(path, KEY_BYTES + 1)
    if existing is not None and len(existing) == KEY_BYTES:
        return existing
    if existing is not None:
        raise OSError(0, f"{KEY_FILE} is not {KEY_BYTES} bytes long")
    key = random.token_bytes(KEY_BYTES)
    temp = temp_path(path)
    fd = platform.open_file(temp, write=True, create=True, exclusive=True)  # 0600, no-follow
    try:
        write_all(fd, key)
        platform.fsync(fd)
    finally:
        platform.close(fd)
    try:
        platform.publish(temp, path)  # never over a key another process made first
    except FileExistsError:
        pass
    finally:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
    fsync_dir(root)
    made = read_regular(path, KEY_BYTES + 1)
    if made is None or len(made) != KEY_BYTES:
        raise OSError(0, f"{KEY_FILE} is not {KEY_BYTES} bytes long")
    return made
