"""A store that cannot be written (a read-only volume, another user's store) can still be read.

Every read a client makes (facts/list with its learning proposals, recall, session list and
read, the Markdown reads and search) answers from a read-only store as from a writable one;
writes fail with a StoreError that says why. The store is made read-only for real (tests/
read_only.py), and the reads run in a child process that sees it so.

# covers issue 10 item 10 (reads on a read-only store)
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from lecode_ls.runtime import Runtime
from tests.read_only import read_only
from tests.unit.stores import chat, make_runtime, remember

REPO = Path(__file__).resolve().parents[2]

READER = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    from lecode_ls.memory.learning_status import latest_learning
    from lecode_ls.errors import LecodeError
    from lecode_ls.memory.recall import list_facts, recall_fact, recall_session
    from tests.unit.stores import make_runtime

    runtime = make_runtime(Path(sys.argv[1]))
    session = sys.argv[2]
    steps = {
        # what lecode/facts/list does
        "facts/list": lambda: [list_facts(runtime.facts, runtime.sessions, 0),
                               latest_learning(runtime.sessions, runtime.facts, None)],
        "facts/recall": lambda: recall_fact(runtime.facts, runtime.sessions, 1),
        "session/list": lambda: [i.session_id for i in runtime.sessions.list()],
        "session/read": lambda: recall_session(
            runtime.sessions, runtime.facts, session, 0, 2, 0, None),
        "memory/read": lambda: runtime.markdown.read("MEMORY.md"),
        "memory/list": lambda: [f.file for f in runtime.markdown.list()],
        "memory/search": lambda: [h.text for h in runtime.markdown.search("tabs")[0]],
        "session/append": lambda: runtime.sessions.append(
            session, {"kind": "message", "role": "user", "content": "x"}),
        "memory/write": lambda: runtime.markdown.write("MEMORY.md", "x", "append"),
    }
    results = {}
    for name, step in steps.items():
        try:
            results[name] = {"ok": json.loads(json.dumps(step(), default=str))}
        except LecodeError as error:
            results[name] = {"error": error.code, "message": error.message}
    print(json.dumps(results))
    """
)


def build(tmp_path: Path) -> tuple[Runtime, str]:
    runtime = make_runtime(tmp_path)
    session = chat(
        runtime,
        {"role": "user", "content": "We use tabs for indentation."},
        {"role": "assistant", "content": "Noted: tabs."},
    )
    remember(runtime, session, 1, 2, "The project indents with tabs.")
    runtime.markdown.write("MEMORY.md", "- tabs, not spaces\n", "replace")
    runtime.close()
    return runtime, session


def read_back(tmp_path: Path, session: str) -> dict[str, Any]:
    with read_only(tmp_path / "config") as wrap:
        done = subprocess.run(
            wrap([sys.executable, "-c", READER, str(tmp_path), session]),
            capture_output=True,
            text=True,
            cwd=REPO,
            timeout=120,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    results: dict[str, Any] = json.loads(done.stdout)
    return results


def assert_reads_work(results: dict[str, Any], session: str) -> None:
    facts, learning = results["facts/list"]["ok"]
    assert [(f["fact_id"], f["status"]) for f in facts["facts"]] == [(1, "valid")]
    assert learning is None
    assert results["facts/recall"]["ok"]["status"] == "valid"
    assert "tabs" in results["facts/recall"]["ok"]["source_text"]
    assert results["session/list"]["ok"] == [session]
    assert "Noted: tabs." in results["session/read"]["ok"]["source_text"]
    assert results["memory/read"]["ok"] == ["- tabs, not spaces\n", True]
    assert results["memory/list"]["ok"] == ["MEMORY.md"]
    assert results["memory/search"]["ok"] == ["- tabs, not spaces"]


def test_every_read_works_on_a_read_only_store_and_writes_fail_cleanly(tmp_path: Path) -> None:
    _, session = build(tmp_path)
    results = read_back(tmp_path, session)
    assert_reads_work(results, session)
    assert results["session/append"]["error"] == "store_error"
    assert results["memory/write"]["error"] == "store_error"


def test_a_missing_index_is_rebuilt_in_memory_on_a_read_only_store(tmp_path: Path) -> None:
    runtime, session = build(tmp_path)
    (runtime.sessions.folder / f"{session}.idx").unlink()
    assert_reads_work(read_back(tmp_path, session), session)
    assert not (runtime.sessions.folder / f"{session}.idx").exists()


def test_a_torn_tail_is_skipped_not_cut_on_a_read_only_store(tmp_path: Path) -> None:
    runtime, session = build(tmp_path)
    transcript = runtime.sessions.folder / f"{session}.jsonl"
    with transcript.open("ab") as out:
        out.write(b'{"kind": "message", "role": "us')  # a crash mid-append
    before = transcript.read_bytes()
    assert_reads_work(read_back(tmp_path, session), session)
    assert transcript.read_bytes() == before  # nothing written


@pytest.mark.parametrize("sidecars", ["none", "wal"])
def test_facts_open_read_only_with_or_without_wal_sidecars(tmp_path: Path, sidecars: str) -> None:
    _, session = build(tmp_path)
    if sidecars == "wal":
        # a reader left open on the writable store keeps the -wal and -shm files in place
        reader = make_runtime(tmp_path)
        assert reader.facts.get(1) is not None
        results = read_back(tmp_path, session)
        reader.close()
    else:
        results = read_back(tmp_path, session)
    assert_reads_work(results, session)
