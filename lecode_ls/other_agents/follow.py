"""Following other agents' transcripts of a project: what they append becomes session records.

`[agents] follow = ["claude-code", "codex"]` (off by default). Where each agent keeps a
project's transcripts:

- Claude Code: `$CLAUDE_CONFIG_DIR` (default `~/.claude`) `/projects/<folder>/*.jsonl`, `<folder>`
  being the project folder's absolute path with every character other than a letter or digit
  replaced by `-` (`/home/me/my_app` -> `-home-me-my-app`);
- Codex CLI: `$CODEX_HOME` (default `~/.codex`) `/sessions/YYYY/MM/DD/rollout-*.jsonl`, the
  project told by the `cwd` of the file's `session_meta` record.

Each followed file has one lecode session (origin "import"), and a cursor in
`<store>/agents/follow.json`: the byte offset of the first line not yet taken, the line number
there, the file's identity (device, inode), and the session. A poll reads complete lines from
the offset only, converts them (transcripts.py: verbatim, origin kept, the same skips), appends
the records through `SessionStore.append` (the one way text enters a transcript), then saves
the cursor atomically. A crash between the append and the save is caught on the next poll: the
session's last record names the file line it came from, and lines up to it are not taken again,
so no record is appended twice. Bounds: files of at most MAX_FOLLOWED_BYTES, at most
MAX_POLL_BYTES read a file a poll and MAX_POLL_RECORDS appended a poll, at most MAX_FILES files;
a line longer than a poll's read is skipped to its end. A link or FIFO, a file that shrank or was
replaced, a record of another project: skipped or restarted with the reason logged.
"""

from __future__ import annotations

import json
import logging
import os
import re
import stat
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from lecode_ls import platform
from lecode_ls.errors import InvalidParams, LecodeError
from lecode_ls.memory.files import FileLock, atomic_write, make_dirs
from lecode_ls.memory.sessions import SessionStore
from lecode_ls.other_agents.transcripts import MAX_LINE_BYTES, Agent, convert, cwd_within, detect
from lecode_ls.platform.paths import canonical

log = logging.getLogger(__name__)

MAX_FOLLOWED_BYTES = 256 * 1024 * 1024
MAX_POLL_BYTES = 4 * 1024 * 1024
MAX_POLL_RECORDS = 2000
MAX_FILES = 200
_UNSAFE = re.compile(r"[^A-Za-z0-9]")


def claude_home(environ: Mapping[str, str]) -> Path:
    return Path(environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude")


def codex_home(environ: Mapping[str, str]) -> Path:
    return Path(environ.get("CODEX_HOME") or Path.home() / ".codex")


def claude_folder(project: Path) -> str:
    return _UNSAFE.sub("-", str(project))


@dataclass
class Cursor:
    session: str
    offset: int = 0
    line: int = 0  # the number of the last line taken (1-based), 0 before the first
    device: int = 0
    inode: int = 0
    skipping: bool = False  # inside a line longer than a poll's read


class Follower:
    """The followed transcripts of one project (one per runtime). Blocking."""

    def __init__(
        self,
        sessions: SessionStore,
        store: Path,
        folders: list[Path],
        agents: list[Agent],
        environ: Mapping[str, str],
    ) -> None:
        self.sessions = sessions
        self.state_path = store / "agents" / "follow.json"
        self.folders = [canonical(f) for f in folders]
        self.agents = agents
        self.environ = environ
        self._cursors: dict[str, Cursor] | None = None
        # session -> (its length then, the uuids / line digests it holds)
        self._seen: dict[str, tuple[int, set[str]]] = {}

    # -- finding ----------------------------------------------------------------------------

    def within(self, cwd: str) -> bool:
        return cwd_within(cwd, self.folders)

    def files(self) -> list[tuple[Agent, Path]]:
        """The project's transcripts of the followed agents, newest first, at most MAX_FILES."""
        found: list[tuple[float, Agent, Path]] = []
        if "claude-code" in self.agents:
            for folder in self.folders:
                where = claude_home(self.environ) / "projects" / claude_folder(folder)
                found += [(_mtime(p), "claude-code", p) for p in _listed(where.glob("*.jsonl"))]
        if "codex" in self.agents:
            rollouts = _listed(
                (codex_home(self.environ) / "sessions").glob("*/*/*/rollout-*.jsonl")
            )
            for path in sorted(rollouts, key=_mtime, reverse=True)[:MAX_FILES]:
                if self._codex_cwd_within(path):
                    found.append((_mtime(path), "codex", path))
        found.sort(key=lambda item: -item[0])
        return [(agent, path) for _, agent, path in found[:MAX_FILES]]

    def _codex_cwd_within(self, path: Path) -> bool:
        head = _read_from(path, 0, 1024 * 1024)
        if head is None:
            return False
        first = head[0].split(b"\n", 1)[0]
        try:
            meta = json.loads(first)
        except (ValueError, RecursionError):
            return False
        payload = meta.get("payload") if isinstance(meta, dict) else None
        cwd = payload.get("cwd") if isinstance(payload, dict) else None
        return (
            isinstance(meta, dict)
            and meta.get("type") == "session_meta"
            and isinstance(cwd, str)
            and self.within(cwd)
        )

    # -- cursors ----------------------------------------------------------------------------

    def cursors(self) -> dict[str, Cursor]:
        if self._cursors is None:
            self._cursors = {}
            try:
                raw = json.loads(self.state_path.read_bytes())
                for path, fields in raw.items():
                    self._cursors[path] = Cursor(**fields)
            except FileNotFoundError:
                pass
            except (OSError, ValueError, TypeError, AttributeError) as error:
                log.warning("agents/follow.json is unreadable (%s); following anew", error)
        return self._cursors

    def _save(self) -> None:
        data = {path: asdict(cursor) for path, cursor in self.cursors().items()}
        atomic_write(self.state_path, json.dumps(data, indent=1).encode(), backup=False)

    # -- polling ----------------------------------------------------------------------------

    def followed_sessions(self) -> list[str]:
        """The sessions of the files followed so far (the cursors' sessions)."""
        return [cursor.session for cursor in self.cursors().values()]

    def poll(self) -> int:
        """Append what is new in every followed file; the number of records appended. One
        poller at a time across processes (the language server, `lecode-ls mcp`): the cursors
        are read again under the lock, so two never take the same line."""
        make_dirs(self.state_path.parent)
        with FileLock(self.state_path.with_name("follow.lock")):
            self._cursors = None
            return self._poll()

    def _poll(self) -> int:
        budget = MAX_POLL_RECORDS
        for agent, path in self.files():
            if budget <= 0:
                break
            try:
                budget -= self._poll_file(agent, path, budget)
            except (LecodeError, OSError) as error:
                log.warning("following %s: %s", path.name, error)
        return MAX_POLL_RECORDS - budget

    def _poll_file(self, agent: Agent, path: Path, budget: int) -> int:
        key = str(path)
        st = _regular(path)
        if st is None:
            return 0
        if st.st_size > MAX_FOLLOWED_BYTES:
            log.info(
                "following %s: larger than %d bytes; not followed", path.name, MAX_FOLLOWED_BYTES
            )
            return 0
        cursor = self.cursors().get(key)
        if cursor is not None and (
            (cursor.device, cursor.inode) != (st.st_dev, st.st_ino) or cursor.offset > st.st_size
        ):
            log.info("following %s: the file was replaced or cut; following it anew", path.name)
            cursor = None
        if cursor is not None and cursor.offset == st.st_size:
            return 0
        read = _read_from(path, cursor.offset if cursor else 0, MAX_POLL_BYTES)
        if read is None:
            return 0
        data, _ = read
        if cursor is None:
            if detect(data.split(b"\n")[:50]) != agent:
                return 0  # not (yet) that agent's transcript
            title = ("Claude Code" if agent == "claude-code" else "Codex") + f" {path.stem}"
            cursor = Cursor(self.sessions.create(title, "import"), 0, 0, st.st_dev, st.st_ino)
            self.cursors()[key] = cursor
            self._save()  # at once: a failure later must not leave the session unknown
        return self._take(agent, path, cursor, data, budget)

    def _take(self, agent: Agent, path: Path, cursor: Cursor, data: bytes, budget: int) -> int:
        end = data.rfind(b"\n") + 1
        if end == 0:
            if len(data) >= MAX_POLL_BYTES:  # a line longer than a read: skip to its end
                log.info("following %s: line %d is too long; skipped", path.name, cursor.line + 1)
                cursor.offset += len(data)
                cursor.skipping = True
                self._save()
            return 0
        lines = data[:end].split(b"\n")[:-1]
        numbered = list(enumerate(lines, start=cursor.line + 1))
        if cursor.skipping:  # the end of an overlong line
            numbered[0] = (numbered[0][0], b"\x00" * (MAX_LINE_BYTES + 1))
        taken_to = self._last_taken(cursor.session)
        offsets = _line_ends(lines, cursor.offset)
        appended = 0
        upto = 0  # lines consumed
        for index, (number, line) in enumerate(numbered):
            if number <= taken_to:  # appended before a crash kept the cursor from being saved
                upto = index + 1
                continue
            # A rollout is followed because its session_meta names this project's folder.
            within = self.within if agent == "claude-code" else None
            seen = self._seen_in(cursor.session)
            converted = convert([(number, line)], agent, path.name, within=within, seen=seen)
            for reason, count in converted.skipped.items():
                log.debug("following %s: line %d skipped (%s)", path.name, number, reason)
                del count
            if appended + len(converted.records) > budget:
                break
            for record in converted.records:
                try:
                    self.sessions.append(cursor.session, record)
                except InvalidParams as error:  # a record the store refuses: never retried
                    log.info("following %s: line %d refused (%s)", path.name, number, error)
                    continue
                appended += 1
                known = self._seen.get(cursor.session)
                if known is not None:
                    self._seen[cursor.session] = (known[0] + 1, known[1])
            upto = index + 1
        if upto:
            cursor.offset = offsets[upto - 1]
            cursor.line = numbered[upto - 1][0]
            cursor.skipping = False
            self._save()
        return appended

    def _seen_in(self, session: str) -> set[str]:
        """The record identities `session` holds (read once), so a duplicated record is never
        appended, however far apart the copies are."""
        length = self.sessions.length(session)
        known = self._seen.get(session)
        if known is None or known[0] != length:  # new, or another process appended
            records = self.sessions.read(session, 1, length - 1) if length > 1 else []
            keys = set()
            for record in records:
                origin = _origin(record)
                key = origin.get("id") or origin.get("digest")
                if isinstance(key, str):
                    keys.add(key)
            known = (length, keys)
            self._seen[session] = known
        return known[1]

    def _last_taken(self, session: str) -> int:
        """The file line the session's last record came from (0: none)."""
        length = self.sessions.length(session)
        if length <= 1:
            return 0
        (last,) = self.sessions.read(session, length - 1, length - 1)
        line = _origin(last).get("line")
        return line if type(line) is int else 0


def _origin(record: dict[str, Any]) -> dict[str, Any]:
    meta = record.get("meta")
    origin = meta.get("origin") if isinstance(meta, dict) else None
    return origin if isinstance(origin, dict) else {}


def _line_ends(lines: list[bytes], start: int) -> list[int]:
    ends, position = [], start
    for line in lines:
        position += len(line) + 1
        ends.append(position)
    return ends


def _listed(paths: Iterator[Path]) -> list[Path]:
    out = []
    for path in paths:
        out.append(path)
        if len(out) >= 10 * MAX_FILES:
            break
    return out


def _mtime(path: Path) -> float:
    try:
        return os.lstat(path).st_mtime
    except OSError:
        return 0.0


def _regular(path: Path) -> os.stat_result | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        log.info("following %s: not a regular file (a link, a FIFO); skipped", path.name)
        return None
    return st


def _read_from(path: Path, offset: int, size: int) -> tuple[bytes, os.stat_result] | None:
    """Up to `size` bytes of a regular file from `offset`, opened without following a link and
    without blocking on a FIFO; None if it is not a regular file."""
    try:
        fd = platform.open_file(path)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        return platform.pread(fd, size, offset), st
    finally:
        platform.close(fd)
