"""Scan and scrub over LSP (issue 27, item 3): a store an older lecode-ls wrote, before
redaction, holds every kind of secret in a transcript, MEMORY.md and its .bak, and a fact's own
text; the real server lists each place (never the value), then scrubs every copy under the config
dir while the facts that cited the records stay valid, and their recall says what was scrubbed.

# covers P5 (no secret kept anywhere), S1-S3 (evidence survives the rewrite), F1-F7, R1-R8
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from lecode_ls.memory.notes import MarkdownStore
from lecode_ls.memory.secrets import Redactor
from lecode_ls.memory.sessions import SessionStore
from tests.e2e.conftest import Start, call
from tests.e2e.test_secrets import SECRETS, SURVIVORS, leaks, planted


async def rpc_error(client: Any, method: str, params: Any) -> JsonRpcException:
    with pytest.raises(JsonRpcException) as error:
        await call(client, method, params)
    return error.value


async def execute(client: Any, name: str, *arguments: Any) -> Any:
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=name, arguments=list(arguments))
    )


ROTATED = "hunter2-" + "rotated-yesterday"  # no rule detects it: the person names it


class OlderRedactor(Redactor):
    """An older lecode-ls wrote the store: it redacted nothing."""

    def find(self, text: str) -> list:  # type: ignore[type-arg]
        return []


def older_store(store: Path) -> str:
    """A chat holding every secret, and MEMORY.md written twice (its .bak holds one too)."""
    sessions = SessionStore(store, OlderRedactor(store))
    session = sessions.create("deploy")
    sessions.append(session, {"kind": "message", "role": "user", "content": planted()})
    sessions.append(
        session,
        {"kind": "message", "role": "assistant", "content": f"Rotate {ROTATED} as well."},
    )
    notes = MarkdownStore(store, OlderRedactor(store))
    notes.write("MEMORY.md", "Deploy key: " + SECRETS["aws-access-key"] + "\n", "replace")
    notes.write("MEMORY.md", f"DB: postgres://deploy:{ROTATED}@db/app\n", "append")
    notes.close()
    sessions.close()
    return session


async def test_scan_lists_places_and_scrub_removes_every_copy_keeping_evidence_valid(
    start: Start, repo: Path, isolated_config_dir: Path
) -> None:
    client = await start(repo)
    info = await call(client, "lecode/project/info", {})
    session = older_store(Path(info["storePath"]))
    source = await call(
        client, "lecode/session/snapshot", {"sessionId": session, "startSeq": 1, "endSeq": 2}
    )
    cited = await call(
        client,
        "lecode/facts/remember",
        {"text": "Deploys read their keys from CI", "source": source},
    )
    assert leaks(isolated_config_dir)  # the older store holds them

    scan = await call(client, "lecode/memory/scanSecrets", {})
    # Every kind, found in the transcript (a fine-grained GitHub token is found under its own
    # rule's name, as at the doors: tests/e2e/test_secrets.py).
    assert set(SECRETS) - {"github-fine-grained"} <= set(scan["kinds"])
    where = {(p["file"], p.get("seq"), p.get("line")) for p in scan["places"]}
    assert (f"sessions/{session}.jsonl", 1, None) in where
    assert ("MEMORY.md.bak", None, 1) in where and ("MEMORY.md", None, 1) in where
    assert not any(value in json.dumps(scan) for value in SECRETS.values())
    limited = await call(client, "lecode/memory/scanSecrets", {"limit": 1})
    assert len(limited["places"]) == 1 and limited["truncated"]
    assert limited["found"] == scan["found"]

    done = await call(client, "lecode/memory/scrubSecrets", {"secret": ROTATED})
    assert done["sessions"] == [session] and done["records"] == 2
    assert done["reattached"] == 1 and done["remaining"] == 0 and done["purged"]
    assert set(done["notes"]) == {"MEMORY.md", "MEMORY.md.bak"}
    assert leaks(isolated_config_dir) == []
    every = b"".join(p.read_bytes() for p in isolated_config_dir.rglob("*") if p.is_file())
    assert ROTATED.encode() not in every
    for survivor in SURVIVORS:  # digests, commit hashes, UUIDs, images, integrity hashes
        assert survivor.encode() in every

    recalled = await call(client, "lecode/facts/recall", {"factId": cited["factId"]})
    assert recalled["status"] == "valid"
    assert [r["seq"] for r in recalled["scrubbed"]] == [1, 2]
    assert (
        "[secret:given:" in recalled["sourceText"]
        and "[secret:github-token:" in recalled["sourceText"]
    )
    again = await call(client, "lecode/memory/scanSecrets", {})
    assert again["found"] == 0 and again["raw"] == []
    memory = await call(client, "lecode/memory/read", {"file": "MEMORY.md"})
    assert "postgres://deploy:[secret:given:" in memory["content"]


async def test_the_commands_answer_as_the_requests_and_bad_params_name_the_field(
    start: Start, repo: Path
) -> None:
    client = await start(repo)
    scanned = await execute(client, "lecode.memory.scanSecrets")
    assert scanned["found"] == 0
    scrubbed = await execute(client, "lecode.memory.scrubSecrets", {})
    assert scrubbed["remaining"] == 0 and scrubbed["sessions"] == []
    for params, field in (
        ({"secret": "short"}, "secret"),
        ({"secret": " " * 12}, "secret"),
        ({"secret": 42}, "secret"),
    ):
        error = await rpc_error(client, "lecode/memory/scrubSecrets", params)
        assert error.data["field"] == field and "42" not in error.message
    error = await rpc_error(client, "lecode/memory/scanSecrets", {"limit": 1_000_000})
    assert error.data["field"] == "limit"


async def test_slash_memory_secrets_lists_then_scrubs(
    start: Start, repo: Path, isolated_config_dir: Path
) -> None:
    client = await start(repo)
    info = await call(client, "lecode/project/info", {})
    session = older_store(Path(info["storePath"]))
    listed = (await call(client, "lecode/command", {"line": "/memory secrets"}))["output"]
    assert listed.splitlines()[0].endswith(")") and " secrets found (" in listed.splitlines()[0]
    assert f"sessions/{session}.jsonl record 1" in listed and "MEMORY.md.bak:1" in listed
    assert not any(value in listed for value in SECRETS.values())
    done = (await call(client, "lecode/command", {"line": "/memory secrets scrub"}))["output"]
    assert done.startswith("Scrubbed 1 transcript records in 1 sessions") and "0 left" in done
    assert leaks(isolated_config_dir) == []
    after = (await call(client, "lecode/command", {"line": "/memory secrets"}))["output"]
    assert after == "No secrets found in this project's memory."
