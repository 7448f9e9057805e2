"""Live drift of code anchors: where each anchored fact's lines are now, per checkout and file.

`DriftTracker` belongs to one project runtime. It indexes the current revisions' anchors by
path (reloaded whenever facts change) and answers, for a file of a checkout, the state of every
anchor in it: against the editor's buffer when the server was given one (unsaved edits count),
else against the file on disk (cached by its size and modification time). A buffer change
re-checks only that file's anchors.

Drift never edits or forgets a fact: statuses are computed, never stored; a `moved` anchor is
reported where its lines are now, and the store keeps the captured place until re-anchored.

Bounds: a file over MAX_FILE_BYTES, one that is not text (a NUL byte), or one that lies outside
every workspace folder (a link out of it included) is not checked (`unchecked`); of a file's
anchors, the first MAX_ANCHORS_PER_FILE (by fact ID) are checked, the rest are `unchecked`.
Thread-safe: the server calls it from the event loop and from worker threads.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from lecode_ls.memory.anchor_text import Located, Text
from lecode_ls.memory.anchors import StoredAnchor
from lecode_ls.memory.checkout import checkout_root
from lecode_ls.memory.facts import FactStore
from lecode_ls.memory.files import NotRegularFile, read_regular
from lecode_ls.platform.paths import canonical, is_within

MAX_FILE_BYTES = 1024 * 1024  # as a memory file (and the read tool's bound on one request)
MAX_ANCHORS_PER_FILE = 200

Against = Literal["buffer", "disk"]
_UNCHECKED = Located("unchecked")


@dataclass(frozen=True)
class AnchorState:
    """One anchor and where its lines are now."""

    anchor: StoredAnchor
    located: Located
    against: Against | None  # None when unchecked

    @property
    def key(self) -> tuple[object, ...]:
        a, loc = self.anchor, self.located
        return (a.fact_id, a.revision, a.index, loc.status, loc.start_line, loc.end_line)


def state_json(state: AnchorState) -> dict[str, Any]:
    """An anchor and its drift as listings show it (snake_case; the protocol's AnchorModel)."""
    anchor, located = state.anchor, state.located
    entry: dict[str, Any] = {
        "index": anchor.index,
        "path": anchor.path,
        "start_line": anchor.start_line,
        "end_line": anchor.end_line,
        "sha256": anchor.sha256,
        "commit": anchor.commit,
        "captured_at": anchor.captured_at,
        "status": located.status,
    }
    if located.start_line is not None:
        entry["current_start_line"] = located.start_line
        entry["current_end_line"] = located.end_line
    if state.against is not None:
        entry["checked_against"] = state.against
    return entry


class DriftTracker:
    """The drift of one project's anchors (see the module docstring)."""

    def __init__(self, facts: FactStore) -> None:
        self._facts = facts
        self._lock = threading.RLock()
        self._by_path: dict[str, list[StoredAnchor]] | None = None
        self._folders: list[Path] = []
        self._buffers: dict[tuple[Path, str], list[AnchorState]] = {}
        self._open: set[tuple[Path, str]] = set()
        self._disk: dict[tuple[Path, str], tuple[tuple[int, int], list[AnchorState]]] = {}

    # -- what is tracked ---------------------------------------------------------------------

    def add_folder(self, folder: Path) -> None:
        """A workspace folder of this project: files in it can be checked."""
        with self._lock:
            if folder not in self._folders:
                self._folders.append(folder)

    @property
    def folders(self) -> list[Path]:
        with self._lock:
            return list(self._folders)

    def default_checkout(self) -> Path | None:
        """The checkout of the first workspace folder: what listings and injection check
        against when no document says otherwise."""
        with self._lock:
            folders = list(self._folders)
        return checkout_root(folders[0], folders) if folders else None

    def reload(self) -> None:
        """Forget the index and every cached state: facts changed (here or elsewhere). The
        caller then re-checks the open buffers (`update_buffer`); until it does, their files
        are checked on disk."""
        with self._lock:
            self._by_path = None
            self._disk.clear()
            self._buffers.clear()

    def _index(self) -> dict[str, list[StoredAnchor]]:
        with self._lock:
            if self._by_path is None:
                by_path: dict[str, list[StoredAnchor]] = {}
                for anchor in self._facts.anchors.all():
                    by_path.setdefault(anchor.path, []).append(anchor)
                self._by_path = by_path
            return self._by_path

    def anchors_in(self, path: str) -> list[StoredAnchor]:
        return list(self._index().get(path, ()))

    def paths(self) -> list[str]:
        return sorted(self._index())

    # -- checking ------------------------------------------------------------------------------

    def _check(self, anchors: list[StoredAnchor], text: str, against: Against) -> list[AnchorState]:
        parsed = Text(text)
        states = []
        for number, anchor in enumerate(anchors):
            if number >= MAX_ANCHORS_PER_FILE:
                states.append(AnchorState(anchor, _UNCHECKED, None))
                continue
            located = parsed.locate(
                anchor.start_line, anchor.end_line, anchor.sha256, anchor.first_sha256
            )
            states.append(AnchorState(anchor, located, against))
        return states

    def update_buffer(self, checkout: Path, path: str, text: str) -> tuple[list[AnchorState], bool]:
        """Check a file's anchors against an editor buffer's text and keep the result while the
        buffer is open; also whether any anchor's state differs from before."""
        anchors = self.anchors_in(path)
        if len(text) > MAX_FILE_BYTES or "\x00" in text:
            states = [AnchorState(a, _UNCHECKED, None) for a in anchors]
        else:
            states = self._check(anchors, text, "buffer")
        with self._lock:
            before = self._buffers.get((checkout, path))
            self._buffers[(checkout, path)] = states
            self._open.add((checkout, path))
        previous = before if before is not None else self._disk_states(checkout, path)
        return states, [s.key for s in states] != [s.key for s in previous]

    def close_buffer(self, checkout: Path, path: str) -> None:
        with self._lock:
            self._buffers.pop((checkout, path), None)
            self._open.discard((checkout, path))

    def states(self, checkout: Path, path: str) -> list[AnchorState]:
        """The state of every anchor in one file: from its open buffer, else from the disk."""
        with self._lock:
            held = self._buffers.get((checkout, path))
        return held if held is not None else self._disk_states(checkout, path)

    def _disk_states(self, checkout: Path, path: str) -> list[AnchorState]:
        anchors = self.anchors_in(path)
        if not anchors:
            return []
        target = checkout / path
        try:
            info = target.stat()
            stamp = (info.st_mtime_ns, info.st_size)
        except OSError:
            stamp = (0, -1)
        with self._lock:
            cached = self._disk.get((checkout, path))
        if cached is not None and cached[0] == stamp:
            return cached[1]
        states = self._read_and_check(anchors, checkout, target, stamp[1])
        with self._lock:
            self._disk[(checkout, path)] = (stamp, states)
        return states

    def _read_and_check(
        self, anchors: list[StoredAnchor], checkout: Path, target: Path, size: int
    ) -> list[AnchorState]:
        unchecked = [AnchorState(a, _UNCHECKED, None) for a in anchors]
        if size < 0:
            return [AnchorState(a, Located("deleted"), "disk") for a in anchors]
        real = canonical(target)
        if not any(is_within(real, folder) for folder in self.folders) or size > MAX_FILE_BYTES:
            return unchecked
        try:
            data = read_regular(real, MAX_FILE_BYTES + 1)
        except (OSError, NotRegularFile):
            return unchecked
        if data is None:
            return [AnchorState(a, Located("deleted"), "disk") for a in anchors]
        if len(data) > MAX_FILE_BYTES or b"\x00" in data:
            return unchecked
        return self._check(anchors, data.decode("utf-8", "replace"), "disk")

    def fact_states(
        self, fact_ids: Iterable[int], checkout: Path | None = None
    ) -> dict[int, list[AnchorState]]:
        """The states of these facts' anchors in `checkout` (default: `default_checkout`);
        facts without anchors are left out. Without a checkout, every anchor is unchecked."""
        wanted = set(fact_ids)
        checkout = checkout or self.default_checkout()
        found: dict[int, list[AnchorState]] = {}
        for path, anchors in self._index().items():
            if not any(a.fact_id in wanted for a in anchors):
                continue
            if checkout is None:
                states = [AnchorState(a, _UNCHECKED, None) for a in anchors]
            else:
                states = self.states(checkout, path)
            for state in states:
                if state.anchor.fact_id in wanted:
                    found.setdefault(state.anchor.fact_id, []).append(state)
        for states in found.values():
            states.sort(key=lambda s: s.anchor.index)
        return found

    def open_paths(self) -> set[str]:
        """The paths of the files open in an editor (any checkout)."""
        with self._lock:
            return {path for _, path in self._open}
