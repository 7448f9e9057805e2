"""Hostile input to `lecode-ls mcp` over its real stdio (issue 15, step 5): a huge line, bytes that
are not JSON, deep nesting, batches, oversized and ill-typed arguments, then a time-bounded fuzz.
After each case the server must still answer MCP's `ping`; every bad message that JSON-RPC says
to answer gets a JSON-RPC error; memory stays bounded; no traceback or local path reaches the
client. The fuzz budget is LECODE_FUZZ_SECONDS (default 8); the seed is printed
(LECODE_FUZZ_SEED replays it).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from lecode_ls.mcp.stdio import MAX_LINE_BYTES, check_line
from tests.e2e.conftest import make_repo
from tests.e2e.test_fuzz import SECRETS, value

SECONDS = float(os.environ.get("LECODE_FUZZ_SECONDS", "8"))
TOOLS = [
    "memory_read",
    "memory_search",
    "memory_list",
    "memory_recall",
    "memory_write",
    "memory_remember",
    "memory_forget",
    "nope",
]
ARGUMENTS = ["file", "pattern", "offset", "limit", "fact_id", "session_id", "start_seq", "path"]


class RawMcp:
    """`lecode-ls mcp` as a subprocess, spoken to line by line with no SDK in between."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.messages: list[dict[str, Any]] = []
        self.next_id = 1000

    def send(self, line: bytes | dict[str, Any]) -> None:
        data = json.dumps(line).encode() if isinstance(line, dict) else line
        assert self.process.stdin is not None
        self.process.stdin.write(data + b"\n")

    async def response(self, msg_id: int | None, seconds: float = 10.0) -> dict[str, Any]:
        """The next message answering `msg_id` (None: an error with `id: null`)."""
        assert self.process.stdout is not None

        async def read() -> dict[str, Any]:
            while True:
                line = await self.process.stdout.readline()  # type: ignore[union-attr]
                assert line, "the server closed its output"
                message = json.loads(line)
                self.messages.append(message)
                if message.get("id") == msg_id and ("result" in message or "error" in message):
                    return dict(message)

        return await asyncio.wait_for(read(), seconds)

    async def request(self, method: str, params: Any = None) -> dict[str, Any]:
        self.next_id += 1
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            body["params"] = params
        self.send(body)
        return await self.response(self.next_id)

    async def ping(self) -> None:
        answer = await self.request("ping")
        assert answer["result"] == {}, answer

    def peak_memory_kib(self) -> int:
        """The server's peak resident memory (VmHWM, Linux)."""
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        return int(next(row for row in status.splitlines() if row.startswith("VmHWM:")).split()[1])


@pytest_asyncio.fixture
async def server(tmp_path: Path, isolated_config_dir: Path) -> AsyncIterator[RawMcp]:
    repo = make_repo(tmp_path / "repo")
    (isolated_config_dir / "config.toml").write_text('[mcp]\nallow = ["memory_write"]\n')
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "lecode_ls",
        "mcp",
        cwd=repo,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        limit=16 << 20,
    )
    raw = RawMcp(process)
    answer = await raw.request(
        "initialize",
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "hostile", "version": "0"},
        },
    )
    assert answer["result"]["serverInfo"]["name"] == "lecode"
    raw.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    yield raw
    assert process.stdin is not None
    process.stdin.close()
    try:
        await asyncio.wait_for(process.wait(), 10)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


def leaks(messages: list[dict[str, Any]]) -> list[str]:
    text = json.dumps(messages, ensure_ascii=False)
    return [secret for secret in SECRETS if secret in text]


def call(msg_id: int, name: str, arguments: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": msg_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


class TestLines:
    """`check_line`, the gate in front of the SDK, case by case (no process)."""

    @pytest.mark.parametrize(
        ("raw", "answer"),
        [
            (b'{"jsonrpc": "2.0", "id": 1, "method"', (None, -32700)),
            (b"\xff\xfe{}", (None, -32700)),
            (
                b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": NaN}}',
                (None, -32700),
            ),
            (b"[" * 100_000, (None, -32700)),
            (b"[1, 2]", (None, -32600)),
            (b'"hello"', (None, -32600)),
            (b"{}", (None, -32600)),
            (b'{"jsonrpc": "1.0", "id": 9, "method": "ping"}', (9, -32600)),
            (b'{"jsonrpc": "2.0", "id": true, "method": "ping"}', (None, -32600)),
        ],
    )
    def test_what_is_not_a_message_is_answered(self, raw: bytes, answer: tuple[Any, int]) -> None:
        checked = check_line(raw)
        assert isinstance(checked, tuple)
        assert checked[:2] == answer

    def test_a_message_goes_on_and_what_needs_no_answer_gets_none(self) -> None:
        ping = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n'
        assert check_line(ping) == ping.decode()
        assert check_line(b"   \n") is None
        assert check_line(b'{"jsonrpc": "1.0", "method": "notifications/x"}') is None


class TestHostileInput:
    # covers P5 extended to MCP (issue 15, step 5)

    async def test_each_hostile_line_is_answered_and_ping_still_works(self, server: RawMcp) -> None:
        cases: list[tuple[bytes | dict[str, Any], int | None, int | None]] = [
            (b'{"jsonrpc": "2.0", "id": 1, "method"', None, -32700),
            (b"\xff\xfe{}", None, -32700),
            (b"[" * 100_000 + b"]" * 100_000, None, -32700),
            (b'[{"jsonrpc": "2.0", "id": 2, "method": "ping"}]', None, -32600),
            (b'{"jsonrpc": "1.0", "id": 3, "method": "ping"}', 3, -32600),
            ({"jsonrpc": "2.0", "id": 4, "method": "no/such/method"}, 4, -32601),
            ({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": 5}}, 5, -32602),
            ({"jsonrpc": "2.0", "id": 6, "method": "resources/read", "params": {}}, 6, -32602),
        ]
        for line, msg_id, code in cases:
            server.send(line)
            answer = await server.response(msg_id)
            assert answer["error"]["code"] == code, (line[:80], answer)
            await server.ping()
        assert leaks(server.messages) == []

    async def test_oversized_and_deep_arguments_are_tool_errors_naming_the_argument(
        self, server: RawMcp
    ) -> None:
        server.send(
            call(
                7,
                "memory_write",
                {"file": "MEMORY.md", "content": "x" * 2_000_000, "mode": "append"},
            )
        )
        big = await server.response(7)
        deep: Any = 1
        for _ in range(150):
            deep = [deep]
        server.send(call(8, "memory_list", {"offset": deep}))
        nested = await server.response(8)
        server.send(call(9, "memory_read", {"file": "a" * 100_000}))
        long_name = await server.response(9)
        await server.ping()
        assert big["result"]["isError"] is True
        assert json.loads(big["result"]["content"][0]["text"])["message"] == (
            f"content: 2,000,000 characters; at most {1 << 20:,}"
        )
        # A JSON-RPC error or an error result: either way an answer, naming what is wrong.
        assert "error" in nested or nested["result"]["isError"] is True
        assert json.loads(long_name["result"]["content"][0]["text"])["message"].startswith(
            "file: 100,000 characters"
        )
        assert leaks(server.messages) == []

    async def test_a_line_of_a_million_empty_objects_is_refused_before_it_is_parsed(
        self, server: RawMcp
    ) -> None:
        # issue 23, item 5: a 4 MiB line of `{}` objects peaked at 426 MiB
        await server.ping()
        before = server.peak_memory_kib()
        line = b"[" + b"{}," * 1_300_000 + b"{}]"
        assert len(line) < MAX_LINE_BYTES
        server.send(line)
        answer = await server.response(None, seconds=60)
        await server.ping()
        growth_kib = server.peak_memory_kib() - before
        print(f"peak RSS growth for a line of 1.3 million objects: {growth_kib} KiB")
        assert answer["error"]["code"] == -32600
        assert "more than 500,000 JSON values" in answer["error"]["message"]
        assert growth_kib < 4 * MAX_LINE_BYTES // 1024

    async def test_a_huge_line_costs_bounded_memory(self, server: RawMcp) -> None:
        await server.ping()
        before = server.peak_memory_kib()
        huge = 64 << 20  # 16 times the line limit
        assert server.process.stdin is not None
        server.process.stdin.write(b'{"jsonrpc": "2.0", "id": 1, "params": "' + b"x" * huge)
        server.process.stdin.write(b'"}\n')
        answer = await server.response(None, seconds=60)
        await server.ping()
        growth_kib = server.peak_memory_kib() - before
        print(f"peak RSS growth for a 64 MiB line: {growth_kib} KiB")
        assert answer["error"] == {
            "code": -32600,
            "message": f"a message over {MAX_LINE_BYTES:,} bytes is refused",
        }
        # The line limit and one chunk, with room for the allocator: never the line's size.
        assert growth_kib < 4 * MAX_LINE_BYTES // 1024 < huge // 1024


@pytest.fixture
def seed() -> int:
    chosen = int(os.environ.get("LECODE_FUZZ_SEED", str(random.randrange(2**32))))
    print(f"LECODE_FUZZ_SEED={chosen}")
    return chosen


def a_case(rng: random.Random, msg_id: int) -> bytes:
    arguments = (
        value(rng)
        if rng.random() < 0.2
        else {rng.choice(ARGUMENTS): value(rng) for _ in range(rng.randint(0, 4))}
    )
    data = json.dumps(call(msg_id, rng.choice(TOOLS), arguments)).encode()
    action = rng.choice(["as_is", "as_is", "mutate", "garbage", "method"])
    if action == "mutate":
        body = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            where = rng.randrange(len(body))
            body[where : where + rng.randint(0, 8)] = rng.randbytes(rng.randint(0, 8))
        data = bytes(body)
    elif action == "garbage":
        data = rng.randbytes(rng.randint(1, 3000))
    elif action == "method":
        method = rng.choice(["resources/read", "resources/list", "tools/list", "initialize", "x"])
        data = json.dumps(
            {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": value(rng)}
        ).encode()
    return data.replace(b"\n", b" ")


class TestFuzz:
    # covers P5 extended to MCP: the server never dies, never stalls, never leaks

    async def test_random_and_mutated_lines(self, server: RawMcp, seed: int) -> None:
        rng = random.Random(seed)
        deadline = time.monotonic() + SECONDS
        sent = 0
        while time.monotonic() < deadline:
            server.next_id += 1
            server.send(a_case(rng, server.next_id))
            sent += 1
            await server.ping()
        print(f"mcp stdio: {sent} cases")
        assert sent > 10
        assert server.process.returncode is None
        assert leaks(server.messages) == []
