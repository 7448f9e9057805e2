"""Live drift of code anchors: where each anchored fact's lines are now, per checkout and file.

`DriftTracker` belongs to one project runtime. It indexes the current revisions' anchors by
path (reloaded whenever facts change) and answers, for a file of a checkout, the state of every
anchor in it: against the editor's buffer when the server was given one (unsaved edits count),
else against the file on disk (cached by its size and modification time). A buffer change
re-checks only that file's anchors. A file Git says was renamed (renames.py) is followed: its
anchors are checked in the file it became, and shown there too.

Drift never edits or forgets a fact: statuses are computed, never stored; a `moved` anchor is
reported where its lines are now, and the store keeps the captured place until re-anchored. One
thing is recorded, for retirement (issue 26): when `fact_states` first sees every anchor of a fact
`changed` or `deleted`, and when it sees one in place again (`Retirement.note_drift`; a write
only when that changes).

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

from lecode_ls.errors import LecodeError
from lecode_ls.memory.anchors.renames import Renames, Stamp, git_stamp
from lecode_ls.memory.anchors.text import DRIFTED, Located, Text
from lecode_ls.memory.facts import FactStore, StoredAnchor
from lecode_ls.memory.files import NotRegularFile, read_regular
from lecode_ls.memory.project import checkout_root
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
    renamed_to: str | None = None  # the file Git says it became, where it was checked

    @property
    def key(self) -> tuple[object, ...]:
        a, loc = self.anchor, self.located
        return (
            a.fact_id,
            a.revision,
            a.index,
            loc.status,
            loc.start_line,
            loc.end_line,
            self.renamed_to,
        )


def _state(
    anchor: StoredAnchor, located: Located, against: Against | None, path: str
) -> AnchorState:
    """An anchor checked in the file `path`: its own, or the one Git says its file became (the
    lines are then `moved` even at their old line numbers)."""
    if anchor.path == path:
        return AnchorState(anchor, located, against)
    if located.status == "current":
        located = Located("moved", located.start_line, located.end_line)
    return AnchorState(anchor, located, against, renamed_to=path)


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
    if state.renamed_to is not None:
        entry["current_path"] = state.renamed_to
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
        self._renames = Renames()
        self._polled: dict[Path, Stamp | None] = {}
        self._noted: dict[int, tuple[int, bool]] = {}  # what note_drift last recorded, by fact
        self._reloads = 0  # states computed before a reload are not kept after it

    # -- what is tracked ---------------------------------------------------------------------

    def add_folder(self, folder: Path) -> None:
        """A workspace folder of this project: files in it can be checked, and a change of its
        checkout in Git from now on is noticed (`poll_checkouts`)."""
        with self._lock:
            if folder in self._folders:
                return
            self._folders.append(folder)
            checkout = checkout_root(folder, self._folders)
        if checkout is not None:
            stamp = git_stamp(checkout)
            with self._lock:
                self._polled.setdefault(checkout, stamp)

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
            self._reloads += 1
        self._renames.clear()

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

    def _followed(self, checkout: Path) -> dict[str, str]:
        """The anchored files of `checkout` Git says were renamed: old path -> new path. When
        that changes, the states cached for the checkout are dropped (open buffers are then
        checked on disk until their next change)."""
        index = self._index()
        if not index:
            return {}
        followed, changed = self._renames.followed(checkout, index)
        if changed:
            with self._lock:
                for cache in (self._disk, self._buffers):
                    for key in [key for key in cache if key[0] == checkout]:
                        del cache[key]
        return followed

    def renamed_into(self, checkout: Path | None = None) -> dict[str, list[str]]:
        """For each file Git says anchored files were renamed to in `checkout` (default:
        `default_checkout`), those files, sorted. One look at Git's state for all of them."""
        checkout = checkout or self.default_checkout()
        into: dict[str, list[str]] = {}
        for old, new in sorted(self._followed(checkout).items() if checkout else ()):
            into.setdefault(new, []).append(old)
        return into

    def _anchors_for(self, path: str, followed: dict[str, str]) -> list[StoredAnchor]:
        """The anchors checked in file `path`: its own and those of the files renamed to it."""
        anchors = self.anchors_in(path)
        for old, new in followed.items():
            if new == path:
                anchors += self.anchors_in(old)
        return anchors

    # -- checking ------------------------------------------------------------------------------

    def _check(
        self, anchors: list[StoredAnchor], text: str, against: Against, path: str
    ) -> list[AnchorState]:
        parsed = Text(text)
        states = []
        for number, anchor in enumerate(anchors):
            if number >= MAX_ANCHORS_PER_FILE:
                states.append(_state(anchor, _UNCHECKED, None, path))
                continue
            located = parsed.locate(
                anchor.start_line, anchor.end_line, anchor.sha256, anchor.first_sha256
            )
            states.append(_state(anchor, located, against, path))
        return states

    def update_buffer(self, checkout: Path, path: str, text: str) -> tuple[list[AnchorState], bool]:
        """Check a file's anchors against an editor buffer's text and keep the result while the
        buffer is open; also whether any anchor's state differs from before. Checked again
        when the facts were reloaded meanwhile (a forgotten fact's anchor must not stay)."""
        while True:
            with self._lock:
                reloads = self._reloads
            followed = self._followed(checkout)
            anchors = self._anchors_for(path, followed)
            if len(text) > MAX_FILE_BYTES or "\x00" in text:
                states = [_state(a, _UNCHECKED, None, path) for a in anchors]
            else:
                states = self._check(anchors, text, "buffer", path)
            with self._lock:
                if reloads != self._reloads:
                    continue
                before = self._buffers.get((checkout, path))
                self._buffers[(checkout, path)] = states
                self._open.add((checkout, path))
                break
        previous = before if before is not None else self._disk_states(checkout, path, followed)
        return states, [s.key for s in states] != [s.key for s in previous]

    def close_buffer(self, checkout: Path, path: str) -> None:
        with self._lock:
            self._buffers.pop((checkout, path), None)
            self._open.discard((checkout, path))

    def states(self, checkout: Path, path: str) -> list[AnchorState]:
        """The state of every anchor in one file (with those of files renamed to it): from its
        open buffer, else from the disk. For a file renamed away, its anchors as checked in the
        file it became."""
        return self._states(checkout, path, self._followed(checkout))

    def _states(self, checkout: Path, path: str, followed: dict[str, str]) -> list[AnchorState]:
        new = followed.get(path)
        if new is not None:
            return [s for s in self._states(checkout, new, followed) if s.anchor.path == path]
        with self._lock:
            held = self._buffers.get((checkout, path))
        return held if held is not None else self._disk_states(checkout, path, followed)

    def _disk_states(
        self, checkout: Path, path: str, followed: dict[str, str]
    ) -> list[AnchorState]:
        with self._lock:
            reloads = self._reloads
        anchors = self._anchors_for(path, followed)
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
        states = self._read_and_check(anchors, checkout, path, stamp[1])
        with self._lock:
            if reloads == self._reloads:  # else read before a reload: not kept
                self._disk[(checkout, path)] = (stamp, states)
        return states

    def _read_and_check(
        self, anchors: list[StoredAnchor], checkout: Path, path: str, size: int
    ) -> list[AnchorState]:
        unchecked = [_state(a, _UNCHECKED, None, path) for a in anchors]
        deleted = [_state(a, Located("deleted"), "disk", path) for a in anchors]
        if size < 0:
            return deleted
        real = canonical(checkout / path)
        if not any(is_within(real, folder) for folder in self.folders) or size > MAX_FILE_BYTES:
            return unchecked
        try:
            data = read_regular(real, MAX_FILE_BYTES + 1)
        except (OSError, NotRegularFile):
            return unchecked
        if data is None:
            return deleted
        if len(data) > MAX_FILE_BYTES or b"\x00" in data:
            return unchecked
        return self._check(anchors, data.decode("utf-8", "replace"), "disk", path)

    def poll_checkouts(self) -> list[str]:
        """The anchored files whose anchors' states changed because the Git state of their
        checkout (HEAD or the index: a branch switch, a commit, a `git mv`) changed since the
        last poll. Every anchored file of such a checkout is re-checked on disk (open buffers
        keep theirs); a file not checked before counts as changed. A checkout first seen
        (not one of a folder `add_folder` was given) only has its state recorded. Blocking."""
        with self._lock:
            folders = list(self._folders)
        checkouts = {checkout_root(folder, folders) for folder in folders}
        changed: set[str] = set()
        for checkout in sorted(c for c in checkouts if c is not None):
            stamp = git_stamp(checkout)
            with self._lock:
                known = self._polled.get(checkout, stamp)
                self._polled[checkout] = stamp
                if stamp is None or stamp == known:
                    continue
                # What was last computed (a file re-checked since by another caller is news to
                # nobody: whoever asked has the new state).
                before = {
                    path: [state.key for state in states]
                    for (where, path), (_, states) in self._disk.items()
                    if where == checkout
                }
                for (where, path), states in self._buffers.items():
                    if where == checkout:
                        before[path] = [state.key for state in states]
            followed = self._followed(checkout)
            for path in self.paths():
                if [s.key for s in self._states(checkout, path, followed)] != before.get(path):
                    changed.add(path)
        return sorted(changed)

    def fact_states(
        self, fact_ids: Iterable[int] | None = None, checkout: Path | None = None
    ) -> dict[int, list[AnchorState]]:
        """The states of these facts' anchors (of every anchored fact when None) in `checkout`
        (default: `default_checkout`); facts without anchors are left out. Without a checkout,
        every anchor is unchecked."""
        index = self._index()
        if fact_ids is None:
            wanted = {a.fact_id for anchors in index.values() for a in anchors}
        else:
            wanted = set(fact_ids)
        checkout = checkout or self.default_checkout()
        followed = self._followed(checkout) if checkout is not None else {}
        found: dict[int, list[AnchorState]] = {}
        for path, anchors in index.items():
            if not any(a.fact_id in wanted for a in anchors):
                continue
            if checkout is None:
                states = [AnchorState(a, _UNCHECKED, None) for a in anchors]
            else:
                states = self._states(checkout, path, followed)
            for state in states:
                # A file's states include those of files renamed to it: each is taken once,
                # under the path it is stored with.
                if state.anchor.fact_id in wanted and state.anchor.path == path:
                    found.setdefault(state.anchor.fact_id, []).append(state)
        for states in found.values():
            states.sort(key=lambda s: s.anchor.index)
        self._note(found)
        return found

    def _note(self, found: dict[int, list[AnchorState]]) -> None:
        """Record which facts have every anchor drifted (the module docstring), for the facts
        whose anchors were all checked, when that differs from what was recorded last."""
        seen = {
            fact_id: (states[0].anchor.revision, all(s.located.status in DRIFTED for s in states))
            for fact_id, states in found.items()
            if all(s.against is not None for s in states)
        }
        with self._lock:
            changed = {k: v for k, v in seen.items() if self._noted.get(k) != v}
        if not changed:
            return
        try:
            self._facts.retirement.note_drift(changed)
        except LecodeError:  # a damaged or locked store: drift is still shown, noted next time
            return
        with self._lock:
            self._noted.update(changed)

    def open_paths(self) -> set[str]:
        """The paths of the files open in an editor (any checkout)."""
        with self._lock:
            return {path for _, path in self._open}
