"""Rule-based learning (issue 31): the person's own sentences that state a convention become
candidates, with no model involved, so learning works with models too small to cite JSON.

After an accepted compaction, every newly covered user message is cut into sentences (at line
breaks and at ". ", "! ", "? "; code fences, indented code and `>` quotes are skipped). A
sentence is a candidate when

1. it is a convention in form (`is_convention`): it opens with always, never, prefer, avoid,
   use, keep, don't, do not, make sure, stick to or follow (after "please" and the like); or its
   subject is we, I or our team with a verb of habit (use, prefer, write, keep, run, follow,
   target, name, put, format, indent, commit, test, always, never, don't), or "we always" or
   "we never" stands anywhere in it; or it says what
   something of the project must or should (not) be; or it scopes itself to the project for good
   ("in this repo", "for this project", "from now on");
2. and it passes the existing guards: not a request or a question (learning_requests.is_request,
   and no "tell me", "show me" or "?" anywhere), no temporary marker (learning_evidence.TEMPORARY:
   `temporary_preference`), no correction wording, and not someone else's words (`is_reported`:
   "my colleague says we always ...", a sentence in quotation marks or under a "... wrote:" line:
   `reported_preference`).

A candidate is the exact sentence as `text` and `quote`, its own message's seq as the source
(the server cites the record itself: nothing is copied from a model), kind
`explicit_user_preference`, and it goes through the same evidence checks as a model's candidate
(learning_evidence.check_candidate). A sentence that fails step 1 is not a candidate and counts
nothing; one that passes it and fails a guard counts its guard's reason code.

It is a small English heuristic, like the guards it reuses: it errs towards leaving sentences out
(a convention worded as a task, "Write commit messages in English.", is not learned), and a
statement that only looks like a convention ("We use a lot of memory here.") can still pass.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from lecode_ls.agent.learning_evidence import CORRECTION, TEMPORARY, TEXT_MAX_BYTES
from lecode_ls.agent.learning_requests import DURABLE, QUOTES, is_reported, is_request

MAX_RULE_CANDIDATES = 16
"""Sentences one compaction's rules may propose, at most (the rest are left out)."""
MIN_WORDS = 3

_LEADING = re.compile(
    r"^(?:please|pls|kindly|also|and|so|then|ok|okay|note|remember|for now|for the moment|"
    r"today|this time|temporarily|until further notice)\b[\s,:;.!-]*",
    re.IGNORECASE,
)
"""Words before a convention that do not change its form (a temporary opener is then caught
by the temporary guard, with its code)."""
_OPENERS = re.compile(
    r"^(?:always|never|prefer|avoid|use|keep|don't|dont|do not|make sure|stick to|follow)\b",
    re.IGNORECASE,
)
_SUBJECT = re.compile(
    r"^(?:we|i|our team)\s+(?:(?:always|never|usually|generally|normally|only|also)\s+)?"
    r"(?:use|prefer|write|keep|run|follow|target|name|put|format|indent|commit|test|avoid|"
    r"always|never|don't|do not|stick)\b",
    re.IGNORECASE,
)
_HABIT = re.compile(
    r"\b(?:we|i|our team)\s+(?:always|never|usually|generally|normally)\b", re.IGNORECASE
)
_MODAL = re.compile(
    r"^(?!you\b)(?:[\w`'.-]+\s+){1,5}(?:must|should|shall)\s+(?:always\s+|never\s+|not\s+)?"
    r"(?:be|use|go|live|stay|pass|run|have|start|end|follow|target|match|come)\b",
    re.IGNORECASE,
)
_ONE_OFF = re.compile(r"\b(?:tell|show|give|send|let)\s+me\b|\?", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def sentences(text: str) -> Iterator[tuple[int, int]]:
    """The (start, end) spans of the prose sentences of a message, in order: exact slices, so a
    sentence is always a contiguous substring of the message. Lines inside ``` fences, indented
    code and `>` quotes are left out."""
    fenced = False
    offset = 0
    for line in text.splitlines(keepends=True):
        start, body = offset, line.rstrip("\r\n")
        offset += len(line)
        stripped = body.strip()
        if stripped.startswith("```"):
            fenced = not fenced
            continue
        if fenced or not stripped or body.startswith(("    ", "\t")) or stripped.startswith(">"):
            continue
        position = 0
        for gap in [*_SENTENCE_END.finditer(body), None]:
            end = gap.start() if gap is not None else len(body)
            piece = body[position:end]
            if piece.strip():
                lead = len(piece) - len(piece.lstrip())
                yield start + position + lead, start + position + len(piece.rstrip())
            if gap is not None:
                position = gap.end()


def is_convention(sentence: str) -> bool:
    """Whether a sentence states a convention in form (the module docstring, step 1), on its
    own or after its first clause ("According to the docs, always pin versions.")."""
    text = " ".join(sentence.split()).replace("\u2019", "'").strip(QUOTES + " ")
    if DURABLE.search(text):
        return True
    _, comma, after = text.partition(", ")
    return _form(text) or bool(comma and _form(after))


def _form(text: str) -> bool:
    rest = text
    while (stripped := _LEADING.sub("", rest, count=1)) != rest:
        rest = stripped
    return bool(
        _OPENERS.match(rest) or _SUBJECT.match(rest) or _MODAL.match(rest) or _HABIT.search(rest)
    )


def convention_sentences(text: str) -> list[str]:
    """The sentences of a message that are conventions in form (used by the summary check for
    the words a summary should keep)."""
    return [text[a:b] for a, b in sentences(text) if is_convention(text[a:b])]


def rule_candidates(
    messages: dict[int, dict[str, Any]],
) -> tuple[list[dict[str, Any]], list[str]]:
    """The candidates the rules propose from the newly covered user messages (seq -> record),
    in seq order, at most MAX_RULE_CANDIDATES; and the reason code of every sentence that was a
    convention in form but failed a guard."""
    candidates: list[dict[str, Any]] = []
    rejected: list[str] = []
    for seq in sorted(messages):
        record = messages[seq]
        content = record.get("content")
        if record.get("role") != "user" or not isinstance(content, str):
            continue
        for start, end in sentences(content):
            sentence = content[start:end]
            if len(sentence.split()) < MIN_WORDS or not is_convention(sentence):
                continue
            if len(sentence.encode("utf-8", "surrogatepass")) > TEXT_MAX_BYTES:
                rejected.append("invalid_text")
            elif is_request(sentence) or _ONE_OFF.search(sentence) or CORRECTION.match(sentence):
                continue  # a task or a question: not a convention, and nothing to count
            elif TEMPORARY.search(" ".join(sentence.split())):
                rejected.append("temporary_preference")
            elif is_reported(content, start, end):
                rejected.append("reported_preference")
            elif len(candidates) < MAX_RULE_CANDIDATES:
                candidates.append(
                    {
                        "text": sentence,
                        "source_seqs": [seq],
                        "kind": "explicit_user_preference",
                        "quote": sentence,
                        "supersedes": [],
                        "proposal": False,
                    }
                )
    return candidates, rejected
