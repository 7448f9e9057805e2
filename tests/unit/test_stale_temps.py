"""Temp files that a write killed mid-way leaves behind are removed, never one still being written.

A temp file (`.<name>.<16 hex>.tmp`) goes when nothing wrote to it for a minute and its lock is
free (every writer holds an exclusive lock on its temp file until it is renamed into place; the
kernel drops a dead writer's lock). Writers are real: a child process killed with SIGKILL in the
middle of `atomic_write`, and one still alive in it.

# covers issue 10 item 10 (debris), L5
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from lecode_ls import platform
from lecode_ls.config import Settings
from lecode_ls.memory.files import TEMP_NAME, remove_stale_temps, temp_path
from lecode_ls.runtime import Runtimes
from tests.unit.stores import make_runtime

REPO = Path(__file__).resolve().parents[2]

# Writes 1 MiB to `<folder>/MEMORY.md` through atomic_write, and stops inside it (in the fsync,
# after the data went out) until killed: the moment a kill -9 leaves a temp file behind.
STUCK_WRITER = textwrap.dedent(
    """
    import sys, threading
    from pathlib import Path
    from lecode_ls import platform
    from lecode_ls.memory.files import atomic_write

    class Stuck(type(platform.current())):
        def fsync(self, fd):
            print("writing", flush=True)
            threading.Event().wait()

    with platform.use(Stuck()):
        atomic_write(Path(sys.argv[1]) / "MEMORY.md", b"x" * (1 << 20), backup=False)
    """
)


def age(path: Path, seconds: float = 3600) -> None:
    """Make `path` look unwritten for `seconds`."""
    past = path.stat().st_mtime - seconds
    os.utime(path, (past, past), follow_symlinks=False)


def temps(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if TEMP_NAME.fullmatch(p.name))


@pytest.fixture
def stuck_writer(tmp_path: Path) -> Iterator[subprocess.Popen[str]]:
    with subprocess.Popen(
        [sys.executable, "-c", STUCK_WRITER, str(tmp_path)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
    ) as writer:
        assert writer.stdout is not None
        assert writer.stdout.readline() == "writing\n"
        try:
            yield writer
        finally:
            writer.kill()


class TestTheRule:
    def test_the_temp_file_of_a_live_writer_is_kept_even_when_old(
        self, tmp_path: Path, stuck_writer: subprocess.Popen[str]
    ) -> None:
        [name] = temps(tmp_path)
        age(tmp_path / name)  # a writer stopped for an hour (a laptop asleep) is still alive
        assert remove_stale_temps(tmp_path) == []
        assert temps(tmp_path) == [name]

    def test_the_temp_file_of_a_killed_writer_is_removed_once_a_minute_old(
        self, tmp_path: Path, stuck_writer: subprocess.Popen[str]
    ) -> None:
        stuck_writer.send_signal(signal.SIGKILL)
        stuck_writer.wait(timeout=60)
        [name] = temps(tmp_path)
        assert (tmp_path / name).stat().st_size == 1 << 20
        assert remove_stale_temps(tmp_path) == []  # just written: maybe not locked yet
        age(tmp_path / name, 61)
        assert remove_stale_temps(tmp_path) == [name]
        assert temps(tmp_path) == []
        assert not (tmp_path / "MEMORY.md").exists()  # the interrupted write never landed

    def test_a_temp_file_locked_in_this_process_is_kept(self, tmp_path: Path) -> None:
        temp = temp_path(tmp_path / "MEMORY.md")
        fd = platform.open_file(temp, write=True, create=True, exclusive=True)
        try:
            platform.lock(fd)
            age(temp)
            assert remove_stale_temps(tmp_path) == []
        finally:
            platform.close(fd)
        assert remove_stale_temps(tmp_path) == [temp.name]

    def test_only_temp_file_names_are_touched(self, tmp_path: Path) -> None:
        names = [
            "MEMORY.md",
            "MEMORY.md.bak",
            ".lock",
            ".MEMORY.md.0123456789abcdef.tmp.bak",
            ".MEMORY.md.0123456789ABCDEF.tmp",  # upper-case hex is not ours
            ".MEMORY.md.0123456789abcde.tmp",  # 15 digits
            "x.tmp",
        ]
        for name in names:
            (tmp_path / name).write_text("keep")
            age(tmp_path / name)
        assert remove_stale_temps(tmp_path) == []
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted(names)

    def test_a_link_named_like_a_temp_file_is_neither_followed_nor_removed(
        self, tmp_path: Path
    ) -> None:
        outside = tmp_path / "outside.md"
        outside.write_text("precious")
        store = tmp_path / "store"
        store.mkdir()
        link = store / ".MEMORY.md.0123456789abcdef.tmp"
        link.symlink_to(outside)
        age(link)
        age(outside)
        assert remove_stale_temps(store) == []
        assert link.is_symlink() and outside.read_text() == "precious"

    def test_a_linked_folder_is_not_swept(self, tmp_path: Path) -> None:
        real = tmp_path / "real"
        real.mkdir()
        temp = real / ".a.md.0123456789abcdef.tmp"
        temp.write_text("x")
        age(temp)
        (tmp_path / "notes").symlink_to(real, target_is_directory=True)
        assert remove_stale_temps(tmp_path / "notes") == []
        assert temp.exists()

    def test_a_leftover_hard_link_of_a_new_transcript_goes_and_the_transcript_stays(
        self, tmp_path: Path
    ) -> None:
        # create_transcript links its temp file into place, then removes the temp name: a kill
        # in between leaves a second name of the live transcript.
        runtime = make_runtime(tmp_path)
        session = runtime.sessions.create("kept")
        transcript = runtime.sessions.folder / f"{session}.jsonl"
        leftover = temp_path(transcript)
        os.link(transcript, leftover)
        age(leftover)
        assert remove_stale_temps(runtime.sessions.folder) == [leftover.name]
        assert runtime.sessions.length(session) == 1
        assert transcript.stat().st_nlink == 1


class TestWhenItRuns:
    def test_a_server_opening_a_project_removes_stale_temps_in_every_store_folder(
        self, tmp_path: Path
    ) -> None:
        config = tmp_path / "config"
        folder = tmp_path / "project"
        folder.mkdir()
        first = Runtimes(config, Settings()).for_folder(folder)
        first.markdown.write("MEMORY.md", "x", "replace")
        first.markdown.write("notes/a.md", "x", "replace")
        first.markdown.write("daily/2026-01-01.md", "x", "replace")
        session = first.sessions.create()
        left = []
        for path in (
            first.store_path / "MEMORY.md",
            first.store_path / "notes" / "a.md",
            first.store_path / "daily" / "2026-01-01.md",
            first.sessions.folder / f"{session}.idx",
        ):
            temp = temp_path(path)
            temp.write_bytes(b"half a write")
            age(temp)
            left.append(temp)
        young = temp_path(first.store_path / "scratchpad.md")
        young.write_bytes(b"being written right now")

        second = Runtimes(config, Settings()).for_folder(folder)  # another server starts
        assert [p.exists() for p in left] == [False] * 4
        assert young.exists()
        assert second.markdown.read("MEMORY.md") == ("x", True)

    def test_later_sweeps_run_at_most_once_a_minute_and_not_when_memory_is_off(
        self, tmp_path: Path
    ) -> None:
        runtime = make_runtime(tmp_path)
        runtime.markdown.write("MEMORY.md", "x", "replace")
        assert runtime.remove_debris(due_only=True) == []
        temp = temp_path(runtime.store_path / "MEMORY.md")
        temp.write_bytes(b"half")
        age(temp)
        assert runtime.remove_debris(due_only=True) == []  # swept less than a minute ago
        off = make_runtime(tmp_path, Settings.model_validate({"memory": {"enabled": False}}))
        assert off.remove_debris() == []
        assert runtime.remove_debris() == [temp.name]
