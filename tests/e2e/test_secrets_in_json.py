"""A credential inside a JSON string (issue 42, item 2), black-box over LSP: a private key in a
tool call's arguments (where its newlines are `\\n` escapes) and a token in a JSON key, met as a
person meets them: an imported Claude Code `Write` and Codex call, the model's own
`memory_write` call (the loopback OpenAI server as the model), and an older store's transcript
that the scan lists and the scrub rewrites. The key's body must be nowhere afterwards, and the
scrub's `remaining` must count what the scan sees.

# covers P5 (no secret kept anywhere), S1-S3 (what is digested is what is stored)
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import apsw

from lecode_ls.memory.notes import MarkdownStore
from lecode_ls.memory.sessions import SessionStore
from tests.e2e.chat import chat_client, new_session, tool_chunks
from tests.e2e.conftest import Start, call
from tests.e2e.test_scrub_secrets import OlderRedactor, rpc_error
from tests.fakes.agent_transcripts import claude_records, codex_records, write_jsonl
from tests.fakes.openai_server import FakeOpenAI, Stream, text_chunks

BODY = [  # built from parts, so that no file of this repository holds a whole key
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun",
    "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK",
    "LxoS2tFczGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW/VDL5AaWTg0nLVkjRo",
]
PEM = (
    "-----BEGIN RSA "
    + "PRIVATE KEY-----\n"
    + "\n".join(BODY)
    + "\n-----END RSA "
    + "PRIVATE KEY-----\n"
)
TOKEN = "ghp_" + "Zy9Xw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe9Dc8Ba7"


def leaks(folder: Path) -> list[str]:
    """`file: piece` for each line of the key's body and the token, in any file under `folder`."""
    found = []
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            data = path.read_bytes()
            found += [f"{path.name}: {n[:12]}" for n in [*BODY, TOKEN] if n.encode() in data]
    return found


def write_call(cwd: Path) -> dict[str, Any]:
    """A Claude Code `Write` of the key, keyed by the token (as a JSON map of files may be)."""
    base = claude_records(cwd)[2]
    return {
        **base,
        "uuid": "u-w",
        "message": {
            **base["message"],
            "content": [
                {
                    "type": "tool_use",
                    "id": "toolu_w",
                    "name": "Write",
                    "input": {"file_path": str(cwd / "id_rsa"), "content": PEM, TOKEN: "x"},
                }
            ],
        },
    }


class TestTheDoors:
    async def test_imported_tool_calls_keep_no_key_body_and_no_token_in_a_key(
        self, start: Start, repo: Path, isolated_config_dir: Path
    ) -> None:
        claude = write_jsonl(repo / "claude.jsonl", [*claude_records(repo), write_call(repo)])
        codex_lines = codex_records(repo)
        codex_lines.append(
            {
                "timestamp": "2026-12-01T10:00:09.000Z",
                "type": "response_item",
                "payload": {
                    "type": "function_call",
                    "name": "apply_patch",
                    "call_id": "call_k",
                    "arguments": json.dumps({"patch": PEM, TOKEN: 1}, separators=(",", ":")),
                },
            }
        )
        codex = write_jsonl(repo / "rollout-2026-12-01T10-00-00-k.jsonl", codex_lines)
        client = await start(repo)
        for path in (claude, codex):
            made = await call(client, "lecode/session/import", {"path": str(path)})
            [stored] = isolated_config_dir.rglob(f"{made['sessionId']}.jsonl")
            last = json.loads(stored.read_text(encoding="utf-8").splitlines()[-1])
            arguments = json.loads(last["tool_calls"][0]["function"]["arguments"])
            # the arguments are still JSON, with the key and the token each one marker
            assert [k for k in arguments if k.startswith("[secret:github-token:")], arguments
            assert any(
                isinstance(v, str) and v.startswith("[secret:private-key:")
                for v in arguments.values()
            )
        assert leaks(isolated_config_dir) == []
        scan = await call(client, "lecode/memory/scanSecrets", {})
        assert scan["found"] == 0 and scan["raw"] == []

    async def test_the_models_own_memory_write_call_keeps_no_key_body(
        self, start: Start, repo: Path, isolated_config_dir: Path
    ) -> None:
        arguments = {
            "file": "notes/deploy.md",
            "content": "The deploy key:\n" + PEM,
            "mode": "replace",
        }
        async with FakeOpenAI() as server:
            server.push(
                Stream(tool_chunks("memory_write", arguments, "w1")),
                Stream(text_chunks("Written.")),
                Stream(text_chunks("Done.")),
            )
            client = await chat_client(start, repo, server)
            session = await new_session(client)
            for text in ("Keep the deploy key in a note.", "Thanks."):
                done = await call(client, "lecode/chat/send", {"sessionId": session, "text": text})
                assert done["stopReason"] == "stop"
            replayed = json.dumps(server.bodies[-1]["messages"])
            assert "[secret:private-key:" in replayed
            assert not any(line in replayed for line in BODY)
        assert leaks(isolated_config_dir) == []


class TestScanAndScrub:
    async def test_the_scan_lists_a_key_in_arguments_and_a_token_in_a_key_and_the_scrub_removes_them(
        self, start: Start, repo: Path, isolated_config_dir: Path
    ) -> None:
        client = await start(repo)
        store = Path((await call(client, "lecode/project/info", {}))["storePath"])
        older = SessionStore(store, OlderRedactor(store))  # an older lecode-ls: no redaction
        session = older.create("keys")
        older.append(session, {"kind": "message", "role": "user", "content": "Add the key."})
        older.append(
            session,
            {
                "kind": "message",
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {
                            "name": "write",
                            "arguments": json.dumps({"path": "id_rsa", "content": PEM}),
                        },
                    }
                ],
            },
        )
        older.append(session, {"kind": "message", "role": "tool", "tool_call_id": "c1",
                               "content": json.dumps({TOKEN: "written"})})  # fmt: skip
        older.close()
        assert leaks(isolated_config_dir)

        scan = await call(client, "lecode/memory/scanSecrets", {})
        places = sorted((p["kind"], p["seq"]) for p in scan["places"])
        assert places == [("github-token", 3), ("private-key", 2)]
        assert TOKEN not in json.dumps(scan) and BODY[0] not in json.dumps(scan)

        done = await call(client, "lecode/memory/scrubSecrets", {})
        assert (done["sessions"], done["records"], done["remaining"]) == ([session], 2, 0)
        assert leaks(isolated_config_dir) == []
        history = await call(client, "lecode/chat/history", {"sessionId": session})
        assert "[secret:private-key:" in json.dumps(history)


class TestNames:
    """A token in a note's file name or an anchored file's path (issue 42): refused or redacted
    at the door, listed by the scan (never shown) and rewritten by the scrub."""

    async def test_a_note_named_with_a_token_is_refused_and_an_older_one_is_renamed(
        self, start: Start, repo: Path, isolated_config_dir: Path
    ) -> None:
        client = await start(repo)
        exc = await rpc_error(
            client,
            "lecode/memory/write",
            {"file": f"notes/{TOKEN}.md", "content": "x\n", "mode": "replace"},
        )
        assert exc.data["field"] == "file" and TOKEN not in exc.message
        store = Path((await call(client, "lecode/project/info", {}))["storePath"])
        older = MarkdownStore(store, OlderRedactor(store))  # before names were checked
        older.write(f"notes/{TOKEN}.md", "deploy notes\n", "replace")
        older.write(f"notes/{TOKEN}.md", "deploy notes, again\n", "replace")  # and a .bak
        older.close()

        scan = await call(client, "lecode/memory/scanSecrets", {})
        assert scan["found"] == 2 and scan["kinds"] == {"github-token": 2}
        assert TOKEN not in json.dumps(scan)
        done = await call(client, "lecode/memory/scrubSecrets", {})
        assert done["remaining"] == 0
        names = [p.name for p in isolated_config_dir.rglob("*")]
        assert not [n for n in names if TOKEN in n]
        (listed,) = (await call(client, "lecode/memory/list", {}))["files"]
        assert listed["file"].startswith("notes/secret-github-token-")
        read = await call(client, "lecode/memory/read", {"file": listed["file"]})
        assert read["content"] == "deploy notes, again\n"

    async def test_an_anchor_in_a_file_whose_path_holds_a_token_is_refused_and_an_older_one_is_scrubbed(
        self, start: Start, repo: Path, isolated_config_dir: Path
    ) -> None:
        (repo / "config").mkdir()
        named = repo / "config" / f"{TOKEN}.py"
        plain = repo / "config" / "app.py"
        for path in (named, plain):
            path.write_text("DEBUG = False\nREGION = 'eu-west-1'\n")
        client = await start(repo)
        selection = {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 8}}
        exc = await rpc_error(
            client, "lecode/facts/rememberSelection", {"uri": named.as_uri(), "range": selection}
        )
        assert exc.data["field"] == "uri" and TOKEN not in exc.message
        made = await call(
            client, "lecode/facts/rememberSelection", {"uri": plain.as_uri(), "range": selection}
        )
        (db,) = isolated_config_dir.rglob("facts.sqlite3")
        with contextlib.closing(apsw.Connection(str(db))) as conn:  # as an older lecode-ls left it
            conn.execute("UPDATE anchors SET path = ?", (f"config/{TOKEN}.py",))
        assert leaks(isolated_config_dir)
        scan = await call(client, "lecode/memory/scanSecrets", {})
        assert [(p["kind"], p["factId"]) for p in scan["places"]] == [
            ("github-token", made["factId"])
        ]
        done = await call(client, "lecode/memory/scrubSecrets", {})
        assert done["remaining"] == 0 and done["purged"]
        assert leaks(isolated_config_dir) == []
