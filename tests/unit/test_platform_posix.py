"""The POSIX implementation of the platform layer (the one these tests run on), and macOS's fsync.

Locks are checked across descriptors of this process (flock locks belong to the open file
description, so two opens exclude each other like two processes) and across a real process.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from lecode_ls import platform
from lecode_ls.platform.posix import PosixFiles, darwin_files

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def files() -> PosixFiles:
    return PosixFiles()


def test_the_platform_in_use_here_is_posix() -> None:
    assert platform.current().name in ("posix", "darwin")
    assert isinstance(platform.current(), PosixFiles)


class TestOpen:
    def test_a_link_at_the_last_component_is_refused(
        self, files: PosixFiles, tmp_path: Path
    ) -> None:
        (tmp_path / "real").write_text("x")
        (tmp_path / "link").symlink_to(tmp_path / "real")
        for kwargs in ({}, {"write": True}, {"write": True, "create": True}):
            with pytest.raises(OSError) as caught:
                files.open(tmp_path / "link", **kwargs)
            assert caught.value.errno == errno.ELOOP

    def test_exclusive_create_refuses_an_existing_file_and_makes_it_owner_only(
        self, files: PosixFiles, tmp_path: Path
    ) -> None:
        fd = files.open(tmp_path / "new", write=True, create=True, exclusive=True)
        files.close(fd)
        assert (tmp_path / "new").stat().st_mode & 0o777 == 0o600
        with pytest.raises(FileExistsError):
            files.open(tmp_path / "new", write=True, create=True, exclusive=True)

    def test_a_fifo_opens_for_reading_without_blocking(
        self, files: PosixFiles, tmp_path: Path
    ) -> None:
        os.mkfifo(tmp_path / "fifo")
        files.close(files.open(tmp_path / "fifo"))

    def test_the_descriptor_is_not_inherited(self, files: PosixFiles, tmp_path: Path) -> None:
        fd = files.open(tmp_path / "f", write=True, create=True)
        try:
            assert os.get_inheritable(fd) is False
        finally:
            files.close(fd)


class TestLocks:
    def test_two_descriptors_of_one_process_exclude_each_other(
        self, files: PosixFiles, tmp_path: Path
    ) -> None:
        a = files.open(tmp_path / ".lock", write=True, create=True)
        b = files.open(tmp_path / ".lock", write=True, create=True)
        try:
            assert files.lock(a) is True
            assert files.lock(b, blocking=False) is False
            assert files.lock(b, shared=True, blocking=False) is False
            files.unlock(a)
            assert files.lock(b, blocking=False) is True
        finally:
            files.close(a)
            files.close(b)

    def test_shared_locks_coexist_and_keep_exclusive_out_until_closed(
        self, files: PosixFiles, tmp_path: Path
    ) -> None:
        fds = [files.open(tmp_path / ".lock", write=True, create=True) for _ in range(3)]
        try:
            assert files.lock(fds[0], shared=True) and files.lock(fds[1], shared=True)
            assert files.lock(fds[2], blocking=False) is False
            files.close(fds.pop(0))
            files.close(fds.pop(0))  # closing releases
            assert files.lock(fds[0], blocking=False) is True
        finally:
            for fd in fds:
                files.close(fd)

    def test_a_lock_held_by_another_process_is_seen_and_dropped_when_it_dies(
        self, files: PosixFiles, tmp_path: Path
    ) -> None:
        lock = tmp_path / ".lock"
        script = textwrap.dedent(
            """
            import sys
            from pathlib import Path
            from lecode_ls import platform
            fd = platform.open_file(Path(sys.argv[1]), write=True, create=True)
            platform.lock(fd, shared=True)
            print("held", flush=True)
            sys.stdin.read()
            """
        )
        with subprocess.Popen(
            [sys.executable, "-c", script, str(lock)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=REPO,
        ) as holder:
            assert holder.stdout is not None
            assert holder.stdout.readline() == "held\n"
            fd = files.open(lock, write=True)
            try:
                assert files.lock(fd, shared=True, blocking=False) is True  # shared with it
                files.unlock(fd)
                assert files.lock(fd, blocking=False) is False
                holder.kill()  # kill -9: the kernel drops its lock
                holder.wait(timeout=60)
                assert files.lock(fd, blocking=False) is True
            finally:
                files.close(fd)


class TestRenames:
    def test_publish_refuses_an_existing_target_and_keeps_the_source_name(
        self, files: PosixFiles, tmp_path: Path
    ) -> None:
        (tmp_path / "temp").write_text("new")
        (tmp_path / "taken").write_text("old")
        with pytest.raises(FileExistsError):
            files.publish(tmp_path / "temp", tmp_path / "taken")
        files.publish(tmp_path / "temp", tmp_path / "free")
        assert (tmp_path / "free").read_text() == "new"
        assert (tmp_path / "temp").exists()  # a hard link: the caller removes the temp name
        assert (tmp_path / "taken").read_text() == "old"


class TestDarwinFsync:
    # macOS: fsync(2) leaves data in the drive's cache; F_FULLFSYNC flushes it

    def test_full_fsync_is_used_when_given(self, tmp_path: Path) -> None:
        seen: list[int] = []
        files = PosixFiles(full_fsync=seen.append)
        fd = files.open(tmp_path / "f", write=True, create=True)
        try:
            files.fsync(fd)
            files.fsync_dir(tmp_path)
        finally:
            files.close(fd)
        assert seen[0] == fd and len(seen) == 2
        assert files.name == "darwin"

    def test_a_file_system_without_full_fsync_falls_back_to_fsync(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        def unsupported(fd: int) -> None:
            raise OSError(errno.ENOTSUP, "Operation not supported")

        plain: list[int] = []
        monkeypatch.setattr(os, "fsync", plain.append)
        files = PosixFiles(full_fsync=unsupported)
        files.fsync(42)
        assert plain == [42]

    def test_darwin_files_is_plain_posix_elsewhere(self) -> None:
        expected = "darwin" if sys.platform == "darwin" else "posix"
        assert darwin_files().name == expected
