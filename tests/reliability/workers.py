"""Worker processes for the reliability tests, run as `python workers.py MODE ARG...`.

Each worker drives the real memory core (no server) and reports on stdout, one JSON object a
line, flushed. A line is printed only after the operation it reports has returned, so every
`ack` line the test reads is an acknowledged operation. Before an operation whose outcome the
test must reconcile after a SIGKILL, the facts worker prints an `intent` line: at most one
operation is ever in flight when the kill lands.

Modes:
- `append STORE SESSION ITERATION VARIANT [TEAR_AFTER CUT_SEED]`: append `append_record(...)`
  to SESSION forever. VARIANT `count` prints `{"ack": seq, "k": k}` after each append;
  `midwrite` also prints `{"writing": k}` just before the write() of each transcript line, so a
  kill read off that line lands during the write; `torn` appends TEAR_AFTER records, then writes
  only a prefix of the next line (length from CUT_SEED), fsyncs it, prints `{"torn": k}` and
  waits to be killed: exactly the bytes a crash in the middle of a write leaves.
- `facts FOLDER SEED`: a `Runtime` for the project of FOLDER (config dir from LECODE_CONFIG_DIR,
  wired as the server wires it): import a transcript, then loop remember/correct/forget, with
  real snapshots and `Runtime.check_source`. Also prints `{"commit": true}` from an SQLite
  commit hook as each transaction starts to commit, so a kill can be aimed inside a commit.
- `race FOLDER PLAN`: print `{"ready": true}`, wait for a line on stdin, then run the JSON list
  of operations PLAN and print each outcome; exit when done.
- `scrub FOLDER STOP_AT`: scrub the secrets of FOLDER's project store (memory/scrub.py), and at
  the STOP_AT-th step (a file renamed into place, or an SQLite commit beginning) print
  `{"step": n, "what": ...}` and wait to be killed there; prints `{"done": true, "steps": n}`
  when the scrub finished first.
- `create`: for each stdin line `DB TEXT`, open a new FactStore on DB, remember TEXT, print the
  outcome; used to race the first creation of a database between processes.
"""

from __future__ import annotations

import json
import os
import random
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FILLER = "abcdé✓🙂 "  # multi-byte characters: a torn line may end inside one
_REAL_WRITE = os.write


def append_record(iteration: int, k: int, big: bool = False) -> dict[str, Any]:
    """The k-th record the append worker of `iteration` writes: a message or, every fifth, an
    event (events sit between messages, S1); 20 bytes to 300 kB of text, or 1-3 MiB if `big`."""
    rng = random.Random(iteration * 100_003 + k)
    size = rng.randint(1 << 20, 3 << 20) if big else rng.choice([20, 200, 2000, 100_000, 300_000])
    text = f"i{iteration} k{k} " + (FILLER * (size // len(FILLER) + 1))[:size]
    if k % 5 == 4:
        return {"kind": "event", "type": "tool_progress", "data": {"k": k, "text": text}}
    role = "user" if k % 2 == 0 else "assistant"
    return {"kind": "message", "role": role, "content": text, "meta": {"i": iteration, "k": k}}


def chat(tag: str, messages: int) -> list[dict[str, Any]]:
    """An OpenAI-style transcript of alternating user and assistant messages, all with text."""
    return [
        {
            "role": "user" if n % 2 == 0 else "assistant",
            "content": f"{tag} message {n + 1}: we agreed on rule {n + 1}.",
        }
        for n in range(messages)
    ]


def emit(**fields: Any) -> None:
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


# -- append ------------------------------------------------------------------------------------


def _hook_writes(on_line: Callable[[int, bytes], int | None]) -> None:
    """Route every os.write of a transcript line (the worker writes nothing else with os.write:
    stdout goes through sys.stdout) through `on_line(fd, data)`."""

    def write(fd: int, data: Any) -> int:
        if data.endswith(b"\n") and data.startswith(b"{"):
            written = on_line(fd, data)
            if written is not None:
                return written
        return _REAL_WRITE(fd, data)

    os.write = write


def run_append(store_root: str, session_id: str, iteration: int, variant: str, *rest: str) -> None:
    from lecode_ls.memory.sessions.store import SessionStore

    store = SessionStore(Path(store_root))
    state = {"k": 0}
    if variant == "midwrite":

        def announce(fd: int, data: bytes) -> None:
            emit(writing=state["k"])

        _hook_writes(announce)
    elif variant == "torn":
        tear_after, cut_seed = int(rest[0]), int(rest[1])

        def tear(fd: int, data: bytes) -> int | None:
            if state["k"] < tear_after:
                return None
            # A proper prefix: one byte, the whole line but its newline, or anything between.
            rng = random.Random(cut_seed)
            cut = rng.choice([1, len(data) - 1, rng.randrange(1, len(data) - 1)])
            _REAL_WRITE(fd, data[:cut])
            os.fsync(fd)
            emit(torn=state["k"], cut=cut, length=len(data))
            sys.stdin.read()  # the test kills us here
            raise AssertionError("the test should have killed this worker")

        _hook_writes(tear)
    emit(ready=True)
    big = variant == "midwrite"
    while True:
        seq = store.append(session_id, append_record(iteration, state["k"], big))
        emit(ack=seq, k=state["k"])
        state["k"] += 1


# -- facts ---------------------------------------------------------------------------------------

WORKER_MESSAGES = 60  # more than any test lets one facts worker acknowledge


def runtime_for(folder: str | Path) -> Any:
    """A Runtime for the project of `folder`, in the config dir of LECODE_CONFIG_DIR."""
    from lecode_ls.config import Settings
    from lecode_ls.memory.project.identity import resolve_project
    from lecode_ls.memory.project.layout import config_dir
    from lecode_ls.runtime import Runtime

    return Runtime(resolve_project(Path(folder)), config_dir(os.environ), Settings())


def _live_facts(facts: Any) -> dict[int, int]:
    """Every stored fact: id -> current revision."""
    live: dict[int, int] = {}
    offset: int | None = 0
    while offset is not None:
        page, offset = facts.list(offset, 50)
        live.update((fact.id, fact.revision) for fact in page)
    return live


def _announce_commits() -> None:
    """Print `{"commit": true}` as every SQLite transaction of this process starts to commit,
    so that a kill read off that line lands inside the commit (writing or syncing the WAL)."""
    import apsw

    def announce() -> bool:
        emit(commit=True)
        return False  # let the commit go ahead

    def hook(conn: apsw.Connection) -> None:
        conn.set_commit_hook(announce)

    apsw.connection_hooks.append(hook)


def run_facts(folder: str, seed: int) -> None:
    from lecode_ls.memory.sessions.sources import source_snapshot

    _announce_commits()
    runtime = runtime_for(folder)
    sessions, facts = runtime.require_facts()
    rng = random.Random(seed)
    emit(ready=True, generation=facts.generation())
    emit(intent={"op": "import"})
    session_id, _ = sessions.import_records(chat(f"worker {seed}", WORKER_MESSAGES), f"w{seed}")
    emit(ack={"op": "import", "session": session_id})
    live = _live_facts(facts)

    def prepare(step: int) -> tuple[str, Any, int]:
        """The next operation, its snapshot taken (of seq step + 1: seq 0 is the header)."""
        ref = source_snapshot(sessions, session_id, step + 1, step + 1, exclusions=facts)
        op = rng.choices(["remember", "correct", "forget"], [3, 2, 1])[0] if live else "remember"
        return op, ref, rng.choice(sorted(live)) if live else 0

    # Each operation is prepared before the previous one is acknowledged, so that a kill read
    # off an acknowledgement lands in the next write rather than in the reads before it.
    planned = prepare(0)
    for step in range(WORKER_MESSAGES):
        op, ref, fact_id = planned
        source = ref.to_json()
        text = f"worker {seed} step {step}"
        if op == "remember":
            emit(intent={"op": op, "text": text, **source})
            fact_id, revision = facts.remember(text, ref, check=runtime.check_source)
            live[fact_id] = revision
            ack = {"op": op, "fact": fact_id, "revision": revision, "text": text, **source}
        elif op == "correct":
            expected = live[fact_id]
            emit(intent={"op": op, "fact": fact_id, "expected": expected, "text": text, **source})
            revision = facts.correct(
                fact_id,
                text,
                expected_revision=expected,
                ref=ref,
                check=runtime.check_source,
                has_authored_text=runtime.has_authored_text,
            )
            live[fact_id] = revision
            ack = {"op": op, "fact": fact_id, "revision": revision, "text": text, **source}
        else:
            emit(intent={"op": op, "fact": fact_id})
            ack = {"op": op, "fact": fact_id, "forgotten": facts.forget(fact_id)}
            del live[fact_id]
        if step + 1 < WORKER_MESSAGES:
            planned = prepare(step + 1)
        emit(ack=ack)
    emit(done=True)
    sys.stdin.read()


# -- race ----------------------------------------------------------------------------------------


def run_race(folder: str, plan: list[dict[str, Any]]) -> None:
    """Run `plan` against the shared project. Every outcome is printed, errors as their code:
    the test decides which codes a race may produce."""
    from lecode_ls.errors import LecodeError, StaleRevision
    from lecode_ls.memory.sessions.sources import source_snapshot

    runtime = runtime_for(folder)
    sessions, facts = runtime.require_facts()
    emit(ready=True)
    sys.stdin.readline()
    for step in plan:
        outcome: dict[str, Any] = {"step": step}
        try:
            if step["op"] == "forget":
                outcome["forgotten"] = facts.forget(step["fact"])
            else:
                seq = step["seq"]
                ref = source_snapshot(sessions, step["session"], seq, seq, exclusions=facts)
                outcome["source"] = ref.to_json()
                if step["op"] == "remember":
                    outcome["fact"], outcome["revision"] = facts.remember(
                        step["text"], ref, check=runtime.check_source
                    )
                else:  # correct, re-reading the revision until no one else got in first
                    while True:
                        current = facts.get(step["fact"])
                        if current is None:
                            outcome["error"] = "fact_not_found"
                            break
                        try:
                            outcome["revision"] = facts.correct(
                                step["fact"],
                                step["text"],
                                expected_revision=current.revision,
                                ref=ref,
                                check=runtime.check_source,
                                has_authored_text=runtime.has_authored_text,
                            )
                            break
                        except StaleRevision:
                            outcome["stale"] = outcome.get("stale", 0) + 1
        except LecodeError as error:
            outcome["error"], outcome["message"] = error.code, str(error)
        except Exception as error:  # reported, so the test shows what broke
            outcome["error"], outcome["message"] = type(error).__name__, str(error)
        emit(**outcome)
    runtime.close()


# -- create --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Ref:
    session_id: str
    seqs: tuple[int, ...]
    digest: str = "sha256:" + "0" * 64


def run_create() -> None:
    """Open a new FactStore per line and write to it, as the first write of a server does."""
    from lecode_ls.errors import LecodeError
    from lecode_ls.memory.facts.store import FactStore

    emit(ready=True)
    for line in sys.stdin:
        db, text = line.split(maxsplit=1)
        store = FactStore(Path(db))
        try:
            store.excluded_seqs("s")  # a snapshot reads exclusions first
            fact_id, _ = store.remember(text.strip(), _Ref("s", (1,)), check=lambda r, p: None)
            emit(fact=fact_id)
        except LecodeError as error:
            emit(error=error.code, message=str(error))
        finally:
            store.close()


def run_scrub(folder: str, stop_at: int) -> None:
    import apsw

    from lecode_ls import platform
    from lecode_ls.memory import scrub

    steps = {"n": 0}

    def step(what: str) -> None:
        steps["n"] += 1
        if steps["n"] == stop_at:
            emit(step=steps["n"], what=what)
            sys.stdin.read()  # the test kills us here, before the step happens
            raise AssertionError("the test should have killed this worker")

    real_replace = platform.replace

    def replace(source: Path, target: Path) -> None:
        step(f"replace {target.name}")
        real_replace(source, target)

    platform.replace = replace  # type: ignore[assignment]

    def hook(conn: apsw.Connection) -> None:
        conn.set_commit_hook(lambda: step("commit") or False)

    apsw.connection_hooks.append(hook)
    runtime = runtime_for(folder)
    emit(ready=True)
    scrub.scrub(runtime)
    emit(done=True, steps=steps["n"])


def main(argv: list[str]) -> None:
    mode, args = argv[0], argv[1:]
    if mode == "append":
        run_append(args[0], args[1], int(args[2]), args[3], *args[4:])
    elif mode == "facts":
        run_facts(args[0], int(args[1]))
    elif mode == "race":
        run_race(args[0], json.loads(args[1]))
    elif mode == "scrub":
        run_scrub(args[0], int(args[1]))
    elif mode == "create":
        run_create()
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main(sys.argv[1:])
