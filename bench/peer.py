"""lecode-ls side by side with basic-memory 0.24.1, a Markdown memory server with a SQLite
full-text index served over MCP (issue 16): cold start, write, read, search, RSS.

Optional: `bench.run --peer` (never part of `--quick`), or `python -m bench.peer`. The peer runs
from its own virtual environment (bench/peer_mcp.py), never a dependency of lecode-ls; the table
says why when it cannot be built. BENCH_PEER_NOTES=100,1000 picks the sizes.

For each size both stores get the same N notes (bench.notes_search's, one holding a rare word),
written straight into their folders as another program would, then indexed each its own way:
lecode-ls's first search catches its index up; basic-memory runs `basic-memory reindex --search`.
Then, with both servers started from those stores:

- cold start: spawn to the first answered request (lecode-ls: `lecode/memory/read` of a note;
  basic-memory: `read_note` of the same note), runs alternating between the servers;
- one long-lived server each: a write of a new note (`lecode/memory/write` / `write_note`), a read
  of a random seeded note (`read_note` by permalink), a search for the rare word
  (`lecode/memory/search` / `search_notes` with `search_type: text`, its full-text index), each
  answer checked (one hit, the note's text, a created note), the servers' order swapped every
  round. basic-memory reconciles its files with its index after each start: the timed rounds
  begin once its log says that pass is over (its length is reported, beside lecode-ls's first
  search after a start, which compares every file with its index once per process);
- RSS (VmRSS of the process and its children) after the rounds.
"""

from __future__ import annotations

import os
import random
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from bench.common import (
    BYTECODE_NOTE,
    LECODE,
    Server,
    compile_bytecode,
    make_repo,
    markdown_table,
    now,
    percentile,
    run_bench,
    running,
    server_env,
)
from bench.notes_search import fill
from bench.peer_mcp import (
    IS_LINUX,
    PEER,
    PEER_VERSION,
    McpServer,
    Peer,
    build,
    peer_env,
    project_folder,
    reindex,
    settled_count,
    tree_rss_kib,
    wait_settled,
)

TITLE = f"lecode-ls side by side with {PEER} {PEER_VERSION} (p50, ms)"
BODY = "# Bench\n\nA note written during the bench: the build runs with make.\n"
SETTLE_TIMEOUT = 3600.0
OPS = ("write", "read", "search")
Op = Callable[[int], Awaitable[None]]


def expect(condition: bool, what: str, answer: Any) -> None:
    if not condition:
        raise RuntimeError(f"unexpected answer to {what}: {str(answer)[:300]}")


def lecode_ops(server: Server, size: int, rng: random.Random) -> dict[str, Op]:
    async def write(i: int) -> None:
        answer = await server.request(
            "lecode/memory/write", {"file": f"notes/bench-{i:04}.md", "content": BODY}
        )
        expect(answer["bytes"] == len(BODY.encode()), "write", answer)

    async def read(i: int) -> None:
        answer = await server.request(
            "lecode/memory/read", {"file": f"notes/n{rng.randrange(size):05}.md"}
        )
        expect(answer["exists"] and "Run the build" in answer["content"], "read", answer)

    async def search(i: int) -> None:
        answer = await server.request("lecode/memory/search", {"pattern": "quokka"})
        expect(len(answer["hits"]) == 1, "search", answer)

    return {"write": write, "read": read, "search": search}


def peer_ops(server: McpServer, size: int, rng: random.Random) -> dict[str, Op]:
    async def write(i: int) -> None:
        answer = await server.call(
            "write_note",
            {
                "title": f"bench {i:04}",
                "directory": "bench",
                "content": BODY,
                "output_format": "json",
            },
        )
        expect(answer["action"] == "created", "write_note", answer)

    async def read(i: int) -> None:
        permalink = f"main/notes/n{rng.randrange(size):05}"
        answer = await server.call("read_note", {"identifier": permalink, "output_format": "json"})
        expect("Run the build" in answer["content"], "read_note", answer)

    async def search(i: int) -> None:
        answer = await server.call(
            "search_notes", {"query": "quokka", "search_type": "text", "output_format": "json"}
        )
        expect(answer["total"] == 1, "search_notes", answer)

    return {"write": write, "read": read, "search": search}


async def lecode_cold(env: dict[str, str], repo: Path) -> float:
    start = now()
    server = await Server.spawn(LECODE, env)
    try:
        await server.initialize([repo])
        await server.request("lecode/memory/read", {"file": "notes/n00001.md"})
        return now() - start
    finally:
        await server.close()


async def peer_cold(peer: Peer, home: Path) -> float:
    before = settled_count(home)
    start = now()
    server = await McpServer.spawn(peer.command, peer_env(home))
    try:
        await server.initialize()
        await server.call("read_note", {"identifier": "main/notes/n00001", "output_format": "json"})
        elapsed = now() - start
        # Untimed: let its start-up pass end, so every start begins from the same state.
        await wait_settled(home, before, SETTLE_TIMEOUT)
        return elapsed
    finally:
        await server.close()


async def seed(
    peer: Peer, folder: Path, size: int
) -> tuple[Path, dict[str, str], Path, dict[str, float]]:
    """Both stores with `size` notes; the seconds each took."""
    repo = make_repo(folder / "repo")
    env = server_env(folder / "config")
    start = now()
    async with running(LECODE, env, [repo]) as server:
        await server.request("lecode/memory/write", {"file": "MEMORY.md", "content": "x"})
        store = Path((await server.request("lecode/project/info", {}))["storePath"])
        fill(store, size)
        answer = await server.request("lecode/memory/search", {"pattern": "quokka"})
        expect(len(answer["hits"]) == 1, "the first search", answer)
    lecode_seconds = now() - start
    home = folder / "peer"
    start = now()
    fill(project_folder(home), size)
    peer_seconds = now() - start + reindex(peer, home)
    return repo, env, home, {"lecode": lecode_seconds, "peer": peer_seconds}


async def one_size(
    peer: Peer, folder: Path, size: int, starts: int, warm: int, rounds: int
) -> list[list[object]]:
    repo, env, home, seeded = await seed(peer, folder, size)
    cold: dict[str, list[float]] = {"lecode": [], "peer": []}
    for run in range(starts):
        for side in ("lecode", "peer") if run % 2 == 0 else ("peer", "lecode"):
            cold[side].append(
                await lecode_cold(env, repo) if side == "lecode" else await peer_cold(peer, home)
            )
    times: dict[tuple[str, str], list[float]] = {}
    rng = random.Random(size)
    async with running(LECODE, env, [repo]) as lecode:
        before = settled_count(home)
        other = await McpServer.spawn(peer.command, peer_env(home))
        try:
            await other.initialize()
            settle = await wait_settled(home, before, SETTLE_TIMEOUT)
            sides = {"lecode": lecode_ops(lecode, size, rng), "peer": peer_ops(other, size, rng)}
            # lecode-ls's catch-up after a start: its first search compares every file with
            # the index (once per process), where basic-memory's pass runs at start.
            start = now()
            await sides["lecode"]["search"](0)
            catch_up = now() - start
            for i in range(warm + rounds):
                for op in OPS:
                    for side in ("lecode", "peer") if i % 2 == 0 else ("peer", "lecode"):
                        start = now()
                        await sides[side][op](i)
                        if i >= warm:
                            times.setdefault((side, op), []).append(now() - start)
            rss = (
                {"lecode": tree_rss_kib(lecode.pid), "peer": tree_rss_kib(other.pid)}
                if IS_LINUX
                else None
            )
        finally:
            await other.close()

    def ms(values: list[float]) -> tuple[str, float]:
        value = percentile(values, 50) * 1e3
        return (f"{value:.0f}" if value >= 100 else f"{value:.2f}"), value

    rows: list[list[object]] = []

    def row(label: str, lecode_value: tuple[str, float], peer_value: tuple[str, float]) -> None:
        rows.append(
            [
                f"{size:,}",
                label,
                lecode_value[0],
                peer_value[0],
                f"{lecode_value[1] / peer_value[1]:.3f}",
            ]
        )

    row(f"cold start: spawn to the first read answered ({starts} runs)", *map(ms, cold.values()))
    for op, label in zip(
        OPS, ("write one note", "read one note", "search a word in one note"), strict=True
    ):
        row(label, ms(times[("lecode", op)]), ms(times[("peer", op)]))
    if rss is not None:
        mib = {side: (f"{kib / 1024:.1f} MiB", kib / 1024) for side, kib in rss.items()}
        row("RSS after the rounds", mib["lecode"], mib["peer"])
    seconds = {side: (f"{value:.1f} s", value) for side, value in seeded.items()}
    row("seed the store (untimed set-up; see the note)", seconds["lecode"], seconds["peer"])
    row(
        "catching up after a start: lecode-ls's first search, basic-memory's start-up index pass",
        (f"{catch_up:.2f} s", catch_up),
        (f"{settle:.2f} s", settle),
    )
    return rows


async def measure(quick: bool = False) -> str:
    starts, warm, rounds = (1, 2, 5) if quick else (3, 5, 40)
    chosen = tuple(int(s) for s in os.environ.get("BENCH_PEER_NOTES", "").split(",") if s)
    sizes = chosen or ((100,) if quick else (100, 1000, 10_000))
    compile_bytecode()
    with tempfile.TemporaryDirectory(prefix="lecode-bench-peer-") as tmp:
        peer = build(Path(tmp))
        if isinstance(peer, str):
            return f"### {TITLE}\n\nSkipped: {peer}"
        rows: list[list[object]] = []
        for size in sizes:
            rows += await one_size(peer, Path(tmp) / f"notes-{size}", size, starts, warm, rounds)
    vector = (
        "its vector search was available (sqlite-vec loads)"
        if peer.vector_search
        else "its vector search was off (this Python cannot load SQLite extensions), so it "
        "indexed text only"
    )
    return markdown_table(
        TITLE,
        ["notes", "measure", "lecode-ls", PEER, f"lecode-ls / {PEER}"],
        rows,
        note=(
            f"{rounds} rounds of each operation per size after {warm} warm-up rounds, servers "
            f"alternating. {PEER} {PEER_VERSION} in its own environment (built in "
            f"{peer.build_seconds:.0f} s) on Python {peer.python_version}; {vector}. Seeding: "
            f"lecode-ls: the files written, then its first search (it indexes them); {PEER}: "
            f"the same files, then `{PEER} reindex --search`. " + BYTECODE_NOTE
        ),
    )


if __name__ == "__main__":
    run_bench(measure, __doc__)
