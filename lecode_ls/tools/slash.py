"""The `/memory` slash command (T5): one line in, the text a person sees out.

The same function serves the `lecode.memory` command of every editor, `lecode/command`, and
`/memory` typed in chat. `/memory correct` and `/memory forget` dispatch the same tools the model
calls (memory_correct, memory_forget), under the same rules (T2, T4): refused in readonly mode,
and run only when the permission policy allows, or the person confirms when it says ask.
"""

from __future__ import annotations

import functools
import json
import operator
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, TypeVar

from lecode_ls.actions import NOTHING, Changed, Done, facts, secrets, sessions, team
from lecode_ls.errors import InvalidParams, NotACheckout, ReadonlyMode
from lecode_ls.memory import scrub
from lecode_ls.memory.doctor import diagnose
from lecode_ls.memory.facts import check_path
from lecode_ls.memory.learning_status import describe, latest_learning
from lecode_ls.memory.notes import daily_name
from lecode_ls.runtime import Runtime
from lecode_ls.tools.memory import dispatch
from lecode_ls.tools.permissions import PermissionPolicy

T = TypeVar("T")


@dataclass(frozen=True)
class Invocation:
    """Who runs a `/memory` line and under which rules."""

    policy: PermissionPolicy = field(default_factory=PermissionPolicy)
    """The permission policy of the write-class tools (`[agent] permissions`, asking the person
    when it says ask); without an `ask`, ask means deny."""
    readonly: bool = False
    """`[agent] readonly`: the slash commands cannot change memory either."""
    session_id: str | None = None
    """The chat session the line was typed in, if any: `/memory facts` reports its learning."""
    changes: list[Changed] = field(default_factory=list)
    """What the line changed (`did`), for the door's news."""

    def did(self, done: Done[T]) -> T:
        """An operation's value, its change noted."""
        self.changes.append(done.changed)
        return done.value

    @property
    def changed(self) -> Changed:
        """Everything the line changed."""
        return functools.reduce(operator.or_, self.changes, NOTHING)


HELP = """\
/memory show              print MEMORY.md (capped at [memory] max_bytes)
/memory edit              print the uncapped MEMORY.md for manual editing
/memory search <pattern>  search the Markdown memory (regular expression, at most 50 hits)
/memory log [date]        print a daily log (YYYY-MM-DD; today by default)
/memory notes             list named notes
/memory facts [offset] [path | query]
                          list facts: ID, revision, status, source, code anchors and
                          their drift; path (one word with / or .): only the facts anchored
                          in that file; query (any other words): the facts that best match
                          them, best first
/memory accept <n>        accept proposal n of the learning status /memory facts shows:
                          remember it with its recorded evidence
/memory pin <fact-id>     pin a fact: every chat request's memory shows it first
/memory unpin <fact-id>   unpin it
/memory retire <fact-id>  retire a fact: kept, listed and recallable, no longer injected
/memory restore <fact-id> restore a retired fact (or keep one proposed for retirement)
/memory doctor            the memory's health: every number with its fact IDs
/memory secrets [scrub]   where the store holds credentials (kind and place, never the
                          value); scrub: rewrite every copy, keeping the facts' evidence
/memory share <fact-id>   share a fact with the team: .lecode/facts/<team-id>.json in the
                          checkout, with its evidence (commit it)
/memory unshare <team-id> stop sharing it (commit the file's removal)
/memory team [offset]     the facts shared in the checkout, verified: valid, unverified
                          (and why) or hidden
/memory recall <fact-id> [offset]
                          a fact and a page of its evidence (JSON)
/memory read <session-id> <start-seq> <end-seq> [offset]
                          a validated page of a session range (JSON)
/memory correct <fact-id> <revision> <session-id> <start-seq> <end-seq> <text>
                          correct a fact with new evidence from that range; the
                          text is the rest of the line, as typed
/memory forget <fact-id>  forget a fact; its evidence is excluded for good
/memory help              show this help"""

TRUNCATION_MARKER = "\n[... truncated at {limit} bytes; /memory edit shows it all]"


def _cap(text: str, limit: int) -> str:
    """`text` within `limit` UTF-8 bytes, the truncation marker included (as the injected
    section counts its markers, I2); a limit smaller than the marker shows the marker alone."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    marker = TRUNCATION_MARKER.format(limit=limit)
    room = max(limit - len(marker.encode("utf-8")), 0)
    # Cut on a character boundary: errors="ignore" drops a split multi-byte tail.
    return data[:room].decode("utf-8", errors="ignore") + marker


def _show(runtime: Runtime, args: list[str], _: Invocation) -> str:
    content, exists = runtime.require_memory().read("MEMORY.md")
    if not content:
        return "MEMORY.md is empty." if exists else "MEMORY.md does not exist yet."
    return _cap(content, runtime.settings.memory.max_bytes)


def _edit(runtime: Runtime, args: list[str], run: Invocation) -> str:
    content, exists = runtime.require_memory().read("MEMORY.md")
    return content if exists else "MEMORY.md does not exist yet."


def _search(runtime: Runtime, args: list[str], run: Invocation) -> str:
    if not args:
        raise InvalidParams("text: /memory search needs a pattern", field="text")
    hits, truncated = runtime.require_memory().search(" ".join(args))
    if not hits:
        return "No matches."
    lines = [f"{hit.file}:{hit.line}: {hit.text}" for hit in hits]
    if truncated:
        lines.append(f"[only the first {len(hits)} matches are shown]")
    return "\n".join(lines)


def _log(runtime: Runtime, args: list[str], today: date) -> str:
    if len(args) > 1:
        raise InvalidParams("text: /memory log takes at most one date", field="text")
    try:
        day = date.fromisoformat(args[0]) if args else today
    except ValueError:
        raise InvalidParams(
            f"text: {args[0]!r} is not a date; use YYYY-MM-DD", field="text"
        ) from None
    name = daily_name(day)
    content, exists = runtime.require_memory().read(name)
    if not exists:
        return f"No daily log for {day.isoformat()}."
    return content or f"The daily log for {day.isoformat()} is empty."


def _notes(runtime: Runtime, args: list[str], run: Invocation) -> str:
    notes = [f for f in runtime.require_memory().list() if f.file.startswith("notes/")]
    if not notes:
        return "No named notes."
    return "\n".join(f"{f.file.removeprefix('notes/')[:-3]}  ({f.bytes} bytes)" for f in notes)


def _int(args: list[str], index: int, name: str) -> int:
    try:
        value = int(args[index])
    except (IndexError, ValueError):
        raise InvalidParams(f"text: {name} must be a whole number", field="text") from None
    if value < 0:
        raise InvalidParams(f"text: {name} must not be negative", field="text")
    return value


def _usage(args: list[str], least: int, most: int, usage: str) -> None:
    if not least <= len(args) <= most:
        raise InvalidParams(f"text: usage: /memory {usage}", field="text")


def _json(answer: object) -> str:
    """A recall answer printed as recall measured it against its 16,384-byte cap (R2): compact
    JSON, one line (indenting it added bytes past the cap)."""
    return json.dumps(answer, ensure_ascii=False)


def _camel(value: object) -> object:
    """Every key a recall or a read answers, spelled as the protocol spells them (`next_offset` ->
    `nextOffset`), nulls kept: a last page says `nextOffset: null`, as memory_recall's does
    (issue 41), rather than leave the reader to guess whether a key is missing."""
    if isinstance(value, dict):
        return {
            re.sub(r"_([a-z0-9])", lambda m: m.group(1).upper(), str(k)): _camel(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_camel(item) for item in value]
    return value


def _is_offset(word: str) -> bool:
    return word.isascii() and word.isdigit()


def _is_path(words: list[str]) -> bool:
    """`/memory facts src/app.py`: one word naming a file (a `/` or a `.` in it)."""
    return len(words) == 1 and any(mark in words[0] for mark in "/\\.")


def _facts(runtime: Runtime, args: list[str], run: Invocation) -> str:
    runtime.require_facts()
    offset = _int(args, 0, "offset") if args and _is_offset(args[0]) else 0
    rest = args[1:] if args and _is_offset(args[0]) else args
    path = check_path(rest[0]) if _is_path(rest) else None
    query = " ".join(rest) if rest and path is None else None
    auto_learn = runtime.settings.memory.auto_learn

    def render(page: dict[str, Any]) -> str:
        latest = page.get("learning")
        # The learning line once learning is on, or has ever run.
        learning = [describe(latest)] if latest or auto_learn else []
        if not page["facts"]:
            return "\n".join(["No facts." if page["offset"] == 0 else "No more facts.", *learning])
        lines = []
        for fact in page["facts"]:
            line = f"#{fact['fact_id']} r{fact['revision']} {fact['status']}"
            line += " pinned" if fact.get("pinned") else ""
            line += f" shared {fact['shared']['team_id']}" if "shared" in fact else ""
            if "last_used" in fact:
                line += f" used {fact['uses']}x, last {fact['last_used'][:10]}"
            if "source" in fact:
                seqs = fact["source"]["seqs"]
                line += f" [{fact['source']['session_id']} {seqs[0]}-{seqs[-1]}] {fact['text']}"
            lines.append(line)
            if fact.get("matched"):
                lines.append(f"  matched: {', '.join(fact['matched'])}")
            for anchor in fact.get("anchors", ()):
                where = f"{anchor['path']}:{anchor['start_line']}-{anchor['end_line']}"
                now = anchor.get("current_start_line")
                renamed = anchor.get("current_path")
                moved = f" now {renamed}" if renamed else ""
                if anchor["status"] == "moved":
                    span = f"{now}-{anchor['current_end_line']}"
                    moved = f"{moved}:{span}" if renamed else f" now {span}"
                lines.append(f"  anchored to {where} {anchor['status']}{moved}")
        for proposal in page.get("retirements", ()):
            lines.append(
                f"proposed retirement: #{proposal['fact_id']} ({proposal['why']}): "
                f"/memory retire {proposal['fact_id']} or /memory restore {proposal['fact_id']}"
            )
        if page["next_offset"] is not None:
            more = f" {path}" if path is not None else ""
            more = f" {query}" if query is not None else more
            lines.append(f"[more: /memory facts {page['next_offset']}{more}]")
        return "\n".join(lines + learning)

    # The 16,384-byte cap (R8) holds for the text shown, the learning lines included.
    page = facts.page(
        runtime,
        offset,
        audience="person",
        session_id=run.session_id,
        path=path,
        query=query,
        measure=lambda page: len(render(page).encode("utf-8")),
    )
    return render(page)


def _pin(runtime: Runtime, args: list[str], run: Invocation, *, pin: bool = True) -> str:
    word = "pin" if pin else "unpin"
    _usage(args, 1, 1, f"{word} <fact-id>")
    runtime.require_facts()
    if run.readonly:  # readonly: chat cannot change memory, what it shows included
        raise ReadonlyMode(f"/memory {word}: memory cannot be changed in readonly mode")
    fact_id = _int(args, 0, "fact-id")
    changed = run.did(facts.pin(runtime, fact_id, pinned=pin))
    if pin:
        return f"Fact #{fact_id} is pinned." if changed else f"Fact #{fact_id} was pinned already."
    return f"Fact #{fact_id} is unpinned." if changed else f"Fact #{fact_id} was not pinned."


def _accept(runtime: Runtime, args: list[str], run: Invocation) -> str:
    _usage(args, 1, 1, "accept <n>")
    transcripts, store = runtime.require_facts()
    if run.readonly:
        raise ReadonlyMode("/memory accept: memory cannot be changed in readonly mode")
    index = _int(args, 0, "n")
    learning = latest_learning(transcripts, store, run.session_id)
    if learning is None:
        raise InvalidParams("text: no automatic learning has proposed anything", field="text")
    fact = run.did(facts.accept_proposal(runtime, learning["session_id"], learning["seq"], index))
    return f"Proposal {index} is remembered as fact #{fact.fact_id} (revision {fact.revision})."


def _unpin(runtime: Runtime, args: list[str], run: Invocation) -> str:
    return _pin(runtime, args, run, pin=False)


def _retire(runtime: Runtime, args: list[str], run: Invocation, *, retire: bool = True) -> str:
    word = "retire" if retire else "restore"
    _usage(args, 1, 1, f"{word} <fact-id>")
    runtime.require_facts()
    if run.readonly:
        raise ReadonlyMode(f"/memory {word}: memory cannot be changed in readonly mode")
    fact_id = _int(args, 0, "fact-id")
    changed = run.did(facts.retire(runtime, fact_id, retired=retire))
    if retire:
        return (
            f"Fact #{fact_id} is retired." if changed else f"Fact #{fact_id} was retired already."
        )
    return f"Fact #{fact_id} is restored." if changed else f"Fact #{fact_id} is kept."


def _ids(counted: dict[str, Any]) -> str:
    shown = " ".join(f"#{i}" for i in counted["ids"])
    more = " …" if counted["count"] > len(counted["ids"]) else ""
    return f"{counted['count']}" + (f" ({shown}{more})" if shown else "")


def _doctor(runtime: Runtime, args: list[str], _: Invocation) -> str:
    _usage(args, 0, 0, "doctor")
    transcripts, _store = runtime.require_facts()
    report = diagnose(runtime, transcripts)
    lines = [f"{report['facts']} facts"]
    lines += [f"  {status}: {_ids(c)}" for status, c in report["by_status"].items() if c["count"]]
    for key, label in (
        ("drifted", "anchors drifted"),
        ("anchors_deleted", "anchors all deleted"),
        ("never_used", "never used"),
        ("proposed_retirements", "proposed for retirement"),
        ("proposed_corrections", "proposed corrections of"),
    ):
        lines.append(f"{label}: {_ids(report[key])}")
    groups = ", ".join("=".join(f"#{i}" for i in g) for g in report["duplicates"]["groups"])
    lines.append(
        f"duplicates: {report['duplicates']['count']}" + (f" ({groups})" if groups else "")
    )
    for note in report["notes"]:
        cut = f", {note['cut']} cut" if note["cut"] else ""
        lines.append(f"{note['file']}: {note['bytes']} bytes, {note['shown']} shown{cut}")
    return "\n".join(lines)  # at most 50 IDs a number: well within 16,384 bytes


SECRET_PLACES = 20  # places `/memory secrets` lists (the count covers them all)


def _secrets(runtime: Runtime, args: list[str], run: Invocation) -> str:
    _usage(args, 0, 1, "secrets [scrub]")
    if args and args[0] != "scrub":
        raise InvalidParams("text: usage: /memory secrets [scrub]", field="text")
    runtime.require_facts()
    if args:
        if run.readonly:
            raise ReadonlyMode("/memory secrets scrub: memory cannot be changed in readonly mode")
        done = run.did(secrets.scrub(runtime))
        return (
            f"Scrubbed {done['records']} transcript records in {len(done['sessions'])} sessions, "
            f"{len(done['notes'])} Markdown files, {done['revisions']} revisions of "
            f"{len(done['facts'])} facts; {done['reattached']} sources re-attached (their facts "
            f"stay valid); {done['remaining']} left."
        )
    found = scrub.scan(runtime, SECRET_PLACES)
    if not found["found"] and not found["raw"]:
        return "No secrets found in this project's memory."
    kinds = ", ".join(f"{kind} {count}" for kind, count in found["kinds"].items())
    lines = [f"{found['found']} secrets found" + (f" ({kinds})" if kinds else "")]
    for place in found["places"]:
        where = place["file"]
        if "seq" in place:
            where += f" record {place['seq']}"
        elif "fact_id" in place:
            where = f"fact #{place['fact_id']} revision {place['revision']}"
        elif "line" in place:
            where += f":{place['line']}"
        lines.append(f"  {place['kind']}: {where}")
    if found["truncated"]:
        lines.append(f"  … {found['found'] - len(found['places'])} more")
    for raw in found["raw"]:
        lines.append(f"  {raw['file']} holds {raw['found']} in its bytes")
    lines.append("/memory secrets scrub rewrites every copy.")
    return "\n".join(lines)


def _restore(runtime: Runtime, args: list[str], run: Invocation) -> str:
    return _retire(runtime, args, run, retire=False)


def _recall(runtime: Runtime, args: list[str], run: Invocation) -> str:
    _usage(args, 1, 2, "recall <fact-id> [offset]")
    runtime.require_facts()
    offset = _int(args, 1, "offset") if len(args) > 1 else 0
    return _json(_camel(facts.recall(runtime, _int(args, 0, "fact-id"), offset)))


def _read(runtime: Runtime, args: list[str], run: Invocation) -> str:
    _usage(args, 3, 4, "read <session-id> <start-seq> <end-seq> [offset]")
    runtime.require_facts()
    start, end = _int(args, 1, "start-seq"), _int(args, 2, "end-seq")
    offset = _int(args, 3, "offset") if len(args) > 3 else 0
    return _json(_camel(sessions.read(runtime, args[0], start, end, offset)))


def _correct(runtime: Runtime, args: list[str], run: Invocation) -> str:
    usage = "correct <fact-id> <revision> <session-id> <start-seq> <end-seq> <text>"
    _usage(args, 6, 6, usage)
    runtime.require_facts()
    fact_id, revision = _int(args, 0, "fact-id"), _int(args, 1, "revision")
    # The slash command captures the named persisted range, then dispatches the same tool the
    # model calls; it never guesses evidence.
    ref = sessions.snapshot(runtime, args[2], _int(args, 3, "start-seq"), _int(args, 4, "end-seq"))
    arguments = {
        "fact_id": fact_id,
        "expected_revision": revision,
        "text": args[5],  # the rest of the line, as written (run_memory_command)
        "source_snapshot": ref.to_json(),
    }
    answer = _tool(runtime, "memory_correct", arguments, run)
    return f"Fact #{fact_id} is now at revision {answer['revision']}."


def _forget(runtime: Runtime, args: list[str], run: Invocation) -> str:
    _usage(args, 1, 1, "forget <fact-id>")
    runtime.require_facts()
    fact_id = _int(args, 0, "fact-id")
    answer = _tool(runtime, "memory_forget", {"fact_id": fact_id}, run)
    if not answer["already_forgotten"]:
        return f"Fact #{fact_id} is forgotten; the transcript positions it cited are excluded for good."
    return f"Fact #{fact_id} was already forgotten."


def _tool(
    runtime: Runtime, name: str, arguments: dict[str, object], run: Invocation
) -> dict[str, Any]:
    """Dispatch a write-class memory tool as the model's calls are; its JSON answer."""
    result = dispatch(
        runtime, name, arguments, policy=run.policy, readonly=run.readonly, child=False
    )
    run.changes.append(result.changed)
    answer: dict[str, Any] = json.loads(result.content)
    return answer


def _checkout(runtime: Runtime) -> Path:
    checkout = runtime.drift.default_checkout()
    if checkout is None:
        raise NotACheckout("text: the first folder is not in a checkout", field="text")
    return checkout


def _share(runtime: Runtime, args: list[str], run: Invocation) -> str:
    _usage(args, 1, 1, "share <fact-id>")
    runtime.require_facts()
    if run.readonly:
        raise ReadonlyMode("/memory share: memory cannot be changed in readonly mode")
    shared = run.did(team.share(runtime, _checkout(runtime), _int(args, 0, "fact-id")))
    return f"Shared as {shared.file} (team ID {shared.team_id}): commit it with your change."


def _unshare(runtime: Runtime, args: list[str], run: Invocation) -> str:
    _usage(args, 1, 1, "unshare <team-id>")
    runtime.require_facts()
    if run.readonly:
        raise ReadonlyMode("/memory unshare: memory cannot be changed in readonly mode")
    gone = run.did(team.unshare(runtime, _checkout(runtime), team_id=args[0]))
    return f"Removed {gone.file}: commit its removal."


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _team(runtime: Runtime, args: list[str], run: Invocation) -> str:
    _usage(args, 0, 1, "team [offset]")
    runtime.require_facts()
    page = team.page(runtime, _checkout(runtime), _int(args, 0, "offset") if args else 0)
    if not page["facts"]:
        return "No shared facts." if page["offset"] == 0 else "No more shared facts."
    lines = []
    for fact in page["facts"]:
        line = f"{fact['team_id']} {fact['status']}"
        if "shared_by" in fact:  # a file's strings are one line each here: no forged lines
            line += f" by {_one_line(fact['shared_by'])}"
        if "text" in fact:
            line += f" r{fact['revision']}: {_one_line(fact['text'])}"
        if "reason" in fact:
            line += f" ({_one_line(fact['reason'])})"
        if "local_fact_id" in fact:
            line += f" (your fact #{fact['local_fact_id']})"
        lines.append(line)
    if page["next_offset"] is not None:
        lines.append(f"[more: /memory team {page['next_offset']}]")
    return "\n".join(lines)


_SIMPLE: dict[str, Callable[[Runtime, list[str], Invocation], str]] = {
    "show": _show,
    "edit": _edit,
    "search": _search,
    "notes": _notes,
    "facts": _facts,
    "recall": _recall,
    "read": _read,
    "correct": _correct,
    "forget": _forget,
    "accept": _accept,
    "pin": _pin,
    "unpin": _unpin,
    "retire": _retire,
    "doctor": _doctor,
    "secrets": _secrets,
    "restore": _restore,
    "share": _share,
    "unshare": _unshare,
    "team": _team,
}


FREE_TEXT = {"correct": 5}
"""Subcommands whose last argument is free text, and how many fixed arguments come first: the
text is the rest of the line after them exactly as typed (apostrophes, quotes and double
spaces kept), never shell-split: "We don't use tabs" is a fact's text, not an open quote."""


def _arguments(rest: str, fixed: int | None) -> list[str]:
    """The arguments of a /memory line after its subcommand: shell words (quotes group words,
    as in `/memory facts "two words"`), or with `fixed`, that many words split at whitespace
    and then the rest of the line as written (one argument; none when the line ends first)."""
    if fixed is None:
        return shlex.split(rest)
    words = rest.lstrip().split(None, fixed)
    if len(words) <= fixed:
        return words
    # The text starts at the first non-space after the last fixed word; it keeps its spaces.
    return [*words[:fixed], words[fixed]]


def run_memory_command(
    runtime: Runtime, text: str, today: date, run: Invocation | None = None
) -> str:
    """Run one `/memory` line (without the `/memory` prefix) and return its output."""
    run = run or Invocation()
    text = text.strip().removeprefix("/memory").strip()
    if not text:
        return _show(runtime, [], run)
    # The search pattern is taken verbatim (shell quoting would eat backslashes in regexes).
    sub, _, rest = text.partition(" ")
    if sub == "search":
        return _search(runtime, [rest.strip()] if rest.strip() else [], run)
    try:
        args = _arguments(rest, FREE_TEXT.get(sub))
    except ValueError as exc:
        raise InvalidParams(f"text: {exc}", field="text") from None
    if sub == "help":
        return HELP
    if sub == "log":
        return _log(runtime, args, today)
    handler = _SIMPLE.get(sub)
    if handler is None:
        raise InvalidParams(
            f"text: unknown /memory subcommand {sub!r}; /memory help lists them", field="text"
        )
    return handler(runtime, args, run)
