"""`lecode-ls context` reads `[memory]` without the settings model when config.toml has no
`[memory]` table (start-up): its defaults must stay the model's.

# covers I2 (the same caps as the server's injection)
"""

from __future__ import annotations

from pathlib import Path

from lecode_ls.config import MemorySettings
from lecode_ls.other_agents.context import MemoryView, load_settings


def test_the_light_defaults_are_the_settings_models() -> None:
    model = MemorySettings()
    view = MemoryView()
    assert (view.enabled, view.max_bytes, view.facts_max_bytes, view.drifted_facts) == (
        model.enabled, model.max_bytes, model.facts_max_bytes, model.drifted_facts
    )  # fmt: skip


def test_a_memory_table_is_validated_by_the_model(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(
        '[memory]\nmax_bytes = -5\nfacts_max_bytes = 100\ndrifted_facts = "withhold"\n'
    )
    memory = load_settings(tmp_path).memory
    assert (memory.max_bytes, memory.facts_max_bytes, memory.drifted_facts) == (
        MemorySettings().max_bytes, 100, "withhold"
    )  # fmt: skip


def test_a_broken_config_takes_the_defaults(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text("[memory\n")
    assert load_settings(tmp_path).memory == MemoryView()
    (tmp_path / "config.toml").write_bytes(b"\xff")
    assert load_settings(tmp_path).memory == MemoryView()


def test_a_team_table_is_read_as_the_server_reads_it(tmp_path: Path) -> None:
    # covers I2 ([team] inject: the hook shows the team's facts when the chat would)
    assert load_settings(tmp_path).team_inject is True
    (tmp_path / "config.toml").write_text("[team]\ninject = false\n")
    assert load_settings(tmp_path).team_inject is False
    (tmp_path / "config.toml").write_text('[team]\ninject = "nope"\n[memory]\nmax_bytes = 2000\n')
    settings = load_settings(tmp_path)
    assert (settings.team_inject, settings.memory.max_bytes) == (True, 2000)
