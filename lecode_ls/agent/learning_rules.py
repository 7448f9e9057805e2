"""Rule-based learning (issues 31, 41): the person's own sentences that state a lasting
convention become candidates, with no model involved, so learning works with models too small
to cite JSON; and a one-off request never does, since a fact is injected into every later
session and yesterday's task must not fill the prompt.

After an accepted compaction, every newly covered user message is cut into sentences (at line
breaks and at ". ", "! ", "? "; code fences, indented code and `>` quotes are skipped), and
`classify` gives each one a verdict: None for a lasting convention, else the reason code of the
first rule below that it fails, in this order.

1. `unsupported_script`: most of its letters are not Latin; the rules read English only.
2. `no_convention_form` (never counted): it does not read like a convention at all. Its form
   is a convention's when it opens (after "please", "also", "in this repo" and the like) with
   always, never, prefer, avoid, use, keep, don't, do not, make sure, stick to or follow; or
   its subject is we, I or our team with a verb of habit; or it says what something must or
   should (not) be; or it names a habit (step 8) or a policy ("our convention is"); or it has
   a lasting scope and opens with an instruction's verb ("Going forward, name ..."). A task
   verb opening it ("Run make check") gives it a form too, so that a request gets its code
   (step 5) rather than none.
3. `invalid_text`: longer than 512 bytes (A3's bound on a candidate's text; 512 itself passes).
4. `reported_preference`: someone else's words ("my colleague says we always ...", a sentence
   in quotation marks or under a "... wrote:" line: learning_requests.is_reported).
5. `one_off_request`: a question, or a request to the assistant (learning_requests.is_request:
   a task verb such as run, fix, read or write opening it, "tell me", "show me") with neither a
   project's scope nor a strong habit's ("every time", "whenever", "before every"): "Run make
   check" is one; "Run make check before pushing in this repo" and "Update the docs whenever
   you change a flag" are not.
6. `hypothetical` ("if we ...", "what if", "maybe", "would", "could", "I wonder"),
   `past_practice` ("we used to", "last week", "previously", "we always did", "we never got
   ...") and `observation` (a habit that says what happens, not what is done by choice: "we
   always forget to ...", "I always get confused by ...").
7. Task scope: `temporary_preference` for the seed's temporary markers ("for now", "today",
   "this session", "only", "until": learning_evidence.TEMPORARY), `task_scoped` for a task's
   own objects ("this PR", "this branch", "this loop", "this bug", "this fix", "here", "the
   fix", "the crash", "to reproduce ...", "do that").
8. `no_lasting_scope`: nothing in it outlives the task. A lasting scope is the project's ("in
   this repo", "for this project", "across the codebase", "from now on", "going forward"), the
   team's ("we" or "our team" with a verb in the present: "we squash commits"; "our
   convention"), or a habit's ("always", "never", "every time", "whenever", "by default", "as
   a rule", "prefer", "I like", "all tests", "every PR", or a rule about something in general:
   "Commit messages must be in English", not "The fix should be small").
9. `retracted_preference`: a later sentence of the same message takes it back ("never mind",
   "scratch that", "forget that", "actually, no", "I take that back", "not anymore").

Every code but `no_convention_form` is counted in the learning event's `reason_counts`,
except a plain request ("Fix the typo.", "Run make check.": `one_off_request` without a
convention's form): plain conversation is not a rejected candidate, and counting it would
turn every compaction's status into `rejected`.

A sentence that passes every rule is a candidate: the exact sentence as `text` and `quote`, its own message's seq as the source (the server cites the record itself:
nothing is copied from a model), kind `explicit_user_preference`, and it goes through the same
evidence checks as a model's candidate (learning_evidence.check_candidate). What the rules
alone propose is a proposal for the person to accept, not a fact, unless `[memory] rules_learn`
says "remember" (learning.py).

It is a small English heuristic that errs towards leaving sentences out: a convention worded
as a bare instruction ("Use pytest for tests.") has no lasting scope and is not proposed; a
statement that only looks like a convention can still pass ("We use a lot of memory in this
repo."), which is why the default leaves the person the last word. bench/learning_rules.py
measures it on a labelled set of 200+ sentences.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Mapping
from typing import Any

from lecode_ls.agent.learning_evidence import TEMPORARY, TEXT_MAX_BYTES
from lecode_ls.agent.learning_requests import DURABLE, QUOTES, TASK_VERBS, is_reported, is_request

MAX_RULE_CANDIDATES = 16
"""Sentences one compaction's rules may propose, at most (the rest are left out)."""
MIN_WORDS = 3

RULE_CODES = (
    "invalid_text",
    "unsupported_script",
    "reported_preference",
    "one_off_request",
    "hypothetical",
    "past_practice",
    "observation",
    "temporary_preference",
    "task_scoped",
    "no_lasting_scope",
    "retracted_preference",
)
"""The codes `classify` gives and the learning event counts (see the module, steps 1-9)."""
NO_FORM = "no_convention_form"
"""The verdict on plain conversation: never counted."""

_LEADING = re.compile(
    r"^(?:please|pls|kindly|also|and|so|then|ok|okay|note|remember|for now|for the moment|"
    r"today|this time|temporarily|until further notice|in this (?:repo|repository|project|"
    r"codebase)|for this (?:repo|repository|project|codebase)|from now on|going forward|"
    r"as a rule|in general|by default|in our (?:team|repo|project|codebase|company))\b"
    r"[\s,:;.!-]*",
    re.IGNORECASE,
)
"""Words before a convention that do not change its form (a temporary opener is then caught
by its own rule, with its code)."""
_OPENERS = re.compile(
    r"^(?:always|never|prefer|avoid|use|keep|don't|dont|do not|make sure|stick to|follow)\b",
    re.IGNORECASE,
)
_HABIT_VERBS = (
    r"use|uses|prefer|write|keep|run|follow|target|name|put|format|indent|commit|test|avoid|"
    r"stick|squash|merge|rebase|deploy|release|tag|pin|vendor|document|review|require|sign|"
    r"build|lint|store|log|like|want|do not|don't|dont|never|always"
)
_SUBJECT = re.compile(
    r"^(?:we|i|our team|the team)\s+(?:(?:always|never|usually|generally|normally|only|also|"
    r"are always|are never)\s+)?(?:" + _HABIT_VERBS + r")s?\b",
    re.IGNORECASE,
)
_MODAL = re.compile(
    r"^(?!you\b)(?:[\w`'./-]+\s+){1,5}(?:must|should|shall|needs? to|has to|have to)\s+"
    r"(?:always\s+|never\s+|not\s+)?"
    r"(?:be|use|go|live|stay|pass|run|have|start|end|follow|target|match|come|get|include)\b",
    re.IGNORECASE,
)
_ONE_OFF = re.compile(r"\b(?:tell|show|give|send|let)\s+me\b|\?", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")

_HYPOTHETICAL = re.compile(
    r"^(?:if|what if|suppose|imagine|maybe|perhaps|i wonder|i think|i guess|should we|"
    r"shall we|could we|would it|might)\b|\b(?:would|could|might|hypothetically)\b",
    re.IGNORECASE,
)
_PAST = re.compile(
    r"\b(?:used to|back then|last (?:week|time|year|month|sprint|release)|previously|"
    r"in the past|yesterday|earlier today|at my (?:old|last|previous) (?:job|company|team)|"
    r"(?:we|i) (?:always |never |usually |often )?(?:(?!(?:need|proceed|exceed|succeed|feed|"
    r"seed|speed)\b)\w+ed|did|had|were|was|wrote|ran|kept|"
    r"got|went|made|saw|took|found|came|knew|thought|broke|built|forgot|left|told|said))\b",
    re.IGNORECASE,
)
_OBSERVATION = re.compile(
    r"^(?:we|i|our team|the team)\s+(?:(?:always|never|usually|often|sometimes|keep)\s+)?"
    r"(?:forget|forgets|get|gets|struggle|struggles|wonder|miss|misses|lose|loses|break|"
    r"breaks|mess|end up|run into|have trouble|fail|fails|hit|see|notice|confuse)\b",
    re.IGNORECASE,
)
"""A habit that says what happens, not what is done by choice ("We always forget ...")."""
_STRONG_HABIT = re.compile(
    r"\b(?:every time|each time|whenever|before every|after every|on every)\b", re.IGNORECASE
)
"""Habitual wording that makes an instruction opening with a task verb a convention."""
_TASK = re.compile(
    r"\b(?:this|that|the current|my|your) (?:pr|pull request|mr|merge request|branch|loop|"
    r"bug|crash|fix|patch|change|commit|ticket|issue|task|demo|run|session|chat|"
    r"conversation|experiment|spike|function|file|test run|iteration|refactor)\b"
    r"|\bhere\b|\bthe (?:fix|crash|bug|demo|failing test|patch|hotfix|repro)\b"
    r"|\bto (?:reproduce|repro|debug|investigate|diagnose|fix|track down|narrow down)\b"
    r"|\bthis (?:one|week|sprint|morning|afternoon|evening)\b|\bfor the (?:demo|release)\b"
    r"|\b(?:do|did|doing|does) (?:that|this|it)\b"
    r"|\b(?:this|these) (?!(?:project|projects|repo|repos|repository|repositories|codebase|"
    r"code base|team|company|org|organisation|organization|monorepo|service|is|was|means|way|"
    r"rule|convention|style|standard|policy)\b)[a-z][\w-]*",
    re.IGNORECASE,
)
_PROJECT = re.compile(
    r"\b(?:in|for|across|throughout) (?:this|our|all our|all of our) (?:whole )?"
    r"(?:project|projects|repo|repos|repository|repositories|codebase|code base|code|team|"
    r"company|monorepo|org|organisation|organization)\b"
    r"|\bour (?:team|convention|conventions|style|policy|rule|rules|standard|standards|"
    r"guideline|guidelines|codebase|repo|project|ci|house style)\b"
    r"|\bthe (?:team|company)\b"
    r"|\b(?:the|a|our) (?:convention|rule|policy|house style|team rule) (?:is|says)\b",
    re.IGNORECASE,
)
_HABIT = re.compile(
    r"\b(?:always|never|every time|each time|whenever|by default|as a rule|in general|"
    r"generally|usually|normally|as a convention|no matter|at all times|ever)\b"
    r"|\b(?:every|each|all(?: new| our| public)?)\s+(?:time|commits?|prs?|pull requests?|"
    r"tests?|functions?|files?|modules?|class(?:es)?|methods?|changes?|releases?|endpoints?|"
    r"migrations?|dependenc(?:y|ies)|branch(?:es)?|new|public|merge requests?|scripts?)\b"
    r"|^stick to\b|^(?:prefer|avoid)\s+(?!(?:the|this|that|these|those|my|your)\b)"
    r"|\bi (?:prefer|like|love|hate|dislike|don't like|do not like|always|never|want all)\b",
    re.IGNORECASE,
)
_TEAM = re.compile(r"^(?:we|our team|the team)\s+(?!need|want|have to|should|must|can|will)"
                   r"(?:(?:always|never|usually|generally|normally|only|also|are)\s+)?"
                   r"(?:" + _HABIT_VERBS + r")s?\b", re.IGNORECASE)  # fmt: skip
_GENERIC_SUBJECT = re.compile(
    r"^(?!(?:the|this|that|these|those|it|its|my|your|his|her|their|i|you|we|he|she|they|"
    r"there)\b)[\w`'./-]+",
    re.IGNORECASE,
)
_RETRACT = re.compile(
    r"\b(?:never ?mind|nevermind|scratch that|forget (?:that|it|what i said|about that)|"
    r"ignore (?:that|what i said|my last)|i take (?:that|it) back|on second thought|"
    r"disregard (?:that|this|what i said)|not anymore|no longer true|that was wrong|"
    r"that's not right)\b|^(?:actually,? no|no,? (?:we|i) (?:don't|do not))\b",
    re.IGNORECASE,
)


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


def _plain(sentence: str) -> str:
    return " ".join(sentence.split()).replace("\u2019", "'").strip(QUOTES + " ")


def _bare(text: str) -> str:
    """The sentence without the words before it that do not change its form."""
    while (stripped := _LEADING.sub("", text, count=1)) != text:
        text = stripped
    return text


def is_convention(sentence: str) -> bool:
    """Whether a sentence has a convention's form (step 3, without task verbs), on its own or
    after its first clause ("According to the docs, always pin versions."). The summary check
    keeps such sentences' words; `classify` decides whether one is a lasting convention."""
    text = _plain(sentence)
    if DURABLE.search(text):
        return True
    _, comma, after = text.partition(", ")
    return _form(text) or bool(comma and _form(after))


def _form(text: str) -> bool:
    rest = _bare(text)
    return bool(
        _OPENERS.match(rest) or _SUBJECT.match(rest) or _MODAL.match(rest) or _HABIT.search(rest)
    )


def _latin(sentence: str) -> bool:
    """Whether most of the sentence's letters are Latin (accents included)."""
    letters = [c for c in sentence if c.isalpha()]
    latin = sum(1 for c in letters if unicodedata.name(c, "").startswith("LATIN"))
    return not letters or latin * 2 > len(letters)


def _lasting(text: str) -> bool:
    """Step 8: a project's, a team's or a habit's scope."""
    rest = _bare(text)
    general_rule = bool(_MODAL.match(rest) and _GENERIC_SUBJECT.match(rest))
    return bool(
        DURABLE.search(text)
        or _PROJECT.search(text)
        or _HABIT.search(rest)
        or _TEAM.match(rest)
        or general_rule
    )


_IMPERATIVES = frozenset(
    re.findall(
        r"\w+",
        "name put sort place prefix suffix wrap split group mark tag annotate declare define "
        "import export return raise throw catch handle pin lock comment document type test "
        "squash rebase sign review",
    )
)
"""Verbs that open a convention worded as an instruction, once it has a lasting scope
("Going forward, name test files test_<module>.py.")."""
_POLICY = re.compile(
    r"\b(?:the|a|our) (?:convention|rule|policy|house style|team rule|style) (?:is|says)\b",
    re.IGNORECASE,
)


def classify(message: str, start: int, end: int) -> str | None:
    """The verdict on the sentence at [start, end) of `message`: None when it is a lasting
    convention of the person's own, else the reason code of the first rule it fails (the
    module docstring, steps 1-9)."""
    sentence = message[start:end]
    if not _latin(sentence):
        return "unsupported_script"
    text = _plain(sentence)
    bare = _bare(text)
    rule = bool(_MODAL.match(bare) and _GENERIC_SUBJECT.match(bare))  # "Tests must pass ..."
    first = re.match(r"[A-Za-z']+", bare)
    verb = "" if first is None else first[0].lower()
    task_verb = verb in TASK_VERBS and not rule and not _OPENERS.match(bare)
    lasting = _lasting(text)
    _, comma, after = text.partition(", ")
    form = _form(text) or bool(comma and _form(after)) or bool(_POLICY.search(text))
    form = form or (lasting and verb in _IMPERATIVES)
    if len(text.split()) < MIN_WORDS or not (form or task_verb):
        return NO_FORM
    if len(sentence.encode("utf-8", "surrogatepass")) > TEXT_MAX_BYTES:
        return "invalid_text"
    if is_reported(message, start, end):
        return "reported_preference"
    # A task verb with a project's scope or a strong habit's is a convention ("Always run make
    # check before pushing in this repo", "Update the docs whenever you change a flag").
    scoped = bool(DURABLE.search(text) or _PROJECT.search(text) or _STRONG_HABIT.search(text))
    request = is_request(sentence) and not rule and not _OPENERS.match(bare) and not scoped
    if request or _ONE_OFF.search(text) or (task_verb and not lasting):
        return "one_off_request"
    if _HYPOTHETICAL.search(text):
        return "hypothetical"
    if _PAST.search(text):
        return "past_practice"
    if _OBSERVATION.match(bare):
        return "observation"
    if TEMPORARY.search(text):
        return "temporary_preference"
    if _TASK.search(text):
        return "task_scoped"
    if not lasting:
        return "no_lasting_scope"
    later = message[end:]
    if any(_RETRACT.search(_plain(later[a:b])) for a, b in sentences(later)):
        return "retracted_preference"
    if _RETRACT.search(text):
        return "retracted_preference"
    return None


def convention_sentences(text: str) -> list[str]:
    """The sentences of a message that are conventions in form (used by the summary check for
    the words a summary should keep)."""
    return [text[a:b] for a, b in sentences(text) if is_convention(text[a:b])]


def rule_candidates(
    messages: dict[int, dict[str, Any]],
) -> tuple[list[dict[str, Any]], list[str]]:
    """The candidates the rules propose from the newly covered user messages (seq -> record),
    in seq order, at most MAX_RULE_CANDIDATES; and the reason code of every other sentence but
    plain conversation (`classify`)."""
    candidates: list[dict[str, Any]] = []
    rejected: list[str] = []
    for seq in sorted(messages):
        record = messages[seq]
        content = record.get("content")
        if record.get("role") != "user" or not isinstance(content, str):
            continue
        for start, end in sentences(content):
            code = classify(content, start, end)
            if code == NO_FORM or (
                code == "one_off_request" and not is_convention(content[start:end])
            ):
                continue  # plain conversation, or a plain request: nothing to count
            if code is not None:
                rejected.append(code)
            elif len(candidates) < MAX_RULE_CANDIDATES:
                sentence = content[start:end]
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


TASK_CODES = frozenset({"task_scoped", "hypothetical", "past_practice", "retracted_preference"})
"""What the rules know is no lasting convention, whoever proposed it."""


def task_scope(candidate: dict[str, Any], messages: Mapping[int, dict[str, Any]]) -> str | None:
    """A model's explicit preference whose quote carries a task's scope, is hypothetical, past
    practice or taken back later in its message: that rule's code, else None. The model judges
    what a convention is; the rules only veto what they know is not one (A4: "Keep the fix
    small." is about one fix). A request stays the model's to propose (learning.py). Called
    once `check_candidate` accepted the candidate, so its quote is in its user message."""
    if candidate["kind"] != "explicit_user_preference":
        return None
    content = messages[candidate["source_seqs"][0]]["content"]
    at = content.index(candidate["quote"])
    code = classify(content, at, at + len(candidate["quote"]))
    return code if code in TASK_CODES else None
