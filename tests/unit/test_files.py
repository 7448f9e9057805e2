"""The file primitives under the Markdown store: atomic writes, link refusal and the store lock.

Everything runs on real files under tmp_path. The only monkeypatched seam is `os.replace`, to
make a write fail at the last step (the tests run as root, so permissions cannot make it fail).
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import threading
from pathlib import Path

import pytest

from lecode_ls.errors import SymlinkRefused
from lecode_ls.memory.files import (
    FileLock,
    NotRegularFile,
    atomic_write,
    read_regular,
    refuse_symlinks,
)


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


class TestAtomicWrite:
    # covers L5

    def test_the_new_bytes_and_then_the_rename_are_fsynced(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # covers L5 (issue 41, item 7): removing either fsync of atomic_write fails here. The
        # real os.fsync runs; each call is recorded with what it synced and what the target
        # held then: first the temp file, holding all the new bytes, before the rename; then
        # the folder, once the rename made the target the new file.
        target = tmp_path / "notes" / "MEMORY.md"
        atomic_write(target, b"old", backup=False)
        real_fsync = os.fsync
        synced: list[tuple[str, int, bytes]] = []

        def recording(fd: int) -> None:
            info = os.fstat(fd)
            kind = "dir" if stat.S_ISDIR(info.st_mode) else "file"
            synced.append((kind, info.st_size if kind == "file" else info.st_ino,
                           target.read_bytes()))  # fmt: skip
            real_fsync(fd)

        monkeypatch.setattr(os, "fsync", recording)
        atomic_write(target, b"new bytes", backup=False)
        folder = target.parent.stat().st_ino
        assert synced == [("file", len(b"new bytes"), b"old"), ("dir", folder, b"new bytes")]

    def test_writes_the_bytes_owner_only_and_creates_missing_folders_owner_only(
        self, tmp_path: Path
    ) -> None:
        target = tmp_path / "store" / "notes" / "a.md"
        atomic_write(target, b"hello\n", backup=True)
        assert target.read_bytes() == b"hello\n"
        assert mode_of(target) == 0o600
        assert mode_of(tmp_path / "store") == 0o700
        assert mode_of(tmp_path / "store" / "notes") == 0o700

    def test_an_overwrite_with_backup_keeps_the_previous_content_in_bak(
        self, tmp_path: Path
    ) -> None:
        target = tmp_path / "MEMORY.md"
        atomic_write(target, b"first", backup=True)
        assert not (tmp_path / "MEMORY.md.bak").exists()  # nothing to back up yet
        atomic_write(target, b"second", backup=True)
        atomic_write(target, b"third", backup=True)
        assert target.read_bytes() == b"third"
        assert (tmp_path / "MEMORY.md.bak").read_bytes() == b"second"

    def test_an_overwrite_without_backup_leaves_no_bak(self, tmp_path: Path) -> None:
        target = tmp_path / "x.md"
        atomic_write(target, b"first", backup=False)
        atomic_write(target, b"second", backup=False)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["x.md"]

    def test_a_failed_rename_leaves_the_original_intact_and_no_temp_file(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        target = tmp_path / "MEMORY.md"
        atomic_write(target, b"original", backup=True)
        real_replace = os.replace

        def failing_replace(src: str | Path, dst: str | Path) -> None:
            if str(dst).endswith(".bak"):
                real_replace(src, dst)  # let the backup through; fail the real target
                return
            raise OSError(errno.ENOSPC, "No space left on device")

        monkeypatch.setattr(os, "replace", failing_replace)
        with pytest.raises(OSError, match="No space left"):
            atomic_write(target, b"new", backup=True)
        assert target.read_bytes() == b"original"
        assert sorted(p.name for p in tmp_path.iterdir()) == ["MEMORY.md", "MEMORY.md.bak"]

    def test_a_parent_that_is_a_file_fails_without_creating_anything(self, tmp_path: Path) -> None:
        (tmp_path / "plain").write_text("not a folder")
        with pytest.raises(NotADirectoryError):
            atomic_write(tmp_path / "plain" / "x.md", b"data", backup=True)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["plain"]


class TestRefuseSymlinks:
    # covers L4: links anywhere in the store are refused

    def test_real_paths_and_missing_components_pass(self, tmp_path: Path) -> None:
        (tmp_path / "notes").mkdir()
        (tmp_path / "notes" / "a.md").write_text("x")
        refuse_symlinks(tmp_path, tmp_path / "notes" / "a.md")
        refuse_symlinks(tmp_path, tmp_path / "daily" / "2026-01-01.md")

    def test_a_linked_root_is_refused(self, tmp_path: Path) -> None:
        (tmp_path / "real").mkdir()
        (tmp_path / "store").symlink_to(tmp_path / "real")
        with pytest.raises(SymlinkRefused) as caught:
            refuse_symlinks(tmp_path / "store", tmp_path / "store" / "MEMORY.md")
        assert str(tmp_path) not in caught.value.message

    def test_a_linked_folder_is_refused_and_named_relative_to_the_store(
        self, tmp_path: Path
    ) -> None:
        (tmp_path / "elsewhere").mkdir()
        (tmp_path / "notes").symlink_to(tmp_path / "elsewhere")
        with pytest.raises(SymlinkRefused) as caught:
            refuse_symlinks(tmp_path, tmp_path / "notes" / "a.md")
        assert caught.value.message.startswith("file: notes is a symbolic link in the store")
        assert caught.value.field == "file"

    def test_a_linked_file_is_refused_even_when_dangling(self, tmp_path: Path) -> None:
        (tmp_path / "MEMORY.md").symlink_to(tmp_path / "missing")
        with pytest.raises(SymlinkRefused, match=r"MEMORY\.md is a symbolic link"):
            refuse_symlinks(tmp_path, tmp_path / "MEMORY.md")


class TestReadRegular:
    def test_a_missing_file_reads_as_none(self, tmp_path: Path) -> None:
        assert read_regular(tmp_path / "absent") is None

    def test_reads_all_bytes_or_at_most_max_bytes(self, tmp_path: Path) -> None:
        (tmp_path / "f").write_bytes(b"0123456789")
        assert read_regular(tmp_path / "f") == b"0123456789"
        assert read_regular(tmp_path / "f", 4) == b"0123"

    def test_a_link_in_the_last_component_is_not_followed(self, tmp_path: Path) -> None:
        (tmp_path / "real").write_text("x")
        (tmp_path / "link").symlink_to(tmp_path / "real")
        with pytest.raises(OSError) as caught:
            read_regular(tmp_path / "link")
        assert caught.value.errno == errno.ELOOP

    def test_a_fifo_or_folder_is_refused_without_blocking(self, tmp_path: Path) -> None:
        os.mkfifo(tmp_path / "fifo")
        (tmp_path / "dir").mkdir()
        with pytest.raises(NotRegularFile):
            read_regular(tmp_path / "fifo")
        with pytest.raises(NotRegularFile):
            read_regular(tmp_path / "dir")


class TestFileLock:
    def test_a_held_lock_excludes_another_open_of_the_same_file(self, tmp_path: Path) -> None:
        lock_path = tmp_path / "store" / ".lock"
        with FileLock(lock_path):
            fd = os.open(lock_path, os.O_RDWR)
            try:
                with pytest.raises(BlockingIOError):
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            finally:
                os.close(fd)
        fd = os.open(lock_path, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # released on exit
        finally:
            os.close(fd)

    def test_one_instance_shared_by_threads_serializes_read_modify_write(
        self, tmp_path: Path
    ) -> None:
        lock = FileLock(tmp_path / ".lock")
        counter = tmp_path / "counter"
        counter.write_text("0")
        start = threading.Barrier(8)

        def bump() -> None:
            start.wait()
            for _ in range(50):
                with lock:
                    counter.write_text(str(int(counter.read_text()) + 1))

        threads = [threading.Thread(target=bump) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert counter.read_text() == "400"
