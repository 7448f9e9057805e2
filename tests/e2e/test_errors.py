"""Malformed and refused requests: every one gets an error response that names the field.

Nothing a client sends may go unanswered, and no traceback or installation path may reach it.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

import lecode_ls
from tests.e2e.conftest import Start, call, command, raw_call, uri

INSTALL_DIR = str(Path(lecode_ls.__file__).parent)


async def error_of(awaitable: Any) -> JsonRpcException:
    try:
        await awaitable
    except JsonRpcException as exc:
        # No traceback and no path of the server's installation in anything the client sees.
        shown = json.dumps({"message": exc.message, "data": exc.data})
        assert "Traceback" not in shown
        assert INSTALL_DIR not in shown
        return exc
    raise AssertionError("expected a JSON-RPC error response")


# (method, params, the field the error must name)
MALFORMED: list[tuple[str, Any, str]] = [
    ("lecode/memory/read", {}, "file"),
    ("lecode/memory/read", {"file": 5}, "file"),
    ("lecode/memory/read", {"file": None}, "file"),
    ("lecode/memory/read", {"file": "MEMORY.md", "extra": 1}, "extra"),
    ("lecode/memory/read", {"file": "MEMORY.md", "workspaceUri": 3}, "workspaceUri"),
    ("lecode/memory/read", ["MEMORY.md"], "params"),
    ("lecode/memory/read", [], "file"),
    ("lecode/memory/read", "MEMORY.md", "params"),
    ("lecode/memory/write", {"file": "MEMORY.md"}, "content"),
    ("lecode/memory/write", {"file": "MEMORY.md", "content": "x", "mode": "prepend"}, "mode"),
    ("lecode/memory/write", {"file": "MEMORY.md", "content": b"x".hex(), "mode": 1}, "mode"),
    ("lecode/memory/edit", {"file": "MEMORY.md", "search": "", "replace": "x"}, "search"),
    ("lecode/memory/edit", {"file": "MEMORY.md", "search": "a"}, "replace"),
    ("lecode/memory/search", {}, "pattern"),
    ("lecode/memory/search", {"pattern": ["a"]}, "pattern"),
    ("lecode/memory/list", {"workspace_uri": "file:///x"}, "workspace_uri"),
    ("lecode/project/info", {"workspaceUri": "https://example.invalid/"}, "workspaceUri"),
    ("lecode/ping", {"unexpected": True}, "unexpected"),
]


class TestMalformedParams:
    @pytest.mark.parametrize(("method", "params", "field"), MALFORMED)
    async def test_malformed_params_get_32602_naming_the_field(
        self, start: Start, repo: Path, method: str, params: Any, field: str
    ) -> None:
        # covers P5
        client = await start(repo)
        exc = await error_of(call(client, method, params))
        assert exc.code == -32602
        assert exc.data["field"] == field
        assert exc.message.startswith(field)

    async def test_a_command_with_no_argument_names_text(self, start: Start, repo: Path) -> None:
        client = await start(repo)
        exc = await error_of(command(client))
        assert (exc.code, exc.data["field"]) == (-32602, "text")

    async def test_a_command_with_too_many_arguments_is_refused(
        self, start: Start, repo: Path
    ) -> None:
        client = await start(repo)
        exc = await error_of(command(client, "show", uri(repo), "third"))
        assert (exc.code, exc.data["field"]) == (-32602, "arguments")

    async def test_a_command_with_a_non_string_argument_names_text(
        self, start: Start, repo: Path
    ) -> None:
        client = await start(repo)
        exc = await error_of(command(client, {"text": "show"}))
        assert (exc.code, exc.data["field"]) == (-32602, "text")


class TestDomainErrors:
    @pytest.mark.parametrize(
        "name", ["../x.md", "notes/../MEMORY.md", "/etc/passwd", "notes/a/b.md", "notes/.md"]
    )
    async def test_a_bad_file_name_is_invalid_name(
        self, start: Start, repo: Path, name: str
    ) -> None:
        # covers L4
        client = await start(repo)
        exc = await error_of(call(client, "lecode/memory/read", {"file": name}))
        assert (exc.code, exc.data) == (-32602, {"code": "invalid_name", "field": "file"})

    async def test_a_symlinked_store_file_is_refused(
        self, start: Start, repo: Path, tmp_path: Path
    ) -> None:
        client = await start(repo)
        info = await call(client, "lecode/project/info")
        store = Path(info["storePath"])
        store.mkdir(parents=True)
        outside = tmp_path / "secret.txt"
        outside.write_text("secret\n")
        (store / "MEMORY.md").symlink_to(outside)
        exc = await error_of(call(client, "lecode/memory/read", {"file": "MEMORY.md"}))
        assert exc.data["code"] == "symlink_refused"
        assert str(tmp_path) not in exc.message
        exc = await error_of(
            call(client, "lecode/memory/write", {"file": "MEMORY.md", "content": "x"})
        )
        assert exc.data["code"] == "symlink_refused"
        assert outside.read_text() == "secret\n"

    async def test_an_edit_whose_text_is_absent_says_so(self, start: Start, repo: Path) -> None:
        client = await start(repo)
        await call(client, "lecode/memory/write", {"file": "MEMORY.md", "content": "abc\n"})
        exc = await error_of(
            call(client, "lecode/memory/edit", {"file": "MEMORY.md", "search": "z", "replace": ""})
        )
        assert exc.data["code"] == "no_match"

    async def test_an_edit_of_a_missing_file_is_not_found(self, start: Start, repo: Path) -> None:
        client = await start(repo)
        exc = await error_of(
            call(client, "lecode/memory/edit", {"file": "notes/n.md", "search": "a", "replace": ""})
        )
        assert exc.data["code"] == "not_found"

    async def test_a_bad_regex_is_invalid_pattern(self, start: Start, repo: Path) -> None:
        # covers T6
        client = await start(repo)
        exc = await error_of(call(client, "lecode/memory/search", {"pattern": "(unclosed"}))
        assert (exc.code, exc.data["code"]) == (-32602, "invalid_pattern")

    async def test_a_compile_bomb_is_refused_and_costs_the_server_no_memory(
        self, start: Start, repo: Path
    ) -> None:
        # covers T6 (issue 10.1): 33 characters that grew the server past 20 GB when compiled
        client = await start(repo)
        await call(client, "lecode/memory/write", {"file": "MEMORY.md", "content": "a" * 28 + "!"})
        await call(client, "lecode/memory/search", {"pattern": "a"})  # the engine is loaded
        before = rss_kib(client)
        for pattern in (
            "(?:(?:(?:a{100}){100}){100}){100}",
            "(?:a{1000}){1000}",
            r"\pL{1000}",
            "^(a|a)*$",
            "(?:(?:a*)*)*b",
        ):
            pending = asyncio.ensure_future(
                call(client, "lecode/memory/search", {"pattern": pattern})
            )
            assert await call(client, "lecode/ping") == {}
            try:
                assert await pending == {"hits": [], "truncated": False}
            except JsonRpcException as exc:
                assert exc.data == {"code": "invalid_pattern", "field": "pattern"}
                assert exc.message.startswith("pattern: refused:")
        assert rss_kib(client) - before < 16 * 1024

    async def test_a_uri_outside_the_workspace_is_refused(
        self, start: Start, repo: Path, tmp_path: Path
    ) -> None:
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        client = await start(repo)
        exc = await error_of(call(client, "lecode/memory/list", {"workspaceUri": uri(elsewhere)}))
        assert exc.data == {"code": "outside_workspace", "field": "workspaceUri"}

    async def test_no_workspace_folder_is_an_error(self, start: Start) -> None:
        client = await start()
        exc = await error_of(call(client, "lecode/memory/list"))
        assert exc.data["code"] == "no_workspace"


class TestLifecycle:
    async def test_a_request_before_initialize_gets_32002(self, start: Start) -> None:
        # covers P5
        client = await start(initialize=False)
        exc = await error_of(raw_call(client, "lecode/ping", {}))
        assert exc.code == -32002
        exc = await error_of(
            raw_call(
                client,
                types.WORKSPACE_EXECUTE_COMMAND,
                types.ExecuteCommandParams(command="lecode.memory", arguments=["show"]),
            )
        )
        assert exc.code == -32002

    async def test_an_unknown_method_gets_32601(self, start: Start, repo: Path) -> None:
        client = await start(repo)
        exc = await error_of(call(client, "lecode/nope"))
        assert exc.code == -32601

    async def test_a_cancelled_request_gets_32800_and_the_server_stays_responsive(
        self, start: Start, repo: Path
    ) -> None:
        # A search that runs into its 2 s budget (eight 1 MiB notes that defeat RE2's DFA) keeps
        # a worker thread busy; the handler awaiting it is cancelled at once, and other requests
        # are served meanwhile.
        client = await start(repo)
        await call(client, "lecode/memory/write", {"file": "MEMORY.md", "content": "x"})
        store = Path((await call(client, "lecode/project/info"))["storePath"])
        line = ("ab" * (1 << 19))[:-1] + "\n"  # one line of just under 1 MiB
        for n in range(8):
            (store / "notes").mkdir(exist_ok=True)
            (store / "notes" / f"n{n}.md").write_text(line)
        slow = asyncio.ensure_future(
            call(client, "lecode/memory/search", {"pattern": "[ab]*a[ab]{50}c"})
        )
        assert await call(client, "lecode/ping") == {}
        slow.cancel()  # pygls' client sends $/cancelRequest for a cancelled request future
        with pytest.raises((asyncio.CancelledError, JsonRpcException)):
            await slow
        assert await call(client, "lecode/ping") == {}


def rss_kib(client: Any) -> int:
    """The server process's resident set, from /proc (Linux)."""
    status = Path(f"/proc/{client._server.pid}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS")))


async def raw_request(client: Any, message: dict[str, Any]) -> Any:
    """Send a hand-made JSON-RPC request (pygls' client would fill in what we leave out)."""
    future = asyncio.get_running_loop().create_future()
    client.protocol._request_futures[message["id"]] = future
    body = json.dumps({"jsonrpc": "2.0", **message}).encode()
    client.protocol.writer.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    return await asyncio.wait_for(future, 10)


class TestEnvelopes:
    async def test_a_request_without_params_is_answered(self, start: Start, repo: Path) -> None:
        # JSON-RPC lets a request leave out params; pygls alone would never answer it.
        client = await start(repo)
        listed = await raw_request(client, {"id": "no-params", "method": "lecode/memory/list"})
        assert listed == {"files": []}

    async def test_an_empty_params_array_means_no_params(self, start: Start, repo: Path) -> None:
        client = await start(repo)  # Neovim encodes an empty Lua table `{}` as []
        assert await call(client, "lecode/memory/list", []) == {"files": []}

    async def test_a_standard_request_with_undecodable_params_gets_32602(
        self, start: Start, repo: Path
    ) -> None:
        # covers P5: never silence, even where pygls decodes the params itself
        client = await start(repo)
        exc = await error_of(
            raw_request(
                client,
                {"id": "bad", "method": "workspace/executeCommand", "params": {"command": 5}},
            )
        )
        assert exc.code == -32602
        assert await call(client, "lecode/ping") == {}
        assert not [m for m in client.messages if "Error in server" in m.message]
