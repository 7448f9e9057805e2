"""Crash safety: a process killed with SIGKILL at any point loses nothing it acknowledged.

Workers (workers.py) write through the real stores in a subprocess and print each operation
after it returned; the test kills them right after reading the N-th acknowledgement (N from a
seeded random.Random), while they are already busy with the next operation. Then a fresh store
must hold every acknowledged write intact, verify clean, and accept new writes.

# covers S1, S3, F2, F7
"""

from __future__ import annotations

import asyncio
import hashlib
import random
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from lecode_ls.errors import ExcludedEvidence
from lecode_ls.memory.facts.model import Fact, Purpose, SourceLike, StoredRef
from lecode_ls.memory.facts.store import FactStore
from lecode_ls.memory.recall import list_facts
from lecode_ls.memory.sessions.sources import SourceRef
from lecode_ls.memory.sessions.store import SessionStore
from tests.e2e.conftest import make_repo
from tests.reliability.processes import Worker
from tests.reliability.servers import Servers, call, listed, outcome, snapshot
from tests.reliability.workers import append_record, chat, runtime_for


@dataclass(frozen=True)
class Run:
    """What one append worker wrote: records k = 0 .. of `append_record(iteration, k, big)`.

    `written` is the exact number of complete records when it is known (a deliberate tear);
    otherwise it is at least `acked`: the kill may land after a write the worker never reported.
    """

    iteration: int
    acked: int
    big: bool = False
    written: int | None = None


OPENERS = ("verify", "length", "read", "append")  # the first operation after a crash, in turn


class Transcript:
    """The test's knowledge of one session: the byte prefix already checked, and a store that
    cached the file before the crashes (as a long-running server would)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.cached = SessionStore(root)
        self.session = self.cached.create("crash")
        self.path = root / "sessions" / f"{self.session}.jsonl"
        data = self.path.read_bytes()
        self.size, self.digest, self.count = len(data), hashlib.sha256(data).digest(), 1
        self.probes = 0

    def is_torn(self) -> bool:
        """Whether the file now ends with a partial line (before anything opened it)."""
        return not self.path.read_bytes().endswith(b"\n")

    def check(self, runs: list[Run], opener: str) -> None:
        """Open the transcript after a kill and check it against the runs since the last check."""
        data = self.path.read_bytes()
        assert hashlib.sha256(data[: self.size]).digest() == self.digest, "checked bytes changed"
        store = SessionStore(self.root)
        self.probes += 1
        probe = {"kind": "message", "role": "user", "content": f"probe {self.probes}"}
        appended = None
        if opener == "verify":
            store.verify(self.session)  # a torn tail is cut, never reported as corruption
        elif opener == "length":
            store.length(self.session)
        elif opener == "read":
            store.read(self.session, 0, 0)
        else:
            appended = store.append(self.session, probe)
        length = store.length(self.session)
        records = store.read(self.session, self.count, length - 1) if length > self.count else []
        assert [r["seq"] for r in records] == list(range(self.count, length))
        if appended is not None:
            assert appended == length - 1
            assert records.pop() == {**probe, "seq": appended}
        position = 0
        for run in runs:
            written = run.written if run.written is not None else len(records) - position
            assert written >= run.acked, f"iteration {run.iteration}: acknowledged records lost"
            expected = [
                {**append_record(run.iteration, k, run.big), "seq": self.count + position + k}
                for k in range(written)
            ]
            assert records[position : position + written] == expected
            position += written
        assert position == len(records)
        store.verify(self.session)
        if appended is None:
            appended = store.append(self.session, probe)
            assert appended == length
        assert store.read(self.session, appended, appended) == [{**probe, "seq": appended}]
        # A store that cached the file before the crash catches up with the cut and the appends.
        assert self.cached.length(self.session) == appended + 1
        assert self.cached.read(self.session, appended, appended) == [{**probe, "seq": appended}]
        data = self.path.read_bytes()
        assert data.endswith(b"\n")
        self.size, self.digest, self.count = len(data), hashlib.sha256(data).digest(), appended + 1


async def append_until_killed(
    transcript: Transcript, iteration: int, acks: int, variant: str = "count"
) -> Run:
    """Start an append worker, kill it right after its `acks`-th acknowledgement (0: once it is
    ready) or, with `midwrite`, as it starts writing the record after that one."""
    worker = await Worker.start(
        "append", str(transcript.root), transcript.session, str(iteration), variant
    )
    await worker.until("ready")
    reports = await worker.until("ack", acks) if acks else []
    if variant == "midwrite":
        reports += await worker.until("writing")
    reports += await worker.kill()
    acked = [r["k"] for r in reports if "ack" in r]
    assert acked == list(range(len(acked))) and len(acked) >= acks
    return Run(iteration, len(acked), big=variant == "midwrite")


class TestKillDuringTranscriptAppends:
    # covers S1: every acknowledged record survives kill -9 intact, with contiguous seqs

    async def test_a_kill_after_a_random_number_of_acknowledgements_loses_none_of_them(
        self, tmp_path: Path
    ) -> None:
        transcript = Transcript(tmp_path / "store")
        for iteration in range(40):
            acks = random.Random(iteration).randint(0, 12)
            run = await append_until_killed(transcript, iteration, acks)
            transcript.check([run], OPENERS[iteration % len(OPENERS)])

    async def test_a_kill_while_a_large_record_is_being_written_keeps_the_file_readable(
        self, tmp_path: Path
    ) -> None:
        # Records of 1-3 MiB, killed as soon as the worker announces the write() of one: the kill
        # lands inside the write, or just before or after it. Only whole, earlier records remain.
        for iteration in range(10):
            transcript = Transcript(tmp_path / f"store{iteration}")
            acks = random.Random(iteration).randint(0, 2)
            run = await append_until_killed(transcript, iteration, acks, "midwrite")
            transcript.check([run], OPENERS[iteration % len(OPENERS)])

    async def test_a_half_written_record_is_cut_when_the_transcript_is_next_opened(
        self, tmp_path: Path
    ) -> None:
        # Deterministic tears: the worker writes a prefix of a line (one byte, all but the
        # newline, or a random length, often inside a multi-byte character), fsyncs and is
        # killed. Every other time the next worker, not the test, is the first to open the file.
        transcript = Transcript(tmp_path / "store")
        runs: list[Run] = []
        for iteration in range(16):
            tear_after = random.Random(iteration).randint(0, 3)
            worker = await Worker.start(
                "append",
                str(transcript.root),
                transcript.session,
                str(iteration),
                "torn",
                str(tear_after),
                str(iteration),
            )
            reports = await worker.until("torn")
            reports += await worker.kill()
            first = transcript.count + sum(run.written or 0 for run in runs)
            assert [r["ack"] for r in reports if "ack" in r] == list(
                range(first, first + tear_after)
            )
            assert transcript.is_torn()
            runs.append(Run(iteration, tear_after, written=tear_after))
            if iteration % 2:
                transcript.check(runs, OPENERS[iteration // 2 % len(OPENERS)])
                runs = []


@dataclass
class KnownFact:
    """A fact as the acknowledgements describe it: its text and every revision's source."""

    text: str
    sources: list[dict[str, Any]]  # {"session_id", "seqs", "digest"}, revision 1 first

    @property
    def revision(self) -> int:
        return len(self.sources)


def source_of(report: dict[str, Any]) -> dict[str, Any]:
    return {"session_id": report["session_id"], "seqs": report["seqs"], "digest": report["digest"]}


def stored_source(ref: StoredRef | None) -> dict[str, Any] | None:
    if ref is None:
        return None
    return {"session_id": ref.session_id, "seqs": list(ref.seqs), "digest": ref.digest}


def accept(ref: SourceLike, purpose: Purpose) -> None:
    """A source check that lets everything through, so only FactStore's transaction can refuse."""


class KnownFacts:
    """The facts database as the acknowledged operations (and nothing else) say it must be."""

    def __init__(self) -> None:
        self.live: dict[int, KnownFact] = {}
        self.forgotten: dict[int, KnownFact] = {}
        self.generation = 0
        self.sessions: list[str] = []

    def replay(self, reports: list[dict[str, Any]]) -> dict[str, Any] | None:
        """Apply every acknowledged operation; return the one in flight at the kill, if any."""
        pending: dict[str, Any] | None = None
        for report in reports:
            if "intent" in report:
                assert pending is None
                pending = report["intent"]
            elif "ack" in report:
                ack = report["ack"]
                assert pending is not None and pending["op"] == ack["op"]
                self.apply(ack)
                pending = None
        return pending

    def apply(self, ack: dict[str, Any]) -> None:
        op = ack["op"]
        if op == "import":
            self.sessions.append(ack["session"])
        elif op == "remember":
            assert ack["fact"] not in self.live and ack["fact"] not in self.forgotten
            assert ack["revision"] == 1
            self.live[ack["fact"]] = KnownFact(ack["text"], [source_of(ack)])
        elif op == "correct":
            fact = self.live[ack["fact"]]
            assert ack["revision"] == fact.revision + 1
            fact.text = ack["text"]
            fact.sources.append(source_of(ack))
        else:
            assert ack["forgotten"] is True
            self.forgotten[ack["fact"]] = self.live.pop(ack["fact"])
            self.generation += 1

    def reconcile(self, pending: dict[str, Any] | None, facts: FactStore) -> None:
        """The operation in flight at the kill either committed whole or left no trace."""
        if pending is None or pending["op"] == "import":
            return  # an unacknowledged session holds no fact
        op = pending["op"]
        if op == "remember":
            found = [f for f in all_facts(facts) if f.text == pending["text"]]
            if found:
                (fact,) = found
                assert (fact.revision, stored_source(fact.source)) == (1, source_of(pending))
                self.apply({**pending, "fact": fact.id, "revision": 1})
        elif op == "correct":
            current = facts.get(pending["fact"])
            assert current is not None
            if current.revision != pending["expected"]:
                assert current.revision == pending["expected"] + 1
                assert current.text == pending["text"]
                self.apply({**pending, "revision": current.revision})
        elif facts.get(pending["fact"]) is None:
            self.apply({**pending, "forgotten": True})


def all_facts(facts: FactStore) -> list[Fact]:
    found: list[Fact] = []
    offset: int | None = 0
    while offset is not None:
        page, offset = facts.list(offset, 50)
        found += page
    return found


def check_facts(known: KnownFacts, runtime: Any, newly_forgotten: set[int]) -> None:
    """Everything acknowledged is there, exactly; nothing forgotten came back."""
    sessions, facts = runtime.require_facts()
    assert facts.verify() == []
    assert facts.generation() == known.generation
    stored = {
        f.id: (f.revision, f.text, stored_source(f.source), f.suppressed) for f in all_facts(facts)
    }
    assert stored == {
        fact_id: (fact.revision, fact.text, fact.sources[-1], False)
        for fact_id, fact in known.live.items()
    }
    for fact_id, fact in known.live.items():
        assert [stored_source(e.source) for e in facts.provenance(fact_id)] == fact.sources
    listed: list[dict[str, Any]] = []
    offset: int | None = 0
    while offset is not None:
        page = list_facts(facts, sessions, offset)
        listed += page["facts"]
        offset = page["next_offset"]
    assert {f["fact_id"]: f["status"] for f in listed} == dict.fromkeys(known.live, "valid")
    # F7: exactly the evidence of every revision of every forgotten fact is excluded.
    for session_id in known.sessions:
        sessions.verify(session_id)
        assert facts.excluded_seqs(session_id) == {
            seq
            for fact in known.forgotten.values()
            for source in fact.sources
            if source["session_id"] == session_id
            for seq in source["seqs"]
        }
    for fact_id in known.forgotten:
        assert facts.get(fact_id) is None
    for fact_id in newly_forgotten:
        assert facts.forget(fact_id) is False
        for source in known.forgotten[fact_id].sources:
            ref = SourceRef(source["session_id"], tuple(source["seqs"]), source["digest"])
            with pytest.raises(ExcludedEvidence):
                facts.remember("back again", ref, check=runtime.check_source)
            with pytest.raises(ExcludedEvidence):  # refused inside the transaction too
                facts.remember("back again", ref, check=accept)


class TestKillDuringFactWrites:
    # covers F2, F7: acknowledged remember/correct/forget survive kill -9; forgets stay forgotten

    async def test_acknowledged_fact_writes_survive_kill_9_and_forgotten_evidence_stays_out(
        self, tmp_path: Path
    ) -> None:
        folder = tmp_path / "project"  # outside Git: the folder is its own project
        folder.mkdir()
        known = KnownFacts()
        for iteration in range(24):
            # Killed right after the N-th acknowledgement (the worker is starting its next
            # write), or as the next SQLite commit begins (the kill lands while the WAL is
            # written or synced). The first kill lands in the commit that creates the schema.
            rng = random.Random(iteration)
            acks = 1 if iteration == 0 else rng.randint(2, 30)
            in_commit = iteration == 0 or rng.random() < 0.5
            worker = await Worker.start("facts", str(folder), str(iteration))
            ready = await worker.until("ready")
            assert ready[-1]["generation"] == known.generation  # never goes backwards
            reports = await worker.until("ack", acks)
            if in_commit:
                reports += await worker.until("commit")
            reports += await worker.kill()
            forgotten_before = set(known.forgotten)
            pending = known.replay(reports)
            runtime = runtime_for(folder)
            try:
                known.reconcile(pending, runtime.facts)
                check_facts(known, runtime, set(known.forgotten) - forgotten_before)
            finally:
                runtime.close()
        assert len(known.live) > 20 and len(known.forgotten) > 10  # the run did exercise them


@pytest_asyncio.fixture
async def servers() -> AsyncIterator[Servers]:
    started = Servers()
    yield started
    await started.close()


class TestKillTheServer:
    # covers F2, F7, S3: what a server acknowledged over LSP survives its kill -9

    async def test_facts_acknowledged_before_a_kill_9_are_listed_valid_by_the_next_server(
        self, servers: Servers, tmp_path: Path
    ) -> None:
        repo = make_repo(tmp_path / "repo")
        client = await servers.start(repo)
        imported = await call(
            client, "lecode/session/import", {"records": chat("lsp", 80), "title": "crash"}
        )
        session = imported["sessionId"]
        known: dict[int, dict[str, Any]] = {}  # acknowledged: fact id -> revision, text, source
        forgotten: dict[int, dict[str, Any]] = {}
        seqs = iter(range(1, 81))
        for round_ in range(4):
            rng = random.Random(round_)
            # A batch of requests in flight at once: remembers of fresh evidence, a correction,
            # forgets; the server is killed as the `kill_after`-th response reaches the client.
            batch: list[tuple[str, dict[str, Any]]] = []
            for n in range(8):
                source = await snapshot(client, session, next(seqs))
                batch.append(("remember", {"text": f"round {round_} fact {n}", "source": source}))
            doomed = rng.sample(sorted(known), min(2, len(known)))
            batch += [("forget", {"factId": fact_id}) for fact_id in doomed]
            if others := sorted(set(known) - set(doomed)):
                fact_id = rng.choice(others)
                params = {
                    "factId": fact_id,
                    "expectedRevision": known[fact_id]["revision"],
                    "text": f"round {round_} correction",
                    "source": await snapshot(client, session, next(seqs)),
                }
                batch.append(("correct", params))
            rng.shuffle(batch)
            kill_after = rng.randint(1, len(batch) - 2)
            answered: list[asyncio.Future[Any]] = []

            def count(
                task: asyncio.Future[Any],
                client: LanguageClient = client,
                answered: list[asyncio.Future[Any]] = answered,
                kill_after: int = kill_after,
            ) -> None:
                exception = None if task.cancelled() else task.exception()
                if exception is None or isinstance(exception, JsonRpcException):
                    answered.append(task)  # a response arrived
                    if len(answered) == kill_after:
                        Servers.kill(client)

            tasks = [
                asyncio.ensure_future(call(client, f"lecode/facts/{op}", params))
                for op, params in batch
            ]
            for task in tasks:
                task.add_done_callback(count)
            await servers.reap(client)
            results = await asyncio.gather(*tasks, return_exceptions=True)

            in_flight: list[tuple[str, dict[str, Any]]] = []
            for (op, params), result in zip(batch, results, strict=True):
                if isinstance(result, RuntimeError):  # the server died before answering
                    in_flight.append((op, params))
                    continue
                assert not isinstance(result, BaseException), f"{op} failed: {result!r}"
                if op == "remember":
                    assert result["revision"] == 1
                    known[result["factId"]] = {"revision": 1, **params}
                elif op == "correct":
                    assert result["revision"] == params["expectedRevision"] + 1
                    known[params["factId"]] = {"revision": result["revision"], **params}
                else:
                    assert result == {"forgotten": True, "hides": []}
                    forgotten[params["factId"]] = known.pop(params["factId"])
            assert len(in_flight) <= len(batch) - kill_after

            client = await servers.start(repo)
            listed_facts = {f["factId"]: f for f in await listed(client)}
            # What was in flight at the kill either committed whole or left no trace.
            for op, params in in_flight:
                if op == "remember":
                    found = [f for f in listed_facts.values() if f.get("text") == params["text"]]
                    if found:
                        (fact,) = found
                        known[fact["factId"]] = {"revision": 1, **params}
                elif op == "correct":
                    fact = listed_facts[params["factId"]]
                    if fact["revision"] != params["expectedRevision"]:
                        assert fact["revision"] == params["expectedRevision"] + 1
                        known[params["factId"]] = {"revision": fact["revision"], **params}
                elif params["factId"] not in listed_facts:
                    forgotten[params["factId"]] = known.pop(params["factId"])
            assert {
                fact_id: (f["revision"], f["status"], f.get("text"), f.get("source"))
                for fact_id, f in listed_facts.items()
            } == {
                fact_id: (fact["revision"], "valid", fact["text"], fact["source"])
                for fact_id, fact in known.items()
            }
            for fact in forgotten.values():
                _, error = await outcome(
                    client, "lecode/facts/remember", {"text": "again", "source": fact["source"]}
                )
                assert error is not None and error.data["code"] == "excluded_evidence"

        info = await call(client, "lecode/project/info")
        store = FactStore(Path(info["storePath"]) / "facts.sqlite3")
        try:
            assert store.verify() == []
            assert store.generation() == len(forgotten)
        finally:
            store.close()
        SessionStore(Path(info["storePath"])).verify(session)
        assert len(known) >= 10 and len(forgotten) >= 2  # the rounds did exercise them
