"""The server's own overhead in a chat turn: `lecode/chat/send` to the provider request, and the
last streamed chunk to the `lecode/chat/send` result.

The model is the loopback server of the tests (tests/fakes/openai_server.py), in this process,
so one clock times both sides: the client's send, the moment the whole HTTP request has arrived,
the moment the last SSE chunk was flushed, and the result's arrival. Each turn streams a 10-piece
text answer with usage. What the first interval holds: params validation, the user message
appended (fsync), the history read, the memory section built, AGENTS.md read, the generation read,
the preflight, and the HTTP request. The second: the stream's end, the assistant message and the
usage event appended (fsync each), and the result. The floor is `lecode/ping` on the same server.
Sessions are renewed every 20 turns, so history stays short (a long history is compaction's
concern, not this one's).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from bench.common import (
    LECODE,
    make_repo,
    markdown_table,
    now,
    percentile,
    run_bench,
    running,
    server_env,
)
from tests.fakes.openai_server import FakeOpenAI, Stream, text_chunks

TARGET_MS = 20.0
TURNS_PER_SESSION = 20


async def measure(quick: bool = False) -> str:
    warmup, n = (3, 20) if quick else (20, 300)
    with tempfile.TemporaryDirectory(prefix="lecode-bench-") as tmp:
        repo = make_repo(Path(tmp) / "repo")
        (repo / "AGENTS.md").write_text("Use uv for everything.\n")
        config = Path(tmp) / "config"
        config.mkdir()
        async with FakeOpenAI() as model:
            (config / "config.toml").write_text(
                f'[provider]\nbase_url = "{model.base_url}"\nmodel = "gpt-4o"\napi_key_env = ""\n'
            )
            async with running(LECODE, server_env(config), [repo]) as server:
                await server.request(
                    "lecode/memory/write",
                    {"file": "MEMORY.md", "content": "Build with `make`.\n" * 20},
                )
                to_request: list[float] = []
                from_last_chunk: list[float] = []
                ping: list[float] = []
                session = ""
                for i in range(warmup + n):
                    if i % TURNS_PER_SESSION == 0:
                        session = (await server.request("lecode/session/new", {}))["sessionId"]
                    pieces = [f"word{k} " for k in range(10)]
                    model.push(Stream(text_chunks(*pieces, usage=(100, 10))))
                    start = now()
                    await server.request("lecode/chat/send", {"sessionId": session, "text": "hi"})
                    end = now()
                    begin = now()
                    await server.request("lecode/ping", {})
                    pinged = now() - begin
                    if i >= warmup:
                        to_request.append(model.requests[-1].at - start)
                        from_last_chunk.append(end - model.stream_ends[-1])
                        ping.append(pinged)

    floor = percentile(ping, 50) * 1e3
    rows = [
        [
            "`lecode/ping` round trip (floor)",
            n,
            f"{floor:.2f}",
            f"{percentile(ping, 99) * 1e3:.2f}",
            "",
        ]
    ]
    for name, values in (
        ("`lecode/chat/send` sent -> provider request received", to_request),
        ("last chunk sent -> `lecode/chat/send` result received", from_last_chunk),
    ):
        p50 = percentile(values, 50) * 1e3
        verdict = "met" if p50 <= TARGET_MS else "MISSED"
        rows.append(
            [
                name,
                n,
                f"{p50:.2f}",
                f"{percentile(values, 99) * 1e3:.2f}",
                f"≤ {TARGET_MS:.0f} ms: {verdict}",
            ]
        )
    return markdown_table(
        f"Server overhead in a chat turn ({warmup} warm-up turns; sessions of "
        f"{TURNS_PER_SESSION} turns)",
        ["interval", "n", "p50 ms", "p99 ms", "target"],
        rows,
    )


def main() -> None:
    run_bench(measure, __doc__)


if __name__ == "__main__":
    main()
