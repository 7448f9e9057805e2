"""The live rig: a real model served by llama.cpp's llama-server on loopback, for `-m live`.

`scripts/test-live` fetches and checks the model, builds llama-server, and names both in
LECODE_LLAMA_SERVER and LECODE_LIVE_MODEL. The server runs with a fixed seed and temperature 0,
one slot, and a small window, and the model's own chat template with its tool calls written as
fenced JSON (template.py says why), so a run is as repeatable as llama.cpp on this CPU makes it. A test
that needs its own server (to kill it) starts one with `serve()`.

Between lecode-ls and llama-server sits the comparison harness's tap (bench/compare/tap.py): it
records every request and what the server answered on the wire, which is what the suite checks
lecode-ls against.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from bench.compare.tap import Tap
from tests.e2e.conftest import make_repo, start  # noqa: F401  (start: the e2e fixture, shared)
from tests.live.template import fenced_template

MODEL_NAME = "qwen2.5-coder-0.5b-instruct"
"""The name lecode-ls sends; not in the catalog, so the window is asked of the server."""

WINDOW = 8192
"""The server's window (`--ctx-size`), small enough that an overflow is cheap to provoke."""

READY_TIMEOUT = 180.0


@dataclass
class Llama:
    """One running llama-server."""

    process: subprocess.Popen[bytes]
    port: int
    log: list[str] = field(default_factory=list)
    reader: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(30)
        if self.reader is not None:
            self.reader.join(30)  # it ends at the pipe's end, now that the server is gone
        if self.process.stderr is not None:
            self.process.stderr.close()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _required(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set: run the live suite with scripts/test-live")
    return value


def serve(*extra: str) -> Llama:
    """Start llama-server on a free loopback port; return once it says it is listening."""
    model = _required("LECODE_LIVE_MODEL")
    return _start_server(
        "--model", model,
        "--ctx-size", str(WINDOW),
        "--parallel", "1",
        "--seed", "42",
        "--temp", "0",
        "--jinja",
        "--chat-template-file", str(fenced_template(Path(model), Path(model).parent)),
        *extra,
    )  # fmt: skip


def serve_embeddings() -> Llama:
    """A second llama-server serving the embedding model at /v1/embeddings (all-MiniLM-L6-v2,
    converted by bert_gguf.py; scripts/test-live names it in LECODE_LIVE_EMBEDDING_MODEL)."""
    return _start_server(
        "--model", _required("LECODE_LIVE_EMBEDDING_MODEL"),
        "--embeddings", "--pooling", "mean",
        "--ctx-size", "4096", "--batch-size", "4096", "--ubatch-size", "4096",
        "--parallel", "1",
    )  # fmt: skip


def _start_server(*arguments: str) -> Llama:
    binary = _required("LECODE_LLAMA_SERVER")
    port = _free_port()
    command = [
        binary,
        "--host", "127.0.0.1",
        "--port", str(port),
        "--threads", str(min(2, os.cpu_count() or 1)),
        "--no-webui",
        *arguments,
    ]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    llama = Llama(process, port)
    ready = threading.Event()

    def read() -> None:
        assert process.stderr is not None
        for raw in process.stderr:
            line = raw.decode("utf-8", "replace").rstrip()
            llama.log.append(line)
            if "listening on" in line:
                ready.set()
        ready.set()  # the server exited: stop waiting

    llama.reader = threading.Thread(target=read, name=f"llama-server-{port}", daemon=True)
    llama.reader.start()
    if not ready.wait(READY_TIMEOUT) or process.poll() is not None:
        llama.stop()
        tail = "\n".join(llama.log[-20:])
        pytest.fail(f"llama-server did not start:\n{tail}")
    return llama


@pytest.fixture(scope="session")
def llama() -> Iterator[Llama]:
    """The suite's shared llama-server."""
    if shutil.which(_required("LECODE_LLAMA_SERVER")) is None:
        pytest.fail("LECODE_LLAMA_SERVER does not name an executable")
    server = serve()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def embedder() -> Iterator[Llama]:
    """The embedding model's llama-server, for the tests that need it."""
    server = serve_embeddings()
    yield server
    server.stop()


@pytest_asyncio.fixture
async def tap(llama: Llama) -> AsyncIterator[Tap]:
    """A recording proxy in front of the shared server, one per test."""
    async with Tap(llama.url, read_timeout=300.0) as recorder:
        yield recorder


ANSWER_TOKENS = 200
"""`[agent] max_output_tokens`: CPU inference writes about 10 tokens a second here."""


def provider_options(base_url: str, **sections: Any) -> dict[str, Any]:
    agent = {"max_output_tokens": ANSWER_TOKENS, **sections.pop("agent", {})}
    return {
        "provider": {"base_url": base_url, "model": MODEL_NAME, "api_key_env": ""},
        "agent": agent,
        **sections,
    }


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A Git repository with a pyproject.toml for the model to read."""
    repo = make_repo(tmp_path / "repo")
    (repo / "pyproject.toml").write_text(
        '[project]\nname = "demo"\nversion = "0.1.0"\nrequires-python = ">=3.11"\n'
    )
    return repo
