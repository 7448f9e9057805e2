"""The team's facts in one checkout: `.lecode/facts/*.json` read, verified and kept current.

Each worktree is a checkout of its own branch, so each has its own shelf: a fact shared on a
feature branch is on that branch's shelf only, until the branch merges.

`refresh()` is cheap when nothing changed (one listing of the folder and a stat of each file),
so the server calls it before every read and from the poll that watches Git's state. A file is
read and verified again only when its size, time or inode changed; a pull, a checkout or a
merge replaces the files it touches.

Verification, per file (`format.decode` has checked its shape and bounds first):

- the bundle: `evidence.digest` is the S2 digest of the bundled records; the session ID has the
  exact form; the cited records hold user or assistant text (F6); a verified project fact
  (`path contains "line"`, A5) bundles the read that showed that line;
- the repository: the file names a commit this clone holds (a file copied from another
  repository does not);
- the anchors: each path is relative, and stays inside the checkout once links are resolved;
- the person's own store: evidence a forget here excluded is `hidden` (the person forgot the
  team's fact for good, for themselves); a fact of theirs whose current revision cites exactly
  this evidence with this text is the same fact (`local_fact_id`), not a second one.

Anything that fails is listed `unverified` with the reason and never injected. A shared file is
untrusted evidence, whoever wrote it: nothing in it is run, followed or written anywhere.
"""

from __future__ import annotations

import itertools
import logging
import os
import stat
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from lecode_ls import platform
from lecode_ls.errors import LecodeError
from lecode_ls.memory.anchors import (
    MAX_FILE_BYTES as MAX_CODE_BYTES,
)
from lecode_ls.memory.anchors import (
    Located,
    Text,
    fact_path_line,
    git_stamp,
    has_commit,
    read_line_number,
    root_commits,
)
from lecode_ls.memory.canonical import records_digest
from lecode_ls.memory.facts import FactStore, check_path
from lecode_ls.memory.files import NotRegularFile, read_regular
from lecode_ls.memory.secrets import Redactor
from lecode_ls.memory.sessions import check_session_id, has_authored_text
from lecode_ls.memory.team import format as f
from lecode_ls.memory.team.format import SharedAnchor, SharedDoc, Unverifiable, strings
from lecode_ls.memory.team.ranked import INDEX_SECONDS, SharedRanking
from lecode_ls.platform.paths import canonical, is_within

log = logging.getLogger(__name__)

Status = Literal["valid", "unverified", "hidden"]
Support = Literal["quote", "read", "claim"]
"""What a valid shared fact's bundle shows of its text: `quote`, the text is an exact quote of a
cited user message (the person's words, A4); `read`, a `path contains "line"` fact whose bundle
holds the read of that line (A5); `claim`, anything else: the sharer's words about the evidence,
which the records do not contain."""
Against = Literal["buffer", "disk"]
MAX_TEXTS = 32
"""Anchored files (and buffers) whose split text a shelf keeps between checks."""
UNCHECKED = Text("")
"""What `_disk_text` gives for a file drift does not check (too large, not text, outside)."""


@dataclass(frozen=True)
class TeamFact:
    """One shared-fact file of the checkout, as verified now."""

    id: str
    file: str  # relative to the checkout: ".lecode/facts/<id>.json"
    status: Status
    reason: str | None  # why it is unverified or hidden
    doc: SharedDoc | None  # None when the file could not be read as a shared fact
    local_fact_id: int | None = None  # the person's own fact that this one is

    @property
    def support(self) -> Support:
        """What the bundle shows of the text (see `Support`)."""
        return "claim" if self.doc is None else support_of(self.doc)

    @property
    def key(self) -> tuple[object, ...]:
        doc = self.doc
        return (self.id, self.status, self.reason, doc and doc.revision, doc and doc.text,
                doc and doc.evidence.digest, self.local_fact_id)  # fmt: skip


@dataclass(frozen=True)
class _Read:
    key: tuple[int, int, int]  # the file's modification time, size and inode when read
    doc: SharedDoc | None
    reason: str | None  # what the file itself fails, or None


TextOf = Callable[[str], str | None]
"""The open editor buffer of a checkout-relative file, or None (then the disk is read)."""


class Shelf:
    """The shared facts of one checkout (see the module docstring). Thread-safe."""

    def __init__(
        self,
        checkout: Path,
        local: FactStore,
        *,
        load_seconds: float = f.LOAD_SECONDS,
        index_seconds: float = INDEX_SECONDS,
    ) -> None:
        self.checkout = checkout
        self._local = local
        self._load_seconds = load_seconds
        self._index_seconds = index_seconds
        self._lock = threading.Lock()
        self._read: dict[str, _Read] = {}
        self._facts: dict[str, TeamFact] = {}
        self._made: dict[str, _Read] = {}  # the read each listed fact was made from
        self._placed: dict[str, tuple[_Read, str | None]] = {}  # the read and its placement
        self._texts: dict[str, tuple[tuple[int, int], Text]] = {}
        self._buffers: dict[str, tuple[str, Text]] = {}
        self._seen: tuple[object, ...] | None = None
        self.loaded = False
        """Whether it was ever refreshed."""
        self._injectable: dict[str, TeamFact] = {}  # valid, not the person's own, by ID
        self._anchored: dict[str, list[TeamFact]] = {}  # of those, by anchored path
        self._injectable_texts: dict[str, str] = {}  # their texts, by ID
        self._generation: object = object()  # a new one whenever those texts change
        self._ranking = SharedRanking()  # their texts, ranked as the store's facts are
        self._roots: frozenset[str] = frozenset()  # the root commits of HEAD
        self._commits: dict[str, bool] = {}  # other commits named, looked up (a bounded few)
        self._git: object = None  # the Git state `_roots` and `_commits` were looked up in
        self._retry = False  # the person's store could not be read: look again next time
        self._texts_lock = threading.Lock()
        self.skipped: dict[str, int] = {}
        """Files not read, by why (over a bound, not named `<id>.json`)."""
        self.pending = 0
        """Changed files the last load had no time to read or check: done at the next refresh."""
        self.buffer_text: TextOf = lambda rel: None
        """The editor's open buffers of this checkout (the server sets it): anchors are checked
        against them, else against the disk."""

    # -- reading -----------------------------------------------------------------------------

    def refresh(self) -> bool:
        """Read what changed since the last call, within the load's time bound (reading and
        every check); True when the listing changed. Blocking."""
        with self._lock:
            deadline = time.monotonic() + self._load_seconds
            before = [fact.key for fact in self._facts.values()]
            listed, skipped = self._listing()
            git = git_stamp(self.checkout)
            seen = (tuple(sorted(listed.items())), git, self._local.stamp())
            if seen == self._seen and not self.pending:
                return False
            fresh = self._seen is None or git != self._seen[1]
            if git != self._git:  # a checkout, a pull or a fetch: commits and links may differ
                self._roots = root_commits(self.checkout)
                self._commits.clear()
                self._placed.clear()
                self._git = git
            local_changed = fresh or self._seen is None or seen[2] != self._seen[2]
            self._load(listed, deadline)
            self.skipped = skipped
            self._retry = False
            self._facts = self._overlay(local_changed, deadline)
            injectable = {
                fact.id: fact
                for fact in self._facts.values()
                if fact.status == "valid" and fact.local_fact_id is None and fact.doc is not None
            }
            if [(i, t.doc and t.doc.text) for i, t in injectable.items()] != [
                (i, t.doc and t.doc.text) for i, t in self._injectable.items()
            ]:
                self._generation = object()
                self._injectable_texts = {i: t.doc.text for i, t in injectable.items() if t.doc}
            self._injectable = injectable
            self._anchored = {}
            for fact in injectable.values():
                for anchor in fact.doc.anchors if fact.doc is not None else ():
                    self._anchored.setdefault(anchor.path, []).append(fact)
            self.loaded = True
            # An unfinished load must run again even if nothing else changes.
            self._seen = seen if not (self.pending or self._retry) else None
            return [fact.key for fact in self._facts.values()] != before

    def _listing(self) -> tuple[dict[str, tuple[int, int, int, int]], dict[str, int]]:
        """The folder's shared-fact files: name -> (kind: 2 a link, 1 a regular file, 0 anything
        else; mtime, size, inode), and the names
        skipped, by reason. A folder that is a link, or leads out of the checkout, is not read."""
        folder = self.checkout / f.FOLDER
        skipped: dict[str, int] = {}
        for part in (self.checkout / ".lecode", folder):
            found = platform.kind(part)
            if found == "link":
                return {}, {"the folder is a symbolic link": 1}
            if found != "dir":
                return {}, {}
        if not is_within(canonical(folder), self.checkout):
            return {}, {"the folder leads out of the checkout": 1}
        listed: dict[str, tuple[int, int, int, int]] = {}
        try:
            with os.scandir(folder) as entries:
                for looked, entry in enumerate(entries):
                    if looked >= f.MAX_ENTRIES:
                        skipped[f"past {f.MAX_ENTRIES} names in the folder"] = 1
                        break
                    if entry.name.startswith("."):
                        continue  # a writer's temp file, or a dotfile: not a shared fact
                    if f.FILE.fullmatch(entry.name) is None:
                        skipped["not named <20 hex digits>.json"] = (
                            skipped.get("not named <20 hex digits>.json", 0) + 1
                        )
                        continue
                    if len(listed) >= f.MAX_FILES:
                        name = f"past {f.MAX_FILES} files"
                        skipped[name] = skipped.get(name, 0) + 1
                        continue
                    info = entry.stat(follow_symlinks=False)  # a link's own, not its target's
                    found = (
                        "file" if stat.S_ISREG(info.st_mode) else platform.kind(folder / entry.name)
                    )
                    kind = 2 if found == "link" else 1 if found == "file" else 0
                    listed[entry.name] = (kind, info.st_mtime_ns, info.st_size, info.st_ino)
        except OSError:
            return {}, {}
        return listed, skipped

    def _load(self, listed: dict[str, tuple[int, int, int, int]], deadline: float) -> None:
        """Read and check every listed file that changed, until `deadline` and within
        MAX_TOTAL_BYTES; drop the ones gone."""
        held = {name: read for name, read in self._read.items() if name in listed}
        total = sum(read.key[1] for read in held.values() if read.doc is not None)
        self.pending = 0
        read_any = False
        for name in sorted(listed):
            kind, mtime, size, inode = listed[name]
            key = (mtime, size, inode)
            known = held.get(name)
            if known is not None and known.key == key:
                continue
            if read_any and time.monotonic() > deadline:  # each load reads one at least
                self.pending += 1
                continue
            read_any = True
            if kind == 2:
                held[name] = _Read(key, None, "the file is a symbolic link")
            elif kind == 0:
                held[name] = _Read(key, None, "not a regular file")
            elif size > f.MAX_FILE_BYTES:
                held[name] = _Read(key, None, f"over {f.MAX_FILE_BYTES} bytes")
            elif total + size > f.MAX_TOTAL_BYTES:
                held[name] = _Read(key, None, f"past {f.MAX_TOTAL_BYTES} bytes of shared facts")
            else:
                held[name] = self._read_one(name, key)
                if held[name].doc is not None:
                    total += size
        self._read = held

    def _read_one(self, name: str, key: tuple[int, int, int]) -> _Read:
        team_id = name.removesuffix(".json")
        try:
            data = read_regular(self.checkout / f.FOLDER / name, f.MAX_FILE_BYTES + 1)
        except (OSError, NotRegularFile):
            return _Read(key, None, "the file cannot be read")
        if data is None:
            return _Read(key, None, "the file is gone")
        if len(data) > f.MAX_FILE_BYTES:
            return _Read(key, None, f"over {f.MAX_FILE_BYTES} bytes")
        try:
            doc = f.decode(data, team_id)
            return _Read(key, doc, bundle_problem(doc) or secret_problem(self._local.redactor, doc))
        except Unverifiable as failed:
            return _Read(key, None, failed.reason)
        except Exception:  # a crafted file must cost itself, never the shelf (nor every chat)
            log.exception("shared fact %s could not be verified", team_id)
            return _Read(key, None, "the file could not be verified")

    # -- what the person's own store and the checkout say --------------------------------------

    def _overlay(self, local_changed: bool, deadline: float) -> dict[str, TeamFact]:
        """Each file's fact as the checkout and the person's own store say now: a file whose
        read is unchanged keeps its fact unless the person's store changed. A file whose
        placement there was no time to check is unverified until the next refresh checks it."""
        found: dict[str, TeamFact] = {}
        verify: dict[str, TeamFact] = {}
        prefixes: dict[str, int] = {}  # what `leads_out` found of each folder, in this overlay
        checked_any = False  # each overlay checks one at least
        for name in sorted(self._read):
            read = self._read[name]
            team_id = name.removesuffix(".json")
            before = self._facts.get(team_id)
            if not local_changed and before is not None and self._made.get(team_id) is read:
                found[team_id] = before
                continue
            doc = read.doc
            reason = read.reason
            checked = True
            if reason is None and doc is not None:
                placed = self._placed.get(name)
                if placed is not None and placed[0] is read:
                    reason = placed[1]
                elif checked_any and time.monotonic() > deadline:
                    reason = "not checked yet (past the load's time bound): checked next time"
                    self.pending += 1
                    checked = False
                else:
                    reason = self._placement_problem(doc, prefixes)
                    self._placed[name] = (read, reason)
                    checked_any = True
            if checked:
                self._made[team_id] = read
            else:
                self._made.pop(team_id, None)  # made again once it is checked
            status: Status = "unverified" if reason or not doc else "valid"
            found[team_id] = TeamFact(team_id, f"{f.FOLDER}/{name}", status, reason, doc)
            if status == "valid":
                verify[team_id] = found[team_id]
        self._made = {team_id: read for team_id, read in self._made.items() if team_id in found}
        self._placed = {name: p for name, p in self._placed.items() if name in self._read}
        docs = [fact.doc for fact in verify.values() if fact.doc is not None]
        try:
            excluded = self._local.excluded_in(doc.evidence.session_id for doc in docs)
            holders = self._local.holding(
                (doc.evidence.session_id, doc.evidence.digest) for doc in docs
            )
        except LecodeError:  # the person's store is unreadable: nothing unchecked is shown
            self._retry = True  # and the next refresh tries again
            for team_id, fact in verify.items():
                found[team_id] = replace(
                    fact, status="unverified", reason="your own store could not be read"
                )
            return found
        for team_id, fact in verify.items():
            assert fact.doc is not None
            evidence = fact.doc.evidence
            if excluded.get(evidence.session_id, frozenset()).intersection(evidence.seqs):
                found[team_id] = replace(
                    fact, status="hidden", reason="you forgot this fact's evidence"
                )
                continue
            for fact_id in holders.get((evidence.session_id, evidence.digest), ()):
                own = self._local.get(fact_id)
                if own is not None and own.text == fact.doc.text:
                    found[team_id] = replace(fact, local_fact_id=fact_id)
                    break
        return found

    def _placement_problem(self, doc: SharedDoc, prefixes: dict[str, int]) -> str | None:
        """What the checkout says against the file: its repository, its anchors' paths. A
        repository named by HEAD's root commit costs nothing; any other commit is looked up, at
        most MAX_REPOSITORIES of them per Git state (so files naming bogus commits cannot make
        the genuine ones unverifiable)."""
        try:
            if doc.repository not in self._roots:
                known = self._commits.get(doc.repository)
                if known is None and len(self._commits) >= f.MAX_REPOSITORIES:
                    return f"it names a repository past the {f.MAX_REPOSITORIES} looked up"
                if known is None:
                    known = has_commit(self.checkout, doc.repository)
                    self._commits[doc.repository] = known
                if not known:
                    return "it names a repository this clone does not hold"
            for anchor in doc.anchors:
                if leads_out(self.checkout, anchor.path, prefixes):
                    return f"anchor path {anchor.path[:100]!r} leads out of the checkout"
        except Exception:  # as in _read_one: the file's own problem, never the shelf's
            log.exception("shared fact %s: its placement could not be checked", doc.id)
            return "its placement could not be checked"
        return None

    # -- answers ---------------------------------------------------------------------------

    def facts(self) -> list[TeamFact]:
        """Every shared-fact file read, by ID."""
        with self._lock:
            return list(self._facts.values())

    def anchored_in(self, paths: Iterable[str], most: int) -> list[TeamFact]:
        """The injectable facts (valid, not the person's own) anchored in `paths`, at most
        `most`, by path then ID."""
        with self._lock:
            found = [fact for path in sorted(paths) for fact in self._anchored.get(path, ())]
        return list({fact.id: fact for fact in found}.values())[:most]

    def ranked(
        self, queries: Sequence[str], most: int
    ) -> list[list[tuple[TeamFact, tuple[str, ...]]]]:
        """For each of `queries`, the injectable facts that rank first for it (BM25 with the
        store's words and bounds, facts/ranked.py), at most `most`, each with the words it
        matched. Costs a bounded query and at most the index's time bound (ranked.py), not the
        shelf's size; the index is written outside the shelf's lock, so nothing waits on it."""
        with self._lock:
            injectable, generation = self._injectable, self._generation
            by_id = self._injectable_texts
        if not any(query.strip() for query in queries):
            return [[] for _ in queries]
        found = self._ranking.search(generation, by_id, queries, most, self._index_seconds)
        return [
            [(injectable[team_id], words) for team_id, words in hits if team_id in injectable]
            for hits in found
        ]

    def injectable(self, most: int) -> list[TeamFact]:
        """The first `most` injectable facts by ID."""
        with self._lock:
            return list(itertools.islice(self._injectable.values(), most))

    def injectable_fact(self, team_id: str) -> TeamFact | None:
        """The fact `team_id` while it may be shown to a model (valid, not the person's own)."""
        with self._lock:
            return self._injectable.get(team_id)

    def candidates(self, paths: set[str], most: int, queries: Sequence[str] = ()) -> list[TeamFact]:
        """The facts a request may show, at most `most`: those anchored in `paths` first, then
        those that rank first for each of `queries`, then by ID."""
        first = self.anchored_in(paths, most)
        for hits in self.ranked(queries, most):
            first.extend(fact for fact, _ in hits)
        chosen: dict[str, TeamFact] = {}
        for fact in [*first, *self.injectable(most)]:
            if len(chosen) >= most:
                break
            chosen.setdefault(fact.id, fact)
        return list(chosen.values())

    def get(self, team_id: str) -> TeamFact | None:
        with self._lock:
            return self._facts.get(team_id)

    def for_local(self, fact_id: int) -> TeamFact | None:
        """The shared fact that the person's fact `fact_id` is, if any."""
        with self._lock:
            return next((t for t in self._facts.values() if t.local_fact_id == fact_id), None)

    def forget_cached(self, name: str) -> None:
        """Drop what is known of one file (the server just wrote or removed it)."""
        with self._lock:
            self._read.pop(name, None)
            self._seen = None

    def anchor_states(
        self, fact: TeamFact, text_of: TextOf
    ) -> list[tuple[SharedAnchor, Located, Against | None]]:
        """Where each anchor's lines are now: (anchor, where, "buffer" | "disk" | None when
        unchecked), against the open buffer when `text_of` gives one, else the file."""
        states: list[tuple[SharedAnchor, Located, Against | None]] = []
        for anchor in fact.doc.anchors if fact.doc is not None else ():
            text = text_of(anchor.path)
            against: Against = "buffer"
            if text is None:
                parsed: Text | None = None
            if text is None:
                parsed, against = self._disk_text(anchor.path), "disk"
            elif len(text) <= MAX_CODE_BYTES and "\x00" not in text:
                parsed = self._buffer_texts(anchor.path, text)
            if text is None and parsed is None:
                states.append((anchor, Located("deleted"), "disk"))
            elif parsed is None or parsed is UNCHECKED:
                states.append((anchor, Located("unchecked"), None))
            else:
                where = parsed.locate(
                    anchor.start_line, anchor.end_line, anchor.sha256, anchor.first_sha256
                )
                states.append((anchor, where, against))
        return states

    def _buffer_texts(self, path: str, text: str) -> Text:
        """A buffer's text, split once for all the anchors in it (kept while it is the same)."""
        with self._texts_lock:
            held = self._buffers.get(path)
            if held is not None and held[0] == text:
                return held[1]
        parsed = Text(text)
        with self._texts_lock:
            if len(self._buffers) >= MAX_TEXTS:
                self._buffers.pop(next(iter(self._buffers)))
            self._buffers[path] = (text, parsed)
        return parsed

    def _disk_text(self, path: str) -> Text | None:
        """The file's text, split once and kept while its time and size stay the same (at most
        MAX_TEXTS files, MAX_CODE_BYTES each); UNCHECKED when it is larger or not text, None
        when it is gone."""
        if leads_out(self.checkout, path):
            return UNCHECKED
        try:
            info = (self.checkout / path).stat()
            stamp = (info.st_mtime_ns, info.st_size)
            with self._texts_lock:
                held = self._texts.get(path)
            if held is not None and held[0] == stamp:
                return held[1]
            data = read_regular(self.checkout / path, MAX_CODE_BYTES + 1)
        except (OSError, NotRegularFile):
            return None
        if data is None:
            return None
        parsed = (
            UNCHECKED
            if len(data) > MAX_CODE_BYTES or b"\x00" in data
            else Text(data.decode("utf-8", "replace"))
        )
        with self._texts_lock:
            if len(self._texts) >= MAX_TEXTS:
                self._texts.pop(next(iter(self._texts)))
            self._texts[path] = (stamp, parsed)
        return parsed


def bundle_problem(doc: SharedDoc) -> str | None:
    """What the file's own evidence fails (see the module docstring), or None."""
    evidence = doc.evidence
    try:
        check_session_id(evidence.session_id)
    except LecodeError:
        return "evidence.sessionId: not a session ID"
    try:
        digest = records_digest(evidence.records)
    except (TypeError, ValueError):
        return "evidence.records: not canonical JSON"
    if digest != evidence.digest:
        return "evidence: the records do not hash to its digest (changed since it was shared)"
    first = evidence.seqs[0]
    cited = [evidence.records[seq - first] for seq in evidence.seqs]
    if not any(has_authored_text(record) for record in cited):
        return "evidence: no user or assistant text among the cited records"
    parsed = fact_path_line(doc.text)
    if parsed is not None and read_line_number(evidence.records, *parsed) is None:
        return "evidence: no read of that line in the bundled records"
    return None


def support_of(doc: SharedDoc) -> Support:
    """What `doc`'s bundle shows of its text (see `Support`); a read is checked by
    `bundle_problem`, so a valid `path contains` fact is one."""
    if fact_path_line(doc.text) is not None:
        return "read"
    first = doc.evidence.seqs[0]
    for seq in doc.evidence.seqs:
        record = doc.evidence.records[seq - first]
        if record.get("role") != "user" or not has_authored_text(record):
            continue
        content = record["content"]
        parts = [content] if isinstance(content, str) else [p.get("text") for p in content]
        if any(isinstance(part, str) and doc.text in part for part in parts):
            return "quote"
    return "claim"


def secret_problem(redactor: Redactor, doc: SharedDoc) -> str | None:
    """Whether a file holds a secret the detector finds (its texts, its sharer's name, an
    anchor's path, a record's strings and keys): such a file is never shown to a model, whoever
    wrote it. One pass of the detector over all its strings, each on a line of its own (a
    secret split across two strings may count: a refusal only)."""
    texts = [doc.text, doc.shared_by, *(e.text for e in doc.history)]
    texts += [anchor.path for anchor in doc.anchors]
    texts += strings(list(doc.evidence.records), keys=True)
    found = redactor.find("\n".join(texts))
    for text in texts:  # JSON inside a string (a tool call's arguments): its decoded strings
        if not found and text[:1] in "{[" and "\\" in text:
            found = redactor.find_all(text)
    return f"it holds a secret ({found[0].kind})" if found else None


IN, OUT, MISSING = 0, 1, 2


def leads_out(checkout: Path, path: str, seen: dict[str, int] | None = None) -> bool:
    """Whether the checkout-relative `path` is not one anchors may name, or leads out of the
    checkout through a link. The path is walked a name at a time (one lstat each), only the links met are
    resolved, and the walk stops at the first name that does not exist (nothing past it can
    lead anywhere). `canonical()` of the whole path would cost a lookup per name of every
    prefix, quadratic in its depth: a crafted 1,021-character path took milliseconds, 48,000 of
    them 111 s. `seen` keeps what each prefix was (IN, OUT, MISSING) across the paths of one
    check: paths that share folders pay for them once."""
    try:
        check_path(path)
    except LecodeError:
        return True
    seen = {} if seen is None else seen
    current = checkout
    for name in path.split("/"):
        current = current / name
        key = str(current)
        state = seen.get(key)
        if state is None:
            try:
                found = platform.kind(current)
            except (OSError, ValueError):  # a name that cannot be looked up cannot be read
                found = "missing"
            if found == "missing":
                state = MISSING
            else:
                out = found == "link" and not is_within(canonical(current), checkout)
                state = OUT if out else IN
            seen[key] = state
        if state != IN:
            return state == OUT
    return False
