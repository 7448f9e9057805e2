"""The transport at the byte level: framing, JSON-RPC envelopes and connections (issue 10.2-10.4).

Every test talks to the real server process. Each hostile input must get the answer JSON-RPC 2.0
and LSP prescribe (or be dropped where they prescribe none), and must never cost the next request.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from tests.e2e.conftest import make_repo
from tests.e2e.raw import SERVER, Served, Wire, frame, notification, request, start_stdio


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo")


@pytest_asyncio.fixture
async def served(isolated_config_dir: Path, repo: Path) -> AsyncIterator[Served]:
    server = await start_stdio()
    await server.wire.initialize(repo)
    yield server
    log = await server.stop()
    assert "Traceback" not in log


async def ping_answered(wire: Wire, msg_id: int) -> None:
    assert await wire.call(msg_id, "lecode/ping", {}) == {
        "jsonrpc": "2.0",
        "id": msg_id,
        "result": {},
    }


class TestFraming:
    # covers P5 (issue 10.3, 10.4)

    async def test_a_huge_content_length_is_refused_and_the_server_lives(
        self, served: Served
    ) -> None:
        served.wire.send(b"Content-Length: 1000000000000\r\n\r\n")
        answer = await served.wire.response(None)
        assert answer["error"]["code"] == -32700
        assert (
            "1,000,000,000,000 bytes is over the 67,108,864-byte limit"
            in answer["error"]["message"]
        )
        await ping_answered(served.wire, 2)

    async def test_a_frame_without_content_length_costs_only_itself(self, served: Served) -> None:
        served.wire.send(b"Content-Type: application/json\r\n\r\n" + b'{"jsonrpc":"2.0","id":9}')
        assert (await served.wire.response(None))["error"]["code"] == -32700
        await ping_answered(served.wire, 2)
        await ping_answered(served.wire, 3)

    async def test_garbage_before_a_frame_costs_only_itself(self, served: Served) -> None:
        served.wire.send(b"\x00\xffhello world" + request(2, "lecode/ping", {}))
        assert (await served.wire.response(2))["result"] == {}

    async def test_an_endless_header_line_is_bounded(self, served: Served) -> None:
        served.wire.send(b"X-Junk: " + b"a" * 100_000)
        assert "longer than 8192 bytes" in (await served.wire.response(None))["error"]["message"]
        served.wire.send(b"\r\n\r\n")
        await ping_answered(served.wire, 2)

    async def test_a_message_split_into_single_bytes_is_read(self, served: Served) -> None:
        for byte in request(2, "lecode/ping", {}):
            served.wire.send(bytes([byte]))
        assert (await served.wire.response(2))["result"] == {}


class TestEnvelopes:
    # covers P5 (issue 10.4): what JSON-RPC 2.0 says must be answered is answered

    @pytest.mark.parametrize(
        ("body", "code", "words"),
        [
            (b'{"jsonrpc": "2.0", "id": 5, "method": ', -32700, "not JSON"),
            (b'{"jsonrpc": "2.0", "id": 5, "method": "lecode/ping", "x": "\xff"}', -32700, "UTF-8"),
            (b"[" * 200_000 + b"]" * 200_000, -32700, "nested too deeply"),
            (b'{"jsonrpc": "2.0", "id": 5, "method": "lecode/ping", "params": NaN}', -32700, "NaN"),
            (b'[{"jsonrpc": "2.0", "id": 5, "method": "lecode/ping"}]', -32600, "batches"),
            (b"[]", -32600, "batches"),
            (b"42", -32600, "JSON object"),
            (b"null", -32600, "JSON object"),
            (b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "lecode/ping"}', -32600, "id:"),
            (b'{"jsonrpc": "2.0", "id": true, "method": "lecode/ping"}', -32600, "id:"),
            (b'{"jsonrpc": "2.0"}', -32600, "method or an id"),
        ],
    )
    async def test_a_malformed_message_gets_an_error_with_id_null(
        self, served: Served, body: bytes, code: int, words: str
    ) -> None:
        served.wire.send(frame(body))
        answer = await served.wire.response(None)
        assert answer["error"]["code"] == code
        assert words in answer["error"]["message"]
        await ping_answered(served.wire, 2)

    @pytest.mark.parametrize(
        ("message", "words"),
        [
            ({"jsonrpc": "1.0", "id": 7, "method": "lecode/ping"}, 'jsonrpc: must be "2.0"'),
            ({"id": 7, "method": "lecode/ping"}, 'jsonrpc: must be "2.0"'),
            ({"jsonrpc": "2.0", "id": 7, "method": 12}, "method: must be a string"),
        ],
    )
    async def test_an_invalid_request_with_a_readable_id_is_answered_to_that_id(
        self, served: Served, message: dict[str, object], words: str
    ) -> None:
        served.wire.send(frame(message))
        answer = await served.wire.response(7)
        assert answer["error"] == {"code": -32600, "message": words}

    async def test_an_invalid_notification_gets_no_answer(self, served: Served) -> None:
        served.wire.send(frame({"jsonrpc": "1.0", "method": "lecode/ping"}))
        await ping_answered(served.wire, 2)
        assert [m.get("id") for m in served.wire.messages if "id" in m] == [1, 2]

    async def test_requests_after_shutdown_get_invalid_request_and_exit_ends_with_0(
        self, served: Served
    ) -> None:
        # covers K3: LSP says a request after shutdown is InvalidRequest
        assert (await served.wire.call(2, "shutdown"))["result"] is None
        answer = await served.wire.call(3, "lecode/memory/read", {"file": "MEMORY.md"})
        assert answer["error"] == {
            "code": -32600,
            "message": "the server is shutting down; it takes no more requests",
            "data": {"code": "shut_down"},
        }
        served.wire.send(notification("exit"))
        assert await asyncio.wait_for(served.process.wait(), 10) == 0

    async def test_exit_without_shutdown_ends_with_1(self, served: Served) -> None:
        served.wire.send(notification("exit"))
        assert await asyncio.wait_for(served.process.wait(), 10) == 1


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


_DRAINS: set[asyncio.Task[None]] = set()


async def start_tcp(*address: str) -> asyncio.subprocess.Process:
    """The server listening on TCP; its log is read (and dropped) so it never blocks on it."""
    process = await asyncio.create_subprocess_exec(
        *SERVER, "--tcp", *address, stderr=asyncio.subprocess.PIPE
    )
    stderr = process.stderr
    assert stderr is not None
    while b"Serving on" not in (line := await stderr.readline()):
        assert line, "the server exited before listening"

    async def drain() -> None:
        while await stderr.read(65536):
            pass

    task = asyncio.ensure_future(drain())
    _DRAINS.add(task)
    task.add_done_callback(_DRAINS.discard)
    return process


class TestParsedSize:
    async def test_a_body_of_millions_of_empty_objects_is_refused_before_it_is_parsed(
        self, isolated_config_dir: Path, repo: Path
    ) -> None:
        # issue 23, item 5: 64 MiB of `{}` objects peaked at 1.7 GiB; the bytes were bounded,
        # not what parsing them allocates.
        served = await start_stdio()
        try:
            await served.wire.initialize(repo)
            status = Path(f"/proc/{served.process.pid}/status")

            def peak_kib() -> int:
                row = next(r for r in status.read_text().splitlines() if r.startswith("VmHWM:"))
                return int(row.split()[1])

            before = peak_kib()
            body = b"[" + b"{}," * (20 << 20) + b"{}]"  # 60 MiB, under the 64 MiB message cap
            served.wire.send(frame(body))
            answer = await served.wire.response(None, seconds=60)
            assert (await served.wire.call(9, "lecode/ping", {}))["result"] == {}
            growth_mib = (peak_kib() - before) >> 10
            print(f"peak RSS growth for 21 million objects: {growth_mib} MiB")
            assert answer["error"]["code"] == -32600
            assert "more than 2,000,000 JSON values" in answer["error"]["message"]
            assert growth_mib < 4 * 64  # the framing's copies of the body, never the parse
        finally:
            await served.stop()


class TestTcp:
    # covers P1, issue 10.2: loopback only, one client, nothing before initialize

    @pytest.mark.parametrize("host", ["0.0.0.0", "[::]", "192.0.2.1", "example.invalid"])
    async def test_a_host_other_than_loopback_is_refused(self, host: str) -> None:
        process = await asyncio.create_subprocess_exec(
            *SERVER, "--tcp", f"{host}:{free_port()}", stderr=asyncio.subprocess.PIPE
        )
        _, err = await process.communicate()
        assert process.returncode == 2
        assert b"is not a loopback address" in err

    @pytest.mark.parametrize(
        ("argument", "says"),
        [
            ("--tcp=[::1%lo]:1", b"is not a loopback address"),
            ("--tcp=127.0.0.1:\u00b2", b"expected HOST:PORT"),
            ("--tcp=127.0.0.1:" + "9" * 5000, b"expected HOST:PORT"),
            ("--socket=\u00b2", b"expected a port number"),
            ("--pipe=", b"expected the name of the client's pipe"),
        ],
    )
    async def test_an_argument_that_cannot_be_served_is_refused_clearly(
        self, argument: str, says: bytes
    ) -> None:
        # issue 23, item 5: a scoped IPv6 loopback was accepted and then failed; `--pipe ""`
        # served stdio with exit 0; a port of digits int() refuses raised a traceback.
        process = await asyncio.create_subprocess_exec(
            *SERVER, argument, stdin=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE
        )
        _, err = await process.communicate()
        assert process.returncode == 2
        assert says in err and b"Traceback" not in err

    async def test_localhost_is_served_on_127_0_0_1_and_never_resolved(
        self, isolated_config_dir: Path
    ) -> None:
        # A resolver may map localhost to a LAN address (seen: listening there while logging
        # "loopback only"). The name is not resolved: 127.0.0.1 alone is bound (before, every
        # address the resolver gave), and what was bound is checked to be loopback.
        port = free_port()
        process = await asyncio.create_subprocess_exec(
            *SERVER, "--tcp", f"localhost:{port}", stderr=asyncio.subprocess.PIPE
        )
        stderr = process.stderr
        assert stderr is not None
        try:
            line = b""
            while b"Serving on" not in line:
                line = await asyncio.wait_for(stderr.readline(), 30)
                assert line, "the server exited before listening"
            assert f"Serving on ('127.0.0.1', {port}) (one client".encode() in line
        finally:
            process.kill()
            await process.wait()

    async def test_one_client_only_and_nothing_before_initialize(
        self, isolated_config_dir: Path, repo: Path
    ) -> None:
        port = free_port()
        process = await start_tcp(f"127.0.0.1:{port}")
        try:
            first = Wire(*await asyncio.open_connection("127.0.0.1", port))
            # Nothing is served before initialize, not even to the one client.
            early = await first.call(1, "lecode/memory/read", {"file": "MEMORY.md"})
            assert early["error"]["code"] == -32002
            # A second connection is refused (the listener closed) or closed at once.
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
            except ConnectionRefusedError:
                pass
            else:
                writer.write(request(1, "lecode/ping", {}))
                assert await asyncio.wait_for(reader.read(), 10) == b""
                writer.close()
            # The first client keeps its own answers.
            await first.initialize(repo, msg_id=2)
            assert (await first.call(3, "lecode/ping", {}))["result"] == {}
            first.close()
        finally:
            process.kill()
            await process.wait()

    async def test_ipv6_loopback_is_served(self, isolated_config_dir: Path) -> None:
        if not socket.has_ipv6:
            pytest.skip("no IPv6 on this machine")
        port = free_port()
        try:
            process = await start_tcp(f"[::1]:{port}")
        except AssertionError:
            pytest.skip("IPv6 loopback is not configured here")
        try:
            wire = Wire(*await asyncio.open_connection("::1", port))
            await wire.initialize(None)
            assert (await wire.call(2, "lecode/ping", {}))["result"] == {}
            wire.close()
        finally:
            process.kill()
            await process.wait()


class TestClientListens:
    """`--socket` and `--pipe`: vscode-languageclient listens and the server connects."""

    async def served_by(self, listener: asyncio.AbstractServer, *args: str) -> None:
        """Start the server with `args`, wait for it to connect to `listener`, and talk."""
        process = await asyncio.create_subprocess_exec(*SERVER, *args)
        try:
            wire = await asyncio.wait_for(self.connected, 30)
            await wire.initialize(None)
            assert (await wire.call(2, "lecode/ping", {}))["result"] == {}
            assert "Traceback" not in json.dumps(wire.messages)
            wire.close()
        finally:
            process.kill()
            await process.wait()
            listener.close()

    def accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connected.set_result(Wire(reader, writer))

    async def test_socket_connects_to_the_client(self, isolated_config_dir: Path) -> None:
        self.connected: asyncio.Future[Wire] = asyncio.get_running_loop().create_future()
        listener = await asyncio.start_server(self.accept, "127.0.0.1", 0)
        port = listener.sockets[0].getsockname()[1]
        await self.served_by(listener, f"--socket={port}")

    @pytest.mark.skipif(sys.platform == "win32", reason="a Unix socket path")
    async def test_pipe_connects_to_the_clients_unix_socket(
        self, isolated_config_dir: Path, tmp_path: Path
    ) -> None:
        path = tmp_path / "lsp.sock"
        self.connected = asyncio.get_running_loop().create_future()
        listener = await asyncio.start_unix_server(self.accept, str(path))
        await self.served_by(listener, f"--pipe={path}", "--clientProcessId", str(os.getpid()))
