"""Settings from config.toml and the editor, and one memory per project across folders."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from tests.e2e.conftest import Start, call, command, git, make_repo, uri


async def message(client, text: str) -> types.ShowMessageParams:  # type: ignore[no-untyped-def]
    """The first window/showMessage containing `text` (they arrive before the next response)."""
    await call(client, "lecode/ping")
    found = [m for m in client.messages if text in m.message]
    assert found, [m.message for m in client.messages]
    return found[0]


class TestSettings:
    async def test_an_invalid_config_toml_value_is_shown_naming_the_key(
        self, start: Start, repo: Path, isolated_config_dir: Path
    ) -> None:
        # covers K1
        (isolated_config_dir / "config.toml").write_text("[memory]\nfacts_max_bytes = 99999\n")
        client = await start(repo)
        shown = await message(client, "memory.facts_max_bytes")
        assert shown.type == types.MessageType.Warning
        assert "using the default" in shown.message
        # ... and the server carries on.
        assert await call(client, "lecode/ping") == {}

    async def test_an_unknown_editor_setting_is_reported_and_ignored(
        self, start: Start, repo: Path
    ) -> None:
        client = await start(repo, options={"lecode": {"memory": {"max_byte": 5}}})
        shown = await message(client, "memory.max_byte")
        assert "unknown setting" in shown.message

    async def test_disabled_memory_answers_memory_disabled_and_creates_no_store(
        self, start: Start, repo: Path
    ) -> None:
        # covers K1, F3
        client = await start(repo, options={"memory": {"enabled": False}})
        info = await call(client, "lecode/project/info")
        assert info["memoryEnabled"] is False
        for method, params in [
            ("lecode/memory/list", {}),
            ("lecode/memory/read", {"file": "MEMORY.md"}),
            ("lecode/memory/write", {"file": "MEMORY.md", "content": "x"}),
            ("lecode/memory/search", {"pattern": "x"}),
        ]:
            try:
                await call(client, method, params)
            except JsonRpcException as exc:
                assert exc.data["code"] == "memory_disabled"
                assert "enabled = false" in exc.message
            else:
                raise AssertionError(f"{method} answered with memory disabled")
        assert not Path(info["storePath"]).exists()

    async def test_config_toml_is_overridden_by_the_editor(
        self, start: Start, repo: Path, isolated_config_dir: Path
    ) -> None:
        (isolated_config_dir / "config.toml").write_text("[memory]\nenabled = false\n")
        client = await start(repo, options={"lecode": {"memory": {"enabled": True}}})
        assert (await call(client, "lecode/project/info"))["memoryEnabled"] is True

    async def test_did_change_configuration_takes_effect(self, start: Start, repo: Path) -> None:
        client = await start(repo)
        client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"lecode": {"memory": {"enabled": False}}})
        )
        assert (await call(client, "lecode/project/info"))["memoryEnabled"] is False

    async def test_show_is_capped_at_max_bytes_with_a_marker(
        self, start: Start, repo: Path
    ) -> None:
        client = await start(repo, options={"memory": {"max_bytes": 100}})
        await call(client, "lecode/memory/write", {"file": "MEMORY.md", "content": "x" * 500})
        shown = await command(client, "show")
        # The marker counts against the cap too (issue 11: a side path of I2).
        assert shown == "x" * 44 + "\n[... truncated at 100 bytes; /memory edit shows it all]"
        assert len(shown.encode()) == 100
        assert await command(client, "edit") == "x" * 500


class TestProjects:
    async def test_a_nested_folder_shares_the_checkout_memory(
        self, start: Start, repo: Path
    ) -> None:
        # covers L2, P2
        nested = repo / "src" / "pkg"
        nested.mkdir(parents=True)
        client = await start(repo, nested)
        await call(client, "lecode/memory/write", {"file": "MEMORY.md", "content": "shared\n"})
        read = await call(
            client, "lecode/memory/read", {"file": "MEMORY.md", "workspaceUri": uri(nested)}
        )
        assert read["content"] == "shared\n"

    async def test_a_linked_worktree_shares_the_main_checkout_memory(
        self, start: Start, repo: Path, tmp_path: Path
    ) -> None:
        # covers L2
        worktree = tmp_path / "wt"
        git(repo, "worktree", "add", "-q", str(worktree))
        client = await start(worktree)
        info = await call(client, "lecode/project/info")
        assert info["projectRoot"] == str(repo.resolve())

    async def test_two_projects_in_one_window_keep_separate_memory(
        self, start: Start, repo: Path, tmp_path: Path
    ) -> None:
        # covers P2
        other = make_repo(tmp_path / "other")
        client = await start(repo, other)
        await call(client, "lecode/memory/write", {"file": "MEMORY.md", "content": "first\n"})
        await call(
            client,
            "lecode/memory/write",
            {"file": "MEMORY.md", "content": "second\n", "workspaceUri": uri(other)},
        )
        first = await call(client, "lecode/memory/read", {"file": "MEMORY.md"})
        second = await call(
            client, "lecode/memory/read", {"file": "MEMORY.md", "workspaceUri": uri(other)}
        )
        assert (first["content"], second["content"]) == ("first\n", "second\n")

    async def test_a_removed_folder_is_refused_afterwards(
        self, start: Start, repo: Path, tmp_path: Path
    ) -> None:
        # covers P2: the server follows workspace-folder changes
        other = make_repo(tmp_path / "other")
        client = await start(repo, other)
        await call(client, "lecode/memory/list", {"workspaceUri": uri(other)})
        client.workspace_did_change_workspace_folders(
            types.DidChangeWorkspaceFoldersParams(
                event=types.WorkspaceFoldersChangeEvent(
                    added=[], removed=[types.WorkspaceFolder(uri=uri(other), name="other")]
                )
            )
        )
        try:
            await call(client, "lecode/memory/list", {"workspaceUri": uri(other)})
        except JsonRpcException as exc:
            assert exc.data["code"] == "outside_workspace"
        else:
            raise AssertionError("a removed folder was still served")

    async def test_agents_md_of_the_active_folder_is_read_apart_from_memory(
        self, start: Start, repo: Path
    ) -> None:
        # covers L7
        (repo / "AGENTS.md").write_text("Use uv.\n")
        client = await start(repo)
        assert await call(client, "lecode/agents/read") == {
            "content": "Use uv.\n",
            "exists": True,
            "instructions": [],
            "notes": [],
        }
        listed = await call(client, "lecode/memory/list")
        assert listed == {"files": []}


class TestTransports:
    async def test_tcp_serves_a_client(self, repo: Path, isolated_config_dir: Path) -> None:
        # covers P1: `--tcp HOST:PORT` on request (stdio is what every other test uses)
        import json
        import socket
        import sys

        with socket.socket() as probe:  # a free port on loopback
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        server = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "lecode_ls",
            "--tcp",
            f"127.0.0.1:{port}",
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            assert server.stderr is not None
            while b"Serving on" not in (line := await server.stderr.readline()):
                assert line, "the server exited before listening"
            reader, writer = await asyncio.open_connection("127.0.0.1", port)

            async def rpc(id_: int, method: str, params: object) -> dict[str, object]:
                body = json.dumps({"jsonrpc": "2.0", "id": id_, "method": method, "params": params})
                writer.write(f"Content-Length: {len(body)}\r\n\r\n{body}".encode())
                while True:
                    header = await reader.readuntil(b"\r\n\r\n")
                    length = int(header.split(b"Content-Length: ")[1].split(b"\r\n")[0])
                    message = json.loads(await reader.readexactly(length))
                    if message.get("id") == id_:
                        return message  # type: ignore[no-any-return]

            init = await rpc(1, "initialize", {"capabilities": {}, "rootUri": uri(repo)})
            assert init["result"]["serverInfo"]["name"] == "lecode-ls"  # type: ignore[index]
            assert (await rpc(2, "lecode/ping", {}))["result"] == {}
            writer.close()
        finally:
            server.kill()
            await server.wait()
