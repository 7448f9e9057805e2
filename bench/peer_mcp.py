"""The peer of `bench.peer`: basic-memory in its own virtual environment, spoken to over MCP.

basic-memory is never a dependency of lecode-ls: `build` makes a throw-away virtual environment
in the bench's temporary folder with `uv venv` + `uv pip install` (uv's cache makes a rebuild a few
seconds), and answers a reason to skip instead when that cannot be done (no uv, no Python 3.12+,
no registry). The server is started from that environment's own `basic-memory` script, so a
start is timed without uv in front of it.

MCP's stdio transport is newline-delimited JSON-RPC; `McpServer` is `common.RpcProcess` with that
framing, as `common.Server` is with LSP's, so neither side gets a heavier client.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

from bench.common import RpcError, RpcProcess, now

PEER = "basic-memory"
PEER_VERSION = "0.24.1"
PROTOCOL_VERSION = "2025-06-18"
# Any interpreter of these versions will do; uv is told not to download one.
PYTHONS = ("python3.14", "python3.13", "python3.12")
# What the log says when the start-up reconciliation of the project's files is over.
SETTLED = "Background project index completed"


@dataclass(frozen=True)
class Peer:
    """A built peer environment."""

    venv: Path
    python_version: str
    vector_search: bool  # whether this interpreter lets basic-memory load sqlite-vec
    build_seconds: float

    @property
    def command(self) -> list[str]:
        return [str(self.venv / "bin" / PEER), "mcp"]

    def cli(self, *args: str) -> list[str]:
        return [str(self.venv / "bin" / PEER), *args]


def find_python() -> str | None:
    """A Python 3.12+ for the peer: $BENCH_PEER_PYTHON, then PATH, then pyenv's versions."""
    if chosen := os.environ.get("BENCH_PEER_PYTHON"):
        return chosen
    for name in PYTHONS:
        if found := shutil.which(name):
            # A pyenv shim is on PATH even when its version is not selected: ask it.
            probe = subprocess.run([found, "-V"], capture_output=True, check=False)
            if probe.returncode == 0:
                return found
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    for pattern in ("3.1[2-9]*", "3.[2-9][0-9]*"):
        for version in sorted(pyenv.glob(pattern), reverse=True):
            if (python := version / "bin" / "python3").exists():
                return str(python)
    return None


def build(folder: Path) -> Peer | str:
    """The peer's environment under `folder`, or a sentence saying why it cannot be built."""
    uv = shutil.which("uv")
    if uv is None:
        return "`uv` is not on PATH; it builds the peer's separate environment."
    python = find_python()
    if python is None:
        return (
            f"{PEER} {PEER_VERSION} needs Python 3.12+ and none was found "
            "(set BENCH_PEER_PYTHON to one)."
        )
    venv = folder / "peer-venv"
    start = now()
    steps = [
        [uv, "venv", "--quiet", "--no-python-downloads", "--python", python, str(venv)],
        [
            uv,
            "pip",
            "install",
            "--quiet",
            "--compile-bytecode",  # as lecode-ls's own, so neither start compiles
            "--python",
            str(venv / "bin" / "python"),
            f"{PEER}=={PEER_VERSION}",
        ],
    ]
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, check=False, cwd=folder)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
            return f"`uv {step[1]}` failed: {last}"
    seconds = now() - start
    probe = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import platform\n"
            "from basic_memory.repository.semantic_runtime import "
            "sqlite_vector_runtime_available as v\n"
            "print(platform.python_version(), v())",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if probe.returncode != 0:
        return f"the peer's environment does not import basic_memory: {probe.stderr.strip()}"
    version, vector = probe.stdout.split()
    return Peer(venv, version, vector == "True", seconds)


def peer_env(home: Path) -> dict[str, str]:
    """Everything the peer keeps goes under `home`: its config, database and notes (project
    `main`). No update check or banner (FastMCP asks the registry for its latest version at each
    start otherwise), and bytecode caching allowed as for lecode-ls."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k != "PYTHONDONTWRITEBYTECODE" and not k.startswith(("BASIC_MEMORY_", "FASTMCP_"))
    }
    env |= {
        "HOME": str(home),
        "BASIC_MEMORY_CONFIG_DIR": str(home / "config"),
        "BASIC_MEMORY_HOME": str(project_folder(home)),
        "BASIC_MEMORY_AUTO_UPDATE": "false",
        "BASIC_MEMORY_NO_PROMOS": "1",
        "FASTMCP_CHECK_FOR_UPDATES": "off",
        "FASTMCP_SHOW_SERVER_BANNER": "false",
    }
    return env


def project_folder(home: Path) -> Path:
    return home / "notes"


def settled_count(home: Path) -> int:
    log = home / "config" / "basic-memory.log"
    return log.read_text(errors="replace").count(SETTLED) if log.exists() else 0


async def wait_settled(home: Path, before: int, limit: float) -> float:
    """Wait until the peer's log reports its start-up index pass over; the seconds it took."""
    start = now()
    while settled_count(home) <= before:
        if now() - start > limit:
            raise TimeoutError(f"{PEER} did not finish its start-up index in {limit:.0f} s")
        await asyncio.sleep(0.2)
    return now() - start


class McpServer(RpcProcess):
    """An MCP server: newline-delimited JSON-RPC."""

    @classmethod
    async def spawn(cls, command: Sequence[str], env: dict[str, str], **options: Any) -> Self:
        return await super().spawn(command, env, limit=2**24, **options)  # a message is a line

    def _frame(self, body: bytes) -> bytes:
        return body + b"\n"

    async def _read_message(self, stdout: asyncio.StreamReader) -> bytes | None:
        return await stdout.readline() or None

    def _answer(self, request_id: Any) -> dict[str, Any]:
        # ping, sampling...: declined.
        return {"id": request_id, "error": {"code": -32601, "message": "no"}}

    async def initialize(self) -> Any:
        result = await self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "lecode-bench", "version": "0"},
            },
        )
        self.notify("notifications/initialized")
        return result

    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        """A tool's structured result (every call asks for `output_format: json`)."""
        result = await self.request("tools/call", {"name": tool, "arguments": arguments})
        if result.get("isError"):
            raise RpcError({"code": "isError", "message": json.dumps(result)[:500]})
        return result["structuredContent"]["result"]

    async def close(self) -> None:
        """MCP's stdio shutdown: close its input; kill only if it does not end by itself."""
        try:
            if self.proc.returncode is None:
                assert self.proc.stdin is not None
                self.proc.stdin.close()
                await asyncio.wait_for(self.proc.wait(), 20)
        except TimeoutError:
            self.proc.kill()
            await self.proc.wait()
        finally:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader


def reindex(peer: Peer, home: Path) -> float:
    """The peer's own way to index files it did not write: `basic-memory reindex --search`."""
    start = now()
    subprocess.run(
        peer.cli("reindex", "--search"),
        env=peer_env(home),
        cwd=home,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return now() - start


def tree_rss_kib(pid: int) -> int:
    """VmRSS of a process and its children (Linux only)."""
    total = 0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            total += int(line.split()[1])
    for task in Path(f"/proc/{pid}/task").iterdir():
        children = (task / "children").read_text().split()
        total += sum(tree_rss_kib(int(child)) for child in children)
    return total


IS_LINUX = sys.platform.startswith("linux")
