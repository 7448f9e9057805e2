"""What lecode-ls adds to the seed's fixed lists (memory.md): the learning reason codes, the
learning statuses and the fact statuses it names as fixed, and the members later features added.

memory.md calls these lists fixed, so a client written from it may not know a member outside
them. Each addition is documented here, in one table rendered into protocol.md, and a test fails
when the code has a member that is neither the seed's nor described here (issue 41).
"""

from __future__ import annotations

from typing import get_args

from lecode_ls.memory.learning_status import REASON_CODES, Status
from lecode_ls.server.facts.messages import FactStatus

SEED_REASON_CODES = frozenset(
    {
        "response_schema",
        "invalid_json",
        "output_too_large",
        "unexpected_tool_calls",
        "incomplete_response",
        "candidate_schema",
        "invalid_text",
        "invalid_source",
        "invalid_preference_source",
        "temporary_preference",
        "exact_text_mismatch",
        "invalid_preference",
        "invalid_conflicts",
        "unverified_project_evidence",
        "stale_context",
        "extraction_error",
    }
)
"""memory.md's reason codes (its "Codes" table)."""
SEED_LEARNING_STATUSES = frozenset(
    {"no_candidates", "rejected", "learned", "proposed", "failed", "stale"}
)
SEED_FACT_STATUSES = frozenset({"valid", "missing", "stale", "hidden", "unverified"})

EXTENSIONS: tuple[tuple[str, str, str], ...] = (
    (
        "reason code",
        "reported_preference",
        'The quote is someone else\'s words ("my colleague says we always ...", a quoted '
        'sentence, a line under "... wrote:"), not the person\'s own preference.',
    ),
    (
        "reason code",
        "shared_by_team",
        "The checkout's shared team facts (`.lecode/facts/`) already say this text; nothing is "
        "learned twice.",
    ),
    (
        "reason code",
        "one_off_request",
        'A request for one change ("Run make check", "Fix the typo"), with no lasting scope.',
    ),
    (
        "reason code",
        "task_scoped",
        'Scoped to the task at hand ("this PR", "this loop", "here", "the fix", "to reproduce '
        "...\"): true today, not a convention. Also vetoes a model's candidate.",
    ),
    (
        "reason code",
        "hypothetical",
        'A condition or a question about what might be ("if we used tabs ...", "should we ...").',
    ),
    (
        "reason code",
        "past_practice",
        'What was done, not what is done ("we used to ...", "last time we ...").',
    ),
    (
        "reason code",
        "observation",
        'A remark about what happens ("we always forget to ..."), not a rule to follow.',
    ),
    (
        "reason code",
        "no_lasting_scope",
        "A convention in form with nothing that makes it outlive the task (no project, team or "
        "habit wording): left for the model to judge.",
    ),
    (
        "reason code",
        "retracted_preference",
        'The same message takes the sentence back later ("... actually, ignore that").',
    ),
    (
        "reason code",
        "unsupported_script",
        "A sentence in a script the rules do not read (they read English only); the model "
        "may still propose it.",
    ),
    (
        "fact status",
        "retired",
        "A valid fact the person retired (`lecode/facts/retire`): its text and evidence are "
        "still shown and recallable, but it is not injected nor offered to learning; "
        "`lecode/facts/restore` brings it back.",
    ),
)
"""(list, member, meaning) of every member beyond the seed's lists."""


def undocumented() -> set[str]:
    """Members the code has that are neither the seed's nor in EXTENSIONS (a test keeps this
    empty)."""
    documented = {member for _, member, _ in EXTENSIONS}
    beyond = (
        (set(REASON_CODES) - SEED_REASON_CODES)
        | (set(get_args(Status)) - SEED_LEARNING_STATUSES)
        | (set(get_args(FactStatus)) - SEED_FACT_STATUSES)
    )
    return beyond - documented


def render() -> str:
    rows = "\n".join(f"| {kind} | `{member}` | {meaning} |" for kind, member, meaning in EXTENSIONS)
    return f"""## Extensions of the seed's fixed lists

memory.md fixes the learning statuses (`no_candidates`, `rejected`, `learned`, `proposed`,
`failed`, `stale`), the learning reason codes and the fact statuses (`valid`, `missing`, `stale`,
`hidden`, `unverified`). lecode-ls keeps every one of them with its meaning and adds only the
members below; a client that does not know one may treat it as the nearest seed member (a reason
code as a rejection, `retired` as `valid` but not injected). A learning candidate may name its
conflicting facts `conflicts`, as memory.md writes it, or `supersedes`, as the server's own
extraction prompt asks; both mean the same, and a candidate naming both is refused
(`candidate_schema`).

| list | member | meaning |
|---|---|---|
{rows}
"""
