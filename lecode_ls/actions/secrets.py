"""Scrubbing the secrets a project's memory holds (memory/scrub.py): every copy rewritten,
the facts' evidence kept. Blocking: call from a worker thread."""

from __future__ import annotations

from typing import Any

from lecode_ls.actions.changes import Changed, Done
from lecode_ls.memory import scrub as core
from lecode_ls.runtime import Runtime


def scrub(runtime: Runtime, secret: str | None = None) -> Done[dict[str, Any]]:
    """Rewrite every copy of what the detector finds (and of `secret`, when given) in the
    transcripts, notes and fact texts; what it did."""
    runtime.require_facts()
    done = core.scrub(runtime, secret)
    notes = tuple(name for name in done["notes"] if not name.endswith(".bak"))
    return Done(done, Changed(facts=bool(done["sessions"] or done["facts"]), notes=notes))
