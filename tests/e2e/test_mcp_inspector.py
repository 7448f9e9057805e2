"""`lecode-ls mcp` driven by a real third-party MCP client: the MCP Inspector's CLI (npm
`@modelcontextprotocol/inspector` 2.12, installed by scripts/install-mcp-inspector.sh, which
.ci/run runs and names in LECODE_MCP_INSPECTOR), through `tools/list`, a read tool,
`resources/list`, `resources/read` and `resources/templates/list`, as a person would type it.

Inspector 2.x starts the server with a scrubbed environment (HOME, PATH and the `-e` variables
only): the test shows that `-e LECODE_CONFIG_DIR=...` reaches the server and that a variable of
the caller's own environment does not, as the server's first stderr line tells.

# covers issue 24, item 4
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lecode_ls.memory.project.identity import project_slug

INSPECTOR = os.environ.get("LECODE_MCP_INSPECTOR") or str(
    Path.home() / ".cache" / "lecode-mcp-inspector-2.12.0" / "mcp-inspector"
)
SERVER = [sys.executable, "-m", "lecode_ls", "mcp"]
MEMORY = "# Build\nRun `make test` before pushing.\n"

if not Path(INSPECTOR).is_file():
    # CI installs it: there a missing Inspector is a failure, never a skip.
    if os.environ.get("CI"):
        raise RuntimeError(f"the MCP Inspector is not installed at {INSPECTOR}")
    pytest.skip(
        "the MCP Inspector is not installed: bash scripts/install-mcp-inspector.sh "
        "~/.cache/lecode-mcp-inspector-2.12.0",
        allow_module_level=True,
    )


def inspector(
    home: Path, project: Path, *args: str, env: dict[str, str] | None = None
) -> tuple[Any, str]:
    """One `mcp-inspector --cli` run against `lecode-ls mcp` in `project`: its JSON output and
    what the server wrote on stderr (the Inspector passes it through)."""
    done = subprocess.run(
        [INSPECTOR, "--cli", "--cwd", str(project), *args, "--", *SERVER],
        env={
            "PATH": os.environ["PATH"],
            "HOME": str(home),  # its catalog (~/.mcp-inspector) and the server's default store
            **(env or {}),
        },
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr + done.stdout
    return json.loads(done.stdout), done.stderr


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


@pytest.fixture
def store(repo: Path, isolated_config_dir: Path) -> Path:
    """The project's store, with a MEMORY.md the editor would have written."""
    path = isolated_config_dir / "memory" / project_slug(repo.resolve())
    path.mkdir(parents=True)
    (path / "MEMORY.md").write_text(MEMORY)
    return path


class TestTheInspectorCli:
    def test_it_lists_the_tools_calls_one_and_reads_a_resource(
        self, repo: Path, home: Path, isolated_config_dir: Path, store: Path
    ) -> None:
        config = ("-e", f"LECODE_CONFIG_DIR={isolated_config_dir}")
        listed, log = inspector(home, repo, *config, "--method", "tools/list")
        assert [t["name"] for t in listed["tools"]] == [
            "memory_read",
            "memory_search",
            "memory_recall",
            "memory_list",
            "memory_doctor",
            "memory_team",
        ]
        assert f"config dir {isolated_config_dir} (LECODE_CONFIG_DIR)" in log
        assert f"project {repo.resolve()}" in log

        called, _ = inspector(
            home,
            repo,
            *config,
            "--method",
            "tools/call",
            "--tool-name",
            "memory_read",
            "--tool-arg",
            "file=MEMORY.md",
        )
        assert called["isError"] is False
        assert json.loads(called["content"][0]["text"]) == {
            "file": "MEMORY.md",
            "exists": True,
            "content": MEMORY,
        }

        resources, _ = inspector(home, repo, *config, "--method", "resources/list")
        [uri] = [r["uri"] for r in resources["resources"]]
        assert uri.endswith("/MEMORY.md")
        read, _ = inspector(home, repo, *config, "--method", "resources/read", "--uri", uri)
        assert read["contents"][0]["text"] == MEMORY

        templates, _ = inspector(home, repo, *config, "--method", "resources/templates/list")
        assert templates["resourceTemplates"] == []

    def test_a_variable_of_the_callers_environment_does_not_reach_the_server(
        self, repo: Path, home: Path, isolated_config_dir: Path, store: Path
    ) -> None:
        # Set for the Inspector, not given with -e: the server never sees it and uses the
        # platform's folder under HOME, and says so, so the wrong store shows in the log.
        read, log = inspector(
            home,
            repo,
            "--method",
            "tools/call",
            "--tool-name",
            "memory_read",
            "--tool-arg",
            "file=MEMORY.md",
            env={"LECODE_CONFIG_DIR": str(isolated_config_dir)},
        )
        assert f"config dir {home / '.config' / 'lecode'}, project" in log
        assert json.loads(read["content"][0]["text"])["exists"] is False
