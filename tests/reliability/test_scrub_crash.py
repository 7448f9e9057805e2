"""A secret scrub killed with SIGKILL at every step (issue 27): before each file is renamed into
place and as each SQLite commit begins, a worker running the real scrub (workers.py `scrub`)
stops and is killed. After each kill, every store reads clean, no fact is lost or `stale` (a
reference left on its old digest is recognised through the scrub journal), and a new scrub
finishes the job: no copy of any secret is left, every fact still valid.

# covers P5, S1-S3 (evidence survives a rewrite cut short), F2, F7
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from lecode_ls.memory import scrub
from lecode_ls.memory.sessions.sources import SourceRef, source_snapshot, validate_source
from lecode_ls.runtime import Runtime
from tests.reliability.processes import Worker
from tests.reliability.workers import runtime_for

TOKENS = (
    "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "AKIA" + "Z7QW3RTY5UIOPLKJ",
    "xoxb-" + "2048123456-4096123456789-ZyXwVuTsRqPoNmLkJiHgFeDc",
)


def plant(folder: Path) -> tuple[list[str], list[int], str]:
    """What an older lecode-ls left: two chats with secrets in some records, facts citing
    ranges with and without them (one holding a token in its own text), MEMORY.md and its .bak.
    Returns the sessions, the fact IDs and MEMORY.md's text."""
    runtime = runtime_for(folder)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(runtime.redactor, "find", lambda text: [])
        sessions, facts = [], []
        for n, token in enumerate(TOKENS[:2]):
            session = runtime.sessions.create(f"chat {n}")
            for k in range(6):
                secret = f" key {token}" if k in (1, 4) else ""
                role = "user" if k % 2 == 0 else "assistant"
                runtime.sessions.append(
                    session, {"kind": "message", "role": role, "content": f"m{k}{secret}"}
                )
            sessions.append(session)
            for first, last, text in ((1, 2, "a"), (3, 3, "b"), (4, 6, f"c {TOKENS[2]}")):
                ref = source_snapshot(
                    runtime.sessions, session, first, last, exclusions=runtime.facts
                )
                fact_id, _ = runtime.facts.remember(
                    f"fact {n}{text}", ref, check=runtime.check_source
                )
                facts.append(fact_id)
        runtime.markdown.write("MEMORY.md", f"deploy {TOKENS[0]}\n", "replace")
        runtime.markdown.write("MEMORY.md", "and more\n", "append")
        memory = runtime.markdown.read("MEMORY.md")[0]
    runtime.close()
    return sessions, facts, memory


def check(runtime: Runtime, sessions: list[str], facts: list[int], memory: str) -> None:
    for session in sessions:
        runtime.sessions.verify(session)  # every line well formed, the index rebuilt from it
    assert runtime.facts.verify() == []
    for fact_id in facts:
        fact = runtime.facts.get(fact_id)
        assert fact is not None and fact.source is not None, fact_id
        ref = SourceRef(fact.source.session_id, tuple(fact.source.seqs), fact.source.digest)
        verdict = validate_source(
            runtime.sessions, ref, purpose="durable", exclusions=runtime.facts
        )
        assert verdict.status == "valid", (fact_id, verdict.reason)
    # MEMORY.md is the old text or the scrubbed one, never something else.
    text = runtime.markdown.read("MEMORY.md")[0]
    assert runtime.redactor.text(text) == runtime.redactor.text(memory)


def leftover(config: Path) -> list[str]:
    found = []
    for path in config.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            found += [path.name for token in TOKENS if token.encode() in data]
    return found


async def test_a_scrub_killed_at_any_step_leaves_no_fact_stale_and_a_new_scrub_finishes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "project"  # outside Git: the folder is its own project
    folder.mkdir()
    template = tmp_path / "template"
    monkeypatch.setenv("LECODE_CONFIG_DIR", str(template))
    sessions, facts, memory = plant(folder)
    assert leftover(template)
    killed: list[str] = []
    stop_at = 1
    while True:
        config = tmp_path / f"killed-at-{stop_at}"
        shutil.copytree(template, config, symlinks=True)
        monkeypatch.setenv("LECODE_CONFIG_DIR", str(config))
        worker = await Worker.start("scrub", str(folder), str(stop_at))
        await worker.until("ready")
        report = await worker.line()
        if "done" in report:
            await worker.finish()
            assert report["steps"] == stop_at - 1
            break
        killed.append(report["what"])
        await worker.kill()
        runtime = runtime_for(folder)
        try:
            check(runtime, sessions, facts, memory)
            done = scrub.scrub(runtime)  # the next scrub finishes what the killed one began
            assert done["remaining"] == 0
            check(runtime, sessions, facts, memory)
        finally:
            runtime.close()
        assert leftover(config) == []
        stop_at += 1
    # Killed before every kind of step: the journal's commits, each transcript's and note's
    # rename, the index written after it, the re-attachment and the fact texts' commit.
    assert killed.count("commit") >= 5
    assert sum(what.endswith(".jsonl") for what in killed) == 2
    assert sum(what.endswith(".idx") for what in killed) == 2
    assert {"replace MEMORY.md", "replace MEMORY.md.bak"} <= set(killed)
