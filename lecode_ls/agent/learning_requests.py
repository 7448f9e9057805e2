"""Is a quoted user sentence a request or a question rather than a stated convention? (A4, A6)

Exact quoting proves where a preference came from, not that it is one: against a real small
model (issue 13), "Read pyproject.toml and tell me its requires-python line." passed every
evidence check as an `explicit_user_preference` and was injected into every later request. A
quote this check calls a request is not remembered: learning.py leaves it as a proposal for
review (shown, never injected), so a genuine preference worded like a task is not lost.

Like the temporary-marker guard, this is a small, conservative English heuristic, not semantic
proof. A quote is a request when, after leading politeness and filler ("please", "can you",
"could you", "I want you to", "also", "now", ...), it
- ends with "?" (a question), or opens with a question word (what, why, how, which, ...), or
- opens with a task verb addressed to the assistant (read, tell, show, run, fix, write, add,
  open, find, explain, ...),
unless it scopes itself to the project for good ("for this project", "in this repo", "from now
on", ...), which makes "Run the tests with pytest -x in this repo." a convention. A question is
a request whatever its scope. Conventions open with other words: "Always use tabs.", "Use
pytest for tests.", "Never commit uv.lock.", "We use tabs.", "Prefer pathlib.", "Don't ...",
"Keep ...". It errs towards requests: a convention that opens with a task verb ("Write commit
messages in English.") is proposed, not learned; a task worded as a convention is missed.

`is_reported` (issue 31) tells a preference in form that gives someone else's words: "My
colleague says we always use spaces." names another speaker ("my colleague says", "according
to", "they said", ...), and a sentence in quotation marks or under a "... wrote:" line quotes
one. Such a quote is rejected (`reported_preference`), whoever proposed it.
"""

from __future__ import annotations

import re

# Leading words that do not change what the sentence asks: politeness, fillers, and the
# phrasings that address the assistant. Taken off repeatedly, longest first.
_LEADING = re.compile(
    r"^(?:please|pls|kindly|hey|hi|ok|okay|so|and|also|then|now|next|first|finally|just|"
    r"(?:can|could|would|will) you(?: please)?|"
    r"i(?:'d| would) like you to|i (?:want|need) you to|let's|let us)\b[\s,:;.!-]*",
    re.IGNORECASE,
)

QUESTION_WORDS = frozenset({"what", "why", "how", "which", "who", "whom", "whose", "where"})

_TASK_VERBS = """
    read tell show run fix write add open find explain list check make create delete remove
    update change give summarize summarise describe look search grep print display rename move
    refactor implement build install bump edit modify rewrite replace generate debug review
    compare convert translate count compute calculate try help investigate analyze analyse get
    fetch download upload deploy commit push merge revert undo clean format lint send paste copy
    save load parse scan inspect verify confirm execute start stop restart close answer
"""
TASK_VERBS = frozenset(_TASK_VERBS.split())

# Words that scope an imperative to the project for good: a convention, not a task.
DURABLE = re.compile(
    r"\b(?:(?:for|in|across) (?:this|the|our) (?:project|repo|repository|codebase|code base)|"
    r"from now on|going forward|in (?:the )?future)\b",
    re.IGNORECASE,
)


def is_request(quote: str) -> bool:
    """Whether `quote` reads as a request or a question to the assistant (see the module)."""
    text = " ".join(quote.split()).replace("\u2019", "'")  # a typographic apostrophe too
    if text.rstrip(" \"')]*_`\u201d").endswith("?"):
        return True
    rest = text
    while True:
        stripped = _LEADING.sub("", rest, count=1)
        if stripped == rest:
            break
        rest = stripped
    match = re.match(r"[A-Za-z']+", rest)
    first = match[0].lower() if match else ""
    if first in QUESTION_WORDS:
        return True
    return first in TASK_VERBS and DURABLE.search(text) is None


# Someone else's words (issue 31): a preference in form that reports another speaker.
_REPORTED = re.compile(
    r"\b(?!our\s+team\b)(?:my|our|a|the|his|her|their)\s+(?:colleague|co-?worker|teammate|team\s*mate|boss|"
    r"manager|lead|friend|client|customer|reviewer|mentor|professor|teacher|maintainer|cto|"
    r"senior|partner|wife|husband|team|company|docs?|documentation|book|guide|article|blog)s?\b"
    r"[^.!?\n]{0,40}?\b(?:says?|said|thinks?|told|tells|wants?|insists?|claims?|prefers?|"
    r"recommends?|suggests?|believes?|writes?|wrote|asked|asks)\b"
    r"|\b(?:he|she|they|someone|somebody|people|everyone|others)\s+(?:says?|said|told|tells|"
    r"thinks?|claims?|insists?|wrote|writes)\b"
    r"|\baccording\s+to\b"
    r"|\b(?:says?|said|recommends?|insists?|wrote)\s+(?:that\s+|to\s+)?"
    r"(?:we|you|i|they|always|never|every|all)\b",
    re.IGNORECASE,
)
QUOTES = "\"'\u201c\u201d\u2018\u2019\u00ab\u00bb"
"""Quotation marks (a backtick opens code, not a quotation)."""


def is_reported(message: str, start: int, end: int) -> bool:
    """Whether the sentence at [start, end) of `message` gives someone else's words: it names
    another speaker, stands in quotation marks, or follows a line that introduces a quotation
    ("My colleague wrote:")."""
    sentence = message[start:end]
    if _REPORTED.search(sentence):
        return True
    before = message[:start].rstrip(" \t")
    if before and before[-1] in QUOTES:
        return True
    if sentence.strip()[:1] in QUOTES:
        return True
    line_start = message.rfind("\n", 0, start) + 1
    if _REPORTED.search(message[line_start:start]):
        return True  # "My colleague says: we always ..." in the same line
    previous = message[:line_start].rstrip().rsplit("\n", 1)[-1] if line_start else ""
    return previous.endswith(":") and bool(_REPORTED.search(previous))
