"""Store layout: the config folder, a project's store folder, and the one-time import of the
Markdown that older lecode kept per working directory.

Stores are real folders in tmp_path; legacy stores are laid out as older lecode left them, with
databases, backups and links beside the Markdown.
"""

from __future__ import annotations

import logging
import shutil
import stat
from pathlib import Path

import platformdirs
import pytest

from lecode_ls.errors import SymlinkRefused
from lecode_ls.memory.project.identity import Project, project_slug, resolve_project
from lecode_ls.memory.project.layout import (
    CONFIG_DIR_ENV,
    LEGACY_IMPORTS,
    config_dir,
    migrate_legacy,
    store_dir,
)
from lecode_ls.memory.secrets import Redactor

LEGACY_MARKDOWN = {
    "MEMORY.md": b"# Long-term\n- use tabs\n",
    "scratchpad.md": b"- [ ] ship it\n",
    "daily/2024-05-01.md": b"worked on the parser\n",
    "notes/build.md": b"make all\n",
}
LEGACY_OTHER = {
    "facts.sqlite3": b"SQLite format 3\x00",
    "facts.sqlite3-wal": b"wal",
    "MEMORY.md.bak": b"old memory\n",
    "notes/build.md.bak": b"old build\n",
    "daily/not-a-date.md": b"x\n",
    "daily/2024-13-40.md": b"x\n",
    "random.txt": b"x\n",
    "notes/.hidden.md": b"x\n",
}


def files_under(folder: Path) -> dict[str, bytes]:
    """Every regular file below `folder`, by relative name, with its bytes."""
    return {
        path.relative_to(folder).as_posix(): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and not path.is_symlink()
    }


def write_files(folder: Path, files: dict[str, bytes]) -> None:
    for name, data in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


@pytest.fixture
def config(tmp_path: Path) -> Path:
    folder = tmp_path / "config"
    folder.mkdir()
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Project:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "sub").mkdir()
    return resolve_project(root)


@pytest.fixture
def cwd(project: Project) -> Path:
    return project.root / "sub"


@pytest.fixture
def legacy(config: Path, cwd: Path) -> Path:
    """The legacy store older lecode kept for `cwd`, with Markdown and everything else."""
    folder = config / "memory" / project_slug(cwd.resolve())
    write_files(folder, LEGACY_MARKDOWN | LEGACY_OTHER)
    return folder


class TestConfigDir:
    # covers L1
    def test_the_environment_variable_names_the_config_folder(self, tmp_path: Path) -> None:
        assert config_dir({CONFIG_DIR_ENV: str(tmp_path / "cfg")}) == tmp_path / "cfg"

    def test_a_relative_or_home_path_in_the_variable_is_made_absolute(self) -> None:
        assert (
            config_dir({CONFIG_DIR_ENV: "~/lecode-cfg"}) == (Path.home() / "lecode-cfg").resolve()
        )
        assert config_dir({CONFIG_DIR_ENV: "rel"}) == Path.cwd().resolve() / "rel"

    def test_without_the_variable_the_platform_config_folder_is_used(self) -> None:
        # The autouse fixture sets the variable in os.environ: only the mapping passed counts.
        expected = Path(platformdirs.user_config_dir("lecode"))
        assert config_dir({}) == expected
        assert config_dir({CONFIG_DIR_ENV: ""}) == expected


class TestStoreDir:
    # covers L4
    def test_the_store_is_the_slug_folder_under_memory(
        self, config: Path, project: Project
    ) -> None:
        assert store_dir(config, project) == config / "memory" / project.slug

    def test_naming_the_store_does_not_create_it(self, config: Path, project: Project) -> None:
        assert not store_dir(config, project).exists()


class TestLegacyImportCopies:
    # covers L6
    def test_every_legacy_markdown_file_is_copied_into_an_empty_store(
        self, config: Path, project: Project, cwd: Path, legacy: Path
    ) -> None:
        copied = migrate_legacy(config, project, cwd)
        assert copied == sorted(LEGACY_MARKDOWN)
        store = store_dir(config, project)
        assert files_under(store) == LEGACY_MARKDOWN | {LEGACY_IMPORTS: f"{legacy.name}\n".encode()}

    def test_a_secret_in_a_legacy_note_is_redacted_as_it_is_copied(
        self, config: Path, project: Project, cwd: Path, legacy: Path
    ) -> None:
        # covers P5 (legacy notes come in through the store's redaction step, issue 27)
        token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
        (legacy / "MEMORY.md").write_text(f"deploy token {token}\n")
        redactor = Redactor(store_dir(config, project))
        migrate_legacy(config, project, cwd, redactor.text)
        copied = (store_dir(config, project) / "MEMORY.md").read_text()
        assert token not in copied and copied.startswith("deploy token [secret:github-token:")

    def test_copied_files_are_readable_by_their_owner_only(
        self, config: Path, project: Project, cwd: Path, legacy: Path
    ) -> None:
        migrate_legacy(config, project, cwd)
        mode = (store_dir(config, project) / "MEMORY.md").stat().st_mode
        assert stat.S_IMODE(mode) == 0o600

    def test_a_cwd_given_through_a_link_finds_the_legacy_store_of_the_real_folder(
        self, config: Path, project: Project, cwd: Path, legacy: Path, tmp_path: Path
    ) -> None:
        link = tmp_path / "link-to-sub"
        link.symlink_to(cwd, target_is_directory=True)
        assert migrate_legacy(config, project, link) == sorted(LEGACY_MARKDOWN)


class TestLegacyImportNeverOverwrites:
    # covers L6
    def test_an_existing_destination_is_kept_and_not_reported(
        self, config: Path, project: Project, cwd: Path, legacy: Path
    ) -> None:
        store = store_dir(config, project)
        write_files(store, {"MEMORY.md": b"current\n", "notes/build.md": b"current build\n"})
        copied = migrate_legacy(config, project, cwd)
        assert copied == ["daily/2024-05-01.md", "scratchpad.md"]
        assert (store / "MEMORY.md").read_bytes() == b"current\n"
        assert (store / "notes" / "build.md").read_bytes() == b"current build\n"

    def test_a_dangling_link_at_the_destination_counts_as_present(
        self, config: Path, project: Project, cwd: Path, legacy: Path, tmp_path: Path
    ) -> None:
        store = store_dir(config, project)
        store.mkdir(parents=True)
        (store / "scratchpad.md").symlink_to(tmp_path / "nowhere")
        assert "scratchpad.md" not in migrate_legacy(config, project, cwd)
        assert not (tmp_path / "nowhere").exists()

    def test_a_linked_store_folder_is_refused_without_writing_through_it(
        self, config: Path, project: Project, cwd: Path, legacy: Path, tmp_path: Path
    ) -> None:
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        store = store_dir(config, project)
        store.mkdir(parents=True)
        (store / "notes").symlink_to(elsewhere, target_is_directory=True)
        with pytest.raises(SymlinkRefused):
            migrate_legacy(config, project, cwd)
        assert list(elsewhere.iterdir()) == []


class TestLegacyImportCopiesOnlyMarkdown:
    # covers L6
    def test_databases_backups_and_other_files_are_never_copied(
        self, config: Path, project: Project, cwd: Path, legacy: Path
    ) -> None:
        migrate_legacy(config, project, cwd)
        store_files = set(files_under(store_dir(config, project)))
        assert store_files & set(LEGACY_OTHER) == set()

    def test_legacy_files_are_left_in_place_unchanged(
        self, config: Path, project: Project, cwd: Path, legacy: Path
    ) -> None:
        migrate_legacy(config, project, cwd)
        assert files_under(legacy) == LEGACY_MARKDOWN | LEGACY_OTHER

    def test_a_linked_legacy_file_is_skipped_and_logged(
        self,
        config: Path,
        project: Project,
        cwd: Path,
        legacy: Path,
        tmp_path: Path,
        caplog: pytest.LogCaptureFixture,
    ) -> None:
        secret = tmp_path / "secret.md"
        secret.write_bytes(b"not memory\n")
        (legacy / "notes" / "linked.md").symlink_to(secret)
        (legacy / "scratchpad.md").unlink()
        (legacy / "scratchpad.md").symlink_to(secret)
        with caplog.at_level(logging.WARNING, logger="lecode_ls.memory.project.layout"):
            copied = migrate_legacy(config, project, cwd)
        assert copied == ["MEMORY.md", "daily/2024-05-01.md", "notes/build.md"]
        assert not (store_dir(config, project) / "notes" / "linked.md").exists()
        assert sum("symbolic link" in record.getMessage() for record in caplog.records) == 2

    def test_a_linked_legacy_folder_is_skipped(
        self, config: Path, project: Project, cwd: Path, legacy: Path, tmp_path: Path
    ) -> None:
        outside = tmp_path / "outside-daily"
        write_files(outside, {"2024-01-01.md": b"x\n"})
        shutil.rmtree(legacy / "daily")
        (legacy / "daily").symlink_to(outside, target_is_directory=True)
        copied = migrate_legacy(config, project, cwd)
        assert copied == ["MEMORY.md", "notes/build.md", "scratchpad.md"]


class TestLegacyImportRunsOnce:
    # covers L6
    def test_a_file_deleted_after_the_import_is_not_copied_back(
        self, config: Path, project: Project, cwd: Path, legacy: Path
    ) -> None:
        migrate_legacy(config, project, cwd)
        (store_dir(config, project) / "notes" / "build.md").unlink()
        assert migrate_legacy(config, project, cwd) == []
        assert not (store_dir(config, project) / "notes" / "build.md").exists()

    def test_imports_from_several_legacy_stores_are_all_recorded(
        self, config: Path, project: Project, cwd: Path, legacy: Path
    ) -> None:
        other_cwd = project.root / "other"
        other_cwd.mkdir()
        other_legacy = config / "memory" / project_slug(other_cwd)
        write_files(other_legacy, {"notes/other.md": b"other\n"})
        migrate_legacy(config, project, cwd)
        assert migrate_legacy(config, project, other_cwd) == ["notes/other.md"]
        recorded = (store_dir(config, project) / LEGACY_IMPORTS).read_text(encoding="utf-8")
        assert recorded.splitlines() == sorted([legacy.name, other_legacy.name])


class TestLegacyImportDoesNothing:
    # covers L4, L6
    def test_when_the_cwd_is_the_project_root(self, config: Path, project: Project) -> None:
        write_files(config / "memory" / project.slug, {"MEMORY.md": b"x\n"})
        assert migrate_legacy(config, project, project.root) == []
        assert not (config / "memory" / project.slug / LEGACY_IMPORTS).exists()

    def test_when_the_cwd_belongs_to_another_project(
        self, config: Path, project: Project, tmp_path: Path
    ) -> None:
        stranger = tmp_path / "stranger"
        stranger.mkdir()
        write_files(config / "memory" / project_slug(stranger.resolve()), {"MEMORY.md": b"x\n"})
        assert migrate_legacy(config, project, stranger) == []
        assert not store_dir(config, project).exists()

    def test_when_there_is_no_legacy_store(self, config: Path, project: Project, cwd: Path) -> None:
        assert migrate_legacy(config, project, cwd) == []
        assert not store_dir(config, project).exists()

    def test_when_the_legacy_store_holds_no_markdown(
        self, config: Path, project: Project, cwd: Path
    ) -> None:
        write_files(config / "memory" / project_slug(cwd), {"facts.sqlite3": b"db"})
        assert migrate_legacy(config, project, cwd) == []
        assert not store_dir(config, project).exists()

    def test_when_the_legacy_store_is_a_link(
        self, config: Path, project: Project, cwd: Path, tmp_path: Path
    ) -> None:
        real = tmp_path / "real-legacy"
        write_files(real, {"MEMORY.md": b"x\n"})
        (config / "memory").mkdir()
        (config / "memory" / project_slug(cwd)).symlink_to(real, target_is_directory=True)
        assert migrate_legacy(config, project, cwd) == []
        assert not store_dir(config, project).exists()
