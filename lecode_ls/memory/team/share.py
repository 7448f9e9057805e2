"""Sharing a fact with the team: its file written into the checkout, or removed from it.

The server never commits or pushes: the person commits the file with their change, and the team
reviews it like code. A shared file is written atomically (readers and a crash see the old file
or the new one), never through a link, and only inside the checkout's `.lecode/facts/`.

Share refuses a fact that does not validate now, one whose text or cited records hold a secret
(the detector of memory/secrets, so a credential redaction missed never leaves the machine),
one whose file would pass MAX_FILE_BYTES, and a folder outside Git. The shared ID is derived
from the fact's first evidence, so sharing again after a correction rewrites the same file.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from lecode_ls.errors import (
    FactNotFound,
    FactNotValid,
    LecodeError,
    NotACheckout,
    SecretInFact,
    SharedFactNotFound,
    SharedFactTooLarge,
    StoreError,
)
from lecode_ls.memory.anchors import git_user_name, root_commit
from lecode_ls.memory.canonical import canonical_json
from lecode_ls.memory.facts import FactStore, Purpose, SourceLike
from lecode_ls.memory.files import atomic_write, refuse_symlinks
from lecode_ls.memory.secrets import Redactor
from lecode_ls.memory.sessions import SessionStore, clean_title
from lecode_ls.memory.team import format as f
from lecode_ls.memory.team.format import Earlier, Evidence, SharedAnchor, SharedDoc

UNKNOWN_SHARER = "unknown"


def shared_id(session_id: str, digest: str) -> str:
    """The ID a fact is shared under: from its first revision's evidence (stable across
    corrections, and the same on every machine)."""
    return hashlib.sha256(canonical_json([session_id, digest])).hexdigest()[:20]


def build(
    facts: FactStore,
    sessions: SessionStore,
    redactor: Redactor,
    checkout: Path,
    fact_id: int,
    *,
    check: Callable[[SourceLike, Purpose], None],
    shared_by: str | None,
) -> SharedDoc:
    """The shared file of the person's fact `fact_id`, checked (see the module docstring).
    `check(ref, purpose)` validates evidence (the runtime's `check_source`). Blocking."""
    fact = facts.get(fact_id)
    if fact is None:
        raise FactNotFound(f"factId: there is no fact {fact_id}", field="factId")
    if fact.source is None or fact.suppressed:
        raise FactNotValid("factId: the fact has no valid evidence to share", field="factId")
    try:
        check(fact.source, "durable")
    except StoreError:
        raise
    except LecodeError as error:  # missing, stale, hidden, excluded: why it fails
        raise FactNotValid(
            f"factId: its evidence does not validate ({error.message})", field="factId"
        ) from None
    source = fact.source
    records = sessions.read(source.session_id, source.seqs[0], source.seqs[-1])
    refuse_secrets(redactor, fact.text, records)
    revisions = facts.provenance(fact_id)
    first = revisions[0].source or source
    repository = root_commit(checkout)
    if repository is None:
        raise NotACheckout(
            "workspaceUri: the folder is not in a Git checkout with a commit", field="workspaceUri"
        )
    anchors = facts.anchors.of_facts([fact_id]).get(fact_id, [])
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    doc = SharedDoc(
        id=shared_id(first.session_id, first.digest),
        repository=repository,
        shared_by=clean_title(shared_by or git_user_name(checkout) or "") or UNKNOWN_SHARER,
        shared_at=now,
        revision=fact.revision,
        text=fact.text,
        history=tuple(
            Earlier(r.revision, r.text, r.created_at) for r in revisions[:-1][-f.MAX_HISTORY :]
        ),
        anchors=tuple(
            SharedAnchor(
                a.path, a.start_line, a.end_line, a.sha256, a.first_sha256, a.commit, a.captured_at
            )
            for a in sorted(anchors, key=lambda a: a.index)[: f.MAX_ANCHORS]
        ),
        evidence=Evidence(source.session_id, source.seqs, source.digest, tuple(records)),
    )
    return doc


def write(checkout: Path, doc: SharedDoc) -> tuple[str, bool]:
    """Write `doc` into the checkout; (its checkout-relative file, whether it is new)."""
    data = f.encode(doc)
    if len(data) > f.MAX_FILE_BYTES:
        raise SharedFactTooLarge(
            f"factId: its shared file would be {len(data)} bytes; at most {f.MAX_FILE_BYTES}",
            field="factId",
        )
    target = checkout / f.FOLDER / f"{doc.id}.json"
    try:
        refuse_symlinks(checkout, target)
        new = not target.exists()
        atomic_write(target, data, backup=False)
    except OSError as error:
        raise StoreError(
            f"{f.FOLDER}/{doc.id}.json: could not be written ({error.strerror})"
        ) from None
    return f"{f.FOLDER}/{doc.id}.json", new


def remove(checkout: Path, team_id: str) -> str:
    """Remove a shared file from the checkout; its checkout-relative name."""
    if f.ID.fullmatch(team_id) is None:
        raise SharedFactNotFound("teamId: not a shared fact's ID (20 hex digits)", field="teamId")
    target = checkout / f.FOLDER / f"{team_id}.json"
    refuse_symlinks(checkout, target)
    try:
        target.unlink()
    except FileNotFoundError:
        raise SharedFactNotFound(
            f"teamId: no shared fact {team_id} in this checkout", field="teamId"
        ) from None
    except OSError as error:
        raise StoreError(
            f"{f.FOLDER}/{team_id}.json: could not be removed ({error.strerror})"
        ) from None
    return f"{f.FOLDER}/{team_id}.json"


def refuse_secrets(redactor: Redactor, text: str, records: list[dict[str, Any]]) -> None:
    """SecretInFact, naming the field, when the text or a record holds a secret."""
    found = redactor.find(text)
    if found:
        raise SecretInFact(
            f"text: holds a secret ({found[0].kind}); it is not shared", field="text"
        )
    for record in records:
        for value in f.strings(record):
            found = redactor.find(value)
            if found:
                seq = record.get("seq")
                raise SecretInFact(
                    f"evidence.records[{seq}]: holds a secret ({found[0].kind}); nothing is "
                    "shared (scrub it with lecode/memory/scrubSecrets first)",
                    field=f"evidence.records[{seq}]",
                )


def succeed(doc: SharedDoc, earlier: SharedDoc) -> SharedDoc:
    """`doc` (a fact of the person's, built from their correction) as the next revision of the
    shared fact `earlier`: its ID, its history plus its current text, its anchors when the
    correction has none of its own."""
    history = (*earlier.history, Earlier(earlier.revision, earlier.text, earlier.shared_at))
    return replace(
        doc,
        id=earlier.id,
        revision=earlier.revision + 1,
        history=history[-f.MAX_HISTORY :],
        anchors=doc.anchors or earlier.anchors,
    )
