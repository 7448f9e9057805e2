"""The evidence side of automatic learning (A2-A5, A7, A10): what one extraction call is shown,
the snapshots captured before it, and the checks each candidate of its answer must pass.

`prepare` assembles the input (existing valid facts for comparison, then the newly covered
exchanges) and captures the evidence it offers; `check_candidate` returns the first failing
check's reason code, or the candidate's captured source. learning.py runs the call and
promotes what passes. Nothing here writes.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lecode_ls.agent.learning_requests import is_reported
from lecode_ls.errors import LecodeError
from lecode_ls.memory.anchors import fact_path_line
from lecode_ls.memory.facts import MAX_QUERY_CHARS
from lecode_ls.memory.injection import similar_valid_facts
from lecode_ls.memory.learning_status import KINDS
from lecode_ls.memory.sessions import (
    MAX_POSITIONS,
    SourceRef,
    agent_injected,
    source_snapshot,
    well_formed_calls,
)
from lecode_ls.runtime import Runtime
from lecode_ls.tools.read import number_line

PAYLOAD_MAX_BYTES = 16_000
TEXT_MAX_BYTES = 512
COMPARISON_FACTS = 50
COMPARISON_MAX_BYTES = 4096
CANDIDATE_KEYS = frozenset({"text", "source_seqs", "kind", "quote", "supersedes", "proposal"})
CONFLICTS = "conflicts"
"""memory.md's name for the field the server's prompt calls `supersedes`: the same meaning,
accepted as the seed writes it (issue 41). A candidate naming both is refused."""

# A conservative English heuristic (A-spec): words that scope a preference to now.
TEMPORARY = re.compile(
    r"\b(for now|this task|this time|today|tonight|tomorrow|right now|for the moment|"
    r"temporarily|temporary|only|until|this session|just this|at the moment)\b",
    re.IGNORECASE,
)
CORRECTION = re.compile(r"^\s*correction\s*:", re.IGNORECASE)
# One Markdown code fence around the whole answer: the opening line (an optional `json` info
# string, nothing else), the body, the closing line; only whitespace outside.
FENCED = re.compile(
    r"\A\s*```(?:json)?[ \t]*\r?\n(?P<body>.*)\n[ \t]*```\s*\Z", re.DOTALL | re.IGNORECASE
)


@dataclass(frozen=True)
class Captured:
    """The evidence supplied to one extraction: singleton and exchange-range snapshots."""

    singles: dict[int, SourceRef]
    ranges: dict[tuple[int, ...], SourceRef]
    exchanges: list[list[dict[str, Any]]]
    messages: dict[int, dict[str, Any]]
    facts: dict[int, int]  # the comparison facts supplied: ID -> revision


def _snapshots(
    runtime: Runtime, session_id: str, groups: list[list[dict[str, Any]]], facts: dict[int, int]
) -> Captured:
    """Snapshots of exactly the exchanges the extractor is shown, taken (and already durable:
    every append is fsynced) before the model is asked. Blocking."""
    singles: dict[int, SourceRef] = {}
    ranges: dict[tuple[int, ...], SourceRef] = {}
    messages: dict[int, dict[str, Any]] = {}
    for group in groups:
        seqs = [r["seq"] for r in group if r["kind"] == "message"]
        for record in group:
            if record["kind"] == "message" and record["role"] in ("user", "assistant"):
                seq = record["seq"]
                messages[seq] = record
                with contextlib.suppress(LecodeError):
                    singles[seq] = source_snapshot(
                        runtime.sessions, session_id, seq, seq, exclusions=runtime.facts
                    )
        with contextlib.suppress(LecodeError):
            ref = source_snapshot(
                runtime.sessions, session_id, seqs[0], seqs[-1], exclusions=runtime.facts
            )
            ranges[ref.seqs] = ref
    return Captured(singles, ranges, groups, messages, facts)


def capture_messages(
    runtime: Runtime,
    session_id: str,
    seqs: set[int],
    messages: dict[int, dict[str, Any]],
    texts: list[str],
) -> Captured:
    """Singleton snapshots of the messages at `seqs` (`messages` holds their records): the
    evidence the rules' candidates are checked against (learning_rules.py), taken before any
    model call, with the facts most similar to the candidates' `texts` to compare them with (a
    near-duplicate becomes a proposed correction, as for the model's). A message that cannot be
    captured (excluded, changed) has no snapshot, so its candidate fails `invalid_source`.
    Blocking."""
    singles: dict[int, SourceRef] = {}
    for seq in sorted(seqs):
        with contextlib.suppress(LecodeError):
            singles[seq] = source_snapshot(
                runtime.sessions, session_id, seq, seq, exclusions=runtime.facts
            )
    said = " ".join(texts)[:MAX_QUERY_CHARS]
    similar = similar_valid_facts(runtime, said, COMPARISON_FACTS) if texts else []
    facts = {fact.id: fact.revision for fact in similar}
    return Captured(singles, {}, [], {s: messages[s] for s in seqs if s in messages}, facts)


def prepare(
    runtime: Runtime,
    session_id: str,
    groups: list[list[dict[str, Any]]],
    fits: Callable[[str], bool] = lambda text: utf8_size(text) <= PAYLOAD_MAX_BYTES,
) -> tuple[str, Captured] | None:
    """The extraction input and the evidence it offers, or None when no exchange fits.

    The input: existing valid facts for comparison (at most 50 and 4,096 bytes: those that rank
    highest for the exchanges' messages first, then by ID; never a retired one), then the newly
    covered exchanges' raw user and assistant messages with their seqs, read results only as
    corroboration; as many exchanges as `fits` accepts (the byte limit, and the model's window),
    dropping the later ones (never cutting one; what is left out is not retried). Only what the
    extractor is shown can be cited: the captured evidence and the comparison facts are exactly
    those. Blocking.
    """
    existing: list[str] = []
    facts: dict[int, int] = {}
    used = 0
    said = " ".join(
        str(r.get("content"))
        for group in groups
        for r in group
        if r.get("kind") == "message" and isinstance(r.get("content"), str)
    )[:MAX_QUERY_CHARS]
    for fact in similar_valid_facts(runtime, said, COMPARISON_FACTS):
        line = json.dumps({"id": fact.id, "revision": fact.revision, "text": fact.text})
        if used + utf8_size(line) + 1 > COMPARISON_MAX_BYTES:
            break
        existing.append(line)
        facts[fact.id] = fact.revision
        used += utf8_size(line) + 1

    def assemble(parts: list[str]) -> str:
        return (
            '<existing_facts inert_data="true">\n'
            + "".join(line + "\n" for line in existing)
            + '</existing_facts>\n<transcript inert_data="true">\n'
            + "\n\n".join(parts)
            + "\n</transcript>"
        )

    shown: list[list[dict[str, Any]]] = []
    parts: list[str] = []
    for group in groups:
        seqs = [r["seq"] for r in group if r["kind"] == "message"]
        if not seqs or seqs[-1] - seqs[0] >= MAX_POSITIONS:
            break  # an exchange too long to cite as one range ends what can be offered
        candidate = [*parts, _render(group)]
        if not fits(assemble(candidate)):
            break
        parts, shown = candidate, [*shown, group]
    if not shown:
        return None
    return assemble(parts), _snapshots(runtime, session_id, shown, facts)


def _render(group: list[dict[str, Any]]) -> str:
    seqs = [r["seq"] for r in group if r["kind"] == "message"]
    lines = [f"## exchange seqs {seqs}"]
    for record in group:
        if record["kind"] != "message":
            continue
        role, seq = record["role"], record["seq"]
        if role in ("user", "assistant") and isinstance(record.get("content"), str):
            lines.append(f"[seq {seq}] {role}: {record['content']}")
        for call in well_formed_calls(record):
            function = call["function"]
            if function.get("name") == "read":
                lines.append(f"[seq {seq}] read call {call.get('id')}: {function.get('arguments')}")
        if role == "tool" and record.get("name") == "read":
            lines.append(
                f"[seq {seq}] read result {record.get('tool_call_id')}:\n{record['content']}"
            )
    return "\n".join(lines)


def parse_answer(text: str) -> Any:
    """The extraction answer as strict JSON (A3), once ONE code fence around the whole answer
    is taken off (`unfenced`). ValueError when it is not."""
    return strict_json(unfenced(text))


def unfenced(text: str) -> str:
    """`text` without one Markdown code fence wrapping all of it, else `text` unchanged.

    Small models write their JSON inside one ```json fence however they are asked (4 of 6
    answers of Qwen2.5-Coder 0.5B served by llama.cpp, issue 13). Exactly one fence is taken
    off: the opening line is three backticks and an optional `json` info string, the closing
    line three backticks, and only whitespace may stand before or after; a fence line inside the
    body (two fences, or a fence within the JSON) leaves the text as it was, so it fails to
    parse. Prose around a fence is not stripped either. What the body must then be does not
    change: strict JSON with no duplicate keys, NaN or Infinity, and no unknown keys. Nothing
    is trusted for being unwrapped: learning is safe because of the evidence checks every
    candidate must pass, not because of the wrapper the model chose."""
    match = FENCED.match(text)
    if match is None:
        return text
    body = match["body"]
    if any(line.lstrip().startswith("```") for line in body.split("\n")):
        return text
    return body


def strict_json(text: str) -> Any:
    """Strict JSON (A3): ValueError on a duplicate key, and on `NaN`, `Infinity` and
    `-Infinity`, which Python's parser accepts though JSON has no such values."""

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [key for key, _ in items]
        if len(keys) != len(set(keys)):
            raise ValueError("duplicate key")
        return dict(items)

    def constant(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, object_pairs_hook=pairs, parse_constant=constant)


def utf8_size(text: str) -> int:
    """The UTF-8 size of `text`, a lone surrogate counted as the 3 bytes it would take: the
    answer of a model may hold one (JSON's `\\ud800` escape decodes to it), and measuring must
    not fail on it."""
    return len(text.encode("utf-8", "surrogatepass"))


def _valid_text(value: object) -> bool:
    """A candidate's text or quote: a non-blank string of valid Unicode (no lone surrogate)
    within TEXT_MAX_BYTES."""
    if not isinstance(value, str) or not value.strip():
        return False
    try:
        return len(value.encode("utf-8")) <= TEXT_MAX_BYTES
    except UnicodeEncodeError:
        return False


def as_written(candidate: Any) -> Any:
    """A model's candidate with memory.md's `conflicts` named `supersedes`, the name the rest of
    learning reads; anything else (`supersedes` already, both fields, not an object) unchanged,
    for check_candidate to judge (both fields: `candidate_schema`)."""
    if isinstance(candidate, dict) and CONFLICTS in candidate and "supersedes" not in candidate:
        return {("supersedes" if k == CONFLICTS else k): v for k, v in candidate.items()}
    return candidate


def check_candidate(candidate: Any, captured: Captured) -> tuple[str | None, SourceRef | None]:
    """The first failing check's code, or None and the candidate's captured source. The
    candidate names its conflicts `supersedes` (as_written renames memory.md's `conflicts`)."""
    if not isinstance(candidate, dict) or set(candidate) != CANDIDATE_KEYS:
        return "candidate_schema", None
    text, quote, kind = candidate["text"], candidate["quote"], candidate["kind"]
    seqs, supersedes = candidate["source_seqs"], candidate["supersedes"]
    if (
        kind not in KINDS
        or type(candidate["proposal"]) is not bool
        or not isinstance(seqs, list)
        or not all(type(s) is int for s in seqs)
        or not isinstance(supersedes, list)
        or not all(type(c) is int for c in supersedes)
    ):
        return "candidate_schema", None
    if not (_valid_text(text) and _valid_text(quote)):
        return "invalid_text", None
    ref = captured.singles.get(seqs[0]) if len(seqs) == 1 else None
    ref = ref or captured.ranges.get(tuple(seqs))
    if ref is None or list(ref.seqs) != seqs:
        return "invalid_source", None
    if kind == "explicit_user_preference":
        message = captured.messages.get(seqs[0]) if len(seqs) == 1 else None
        if message is None or message["role"] != "user" or agent_injected(message):
            return "invalid_preference_source", None
        if TEMPORARY.search(" ".join(quote.split())):
            return "temporary_preference", None
        content = message.get("content")
        if text != quote or not isinstance(content, str) or quote not in content:
            return "exact_text_mismatch", None
        at = content.index(quote)
        if is_reported(content, at, at + len(quote)):
            return "reported_preference", None
    elif not _verified(text, quote, seqs, captured):
        return "unverified_project_evidence", None
    if any(captured.facts.get(c) is None for c in supersedes):  # not shown
        return "invalid_conflicts", None
    return None, ref


def _verified(text: str, quote: str, seqs: list[int], captured: Captured) -> bool:
    """A verified project fact: a read of `path` in this exchange returned `quote` as one of its
    numbered lines, and a user or assistant message of the exchange says exactly `text`."""
    parsed = fact_path_line(text)
    if parsed is None:
        return False
    path, line = parsed
    group = next(
        (g for g in captured.exchanges if [r["seq"] for r in g if r["kind"] == "message"] == seqs),
        None,
    )
    if group is None:
        return False
    confirmed = any(
        r["kind"] == "message" and r["role"] in ("user", "assistant") and r.get("content") == text
        for r in group
    )
    reads = {
        call["id"]
        for r in group
        if r["kind"] == "message" and r["role"] == "assistant"
        for call in well_formed_calls(r)
        if call["function"]["name"] == "read" and _read_path(call) == path
    }
    number, tab, shown = quote.partition("\t")
    digits = number.strip()
    numbered = bool(tab) and digits.isascii() and digits.isdigit() and len(digits) < 12
    numbered = numbered and shown == line
    numbered = numbered and quote == number_line(int(number), line)
    seen = any(
        r["kind"] == "message"
        and r["role"] == "tool"
        and r.get("tool_call_id") in reads
        and quote in str(r.get("content", "")).split("\n")
        for r in group
    )
    return confirmed and numbered and seen and not path.startswith("/")


def _read_path(call: dict[str, Any]) -> str | None:
    raw = call.get("function", {}).get("arguments")
    try:
        arguments = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        return None
    path = arguments.get("path") if isinstance(arguments, dict) else None
    return path if isinstance(path, str) else None
