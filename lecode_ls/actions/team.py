"""The operations on the facts a team shares in a checkout (`.lecode/facts/`, issue 29).

Each takes the checkout its door resolved (the LSP: the request's folder; `/memory`: the first
folder; MCP: the folder it serves). The server never commits or pushes: a share or unshare
leaves a file for the person to commit. Blocking: call from a worker thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lecode_ls.actions import facts
from lecode_ls.actions.changes import FACTS, NOTHING, Done
from lecode_ls.errors import InvalidSource, SharedFactNotFound, StaleRevision
from lecode_ls.memory import team
from lecode_ls.memory.recall import list_team, recall_team
from lecode_ls.memory.sessions import SourceRef
from lecode_ls.runtime import Runtime


@dataclass(frozen=True)
class SharedFile:
    team_id: str
    file: str
    """Checkout-relative: `.lecode/facts/<team_id>.json`."""
    created: bool = False
    """share: whether the file is new (not a rewrite of the fact's earlier revision)."""


@dataclass(frozen=True)
class Excluded:
    team_id: str
    file: str
    forgotten: bool
    """False when its evidence was excluded already (a retry changes nothing)."""


@dataclass(frozen=True)
class TeamRevision:
    team_id: str
    revision: int
    """The shared fact's revision in its file."""
    fact_id: int
    """The person's own fact the correction became."""
    file: str


def share(runtime: Runtime, checkout: Path, fact_id: int) -> Done[SharedFile]:
    """Write the fact, with the records its current revision cites, to its file in `checkout`
    (refused for a fact that is not valid, holds a secret, or would pass 512 KiB)."""
    runtime.require_facts()
    doc = team.build(
        runtime.facts, runtime.sessions, runtime.redactor, checkout, fact_id,
        check=runtime.check_source, shared_by=runtime.settings.team.name,
    )  # fmt: skip
    file, created = team.write(checkout, doc)
    runtime.team.shelf(checkout)
    return Done(SharedFile(doc.id, file, created), FACTS)


def unshare(
    runtime: Runtime, checkout: Path, *, team_id: str | None = None, fact_id: int | None = None
) -> Done[SharedFile]:
    """Remove a shared fact's file, named by its team ID or by the person's fact it is."""
    runtime.require_facts()
    if team_id is None:
        shared = runtime.team.shelf(checkout).for_local(fact_id) if fact_id is not None else None
        if shared is None:
            raise SharedFactNotFound(
                f"factId: fact {fact_id} is not shared in this checkout", field="factId"
            )
        team_id = shared.id
    file = team.remove(checkout, team_id)
    runtime.team.shelf(checkout)
    return Done(SharedFile(team_id, file), FACTS)


def forget_for_me(runtime: Runtime, checkout: Path, team_id: str) -> Done[Excluded]:
    """Exclude a teammate's shared evidence in the person's store for good (hidden from their
    memory and learning; the file stays, it is the team's)."""
    runtime.require_facts()
    fact = runtime.team.shelf(checkout).get(team_id)
    if fact is None or fact.doc is None:
        raise SharedFactNotFound(
            f"teamId: no readable shared fact {team_id} in this checkout", field="teamId"
        )
    if runtime.sessions.exists(fact.doc.evidence.session_id):
        # A file may name a session of the person's own (theirs are in their shared files):
        # excluding it would take their own evidence. Forget their fact instead.
        raise InvalidSource(
            "teamId: its evidence cites one of your own sessions; forget your own fact "
            "(lecode/facts/forget) instead",
            field="teamId",
        )
    forgotten = runtime.facts.exclude(fact.doc.evidence)
    runtime.team.shelf(checkout)
    return Done(Excluded(team_id, fact.file, forgotten), FACTS if forgotten else NOTHING)


def correct(
    runtime: Runtime,
    checkout: Path,
    team_id: str,
    text: str,
    *,
    expected_revision: int,
    ref: SourceRef,
) -> Done[TeamRevision]:
    """A new revision of a shared fact from the person's own evidence: it becomes their fact
    (remembered as any is), and the file gets it as its next revision, with the old text in its
    history. What would refuse the file is checked first: a refusal leaves nothing behind."""
    runtime.require_facts()
    earlier = runtime.team.shelf(checkout).get(team_id)
    if earlier is None or earlier.doc is None or earlier.status != "valid":
        raise SharedFactNotFound(
            f"teamId: no valid shared fact {team_id} in this checkout", field="teamId"
        )
    if earlier.doc.revision != expected_revision:
        raise StaleRevision(
            f"expectedRevision: the shared fact is at revision {earlier.doc.revision}",
            field="expectedRevision",
        )
    if not runtime.has_authored_text(ref):
        raise InvalidSource(
            "source: the new evidence must include user or assistant text", field="source"
        )
    records = runtime.sessions.read(ref.session_id, ref.seqs[0], ref.seqs[-1])
    team.refuse_secrets(runtime.redactor, text, records)  # the file's size is known once built
    fact_id = facts.remember(runtime, text, ref).value.fact_id
    mine = team.build(
        runtime.facts, runtime.sessions, runtime.redactor, checkout, fact_id,
        check=runtime.check_source, shared_by=runtime.settings.team.name,
    )  # fmt: skip
    doc = team.succeed(mine, earlier.doc)
    file, _ = team.write(checkout, doc)
    runtime.team.shelf(checkout)
    return Done(TeamRevision(team_id, doc.revision, fact_id, file), FACTS)


def page(
    runtime: Runtime, checkout: Path, offset: int = 0, texts: team.TextOf | None = None
) -> dict[str, Any]:
    """A page of the shared facts, verified, with their anchors' drift against `texts` (the
    editor's open buffers by checkout-relative path) or the disk."""
    runtime.require_facts()
    return list_team(runtime.team.shelf(checkout), offset, texts or (lambda rel: None))


def recall(
    runtime: Runtime, checkout: Path, team_id: str, offset: int = 0, limit: int | None = None
) -> dict[str, Any]:
    """A shared fact and a page of the records bundled in its file."""
    runtime.require_facts()
    return recall_team(runtime.team.shelf(checkout), team_id, offset, limit)
