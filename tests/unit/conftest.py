"""Fixtures of the unit tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from lecode_ls.runtime import Runtime
from tests.unit.stores import make_runtime


@pytest.fixture
def runtime(tmp_path: Path) -> Runtime:
    """A Runtime whose stores are real files under tmp_path, default settings."""
    return make_runtime(tmp_path)
