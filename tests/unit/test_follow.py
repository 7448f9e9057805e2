"""The follower (other_agents/follow.py) on real files and a real session store, with the hostile
values of issue 28's "Bad input": a line far longer than a poll reads, a half-written line, a
file that is replaced, one that is a link.

# covers R1-R8 (imported text bounded), S1 (never a record twice, never half a line)
"""

from __future__ import annotations

import json
from pathlib import Path

from lecode_ls.memory.sessions import SessionStore
from lecode_ls.other_agents import follow
from lecode_ls.other_agents.follow import Follower, claude_folder
from tests.fakes.agent_transcripts import claude_plain, claude_records


def setup(tmp_path: Path) -> tuple[Follower, SessionStore, Path]:
    project = tmp_path / "project"
    project.mkdir()
    store = tmp_path / "store"
    sessions = SessionStore(store)
    environ = {"CLAUDE_CONFIG_DIR": str(tmp_path / "claude"), "CODEX_HOME": str(tmp_path / "codex")}
    follower = Follower(sessions, store, [project], ["claude-code", "codex"], environ)
    folder = tmp_path / "claude" / "projects" / claude_folder(project.resolve())
    folder.mkdir(parents=True)
    return follower, sessions, folder


def bodies(sessions: SessionStore) -> dict[str, list[list[str]]]:
    """title -> the origin IDs of each session of that title."""
    out: dict[str, list[list[str]]] = {}
    for info in sessions.list():
        records = sessions.read(info.session_id, 1, info.records - 1) if info.records > 1 else []
        out.setdefault(info.title, []).append([r["meta"]["origin"]["id"] for r in records])
    return out


def test_a_line_longer_than_a_poll_is_skipped_to_its_end(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(follow, "MAX_POLL_BYTES", 64 * 1024)
    follower, sessions, folder = setup(tmp_path)
    project = (tmp_path / "project").resolve()
    records = claude_plain(project)
    huge = {**records[1], "uuid": "u-huge", "message": {"role": "user", "content": "x" * 300_000}}
    lines = [records[1], huge, records[4]]
    (folder / "a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    for _ in range(10):
        follower.poll()
    assert bodies(sessions) == {"Claude Code a": [["u-1", "u-4"]]}


def test_half_a_line_waits_and_a_replaced_file_starts_a_new_session(tmp_path: Path) -> None:
    follower, sessions, folder = setup(tmp_path)
    project = (tmp_path / "project").resolve()
    records = claude_plain(project)
    path = folder / "b.jsonl"
    line = json.dumps(records[1]) + "\n"
    path.write_text(line + json.dumps(records[4])[:30])
    assert follower.poll() == 1
    assert follower.poll() == 0
    with path.open("a") as f:
        f.write(json.dumps(records[4])[30:] + "\n")
    assert follower.poll() == 1
    assert bodies(sessions) == {"Claude Code b": [["u-1", "u-4"]]}
    replacement = folder / "b.new"
    replacement.write_text(line)
    replacement.replace(path)  # a new inode under the same name
    follower.poll()
    assert sorted(bodies(sessions)["Claude Code b"]) == [["u-1"], ["u-1", "u-4"]]


def test_links_and_fifos_are_never_followed(tmp_path: Path) -> None:
    import os

    follower, sessions, folder = setup(tmp_path)
    project = (tmp_path / "project").resolve()
    target = tmp_path / "elsewhere.jsonl"
    target.write_text(json.dumps(claude_records(project)[1]) + "\n")
    (folder / "link.jsonl").symlink_to(target)
    os.mkfifo(folder / "fifo.jsonl")
    assert follower.poll() == 0
    assert sessions.list() == []
