"""Which language a text is written in, when that is clear: a small, conservative guess for the
summary check (summary_check.py), never a classifier to trust.

A text's letters are sorted by script; a dominant non-Latin script (CJK, Cyrillic, Arabic,
Greek, Hebrew, Devanagari, Thai) names the language by that script. For Latin text, the function
words of seven languages are counted (only the words that belong to one list alone: "de" or
"que" say nothing); one language is named when it has at least MIN_HITS words and twice as
many as the next. Anything less clear (short text, code, mixed scripts) is None: unknown, and a
check that compares two languages passes when either is unknown.
"""

from __future__ import annotations

import re
from collections import Counter

MIN_LETTERS = 40
"""Fewer letters than this say nothing about a language."""
DOMINANT = 0.6
"""The share of letters a script needs to be the text's."""
MIN_HITS = 3
CJK_WEIGHT = 3
"""A CJK character counts as this many letters: one carries about what a short word does."""

_SCRIPTS = (
    ("cjk", re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")),
    ("cyrillic", re.compile(r"[\u0400-\u04ff]")),
    ("arabic", re.compile(r"[\u0600-\u06ff\u0750-\u077f]")),
    ("greek", re.compile(r"[\u0370-\u03ff]")),
    ("hebrew", re.compile(r"[\u0590-\u05ff]")),
    ("devanagari", re.compile(r"[\u0900-\u097f]")),
    ("thai", re.compile(r"[\u0e00-\u0e7f]")),
    ("latin", re.compile(r"[A-Za-z\u00c0-\u024f]")),
)

_FUNCTION_WORDS = {
    "en": "the and of to is are with that this for was were it be by from which have has not "
    "or we you should when what into then there their they will would can been only",
    "fr": "le la les des du est et une un pour avec que qui dans pas sur nous vous sont ce cette "
    "ne au aux il elle ou mais leur très aussi été fait",
    "de": "der die das und ist nicht mit für ein eine zu auf den dem wir sie ich es sind auch "
    "von im wird werden oder aber noch nach bei",
    "es": "el los las es y que con para una del por se no al lo como más pero su sus está son "
    "también fue muy",
    "it": "il lo gli le di che è e per con una non del della sono come anche nel alla questo "
    "questa molto",
    "pt": "o os as de que e é um uma para com não do da dos das em no na por mais também muito "
    "foi são",
    "nl": "de het een en van is niet met voor op dat die zijn wij ook maar aan bij naar wordt "
    "worden heeft",
}
_OWNERS = Counter(w for words in _FUNCTION_WORDS.values() for w in set(words.split()))
DISTINCTIVE = {
    language: frozenset(w for w in words.split() if _OWNERS[w] == 1)
    for language, words in _FUNCTION_WORDS.items()
}
"""Each language's function words that no other list has."""

_WORD = re.compile(r"[^\W\d_]+")

NAMES = {
    "en": "English",
    "fr": "French",
    "de": "German",
    "es": "Spanish",
    "it": "Italian",
    "pt": "Portuguese",
    "nl": "Dutch",
}
"""How a request to a model names a language `guess_language` returns (a script is named by
the person's language alone: a script does not say which language it writes)."""


def language_request(texts: list[str]) -> str:
    """The sentence that asks a model to write in the language of the person's `texts` (issue
    41: a summary in the person's language), naming it when it is clear."""
    guessed = guess_language("\n".join(texts))
    if guessed in NAMES:
        return f"Write the summary in {NAMES[guessed]}, the language the person writes in."
    return "Write the summary in the language the person writes in."


def guess_language(text: str) -> str | None:
    """The text's language (`en`, `fr`, `de`, `es`, `it`, `pt`, `nl`) or script (`cjk`,
    `cyrillic`, ...), or None when that is not clear (see the module docstring)."""
    counts = {name: len(pattern.findall(text)) for name, pattern in _SCRIPTS}
    counts["cjk"] *= CJK_WEIGHT
    letters = sum(counts.values())
    if letters < MIN_LETTERS:
        return None
    script, most = max(counts.items(), key=lambda item: item[1])
    if most < DOMINANT * letters:
        return None
    if script != "latin":
        return script
    words = Counter(w.lower() for w in _WORD.findall(text))
    hits = sorted(
        (
            (sum(words[w] for w in vocabulary), language)
            for language, vocabulary in DISTINCTIVE.items()
        ),
        reverse=True,
    )
    (best, language), (second, _) = hits[0], hits[1]
    if best >= MIN_HITS and best >= 2 * second:
        return language
    return None
