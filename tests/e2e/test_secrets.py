"""Secrets never reach the store: each kind of credential planted at each door over LSP (the
real server, the loopback OpenAI server as the model), then looked for in every byte under the
config dir (transcripts, their indexes, notes and their .bak, facts.sqlite3 with its WAL) and in
every request the provider received, while the text around it, digests, commit hashes and
UUIDs survive.

# covers P5 (no key in transcripts, logs or LSP messages), S1-S3 (the redacted text is what is
# stored and digested, so evidence still validates), F1-F7 (facts from redacted text)
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
from pathlib import Path
from typing import Any

from tests.e2e.chat import Deltas, chat_client, new_session, tool_chunks
from tests.e2e.conftest import Start, call
from tests.fakes.agent_transcripts import claude_records, codex_records, write_jsonl
from tests.fakes.openai_server import FakeOpenAI, Stream, text_chunks

# Built from parts, so that no file of this repository holds a whole one.
SECRETS = {
    "aws-access-key": "AKIA" + "Z7QW3RTY5UIOPLKJ",
    "github-token": "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "github-fine-grained": "github_pat_" + "11ABCDEFG0" + "x9Y8z7W6v5" * 7 + "ab",
    "gitlab-token": "glpat-" + "Zx9Yw8Vu7Ts6Rq5Po4Nm",
    "slack-token": "xoxb-" + "2048123456-4096123456789-ZyXwVuTsRqPoNmLkJiHgFeDc",
    "stripe-key": "sk_live_" + "51HqLyjWDarjtT1zdp7dcXYZ",
    "openai-key": "sk-proj-" + "Qw3rTy7uIo9pAs2dFg4hJk6lZx8cVb1nM" * 2,
    "anthropic-key": "sk-ant-api03-" + "Pq7Rs8Tu9Vw0Xy1Za2Bc3De4Fg5Hi6Jk" * 3,
    "google-api-key": "AIza" + "SyB3kL9mN2pQ7rS5tU8vW1xY4zA6bC0dE-f",
    "npm-token": "npm_" + "Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78",
    "pypi-token": "pypi-AgEIcHlwaS5vcmc" + "CJDk3ZTFmNjctY2QxOS00YjE0LWIyMjQtZWQ5ZjY0" * 2,
    "jwt": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
    + "eyJzdWIiOiJkZXBsb3kiLCJpYXQiOjE3MDAwMDAwMDB9."
    + "h8Xk2Lm9Qp3Rs5Tu7Vw1Yz0Ab4Cd6Ef8Gh0Ij2Kl4Mn",
    "private-key": "-----BEGIN OPENSSH " + "PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "QyNTUxOQAAACDq7bT9xYz1k2Lm3Nn4Oo5Pp6Qq7Rr8Ss9Tt0Uu1Vv2AAAAJhZlL0xWZS9\n"
    "-----END OPENSSH " + "PRIVATE KEY-----",
    "url-password": "hunter2" + "Secr3t",
}
"""Kind -> value; the url-password is planted inside `postgres://deploy:<it>@db.internal/app`."""

SURVIVORS = [
    "sha256:" + "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "commit 3b18e512dba79e4c8300dd08aeb37f8e728b8dad",
    "id 123e4567-e89b-12d3-a456-426614174000",
    "data:image/png;base64," + base64.b64encode(bytes(range(256)) * 2).decode(),
    "integrity sha512-" + base64.b64encode(bytes(range(64))).decode(),
]


PLANTED_AT = ("We always use tabs", "Understood:", "all:", "Our CI runs", "Noted:", '{"command"')
"""Where the Claude Code and Codex transcripts get the secrets: user, assistant and tool text,
and a tool call's arguments."""


def planted() -> str:
    """Every secret, each in a sentence, with the survivors between them."""
    lines = []
    for kind, value in SECRETS.items():
        if kind == "url-password":
            value = f"postgres://deploy:{value}@db.internal/app"
        lines.append(f"deploy fails with {value} , can you see why?")
    return "\n".join([*lines, *SURVIVORS])


def needles() -> list[bytes]:
    """What must be nowhere: each secret, and a long piece of it (as stored, JSON may escape
    a newline, so the private key is looked for by its body)."""
    found = []
    for value in SECRETS.values():
        found.append(value[-16:].encode())
        if "\n" not in value:
            found.append(value.encode())
    return found


def leaks(folder: Path) -> list[str]:
    """`file: secret` for every secret found in any file under `folder` (SQLite's WAL and
    journal included)."""
    found = []
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            data = path.read_bytes()
            found += [f"{path.name}: {n.decode()!r}" for n in needles() if n in data]
    return found


def assert_clean_text(text: str) -> None:
    for value in SECRETS.values():
        assert value not in text and value[-16:] not in text
    for kind in SECRETS:
        if kind not in ("github-fine-grained",):
            assert re.search(rf"\[secret:{kind}:[0-9a-f]{{8}}\]", text), kind
    for survivor in SURVIVORS:
        assert survivor in text
    assert "deploy fails with" in text and "postgres://deploy:[secret:url-password:" in text


class TestTheDoors:
    async def test_chat_user_assistant_and_tool_results_never_store_or_resend_a_secret(
        self, start: Start, repo: Path, isolated_config_dir: Path
    ) -> None:
        # covers P5: the user's message, a `read` of a file that is not secret-named, the
        # model's answer and a memory tool's result; and the next requests that replay them.
        (repo / "settings.py").write_text(planted() + "\n")
        async with FakeOpenAI() as server:
            server.push(
                Stream(tool_chunks("read", {"path": "settings.py"}, "r1")),
                Stream(tool_chunks("memory_search", {"pattern": "deploy"}, "m1")),
                Stream(text_chunks("I see " + SECRETS["github-token"] + " in it.")),
                Stream(text_chunks("Done.")),
            )
            client = await chat_client(start, repo, server)
            deltas = Deltas(client)
            session = await new_session(client)
            await call(
                client,
                "lecode/memory/write",
                {"file": "notes/deploy.md", "content": "deploy notes\n", "mode": "replace"},
            )
            first = await call(
                client, "lecode/chat/send", {"sessionId": session, "text": planted()}
            )
            assert first["stopReason"] == "stop"
            second = await call(client, "lecode/chat/send", {"sessionId": session, "text": "And?"})
            assert second["stopReason"] == "stop"

            bodies = json.dumps(server.bodies)
            for needle in needles():
                assert needle.decode() not in bodies
            # The last request replays the user's message, the read result and the answer.
            last = server.bodies[-1]["messages"]
            user = next(m["content"] for m in last if m["role"] == "user")
            assert_clean_text(user)
            tool = next(m["content"] for m in last if m.get("tool_call_id") == "r1")
            assert_clean_text(json.loads(tool)["text"] if tool.startswith("{") else tool)
            answer = next(m["content"] for m in last if m["role"] == "assistant" and m["content"])
            assert "[secret:github-token:" in answer
            # The same secret, the same marker: in the user's message and in the answer.
            marker = re.search(r"\[secret:github-token:[0-9a-f]{8}\]", user)
            assert marker is not None and marker.group(0) in answer

            results = [d for d in deltas.items if d["kind"] == "toolResult"]
            assert results and all("sk_live_" not in json.dumps(d) for d in results)
            history = await call(client, "lecode/chat/history", {"sessionId": session})
            seen = json.dumps([history, [m.message for m in client.log_messages]])
            for needle in needles():
                assert needle.decode() not in seen
            # The transcript still verifies: what was digested is what was stored (S1-S3).
            snapshot = await call(
                client,
                "lecode/session/snapshot",
                {"sessionId": session, "startSeq": 1, "endSeq": 1},
            )
            assert snapshot["digest"].startswith("sha256:")
        assert leaks(isolated_config_dir) == []

    async def test_notes_written_appended_and_edited_keep_no_secret_nor_a_bak_of_one(
        self, start: Start, repo: Path, isolated_config_dir: Path
    ) -> None:
        # covers P5 (notes), L5 (.bak)
        client = await start(repo)
        for mode in ("replace", "append", "append"):
            await call(
                client,
                "lecode/memory/write",
                {"file": "notes/ops.md", "content": planted(), "mode": mode},
            )
        await call(client, "lecode/memory/write", {"file": "MEMORY.md", "content": "token: TOKEN"})
        await call(
            client,
            "lecode/memory/edit",
            {"file": "MEMORY.md", "search": "TOKEN", "replace": SECRETS["slack-token"]},
        )
        read = await call(client, "lecode/memory/read", {"file": "notes/ops.md"})
        assert_clean_text(read["content"])
        memory = await call(client, "lecode/memory/read", {"file": "MEMORY.md"})
        assert re.fullmatch(r"token: \[secret:slack-token:[0-9a-f]{8}\]", memory["content"])
        hits = await call(client, "lecode/memory/search", {"pattern": "deploy fails"})
        assert hits["hits"]
        assert leaks(isolated_config_dir) == []
        stores = list((isolated_config_dir / "memory").iterdir())
        key = stores[0] / "secrets.key"
        assert key.stat().st_mode & 0o777 == 0o600 and len(key.read_bytes()) == 32

    async def test_an_import_inline_or_from_a_file_keeps_no_secret(
        self, start: Start, repo: Path, isolated_config_dir: Path
    ) -> None:
        # covers P5 (session import, the door other agents' transcripts come through), S6
        records: list[dict[str, Any]] = [
            {"role": "user", "content": planted()},
            {"role": "assistant", "content": "Rotate " + SECRETS["aws-access-key"]},
        ]
        (repo / "old.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")
        client = await start(repo)
        inline = await call(client, "lecode/session/import", {"records": records})
        from_file = await call(client, "lecode/session/import", {"path": str(repo / "old.jsonl")})
        for made in (inline, from_file):
            read = await call(
                client,
                "lecode/session/read",
                {"sessionId": made["sessionId"], "startSeq": 0, "endSeq": 2},
            )
            text = json.dumps(read)
            for needle in needles():
                assert needle.decode() not in text
            assert "[secret:aws-access-key:" in text
        assert leaks(isolated_config_dir) == []

    async def test_claude_code_and_codex_transcripts_keep_no_secret(
        self, start: Start, repo: Path, isolated_config_dir: Path
    ) -> None:
        # covers P5, R1-R8 (issue 28's imports go through the same door: every string of every
        # record, nested parts, tool calls and tool results included)
        def plant(value: Any) -> Any:
            if isinstance(value, str) and value.startswith(PLANTED_AT):
                return value + " " + planted()
            if isinstance(value, list):
                return [plant(v) for v in value]
            if isinstance(value, dict):
                return {k: plant(v) for k, v in value.items()}
            return value

        claude = write_jsonl(repo / "claude.jsonl", plant(claude_records(repo)))
        codex = write_jsonl(repo / "codex.jsonl", plant(codex_records(repo)))
        client = await start(repo)
        for path in (claude, codex):
            made = await call(client, "lecode/session/import", {"path": str(path)})
            [stored] = isolated_config_dir.rglob(f"{made['sessionId']}.jsonl")
            text = stored.read_text(encoding="utf-8")
            for needle in needles():
                assert needle.decode() not in text
            assert text.count("[secret:github-token:") >= 3  # user, assistant and tool text
        assert leaks(isolated_config_dir) == []

    async def test_fact_texts_remembered_and_corrected_keep_no_secret_and_stay_valid(
        self, start: Start, repo: Path, isolated_config_dir: Path
    ) -> None:
        # covers P5 (facts), F6, S3 (the evidence of the redacted record validates)
        client = await start(repo)
        made = await call(
            client,
            "lecode/session/import",
            {"records": [{"role": "user", "content": "The CI token is " + SECRETS["npm-token"]}]},
        )
        session = made["sessionId"]
        source = await call(
            client, "lecode/session/snapshot", {"sessionId": session, "startSeq": 1, "endSeq": 1}
        )
        fact = await call(
            client,
            "lecode/facts/remember",
            {"text": "CI publishes with " + SECRETS["npm-token"], "source": source},
        )
        await call(
            client,
            "lecode/facts/correct",
            {
                "factId": fact["factId"],
                "expectedRevision": 1,
                "text": "CI publishes with " + SECRETS["npm-token"] + " from main",
                "source": source,
            },
        )
        recalled = await call(client, "lecode/facts/recall", {"factId": fact["factId"]})
        assert recalled["status"] == "valid"
        assert re.search(r"\[secret:npm-token:[0-9a-f]{8}\] from main", recalled["text"])
        assert SECRETS["npm-token"] not in json.dumps(recalled)
        await call(client, "lecode/facts/list", {})
        assert leaks(isolated_config_dir) == []

    async def test_a_selection_remembered_in_the_editor_keeps_no_secret(
        self, start: Start, repo: Path, isolated_config_dir: Path
    ) -> None:
        # covers P5 (selection facts: the recorded exchange, the fact text, its anchor), F6
        settings = repo / "settings.py"
        settings.write_text(f'DEBUG = False\nSTRIPE_KEY = "{SECRETS["stripe-key"]}"\n')
        client = await start(repo)
        made = await call(
            client,
            "lecode/facts/rememberSelection",
            {
                "uri": settings.as_uri(),
                "range": {
                    "start": {"line": 1, "character": 0},
                    "end": {"line": 1, "character": 10},
                },
            },
        )
        recalled = await call(client, "lecode/facts/recall", {"factId": made["factId"]})
        assert recalled["status"] == "valid"
        assert re.search(r"STRIPE_KEY = \\\"\[secret:stripe-key:[0-9a-f]{8}\]", recalled["text"])
        assert leaks(isolated_config_dir) == []


class TestBadInput:
    async def test_a_mebibyte_of_base64_and_100000_near_misses_keep_ping_answering(
        self, start: Start, repo: Path
    ) -> None:
        # covers P5 (bounded redaction), K3 (ping answers while a store works); issue 27 "Bad
        # input". Redaction runs in the store's thread, never on the event loop.
        client = await start(repo)
        line = base64.b64encode(bytes(range(256)) * 3000).decode()[:1_000_000]
        near = ("ghp_x AKIA sk-ant- xoxb- eyJ. glpat- " * 26_000)[:1_000_000]
        for name, text in (("b64", line), ("near", near)):
            write = asyncio.ensure_future(
                call(client, "lecode/memory/write", {"file": f"notes/{name}.md", "content": text})
            )
            pings = 0
            while not write.done():
                await call(client, "lecode/ping")
                pings += 1
            await write
            read = await call(client, "lecode/memory/read", {"file": f"notes/{name}.md"})
            assert read["content"] == text  # nothing in it is a secret: unchanged
            assert pings >= 1
