"""The provider's prompt cache against lecode-ls's prompt layout, measured on llama-server.

    scripts/test-live --collect-only -q   # once: fetches the model and builds llama-server
    # (LECODE_LIVE_MODELS="0.5b 1.5b" fetches the 1.5B too: qwen2.5-coder-1.5b-instruct-q4.gguf)
    LECODE_LLAMA_SERVER=~/.cache/lecode-live/build/bin/llama-server \\
    LECODE_LIVE_MODEL=~/.cache/lecode-live/models/qwen2.5-coder-0.5b-instruct-q4.gguf \\
        uv run python -m bench.prompt_cache [--repeats 3] [--tree NAME=DIR ...]
    uv run python -m bench.prompt_cache --base-url URL --model NAME ...   # a server already up

One trial: a fresh config dir and Git project with an AGENTS.md, a MEMORY.md and a scratchpad of a
few KB; lecode-ls (its provider pointing at a recording tap in front of llama-server) runs three
turns of one session:

1. "warm-up": the first request (nothing of it is cached yet, apart from what an earlier trial left);
2. "no change": "We use tabs for indentation in this repo. ..." (a new user message, memory
   unchanged: the prompt grows at its end only if the memory section stays as it was; with
   `--facts N` stored first, the facts ranked for the new message may differ, which is what a
   new user message costs the cache since issue 25);
3. "after a learned fact": the fact is stored first, as automatic learning stores it (the exact
   quote of turn 2's message, with its source, through `lecode/facts/remember`), so the next
   request carries one more fact in its memory section.

For each turn's first request, llama-server's `timings` (`prompt_n`: tokens evaluated, `cache_n`:
tokens taken from its cache, `prompt_ms`) and the tap's time to the first token (the first piece
of text or of a tool call: llama-server may send a chunk before it has evaluated the prompt). Each `--tree NAME=DIR` adds an arm running the
lecode-ls package found in DIR (a source tree, for example `git archive` of an older commit) with
the same Python environment, the arms interleaved in each repeat, against the same server: the
layouts are compared on one model, one machine and one run. The server is started with the live suite's
settings (tests/live/conftest.py: seed 42, temperature 0, one slot, an 8,192-token window, its
chat template with fenced tool calls). Nothing here asserts: the table is read by people.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx

from bench.common import ROOT, Server, make_repo, markdown_table, now, server_env
from bench.compare.tap import Call, Tap

TURNS = (
    ("warm-up", "Say hello in five words."),
    ("no change", "We use tabs for indentation in this repo. Reply with OK only."),
    ("after a learned fact", "Name one Python test runner. One word."),
)
PREFERENCE = "We use tabs for indentation in this repo."
AGENTS = "".join(
    f"- Rule {n}: keep functions under 40 lines, type every public function, test every fix.\n"
    for n in range(1, 9)
)
MEMORY = "# widget\n\n" + "".join(
    f"- Note {n}: the widget module {n} builds with `make widget-{n}` and is tested by "
    f"tests/test_widget_{n}.py.\n"
    for n in range(1, 25)
)
SCRATCHPAD = "".join(f"- [ ] task {n}: review widget {n}\n" for n in range(1, 9))
ANSWER_TOKENS = 24
"""`[agent] max_output_tokens`: the answers are not measured, only the prompt."""


def config(base_url: str, model: str, facts: int = 0) -> str:
    # With facts stored, the prompt outgrows the window less the default 4,096 tokens kept for
    # the answer (the turn would pause): the answers here are 24 tokens.
    room = "[compaction]\nbuffer_tokens = 1024\n" if facts else ""
    return (
        "[provider]\n"
        f'base_url = {json.dumps(base_url)}\nmodel = {json.dumps(model)}\napi_key_env = ""\n'
        f"[agent]\nmax_output_tokens = {ANSWER_TOKENS}\n"
        "[memory]\nenabled = true\nauto_learn = false\n" + room
    )


@contextlib.asynccontextmanager
async def lecode(source: Path, config_dir: Path, folder: Path) -> AsyncIterator[Server]:
    """lecode-ls from the package in `source`, over stdio, initialized with `folder`."""
    env = server_env(config_dir)
    env["PYTHONPATH"] = str(source)  # before the editable install's path
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "lecode_ls",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        cwd=source,  # `python -m` puts the working folder first on sys.path
        env=env,
    )
    server = Server(proc)
    try:
        await asyncio.wait_for(server.initialize([folder]), 60)
        yield server
    finally:
        await server.close()


async def seed(server: Server, count: int) -> None:
    """`count` facts of bench/retrieval_set.py, each remembered from its own user message of
    one imported session (through the protocol, so every tree compared can run it)."""
    if count <= 0:
        return
    from bench.retrieval_set import FACTS

    texts = FACTS[:count]
    records = [{"role": "user", "content": text} for text in texts]
    imported = await server.request(
        "lecode/session/import", {"records": records, "title": "months of work"}
    )
    for seq, text in enumerate(texts, start=1):
        source = await server.request(
            "lecode/session/snapshot",
            {"sessionId": imported["sessionId"], "startSeq": seq, "endSeq": seq},
        )
        await server.request("lecode/facts/remember", {"text": text, "source": source})


async def trial(
    upstream: str, model: str, source: Path, facts: int = 0
) -> dict[str, dict[str, Any]]:
    """One session of the three turns; each turn's first chat request, measured."""
    with tempfile.TemporaryDirectory(prefix="lecode-cache-") as tmp:
        repo = make_repo(Path(tmp) / "widget")
        (repo / "AGENTS.md").write_text(AGENTS)
        config_dir = Path(tmp) / "config"
        config_dir.mkdir()
        async with Tap(upstream, read_timeout=600.0) as tap:
            tap.keep_bodies = True
            (config_dir / "config.toml").write_text(config(tap.base_url, model, facts))
            async with lecode(source, config_dir, repo) as server:
                for name, content in (("MEMORY.md", MEMORY), ("scratchpad.md", SCRATCHPAD)):
                    await server.request("lecode/memory/write", {"file": name, "content": content})
                await seed(server, facts)
                session = (await server.request("lecode/session/new", {"title": "cache"}))[
                    "sessionId"
                ]
                measured: dict[str, dict[str, Any]] = {}
                seen: set[int] = set()
                for label, text in TURNS:
                    if label == "after a learned fact":
                        await learn(server, session)
                    before = len(tap.calls)
                    began = now()
                    result = await server.request(
                        "lecode/chat/send", {"sessionId": session, "text": text}
                    )
                    chats = [c for c in tap.calls[before:] if c.purpose == "chat"]
                    measured[label] = row(chats[0] if chats else None, result, now() - began)
                    measured[label]["misses"] = misses(config_dir, session, seen)
                    if label == "no change" and chats:  # the floor: that request once more
                        again = await resend(tap, tap.bodies[chats[0].index])
                        measured[HIT] = row(again, {}, 0.0) | {"misses": "none"}
                return measured


HIT = "the same request again (a cache hit: the floor)"


async def resend(tap: Tap, body: bytes) -> Call | None:
    """`body` sent through the tap once more, as it was: llama-server holds its whole prompt."""
    before = len(tap.calls)
    async with (
        httpx.AsyncClient(timeout=600.0) as client,
        client.stream(
            "POST",
            f"{tap.base_url}/chat/completions",
            content=body,
            headers={"content-type": "application/json"},
        ) as response,
    ):
        async for _ in response.aiter_bytes():
            pass
    return tap.calls[before] if len(tap.calls) > before else None


def misses(config_dir: Path, session: str, seen: set[int]) -> str:
    """The reasons of the cache misses the server recorded since the last call (`cache_miss`
    events in the session's transcript; a tree from before issue 40 records none)."""
    reasons = []
    for path in config_dir.rglob(f"{session}.jsonl"):
        for number, line in enumerate(path.read_text().splitlines()):
            record = json.loads(line)
            if record.get("type") == "cache_miss" and number not in seen:
                seen.add(number)
                reasons.append(str(record.get("reason")))
    return ", ".join(reasons) or "none"


async def learn(server: Server, session: str) -> None:
    """A fact quoting turn 2's message exactly, stored with its source."""
    history = await server.request("lecode/chat/history", {"sessionId": session, "limit": 100})
    seq = next(
        i["seq"] for i in history["items"] if i["kind"] == "user" and PREFERENCE in i["text"]
    )
    source = await server.request(
        "lecode/session/snapshot", {"sessionId": session, "startSeq": seq, "endSeq": seq}
    )
    await server.request("lecode/facts/remember", {"text": PREFERENCE, "source": source})


def row(call: Call | None, result: Any, seconds: float) -> dict[str, Any]:
    timings = (call.timings if call is not None else None) or {}
    first_token = (
        call.first_token - call.started
        if call is not None and call.first_token is not None
        else None
    )
    return {
        "prompt_n": timings.get("prompt_n"),
        "cache_n": timings.get("cache_n"),
        "prompt_ms": timings.get("prompt_ms"),
        "first_token_s": first_token,
        "prompt_tokens": (call.usage or {}).get("prompt_tokens") if call is not None else None,
        "turn_s": seconds,
        "stop": result.get("stopReason") if isinstance(result, dict) else None,
    }


def _p50(values: Sequence[float | None], *, tokens: bool = False) -> str:
    present = [v for v in values if v is not None]
    if not present:
        return "n/a"
    value = statistics.median(present)
    return f"{value:,.0f}" if tokens else f"{value:.2f}"


def _median(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def _range(values: Sequence[float | None]) -> str:
    present = [v for v in values if v is not None]
    return f"{min(present):,.2f}-{max(present):,.2f}" if present else "n/a"


def report(
    results: dict[str, list[dict[str, dict[str, Any]]]], repeats: int, model: str, facts: int = 0
) -> str:
    rows = []
    labels = [TURNS[0][0], TURNS[1][0], HIT, *(label for label, _ in TURNS[2:])]
    for arm, trials in results.items():
        floor = _median([t[HIT]["first_token_s"] for t in trials if HIT in t])
        for label in labels:
            cells = [t[label] for t in trials if label in t]
            first = _median([c["first_token_s"] for c in cells])
            rows.append(
                [
                    arm,
                    label,
                    len(cells),
                    _p50([c["prompt_tokens"] for c in cells], tokens=True),
                    _p50([c["cache_n"] for c in cells], tokens=True),
                    _p50([c["prompt_n"] for c in cells], tokens=True),
                    _p50([c["prompt_ms"] and c["prompt_ms"] / 1000 for c in cells]),
                    _p50([c["first_token_s"] for c in cells]),
                    _range([c["first_token_s"] for c in cells]),
                    f"{first / floor:.1f}x" if first is not None and floor else "n/a",
                    "; ".join(sorted({c.get("misses", "n/a") for c in cells})),
                ]
            )
    return markdown_table(
        f"Prompt cache: the first request of each turn ({model}, llama-server, n = {repeats}, "
        f"{facts} facts stored)",
        [
            "layout",
            "turn",
            "n",
            "prompt tokens",
            "cache_n (reused)",
            "prompt_n (evaluated)",
            "prompt eval s",
            "first token s (p50)",
            "first token s (min-max)",
            "first token / floor",
            "misses the server caused (reasons)",
        ],
        rows,
        "p50 over the repeats. cache_n and prompt_n are llama-server's `timings` of the request; "
        "first token: from the request reaching the tap to its first text or tool-call piece. The arms "
        "alternate within each repeat, against one server.",
    )


@contextlib.contextmanager
def llama_server(extra: Sequence[str]) -> Iterator[str]:
    """The live suite's llama-server (tests/live/conftest.py), started here."""
    from tests.live.conftest import serve  # needs LECODE_LLAMA_SERVER and LECODE_LIVE_MODEL

    server = serve(*extra)
    try:
        yield server.url
    finally:
        server.stop()


async def run(
    upstream: str, model: str, repeats: int, trees: dict[str, Path], facts: int = 0
) -> str:
    arms = {"this tree": ROOT, **trees}
    results: dict[str, list[dict[str, dict[str, Any]]]] = {arm: [] for arm in arms}
    order = list(arms.items())
    for repeat in range(repeats):
        for arm, source in order if repeat % 2 == 0 else reversed(order):
            results[arm].append(await trial(upstream, model, source, facts))
            # Each trial as it ends, so a run that is stopped keeps what it measured.
            line = json.dumps({"arm": arm, "repeat": repeat + 1, "turns": results[arm][-1]})
            print(f"prompt_cache: {line}", file=sys.stderr, flush=True)
    return report(results, repeats, model, facts)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--base-url", help="a running server's URL (without /v1); else one starts")
    parser.add_argument("--model", default="qwen2.5-coder-0.5b-instruct", help="the model name")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--tree",
        action="append",
        default=[],
        metavar="NAME=DIR",
        help="another lecode-ls source tree to compare (its lecode_ls package); repeatable",
    )
    parser.add_argument(
        "--server-arg",
        action="append",
        default=[],
        help="an extra llama-server argument (e.g. --server-arg=--cache-reuse --server-arg=256)",
    )
    parser.add_argument(
        "--facts",
        type=int,
        default=0,
        help="facts stored before the turns (bench/retrieval_set.py, at most 210)",
    )
    parser.add_argument("--out", type=Path, help="write the table here too")
    args = parser.parse_args(argv)
    trees: dict[str, Path] = {}
    for spec in args.tree:
        name, _, folder = spec.partition("=")
        if not folder or not (Path(folder) / "lecode_ls" / "__init__.py").is_file():
            parser.error(f"--tree {spec}: expected NAME=DIR, DIR holding a lecode_ls package")
        trees[name] = Path(folder)
    with contextlib.ExitStack() as stack:
        upstream = args.base_url or stack.enter_context(llama_server(args.server_arg))
        table = asyncio.run(run(upstream.rstrip("/"), args.model, args.repeats, trees, args.facts))
    print(table)
    if args.out is not None:
        args.out.write_text(table + "\n")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
