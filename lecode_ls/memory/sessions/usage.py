"""A session's usage total (C10): every provider call the session's transcript records, each
counted once, rejected and discarded responses included; a call whose usage is unknown (null)
is counted in `unknown_usage_calls`, and the token totals are the known subtotal.

Each call leaves exactly one record that carries its usage: a `usage` event (a chat request;
null after a provider error or a cancelled stream), a `discarded` event (an answer a forget made
stale), a `compact` event (a summary that was kept) or a `memory_usage` event (a compaction that
was not kept, and every learning call). Undone and cleared records still count: their calls were
made. The sum is the sum of every turn's and compaction's `usage` result.

The records are found from the transcript index (codes USAGE and COMPACT, records.py), so no
message is parsed; and since transcripts only grow, the total is kept per transcript (its file
identity) and extended by the records appended since. Blocking.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from typing import Any

from lecode_ls.memory.sessions.records import COMPACT, USAGE
from lecode_ls.memory.sessions.store import SessionStore

USAGE_EVENTS = frozenset({"usage", "discarded", "compact", "memory_usage"})
BLOCK = 1000
"""Records read under one lock."""
MAX_REMEMBERED = 256
"""Sessions whose running total is kept."""


@dataclass
class UsageTotal:
    """The usage of a session's provider calls so far (the fields of a turn's `usage`)."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    unknown_usage_calls: int = 0
    cached_tokens: int | None = None
    """Prompt tokens served from the provider's cache, of the calls that said (None: none did)."""
    evaluated_tokens: int | None = None
    """Prompt tokens evaluated anew, of the calls that said (llama-server's prompt_n)."""

    def add_json(self, usage: Any) -> None:
        """Count one call from the usage a transcript records for it (None: unknown)."""
        self.calls += 1
        if not isinstance(usage, dict):
            self.unknown_usage_calls += 1
            return
        for name in ("prompt_tokens", "completion_tokens", "total_tokens"):
            value = usage.get(name)
            if type(value) is int and value >= 0:
                setattr(self, name, getattr(self, name) + value)
        for name in ("cached_tokens", "evaluated_tokens"):
            value = usage.get(name)
            if type(value) is int and value >= 0:
                setattr(self, name, (getattr(self, name) or 0) + value)

    def to_json(self) -> dict[str, int]:
        """The counts; the cache's only when some call reported them."""
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass
class _Known:
    identity: tuple[int, int]
    read: int  # records read so far (the next seq to read)
    total: UsageTotal = field(default_factory=UsageTotal)


_known: dict[tuple[str, str], _Known] = {}
_lock = threading.Lock()


def session_usage(sessions: SessionStore, session_id: str) -> UsageTotal:
    """The usage total of the session (see the module docstring). Raises as the store does for
    a missing or damaged session."""
    length = sessions.length(session_id)
    key = (str(sessions.folder), session_id)
    # The ID was checked by `length`: it names a file of the folder.
    st = os.lstat(sessions.folder / f"{session_id}.jsonl")
    identity = (st.st_dev, st.st_ino)
    with _lock:
        known = _known.get(key)
    if known is None or known.identity != identity or known.read > length:
        known = _Known(identity, 1)
    total = UsageTotal(**known.total.to_json())
    seqs = sorted(
        seq
        for code in (USAGE, COMPACT)
        for seq in sessions.seqs_of_kind(session_id, code)
        if known.read <= seq < length
    )
    for at in range(0, len(seqs), BLOCK):
        for record in sessions.read_seqs(session_id, seqs[at : at + BLOCK]):
            if record.get("kind") == "event" and record.get("type") in USAGE_EVENTS:
                total.add_json(record.get("usage"))
    with _lock:
        if len(_known) >= MAX_REMEMBERED:
            _known.clear()
        _known[key] = _Known(identity, length, UsageTotal(**total.to_json()))
    return total
