"""Which source references validated, remembered so that a request need not re-read and re-hash
every cited transcript range (the injection validates every shown fact's evidence at every
provider request, I3).

A verdict is keyed by the reference and remembered with the cited transcript's file identity
(lstat: device, inode, size, mtime and ctime in ns, and the sessions folder's inode) and the
exclusion generation of the fact store. Undo, clear and tampering change the transcript's
identity; a forget advances the generation; either makes the next check validate in full again.
Invalid verdicts are never remembered. (50 full validations cost ~10 ms a request, against
~1.6 ms with remembered verdicts; bench/injection.py.)
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Sequence

from lecode_ls.memory.sessions.sources import (
    ExclusionReader,
    SourceRef,
    Status,
    validate_source,
    validate_sources,
)
from lecode_ls.memory.sessions.store import SessionStore

MAX_REMEMBERED_VERDICTS = 4096

_Identity = tuple[int, ...]
_Key = tuple[str, tuple[int, ...], str]


class SourceVerdicts:
    """References of one session store that validated (durable purpose), with the transcript
    identity and generation they were valid at. One per runtime.

    Runtimes are served from worker threads; the lock guards the dict, not the validation.
    """

    def __init__(self, sessions: SessionStore) -> None:
        self.sessions = sessions
        self._valid: dict[_Key, tuple[_Identity, int]] = {}
        self._lock = threading.Lock()

    def _same_project(self) -> bool:
        """S3 on every use, a remembered verdict's too: the store is still the project's."""
        check = self.sessions.identity
        return check is None or check()

    def is_valid(self, ref: SourceRef, exclusions: ExclusionReader, generation: int) -> bool:
        """Whether `ref` validates now for a durable use, `generation` being the exclusions'
        generation read by the caller."""
        if not self._same_project():
            return False
        key = (ref.session_id, ref.seqs, ref.digest)
        # Read before validating: a change during validation leaves a stale identity stored,
        # which the next call sees as a change. Never the other way round.
        identity = _identity(self.sessions, ref.session_id)
        with self._lock:
            known = self._valid.get(key)
        if identity is not None and known == (identity, generation):
            return True
        verdict = validate_source(self.sessions, ref, purpose="durable", exclusions=exclusions)
        if not verdict.valid:
            return False
        if identity is not None:
            with self._lock:
                if len(self._valid) >= MAX_REMEMBERED_VERDICTS:
                    self._valid.clear()
                self._valid[key] = (identity, generation)
        return True

    def statuses(
        self, refs: Sequence[SourceRef], exclusions: ExclusionReader, generation: int
    ) -> list[Status]:
        """The status a durable `validate_source` gives each of `refs`: a reference known valid
        at its transcript's identity and `generation` is not read again; the others are judged
        together (`validate_sources`: each session read once), and the valid ones remembered."""
        if not self._same_project():
            return ["missing"] * len(refs)
        identities = {ref.session_id: _identity(self.sessions, ref.session_id) for ref in refs}
        statuses: list[Status | None] = [None] * len(refs)
        with self._lock:
            for index, ref in enumerate(refs):
                identity = identities[ref.session_id]
                known = self._valid.get((ref.session_id, ref.seqs, ref.digest))
                if identity is not None and known == (identity, generation):
                    statuses[index] = "valid"
        todo = [index for index, status in enumerate(statuses) if status is None]
        verdicts = validate_sources(
            self.sessions, [refs[i] for i in todo], purpose="durable", exclusions=exclusions
        )
        for index, verdict in zip(todo, verdicts, strict=True):
            statuses[index] = verdict.status
            identity = identities[verdict.ref.session_id]
            if verdict.valid and identity is not None:
                with self._lock:
                    if len(self._valid) >= MAX_REMEMBERED_VERDICTS:
                        self._valid.clear()
                    key = (verdict.ref.session_id, verdict.ref.seqs, verdict.ref.digest)
                    self._valid[key] = (identity, generation)
        return [status for status in statuses if status is not None]

    def clear(self) -> None:
        """Forget every verdict (the next checks validate in full)."""
        with self._lock:
            self._valid.clear()


def _identity(sessions: SessionStore, session_id: str) -> _Identity | None:
    """The transcript's file identity, or None (missing, or a link: never remembered)."""
    try:
        folder = os.lstat(sessions.folder)
        # The ID was checked by SourceRef: it is a plain file name.
        st = os.lstat(sessions.folder / f"{session_id}.jsonl")
    except OSError:
        return None
    if not stat.S_ISDIR(folder.st_mode) or not stat.S_ISREG(st.st_mode):
        return None
    return (
        folder.st_dev,
        folder.st_ino,
        st.st_dev,
        st.st_ino,
        st.st_size,
        st.st_mtime_ns,
        st.st_ctime_ns,
    )
