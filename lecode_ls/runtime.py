"""One memory runtime per project identity, and the registry that shares them between folders.

A `Runtime` owns every store of one project (the Markdown notes, the transcripts, the facts and
their code anchors) and the caches that belong to them. The `Runtimes` registry maps each open folder to its project and creates runtimes lazily, so
every workspace folder of one checkout (nested folders, linked worktrees) shares one runtime.
Everything here is synchronous and blocking: the server calls it through `asyncio.to_thread`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from lecode_ls.config import Settings
from lecode_ls.errors import ExcludedEvidence, LecodeError, MemoryDisabled
from lecode_ls.memory.anchors import DriftTracker, verified_fact_anchor
from lecode_ls.memory.facts import FactStore, NewAnchor, Purpose, SourceLike
from lecode_ls.memory.files import STALE_TEMP_SECONDS, remove_stale_temps
from lecode_ls.memory.notes import MarkdownStore
from lecode_ls.memory.project import Project, migrate_legacy, resolve_project, store_dir
from lecode_ls.memory.scrub import finish_pending
from lecode_ls.memory.secrets import Redactor
from lecode_ls.memory.sessions import (
    Origin,
    SessionStore,
    SourceRef,
    SourceVerdicts,
    has_authored_text,
    source_snapshot,
    validate_source,
)
from lecode_ls.memory.team import Team
from lecode_ls.memory.working import SummaryVerdicts

log = logging.getLogger(__name__)


def _checkout_identity(root: Path) -> tuple[int, ...]:
    """What the project's resolution reads, as lstat identities: `root` itself, then the `.git`
    entry of `root` and of each folder above up to the first that has one (0 where none is)."""
    try:
        folder = os.lstat(root)
    except OSError:
        seen = [0]  # gone: what the resolution reads is still the `.git` entries above
    else:
        seen = [folder.st_dev, folder.st_ino, folder.st_mode]
    for candidate in (root, *root.parents):
        try:
            git = os.lstat(candidate / ".git")
        except OSError:
            seen.append(0)
            continue
        seen += [git.st_ino, git.st_mode]
        break
    return tuple(seen)


class Runtime:
    """The memory of one project. Created by `Runtimes`; closed by `close()`."""

    def __init__(self, project: Project, config_dir: Path, settings: Settings) -> None:
        self.project = project
        self.config_dir = config_dir
        self.store_path = store_dir(config_dir, project)
        self.settings = settings
        # One redaction step for every store of the project (P5), under the store's key.
        self.redactor = Redactor(
            self.store_path,
            extra_patterns=settings.privacy.extra_patterns,
            allow=settings.privacy.allow,
        )
        self.markdown = MarkdownStore(self.store_path, self.redactor)
        self.sessions = SessionStore(self.store_path, self.redactor, self.still_this_project)
        # Created lazily by its first write (F3): a disabled memory never creates it.
        self.facts_path = self.store_path / "facts.sqlite3"
        self.facts = FactStore(self.facts_path, root=self.store_path, redactor=self.redactor)
        self.verdicts = SourceVerdicts(self.sessions)
        """Which fact sources validated (the injection checks every shown fact's at every request)."""
        self.summaries = SummaryVerdicts()
        """What the working view found of each compaction summary (memory/working.py)."""
        self.drift = DriftTracker(self.facts)
        """Where the facts' code anchors are now, in open buffers or on disk (memory/anchors/drift.py)."""
        self.team = Team(self.facts)
        """The facts shared in each checkout's `.lecode/facts/`, verified (memory/team)."""
        self._identity_seen: tuple[int, ...] | None = None
        """`_checkout_identity` when the project last resolved to itself."""
        self._migrated: set[Path] = set()
        self._swept_at: float | None = None
        self.closed = False

    def attach_folder(self, folder: Path) -> None:
        """Note that `folder` uses this project; the first time, import its legacy notes (L6)."""
        self.drift.add_folder(folder)
        if folder in self._migrated or not self.settings.memory.enabled:
            return
        self._migrated.add(folder)
        copied = migrate_legacy(self.config_dir, self.project, folder, self.redactor.text)
        if copied:
            log.info("imported %d legacy memory file(s) from %s", len(copied), folder)

    def remove_debris(self, *, due_only: bool = False) -> list[str]:
        """Remove the temp files writers killed mid-write left in the store (its folder, daily/,
        notes/ and sessions/), never one a live writer is still writing: the rule is
        `files.remove_stale_temps`. Returns the store-relative names removed.

        A temp file must have gone unwritten for a minute, so one left by a crash just before
        this server started (an editor restarts a crashed server at once) is taken by a later
        call: with `due_only`, this runs at most once per STALE_TEMP_SECONDS (the server calls it
        that often). A secret scrub a crash left pending is finished too (memory/scrub.py:
        its facts were never stale meanwhile). Nothing happens while memory is disabled;
        nothing is ever raised.
        """
        now = time.monotonic()
        if not self.settings.memory.enabled or self.closed:
            return []
        if due_only and self._swept_at is not None and now - self._swept_at < STALE_TEMP_SECONDS:
            return []
        self._swept_at = now
        removed: list[str] = []
        for sub in ("", "daily", "notes", "sessions"):
            folder = self.store_path / sub if sub else self.store_path
            removed += [f"{sub}/{name}" if sub else name for name in remove_stale_temps(folder)]
        with contextlib.suppress(LecodeError):  # a damaged store: the next scan or scrub says so
            if finish_pending(self):
                log.info("finished a secret scrub a crash had left pending")
        return removed

    def require_memory(self) -> MarkdownStore:
        """The Markdown store, or MemoryDisabled when `[memory] enabled = false`."""
        if not self.settings.memory.enabled:
            raise MemoryDisabled()
        return self.markdown

    def require_facts(self) -> tuple[SessionStore, FactStore]:
        """The transcript and fact stores, or MemoryDisabled."""
        if not self.settings.memory.enabled:
            raise MemoryDisabled()
        return self.sessions, self.facts

    def still_this_project(self) -> bool:
        """Whether the project's root still resolves to itself (S3, rechecked by every source
        validation): not when its `.git` went and a folder above holds one, or it became a
        linked worktree of another checkout. Its store is then another project's memory, and
        its sources are `missing` (reason `project`). No Git process: while the root and the
        `.git` entries the resolution reads are the very ones last seen (a few lstats, ~8 us),
        the answer stands; else the full resolution (~130 us) decides again."""
        seen = _checkout_identity(self.project.root)
        if seen == self._identity_seen:
            return True
        same = resolve_project(self.project.root).root == self.project.root
        self._identity_seen = seen if same else None
        return same

    def check_source(self, ref: SourceLike, purpose: Purpose) -> None:
        """Validate evidence against this project's transcripts and exclusions (S3); raises."""
        source = SourceRef(ref.session_id, tuple(ref.seqs), ref.digest)
        verdict = validate_source(self.sessions, source, purpose=purpose, exclusions=self.facts)
        if verdict.reason == "excluded":  # its own code: this evidence is gone for good
            raise ExcludedEvidence(
                "source: a forget excluded this evidence; it can never be used again",
                field="source",
            )
        verdict.require()

    def record_evidence(
        self,
        records: list[dict[str, Any]],
        *,
        session_id: str | None,
        title: str,
        origin: Origin = "chat",
    ) -> SourceRef:
        """Record an exchange the server itself witnessed (a selection the person remembers, a
        line an MCP agent asked about) and capture it as evidence: `records` are appended, one
        after the other, to `session_id`, or to a new session titled `title` (made by
        `origin`). SessionNotFound
        when `session_id` is gone. The caller keeps others from appending to that session
        meanwhile (the records of one exchange are contiguous). Blocking."""
        if session_id is None:
            session_id = self.sessions.create(title, origin)
        first = self.sessions.append(session_id, records[0])
        for record in records[1:]:
            self.sessions.append(session_id, record)
        last = first + len(records) - 1
        return source_snapshot(self.sessions, session_id, first, last, exclusions=self.facts)

    def verified_anchors(self, text: str, ref: SourceLike) -> list[NewAnchor]:
        """The code anchor of a verified project fact (`path contains "line"`, A5) whose
        evidence shows that line read, resolved in this project's workspace folders; [] for
        any other fact. Blocking."""
        anchor = verified_fact_anchor(text, ref, self.sessions, self.drift.folders)
        return [] if anchor is None else [anchor]

    def has_authored_text(self, ref: SourceLike) -> bool:
        """Whether the cited records include persisted user or assistant text (F6)."""
        records = self.sessions.read(ref.session_id, ref.seqs[0], ref.seqs[-1])
        cited = (records[seq - ref.seqs[0]] for seq in ref.seqs)
        return any(has_authored_text(record) for record in cited)

    def close(self) -> None:
        """Close every store (K3): later calls on them raise StoreError. Idempotent. The server
        stops this project's turns and compactions first (LecodeServer.shutdown)."""
        self.closed = True
        self.facts.close()
        self.sessions.close()
        self.markdown.close()


class Runtimes:
    """Folder -> project -> Runtime, created lazily and shared by every folder of a project."""

    def __init__(self, config_dir: Path, settings: Settings) -> None:
        self.config_dir = config_dir
        self._settings = settings
        self._by_root: dict[Path, Runtime] = {}
        self._root_of: dict[Path, Path] = {}
        # Handlers run in worker threads; creation must not race into two runtimes of a project.
        self._lock = threading.Lock()

    def for_folder(self, folder: Path) -> Runtime:
        """The runtime of the project that `folder` (a resolved folder path) belongs to."""
        with self._lock:
            root = self._root_of.get(folder)
            runtime = self._by_root.get(root) if root is not None else None
            if runtime is None:
                project = resolve_project(folder)
                self._root_of[folder] = project.root
                runtime = self._by_root.get(project.root)
                if runtime is None:
                    runtime = Runtime(project, self.config_dir, self._settings)
                    self._by_root[project.root] = runtime
        runtime.attach_folder(folder)
        runtime.remove_debris(due_only=True)
        return runtime

    def existing(self, folder: Path) -> Runtime | None:
        """The runtime already serving `folder`, if any; never touches the disk."""
        with self._lock:
            root = self._root_of.get(folder)
            return self._by_root.get(root) if root is not None else None

    def all(self) -> list[Runtime]:
        with self._lock:
            return list(self._by_root.values())

    def update_settings(self, settings: Settings) -> None:
        with self._lock:
            self._settings = settings
            for runtime in self._by_root.values():
                runtime.settings = settings
                runtime.redactor.configure(settings.privacy.extra_patterns, settings.privacy.allow)

    def release(self, workspace_folders: Iterable[Path]) -> list[Runtime]:
        """Drop the runtimes no open workspace folder uses any more and return them: the caller
        stops their work and closes them (`Runtime.close`)."""
        roots = list(workspace_folders)
        with self._lock:
            self._root_of = {
                f: r for f, r in self._root_of.items() if any(f.is_relative_to(w) for w in roots)
            }
            live = set(self._root_of.values())
            gone = [root for root in self._by_root if root not in live]
            return [self._by_root.pop(root) for root in gone]

    def close_all(self) -> None:
        with self._lock:
            runtimes = list(self._by_root.values())
            self._by_root.clear()
            self._root_of.clear()
        for runtime in runtimes:
            runtime.close()

    def __len__(self) -> int:
        return len(self._by_root)
