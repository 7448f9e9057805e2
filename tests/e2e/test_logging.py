"""What `lecode-ls --log-level DEBUG` tells an editor: its version, the config file it read, the
projects it opened and each request, as `window/logMessage` at each record's level, with stderr
quiet while the client is connected (editors file stderr under errors).

The server runs as a subprocess driven step by step over stdin and stdout (each request once the
one before is answered), so nothing here waits on time.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

from lecode_ls import __version__
from tests.e2e.conftest import uri

LOG, INFO = 4, 3  # LSP MessageType


def frame(message: dict[str, Any]) -> bytes:
    body = json.dumps({"jsonrpc": "2.0", **message}).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def read_message(stream: IO[bytes]) -> dict[str, Any]:
    """One framed message from the server's stdout (blocks until it is there)."""
    length = None
    while (line := stream.readline()) not in (b"\r\n", b""):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    assert length is not None, "the server closed its output"
    message: dict[str, Any] = json.loads(stream.read(length))
    return message


def run_session(repo: Path, config_dir: Path, *args: str) -> tuple[list[dict[str, Any]], str]:
    """initialize, then two requests, then shutdown and exit, each step once the previous one
    is answered; everything the server sent, and its stderr."""
    server = subprocess.Popen(
        [sys.executable, "-m", "lecode_ls", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "LECODE_CONFIG_DIR": str(config_dir)},
    )
    assert server.stdin is not None and server.stdout is not None
    sent: list[dict[str, Any]] = []

    def send(message: dict[str, Any]) -> None:
        assert server.stdin is not None
        server.stdin.write(frame(message))
        server.stdin.flush()

    def answer(request_id: int) -> None:
        assert server.stdout is not None
        while True:
            message = read_message(server.stdout)
            sent.append(message)
            if message.get("id") == request_id and "method" not in message:
                return

    send(
        {
            "id": 1,
            "method": "initialize",
            "params": {
                "processId": None,
                "capabilities": {},
                "clientInfo": {"name": "test-editor", "version": "1.0"},
                "workspaceFolders": [{"uri": uri(repo), "name": "repo"}],
            },
        }
    )
    answer(1)
    send({"method": "initialized", "params": {}})
    send({"id": 2, "method": "lecode/memory/list", "params": {}})
    answer(2)
    send({"id": 3, "method": "lecode/memory/read", "params": {"file": "../x"}})
    answer(3)
    send({"id": 4, "method": "shutdown"})
    answer(4)
    send({"method": "exit"})
    rest, stderr = server.communicate(timeout=60)
    assert server.returncode == 0, stderr
    while rest:
        header, _, body = rest.partition(b"\r\n\r\n")
        length = int(re.search(rb"Content-Length: *(\d+)", header)[1])  # type: ignore[index]
        sent.append(json.loads(body[:length]))
        rest = body[length:]
    return sent, stderr.decode()


class TestDebugLog:
    def test_debug_logs_what_it_does_through_log_message_and_keeps_stderr_quiet(
        self, repo: Path, isolated_config_dir: Path
    ) -> None:
        # covers K2 (diagnosable start-up)
        (isolated_config_dir / "config.toml").write_text("[memory]\nmax_bytes = 4096\n")
        sent, stderr = run_session(repo, isolated_config_dir, "--log-level", "DEBUG")
        logged = [
            (m["params"]["type"], m["params"]["message"])
            for m in sent
            if m.get("method") == "window/logMessage"
        ]
        texts = [text for _, text in logged]
        assert (
            INFO,
            f"lecode_ls.server.routes: lecode-ls {__version__} "
            f"(Python {sys.version.split()[0]}), memory under {isolated_config_dir}, "
            "client test-editor 1.0",
        ) in logged
        assert (
            LOG,
            f"lecode_ls.server.server: settings: read {isolated_config_dir / 'config.toml'}",
        ) in logged
        assert any(
            kind == INFO and text.endswith(f"serving {repo.resolve()}: project {repo.resolve()}")
            for kind, text in logged
        ), texts
        assert any(
            text.startswith("lecode_ls.server.wiring: lecode/memory/list: answered (")
            for text in texts
        )
        assert any(
            text.startswith("lecode_ls.server.wiring: lecode/memory/read: invalid_name (")
            for text in texts
        ), texts
        # Only what came before `initialize` may go to stderr; at DEBUG that is pygls' own start.
        assert "lecode_ls" not in stderr, stderr

    def test_the_default_level_sends_no_debug_lines(
        self, repo: Path, isolated_config_dir: Path
    ) -> None:
        sent, stderr = run_session(repo, isolated_config_dir)
        kinds = {m["params"]["type"] for m in sent if m.get("method") == "window/logMessage"}
        assert kinds == {INFO}
        assert "lecode_ls" not in stderr, stderr
