"""The words of the ranked index (`facts_rank`, schema migration 6): what a fact's text, or a
query, is cut into before SQLite's tokenizer sees it.

SQLite's `porter unicode61` tokenizer (FTS5, in the SQLite apsw bundles) folds case, removes
diacritics and stems English; what it cannot do is split identifiers, handle scripts written
without spaces, or index a text with no letters at all. So the indexed column is not the fact's
text but these words, computed here, and a query goes through the same function:

- NFKC first, so full-width letters and composed accents compare equal to their plain forms;
- identifiers are split into their parts and also kept joined: `billing-12` gives `billing`,
  `12` and `billing12`; `getUserName` gives `get`, `user`, `name` and `getusername`;
  `snake_case`, `kebab-case`, `dotted.names` and path components alike (a path is cut at `/`
  and `\\` first, so `src/app/main.py` gives `src`, `app`, `main`, `py` and `mainpy`);
- a run of Han, kana, Hangul, Thai, Lao, Khmer or Myanmar script (no spaces between words) gives
  each character and each pair of adjacent characters, so one character finds a fact;
- a chunk with no letter or digit (`->`, `!==`, `???`) gives one token spelling its UTF-8 in hex
  (`0x2d3e`), and one per distinct character, so a fact of punctuation is indexed and found.

A versioned contract: the index stores these words, so changing them needs a migration that
rebuilds `facts_rank`. Each word is made of letters, digits and marks only (the tokenizer's
token characters, see schema.py), so no word can spell FTS5 query syntax: a query is quoted
word by word and its operators are words like any other.
"""

from __future__ import annotations

import re
import unicodedata
from typing import NamedTuple

MAX_WORD_CHARS = 64  # longer parts are cut (a 100 KB "word" indexes as its first 64 characters)
MAX_SYMBOL_CHARS = 16  # a chunk of punctuation: the first 16 characters
MAX_JOINED_PARTS = 8  # an identifier of more parts is not also kept joined

# Scripts written without spaces between words: indexed as characters and character pairs.
_NO_SPACES = (
    (0x0E00, 0x0EFF),  # Thai, Lao
    (0x1000, 0x109F),  # Myanmar
    (0x1780, 0x17FF),  # Khmer
    (0x2E80, 0x2FDF),  # CJK radicals
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3100, 0x312F),  # Bopomofo
    (0x3130, 0x318F),  # Hangul compatibility jamo
    (0x31F0, 0x31FF),  # Katakana extensions
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xA960, 0xA97F),  # Hangul jamo extended A
    (0xAC00, 0xD7FF),  # Hangul syllables, jamo extended B
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0x20000, 0x3134F),  # CJK extensions B-G
)


class Word(NamedTuple):
    """One word for the index: `token` as the index stores it, `shown` as the text spelled it
    (a query's reasons name what the person wrote: `billing-12`, not `billing12`)."""

    token: str
    shown: str


def _no_spaces(char: str) -> bool:
    code = ord(char)
    return any(low <= code <= high for low, high in _NO_SPACES)


def _is_word_char(char: str) -> bool:
    """Letters, digits and marks: what unicode61 keeps in a token (`categories 'L* N* Co M*'`)."""
    category = unicodedata.category(char)
    return category[0] in "LNM" or category == "Co"


def _symbol(chunk: str) -> list[Word]:
    """A chunk without letters or digits: its hex, and each distinct character's."""
    chunk = chunk[:MAX_SYMBOL_CHARS]
    words = [Word("0x" + chunk.encode("utf-8", "surrogatepass").hex(), chunk)]
    if len(chunk) > 1:
        for char in dict.fromkeys(chunk):
            words.append(Word("0x" + char.encode("utf-8", "surrogatepass").hex(), char))
    return words


def _camel_parts(run: str) -> list[str]:
    """`getUserName` -> get, User, Name; `HTTPServer2` -> HTTP, Server, 2; `ab12cd` -> ab, 12,
    cd. Boundaries: lower to upper, an upper run before Upper+lower, letters to digits."""
    parts: list[str] = []
    start = 0
    for i in range(1, len(run)):
        prev, char = run[i - 1], run[i]
        nxt = run[i + 1] if i + 1 < len(run) else ""
        boundary = (
            (prev.islower() and char.isupper())
            or (prev.isupper() and char.isupper() and nxt.islower())
            or (prev.isdigit() != char.isdigit())
        )
        if boundary:
            parts.append(run[start:i])
            start = i
    parts.append(run[start:])
    return [part for part in parts if part]


def _runs(segment: str) -> list[tuple[bool, str]]:
    """`segment` cut where it passes between a script without spaces and any other."""
    runs: list[tuple[bool, str]] = []
    for char in segment:
        kind = _no_spaces(char)
        if runs and runs[-1][0] == kind:
            runs[-1] = (kind, runs[-1][1] + char)
        else:
            runs.append((kind, char))
    return runs


def _segment(segment: str) -> tuple[list[Word], list[str]]:
    """The words of one run of word characters, and its parts (for the joined identifier)."""
    words: list[Word] = []
    parts: list[str] = []
    for unspaced, run in _runs(segment):
        if unspaced:  # each character, and each pair of adjacent ones
            run = run[: MAX_WORD_CHARS * 4]
            words.extend(Word(char, char) for char in run)
            words.extend(Word(run[i : i + 2], run[i : i + 2]) for i in range(len(run) - 1))
            parts.append(run)
            continue
        pieces = _camel_parts(run[: MAX_WORD_CHARS * 4])
        words.extend(Word(piece.casefold()[:MAX_WORD_CHARS], piece) for piece in pieces)
        if len(pieces) > 1:
            words.append(Word("".join(pieces).casefold()[:MAX_WORD_CHARS], run))
        parts.extend(pieces)
    return words, parts


def _component(component: str) -> list[Word]:
    """One path component or whitespace chunk: its segments, and the whole joined."""
    words: list[Word] = []
    parts: list[str] = []
    segment = ""
    for char in component + " ":
        if _is_word_char(char):
            segment += char
            continue
        if segment:
            found, pieces = _segment(segment)
            words.extend(found)
            parts.extend(pieces)
            segment = ""
    if 1 < len(parts) <= MAX_JOINED_PARTS and not any(_no_spaces(p[0]) for p in parts):
        joined = "".join(parts).casefold()[:MAX_WORD_CHARS]
        if all(w.token != joined for w in words):
            shown = component.strip("".join(c for c in component if not _is_word_char(c)))
            words.append(Word(joined, shown or component))
    return words


_ASCII_SEGMENT = re.compile(r"[A-Za-z0-9]+")
_ASCII_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_ASCII_EDGES = re.compile(r"^[^A-Za-z0-9]+|[^A-Za-z0-9]+$")


def _ascii_component(component: str) -> list[Word]:
    """`_component` of an ASCII component, with regular expressions (the same words: a test
    holds the two to it; a fact's words are computed at every write and ranked query)."""
    words: list[Word] = []
    parts: list[str] = []
    for segment in _ASCII_SEGMENT.findall(component):
        pieces = _ASCII_CAMEL.findall(segment[: MAX_WORD_CHARS * 4])
        words.extend(Word(piece.lower()[:MAX_WORD_CHARS], piece) for piece in pieces)
        if len(pieces) > 1:
            words.append(Word("".join(pieces).lower()[:MAX_WORD_CHARS], segment))
        parts.extend(pieces)
    if 1 < len(parts) <= MAX_JOINED_PARTS:
        joined = "".join(parts).lower()[:MAX_WORD_CHARS]
        if all(w.token != joined for w in words):
            words.append(Word(joined, _ASCII_EDGES.sub("", component) or component))
    return words


def words(text: str) -> list[Word]:
    """Every word of `text`, in order (repeats kept: the index counts them). Bound the text
    first: this is linear in it. An ASCII chunk (most of them) takes the regular-expression
    path, any other the character-by-character one; both give the same words."""
    found: list[Word] = []
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    for chunk in text.split():
        ascii_chunk = chunk.isascii()
        if ascii_chunk and _ASCII_SEGMENT.search(chunk) is None:
            found.extend(_symbol(chunk))
            continue
        if not ascii_chunk and not any(_is_word_char(char) for char in chunk):
            found.extend(_symbol(chunk))
            continue
        for component in chunk.replace("\\", "/").split("/"):
            found.extend(_ascii_component(component) if ascii_chunk else _component(component))
    return found


def index_text(text: str) -> str:
    """The `facts_rank.terms` value of a fact's text: its words, space-separated."""
    return " ".join(word.token for word in words(text))


# Words a question is made of that say nothing about which fact it needs (English). Dropped from
# queries only (a query of nothing else keeps them); the index keeps every word.
_STOP = """a about above after again all also am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its itself
    just me more most my myself no nor not now of off on once only or other our ours ourselves out
    over own please quick question same she should so some such tell than that the their theirs
    them themselves then there these they this those through to too under until up very was we
    were what when where which while who whom why will with would you your yours yourself"""
STOP_WORDS = frozenset(_STOP.split())
