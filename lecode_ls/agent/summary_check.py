"""What a working summary must keep (C4, issue 31): a summary is judged by what it keeps, not by
how its lines are laid out.

compaction.py first rejects what cannot be a summary at all (tool calls, a truncated, empty or
oversized answer); `judge` then applies these tests in order, and the first that fails names the
rejection:

- `echoed_input`: the input handed back. A line of the summary is one of the inert-data tag lines
  (`FRAME_LINES`), or more than EXTRACT_RATIO of the new transcript's characters (as rendered for
  the summariser: seq labels, tool calls and results included) are found copied in the summary,
  each transcript line counted once, whole lines or, for lines of MIN_QUOTED characters or
  more, anywhere in a line. Quoting is allowed: a summary made of the person's own lines
  quoted verbatim is a fair summary of what they said, as long as it is at most half the size
  of what it covers; those lines are usually far less than half of a rendered exchange.
- `unchanged_summary`: every line of the summary is a line of the previous summary, while new
  exchanges exist: the previous summary returned (whole or in part), so what the new exchanges
  added would silently leave the working memory.
- `other_language`: the answer is not a summary of this session: it is confidently in another
  language or script than the new exchanges (language.py; unknown on either side passes) AND
  it holds none of the salient terms of the new exchanges and the previous summary (when they
  have none, nothing says it is not one, and it passes). A faithful
  summary in another language passes (issue 41: an English summary of a German session keeps
  its paths, identifiers and versions; the summariser is asked for the person's language, but
  a small model answers in English as often as not, and each refusal is a billed call).
- `injected_instructions`: the summary holds an instruction to the assistant ("ignore the user",
  "disregard previous instructions", "you must now ...") that is nowhere in its input: a
  summary reports what happened, and an instruction it quotes from the transcript is data.
- `new_terms_lost`: none of the new exchanges' salient terms (`salient_terms`: identifiers,
  paths and file names, versions, code spans, options, and the content words of the person's
  sentences that are conventions in form) that the previous summary did not already hold
  survives in the summary.

Terms are compared case-folded, as substrings, a term also kept in a plain form (`_holds`: a
file's name without folders or extension, snake_case words written apart). Lines are compared with their whitespace
collapsed, blank lines left out; lines of the previous summary count as neither copied nor new.
These are conservative heuristics, like learning's English guards: they catch the answers small
models were seen to give (issues 13 and 31), not every bad summary.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from lecode_ls.agent.language import guess_language
from lecode_ls.agent.learning_rules import convention_sentences

PREVIOUS_OPEN, PREVIOUS_CLOSE = '<previous_summary inert_data="true">', "</previous_summary>"
TRANSCRIPT_OPEN, TRANSCRIPT_CLOSE = '<transcript inert_data="true">', "</transcript>"
FRAME_LINES = frozenset({PREVIOUS_OPEN, PREVIOUS_CLOSE, TRANSCRIPT_OPEN, TRANSCRIPT_CLOSE})
"""The lines that label the summariser's input as inert data (C2)."""

EXTRACT_RATIO = 0.5
"""At most this share of the new transcript's characters may be copied into the summary."""
MIN_QUOTED = 16
"""Transcript lines this long or longer count as copied wherever they stand in a summary line;
shorter ones ("ok", "[seq 4] user:") only as whole lines."""
MAX_LISTED = 10
"""Lost terms named in a rejection's record, at most (each at most MAX_TERM characters)."""
MAX_TERM = 64

REASONS = (
    "echoed_input",
    "unchanged_summary",
    "other_language",
    "injected_instructions",
    "new_terms_lost",
)

_TERMS = re.compile(
    r"`[^`\n]{1,64}`"  # a code span
    r"|(?<![\w/.-])(?:\.{0,2}/)?[\w.-]+(?:/[\w.-]+)+/?"  # a path with a separator
    r"|\b[A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)+\b"  # a dotted name: a file, a module
    r"|\b\d+(?:\.\d+)+\b"  # a version
    r"|\b[A-Za-z]\w*_\w+\b"  # snake_case
    r"|\b[a-z]+[A-Z]\w*\b"  # camelCase
    r"|(?<![\w-])--?[a-z][\w-]+"  # an option
)
_STOP_WORDS = """
    about after again also always because been before being both cannot could does doing
    done each every from have here into just like make more most much must need never only
    other over prefer same should some such than that them then there these they this those
    through under until very want when where which while will with would your ours their
    always usually instead please project repo repository code
"""
_STOP = frozenset(_STOP_WORDS.split())
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]{3,}")
_INSTRUCTION = re.compile(
    r"\bignore\s+(?:all\s+|any\s+|the\s+|every\s+)?(?:previous\s+|prior\s+|above\s+|earlier\s+)?"
    r"(?:user|person|instructions?|rules|messages?|system|prompt|summary)\b"
    r"|\bdisregard\s+(?:all\s+|any\s+|the\s+)?(?:previous|prior|above|earlier|user|person|"
    r"instructions?|rules)\b"
    r"|\b(?:new|updated|real|actual)\s+instructions?\s*:"
    r"|\byou\s+(?:must|should|will|are\s+to)\s+(?:now\s+)?(?:ignore|obey|disregard|forget)\b"
    r"|\bforget\s+(?:all|everything|the\s+user|previous|prior)\b"
    r"|\bsystem\s+prompt\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Verdict:
    """How a summary fared: `reason` is None when it is kept, else the failing test's code."""

    reason: str | None
    new_terms: tuple[str, ...] = ()
    """The new exchanges' salient terms that the previous summary did not hold."""
    lost: tuple[str, ...] = ()
    """Of those, the ones the summary does not hold (at most MAX_LISTED named)."""


def _lines(text: str) -> list[str]:
    return [" ".join(line.split()) for line in text.splitlines() if line.strip()]


def _folded(text: str) -> str:
    return " ".join(text.split()).casefold()


def salient_terms(texts: Sequence[str], user_texts: Sequence[str]) -> list[str]:
    """The terms of the messages that a summary of them should keep (see the module), in order
    of first appearance, case-folded, each once."""
    found: dict[str, None] = {}
    for text in texts:
        for match in _TERMS.finditer(text):
            term = match[0].strip("`").strip(".,;:").casefold()
            if len(term) >= 3 and not term.startswith("seq "):
                found.setdefault(term)
    for text in user_texts:
        for sentence in convention_sentences(text):
            for word in _WORD.findall(sentence):
                word = word.casefold().strip("'-")
                if len(word) >= 4 and word not in _STOP:
                    found.setdefault(word)
    return list(found)


def _holds(text: str, term: str) -> bool:
    """Whether folded `text` holds `term`, or a plain form of it: a path's or a file's name
    without its folders and extension ("README.md" kept as "readme"), words joined by `_` or
    `-` written apart ("parse_args" as "parse args")."""
    forms = {term, term.replace("_", " "), term.replace("-", " ")}
    name = term.rstrip("/").rsplit("/", 1)[-1]
    forms |= {name, name.rsplit(".", 1)[0]}
    return any(len(form) >= 3 and form in text for form in forms)


def copied_share(summary: str, prior: str | None, transcript: str) -> float:
    """The share of the transcript's characters found copied in the summary (module docstring)."""
    previous = set(_lines(prior or ""))
    own = [line for line in _lines(summary) if line not in previous]
    whole = set(own)
    text = "\n".join(own)
    source = [line for line in dict.fromkeys(_lines(transcript)) if line not in previous]
    total = sum(len(line) for line in source)
    if total == 0:
        return 0.0
    copied = sum(
        len(line) for line in source if line in whole or (len(line) >= MIN_QUOTED and line in text)
    )
    return copied / total


def judge(
    summary: str,
    prior: str | None,
    transcript: str,
    texts: Sequence[str],
    user_texts: Sequence[str],
) -> Verdict:
    """The verdict on `summary` (module docstring). `transcript` is the new exchanges as the
    summariser read them; `texts` their user and assistant message texts, `user_texts` the
    person's alone."""
    own = _lines(summary)
    if any(line in FRAME_LINES for line in own):
        return Verdict("echoed_input")
    if copied_share(summary, prior, transcript) > EXTRACT_RATIO:
        return Verdict("echoed_input")

    held = _folded(prior or "")
    new_terms = tuple(t for t in salient_terms(texts, user_texts) if not _holds(held, t))
    kept_text = _folded(summary)
    lost = tuple(t for t in new_terms if not _holds(kept_text, t))
    listed = tuple(t[:MAX_TERM] for t in lost[:MAX_LISTED])

    if prior is not None and set(own) <= set(_lines(prior)):
        return Verdict("unchanged_summary", new_terms, listed)
    session_language = guess_language("\n".join(texts))
    summary_language = guess_language(summary)
    if session_language and summary_language and session_language != summary_language:
        known = salient_terms([*texts, prior or ""], user_texts)
        if known and not any(_holds(kept_text, term) for term in known):  # none: cannot tell
            return Verdict("other_language", new_terms, listed)
    given = _folded(f"{prior or ''}\n{transcript}")
    for match in _INSTRUCTION.finditer(summary):
        if _folded(match[0]) not in given:
            return Verdict("injected_instructions", new_terms, listed)
    if new_terms and len(lost) == len(new_terms):
        return Verdict("new_terms_lost", new_terms, listed)
    return Verdict(None, new_terms, listed)
