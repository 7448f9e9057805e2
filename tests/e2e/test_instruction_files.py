"""Other agents' instruction files beside AGENTS.md (`[agent] instruction_files`, issue 28 item 5),
as the model receives them and as `lecode/agents/read` reports them, with hostile files.

# covers L7 (read from the active folder, apart from memory), I1-I5 (the system prompt stays
# bounded and labelled), R1-R8 (hostile files are bounded or refused, never followed out)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.chat import new_session
from tests.e2e.conftest import Start, call
from tests.fakes.openai_server import FakeOpenAI, Stream, text_chunks

CAP = 256 * 1024
LABEL = "(the project's instructions for coding agents, read beside AGENTS.md"


def options(server: FakeOpenAI | None, files: list[str] | None) -> dict[str, Any]:
    found: dict[str, Any] = {}
    if server is not None:
        found["provider"] = {"base_url": server.base_url, "model": "gpt-4o", "api_key_env": ""}
    if files is not None:
        found["agent"] = {"instruction_files": files}
    return found


async def system_prompt(start: Start, repo: Path, files: list[str] | None) -> str:
    """The system message of the first chat request the provider received."""
    async with FakeOpenAI(respond=lambda body: Stream(text_chunks("ok"))) as server:
        client = await start(repo, options=options(server, files))
        session = await new_session(client)
        await call(client, "lecode/chat/send", {"sessionId": session, "text": "Hi"})
        content = server.bodies[0]["messages"][0]["content"]
        assert isinstance(content, str)
        return content


def conventions(repo: Path) -> None:
    (repo / "AGENTS.md").write_text("Use uv.\n")
    (repo / "CLAUDE.md").write_text("Claude: run the tests with pytest -x.\n")
    (repo / "GEMINI.md").write_text("Gemini: keep modules short.\n")
    (repo / ".github").mkdir()
    (repo / ".github" / "copilot-instructions.md").write_text("Copilot: no mocks.\n")
    rules = repo / ".cursor" / "rules"
    rules.mkdir(parents=True)
    (rules / "b.mdc").write_text("Cursor rule b.\n")
    (rules / "a.mdc").write_text("Cursor rule a.\n")
    (rules / "notes.txt").write_text("Not a rule.\n")


class TestInstructionFiles:
    async def test_off_by_default_only_agents_md_reaches_the_model(
        self, start: Start, repo: Path
    ) -> None:
        # covers L7: the default reads AGENTS.md alone
        conventions(repo)
        system = await system_prompt(start, repo, None)
        assert "Use uv." in system
        assert "Claude:" not in system and "Cursor rule" not in system

    async def test_named_files_follow_agents_md_labelled_with_their_paths(
        self, start: Start, repo: Path
    ) -> None:
        # covers L7, I1: each file under its own heading, after AGENTS.md, globs in name order
        conventions(repo)
        files = ["CLAUDE.md", ".cursor/rules/*.mdc", "GEMINI.md", "CLAUDE.md"]
        system = await system_prompt(start, repo, files)
        order = [
            "# AGENTS.md",
            f"# CLAUDE.md {LABEL}",
            "Claude: run the tests",
            f"# .cursor/rules/a.mdc {LABEL}",
            "Cursor rule a.",
            f"# .cursor/rules/b.mdc {LABEL}",
            f"# GEMINI.md {LABEL}",
            "Gemini: keep modules short.",
        ]
        positions = [system.index(text) for text in order]
        assert positions == sorted(positions)
        assert system.count("Claude: run the tests") == 1  # named twice, read once
        assert "Copilot" not in system and "Not a rule." not in system

    async def test_the_files_follow_the_active_folder(
        self, start: Start, repo: Path, tmp_path: Path
    ) -> None:
        # covers L7: another folder's CLAUDE.md is never read for this one
        from tests.e2e.conftest import make_repo, uri

        other = make_repo(tmp_path / "other")
        (other / "CLAUDE.md").write_text("Other folder.\n")
        (repo / "CLAUDE.md").write_text("This folder.\n")
        client = await start(repo, other, options=options(None, ["CLAUDE.md"]))
        mine = await call(client, "lecode/agents/read", {"workspaceUri": uri(repo)})
        theirs = await call(client, "lecode/agents/read", {"workspaceUri": uri(other)})
        assert [i["content"] for i in mine["instructions"]] == ["This folder.\n"]
        assert [i["content"] for i in theirs["instructions"]] == ["Other folder.\n"]

    async def test_a_huge_file_is_cut_within_the_budget_agents_md_shares(
        self, start: Start, repo: Path
    ) -> None:
        # covers I2, R2: 200 KiB of AGENTS.md and 8 MiB of CLAUDE.md give 256 KiB in all
        (repo / "AGENTS.md").write_text("a" * (200 * 1024) + "\n")
        (repo / "CLAUDE.md").write_bytes(b"c" * (8 * 1024 * 1024))
        (repo / "GEMINI.md").write_text("after the budget\n")
        system = await system_prompt(start, repo, ["CLAUDE.md", "GEMINI.md"])
        agents = 200 * 1024 + 1
        claude = system[system.index(f"# CLAUDE.md {LABEL}") :].split("\n\n", 1)[1]
        marker = f"[... CLAUDE.md cut: AGENTS.md and the instruction files share {CAP} bytes]"
        assert claude.startswith("c" * (CAP - agents) + "\n" + marker + "\n")
        assert "after the budget" not in system

    async def test_a_glob_over_100_000_files_reads_20(self, start: Start, repo: Path) -> None:
        # covers R3: the folder is looked at a bounded number of names, 20 files at most are read
        rules = repo / "rules"
        rules.mkdir()
        for n in range(100_000):
            os.close(os.open(rules / f"r{n:06d}.mdc", os.O_CREAT | os.O_WRONLY, 0o600))
        (rules / "r000000.mdc").write_text("rule zero\n")
        client = await start(repo, options=options(None, ["rules/*.mdc"]))
        result = await call(client, "lecode/agents/read")
        assert len(result["instructions"]) == 20
        assert result["notes"] and "rules/*.mdc" in result["notes"][0]
        assert all(i["path"].startswith("rules/r") for i in result["instructions"])

    async def test_a_link_out_of_the_workspace_is_refused(
        self, start: Start, repo: Path, tmp_path: Path
    ) -> None:
        # covers R5: neither a linked file nor a linked folder leads outside the working folder
        outside = tmp_path / "outside"
        outside.mkdir()
        (outside / "secret.md").write_text("SECRET OUTSIDE\n")
        (outside / "x.mdc").write_text("SECRET RULE\n")
        (repo / "CLAUDE.md").symlink_to(outside / "secret.md")
        (repo / ".cursor").mkdir()
        (repo / ".cursor" / "rules").symlink_to(outside, target_is_directory=True)
        (repo / "docs").mkdir()
        (repo / "docs" / "gemini.md").write_text("linked inside\n")
        (repo / "GEMINI.md").symlink_to(repo / "docs" / "gemini.md")
        files = ["CLAUDE.md", ".cursor/rules/*.mdc", ".cursor/rules/x.mdc", "GEMINI.md"]
        system = await system_prompt(start, repo, files)
        assert "SECRET" not in system
        assert "linked inside" in system  # a link that stays inside is followed, as AGENTS.md's
        client = await start(repo, options=options(None, files))
        result = await call(client, "lecode/agents/read")
        refused = {i["path"]: i["refused"] for i in result["instructions"] if i["refused"]}
        assert set(refused) == {"CLAUDE.md", ".cursor/rules/x.mdc"}
        assert all("outside" in reason for reason in refused.values())
        assert str(tmp_path) not in str(result)  # no local path reaches the client

    @pytest.mark.skipif(sys.platform == "win32", reason="no FIFOs on Windows")
    async def test_a_fifo_is_refused_without_blocking(self, start: Start, repo: Path) -> None:
        # covers R5: a planted FIFO never blocks the read (nobody writes to it)
        os.mkfifo(repo / "GEMINI.md")
        (repo / "CLAUDE.md").write_text("still read\n")
        system = await system_prompt(start, repo, ["GEMINI.md", "CLAUDE.md"])
        assert "still read" in system and "# GEMINI.md" not in system
        client = await start(repo, options=options(None, ["GEMINI.md"]))
        result = await call(client, "lecode/agents/read")
        assert result["instructions"] == [
            {
                "path": "GEMINI.md",
                "content": "",
                "truncated": False,
                "refused": "not a regular file",
            }
        ]

    @pytest.mark.parametrize(
        "pattern", ["../CLAUDE.md", "/etc/passwd", "~/.bashrc", "*/rules/a.mdc", "a\\b", "x" * 201]
    )
    async def test_a_pattern_outside_the_folder_is_refused_in_the_settings(
        self, start: Start, repo: Path, pattern: str
    ) -> None:
        # covers K1, R5: the setting falls back to its default, naming the key
        (repo / "CLAUDE.md").write_text("never\n")
        client = await start(repo, options=options(None, ["CLAUDE.md", pattern]))
        await call(client, "lecode/ping")
        shown = [m.message for m in client.messages if "agent.instruction_files" in m.message]
        assert shown and "using the default" in shown[0]
        assert (await call(client, "lecode/agents/read"))["instructions"] == []
