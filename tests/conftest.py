"""Fixtures shared by every test."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("gate", derandomize=True)
"""The same examples every run (scripts/test sets it): a test suite that gates a change passes or
fails for the change, not for a draw. Without it, each run explores new ones."""
settings.load_profile(os.environ.get("LECODE_HYPOTHESIS", "default"))


@pytest.fixture(autouse=True)
def isolated_config_dir(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Point LECODE_CONFIG_DIR at a fresh folder, so no test touches the user's real store.

    Made with tmp_path_factory, not tmp_path, so a test's own tmp_path stays empty.
    """
    config = tmp_path_factory.mktemp("lecode-config")
    monkeypatch.setenv("LECODE_CONFIG_DIR", str(config))
    return config
