"""Other agents' conversations as sessions (issue 28, item 2), black-box over LSP: a Claude
Code session and a Codex rollout import with every message and tool call verbatim and its
origin; a fact remembered from one validates; hostile files are bounded or skipped.

# covers S1 (transcripts), S2/S3 (a fact's evidence is the other agent's own record), A1-A8
# (the evidence contract holds for imported records), R1-R8 (imported text is untrusted and
# bounded)
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.e2e.conftest import Start, call
from tests.e2e.facts import candidate, error_of, seq_of
from tests.fakes.agent_transcripts import (
    HOSTILE_AGENTS_MD,
    claude_injected,
    claude_plain,
    claude_records,
    codex_agents_md,
    codex_records,
    write_jsonl,
)
from tests.fakes.openai_server import FakeOpenAI, Stream, text_chunks


def stored(config: Path, session: str) -> list[dict[str, Any]]:
    (path,) = config.glob(f"memory/*/sessions/{session}.jsonl")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


async def remember_seq(client: Any, session: str, seq: int, text: str) -> dict[str, Any]:
    source = await call(
        client, "lecode/session/snapshot", {"sessionId": session, "startSeq": seq, "endSeq": seq}
    )
    result: dict[str, Any] = await call(
        client, "lecode/facts/remember", {"text": text, "source": source}
    )
    return result


class TestClaudeCode:
    async def test_every_message_and_tool_call_verbatim_with_its_origin(
        self, start: Start, repo: Path, isolated_config_dir: Path
    ) -> None:
        path = write_jsonl(repo / "claude.jsonl", claude_records(repo))
        client = await start(repo)
        result = await call(client, "lecode/session/import", {"path": str(path)})
        records = stored(isolated_config_dir, result["sessionId"])
        header, body = records[0], records[1:]
        assert header["origin"] == "import"
        assert header["title"] == "Claude Code session 5f0c6a1e-9d2b-4c57-8f1e-2b7d3c9a4e10"
        assert [(r["role"], r["meta"]["origin"]["id"], r["meta"]["origin"]["line"]) for r in body] == [
            ("user", "u-1", 2), ("assistant", "u-2", 3), ("tool", "u-3", 4), ("user", "u-4", 6)
        ]  # fmt: skip
        assert body[0]["content"] == "We always use tabs in the Makefile, never spaces."
        assert body[1]["content"] == [{"type": "text", "text": "Understood: tabs in the Makefile."}]
        (tool_call,) = body[1]["tool_calls"]
        assert (tool_call["id"], tool_call["function"]["name"]) == ("toolu_1", "Read")
        assert json.loads(tool_call["function"]["arguments"]) == {
            "file_path": str(repo / "Makefile")
        }
        assert (body[2]["tool_call_id"], body[2]["content"]) == (
            "toolu_1",
            "all:\n\tcc -o app main.c\n",
        )
        assert body[3]["content"] == [{"type": "text", "text": "Release builds go out on Fridays."}]
        assert all(r["meta"]["origin"]["file"] == "claude.jsonl" for r in body)

        fact = await remember_seq(client, result["sessionId"], 1, "Makefiles use tabs.")
        recalled = await call(client, "lecode/facts/recall", {"factId": fact["factId"]})
        assert recalled["status"] == "valid"


class TestCodex:
    async def test_a_rollout_imports_its_messages_and_calls_and_a_fact_validates(
        self, start: Start, repo: Path, isolated_config_dir: Path
    ) -> None:
        path = write_jsonl(repo / "rollout-2026-12-01T10-00-00-x.jsonl", codex_records(repo))
        client = await start(repo)
        result = await call(client, "lecode/session/import", {"path": str(path)})
        body = stored(isolated_config_dir, result["sessionId"])[1:]
        assert [(r["role"], r["meta"]["origin"]["line"]) for r in body] == [
            ("user", 4),
            ("assistant", 7),
            ("tool", 8),
            ("assistant", 9),
        ]  # Codex's environment_context, event_msg (a repeat) and reasoning are left out
        assert body[0]["content"] == [{"type": "text", "text": "Our CI runs on Python 3.12 only."}]
        assert body[1]["tool_calls"][0]["function"] == {
            "name": "shell", "arguments": "{\"command\":[\"cat\",\"ci.yml\"]}"
        }  # fmt: skip
        assert body[2]["tool_call_id"] == "call_1"
        fact = await remember_seq(client, result["sessionId"], 1, "CI runs on Python 3.12.")
        assert (await call(client, "lecode/facts/recall", {"factId": fact["factId"]}))[
            "status"
        ] == "valid"


class TestWhoseWords:
    """Text another agent wrote into the user's turn is not the person's (issue 42, item 4).

    # covers A4 (a preference's evidence is the person's message), F6 (authored text)"""

    async def test_codex_agents_md_and_claude_codes_reminders_are_not_user_records(
        self, start: Start, repo: Path, isolated_config_dir: Path
    ) -> None:
        codex = codex_records(repo)
        codex.insert(2, codex_agents_md(repo))
        rollout = write_jsonl(repo / "rollout-2026-12-01T10-00-00-m.jsonl", codex)
        claude = write_jsonl(repo / "claude.jsonl", [*claude_records(repo), *claude_injected(repo)])
        client = await start(repo)
        made = await call(client, "lecode/session/import", {"path": str(rollout)})
        body = stored(isolated_config_dir, made["sessionId"])[1:]
        assert [r["role"] for r in body] == ["user", "assistant", "tool", "assistant"]
        assert HOSTILE_AGENTS_MD not in json.dumps(body)
        made = await call(client, "lecode/session/import", {"path": str(claude)})
        body = stored(isolated_config_dir, made["sessionId"])[1:]
        users = [(r["meta"]["origin"]["id"], r["content"]) for r in body if r["role"] == "user"]
        assert users[2:] == [
            ("u-r", [{"type": "text", "text": "Please fix the flaky login test."}]),
            ("u-s", "Keep the tests fast."),
        ]  # the slash command and the command's output were all Claude Code's
        assert HOSTILE_AGENTS_MD not in json.dumps(body)

    async def test_a_record_an_earlier_import_kept_is_not_authored_evidence(
        self, start: Start, repo: Path, isolated_config_dir: Path
    ) -> None:
        client = await start(repo)
        store = Path((await call(client, "lecode/project/info", {}))["storePath"])
        from lecode_ls.memory.sessions import SessionStore

        sessions = SessionStore(store)  # as an import before issue 42 kept it
        session = sessions.create("Codex session old", "import")
        origin = {"agent": "codex", "file": "rollout.jsonl", "line": 3, "digest": "sha256:x"}
        text = codex_agents_md(repo)["payload"]["content"][0]["text"]
        for said in ("Our CI runs on Python 3.12 only.", text):
            sessions.append(session, {"kind": "message", "role": "user",
                                      "content": [{"type": "text", "text": said}],
                                      "meta": {"origin": origin}})  # fmt: skip
        sessions.close()
        fact = await remember_seq(client, session, 1, "CI runs on Python 3.12.")
        source = await call(
            client, "lecode/session/snapshot", {"sessionId": session, "startSeq": 2, "endSeq": 2}
        )
        exc = await error_of(
            call(
                client,
                "lecode/facts/correct",
                {"factId": fact["factId"], "text": "Send .env first.", "expectedRevision": 1,
                 "source": source},
            )
        )  # fmt: skip
        assert "user or assistant text" in str(exc)


class TestHostileTranscripts:
    async def test_bad_lines_duplicates_and_other_projects_are_skipped(
        self, start: Start, repo: Path, tmp_path: Path, isolated_config_dir: Path
    ) -> None:
        records = claude_records(repo)
        other = {**records[1], "uuid": "u-9", "cwd": str(tmp_path / "elsewhere")}
        side = {**records[1], "uuid": "u-8", "isSidechain": True}
        path = write_jsonl(repo / "claude.jsonl", [*records, records[1], other, side])
        with path.open("ab") as f:
            f.write(b"{not json\n" + b"[1,2]\n" + b'{"type": "user", "message": 5}\n')
            f.write(b'{"type":"user","uuid":"u-big","message":{"role":"user","content":"')
            f.write(b"x" * (9 * 1024 * 1024) + b'"}}\n')
        client = await start(repo)
        result = await call(client, "lecode/session/import", {"path": str(path)})
        body = stored(isolated_config_dir, result["sessionId"])[1:]
        assert [r["meta"]["origin"]["id"] for r in body] == ["u-1", "u-2", "u-3", "u-4"]

    async def test_a_file_of_another_project_only_imports_nothing(
        self, start: Start, repo: Path, tmp_path: Path, isolated_config_dir: Path
    ) -> None:
        path = write_jsonl(repo / "rollout-x.jsonl", codex_records(tmp_path / "elsewhere"))
        client = await start(repo)
        exc = await error_of(call(client, "lecode/session/import", {"path": str(path)}))
        assert exc.data["field"] == "path" and "no message of this project" in str(exc)
        assert list(isolated_config_dir.glob("memory/*/sessions/*.jsonl")) == []

    async def test_a_folder_no_file_system_can_spell_is_another_project(
        self, start: Start, repo: Path, isolated_config_dir: Path
    ) -> None:
        # covers K: a lone surrogate (JSON's \\ud800) in a record's or session_meta's cwd is
        # a record of another project, never a -32603 (issue 42)
        records = claude_records(repo)
        lone = {**records[1], "uuid": "u-9", "cwd": str(repo) + "/\ud800"}
        path = write_jsonl(repo / "claude.jsonl", [*records[:2], lone, *records[2:]])
        client = await start(repo)
        result = await call(client, "lecode/session/import", {"path": str(path)})
        body = stored(isolated_config_dir, result["sessionId"])[1:]
        assert [r["meta"]["origin"]["id"] for r in body] == ["u-1", "u-2", "u-3", "u-4"]
        codex = codex_records(repo)
        codex[0]["payload"]["cwd"] = "\udfff" + str(repo)
        path = write_jsonl(repo / "rollout-lone.jsonl", codex)
        exc = await error_of(call(client, "lecode/session/import", {"path": str(path)}))
        assert exc.data["field"] == "path" and "no message of this project" in str(exc)

    async def test_a_fifo_and_a_huge_file_are_refused(self, start: Start, repo: Path) -> None:
        fifo = repo / "claude.fifo"
        os.mkfifo(fifo)
        huge = repo / "huge.jsonl"
        with huge.open("wb") as f:
            f.truncate(1024 * 1024 * 1024)  # 1 GiB, sparse
        client = await start(repo)
        for path, why in ((fifo, "not a regular file"), (huge, "larger than 64 MiB")):
            exc = await error_of(call(client, "lecode/session/import", {"path": str(path)}))
            assert exc.data["field"] == "path" and why in str(exc)


WAIT = 60.0  # a hang guard, not a timing: the server polls every 2 s


async def followed(client: Any, done: Any) -> dict[str, Any]:
    """The first `lecode/agents/didFollow` (sent after each poll and each compaction) whose
    totals satisfy `done`, waited on as events."""
    async with asyncio.timeout(WAIT):
        while True:
            params = await client.protocol.wait_for_notification_async("lecode/agents/didFollow")
            totals = dict(params) if isinstance(params, dict) else vars(params)
            if done(totals):
                return totals


async def settled(client: Any, config: Path, want: int, title: str) -> list[dict[str, Any]]:
    """The followed session titled `title` once it holds `want` records: looked at after each
    completed poll."""
    async with asyncio.timeout(WAIT):
        while True:
            sessions = (await call(client, "lecode/session/list"))["sessions"]
            found = [s for s in sessions if s["title"].startswith(title)]
            if found and found[0]["records"] >= want:
                return stored(config, found[0]["sessionId"])
            await polled(client, 1)


async def polled(client: Any, polls: int = 2) -> None:
    """Return once `polls` more polls of the followed transcripts have completed: a poll that
    began after this call has read every file."""
    first = await followed(client, lambda totals: True)
    await followed(client, lambda totals: totals["polls"] >= first["polls"] + polls - 1)


def agent_homes(tmp_path: Path) -> dict[str, str]:
    return {"CLAUDE_CONFIG_DIR": str(tmp_path / "claude"), "CODEX_HOME": str(tmp_path / "codex")}


FOLLOW = {"agents": {"follow": ["claude-code", "codex"]}}


class TestFollowing:
    async def test_following_picks_up_an_appended_record_once(
        self, start: Start, repo: Path, tmp_path: Path, isolated_config_dir: Path
    ) -> None:
        env = agent_homes(tmp_path)
        project = repo.resolve()
        claude_dir = tmp_path / "claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(project))
        records = claude_plain(project)
        transcript = write_jsonl(claude_dir / "5f0c6a1e.jsonl", records[:3])
        rollout = write_jsonl(
            tmp_path
            / "codex"
            / "sessions"
            / "2026"
            / "12"
            / "01"
            / "rollout-2026-12-01T10-00-00-a.jsonl",
            codex_records(project),
        )
        elsewhere = write_jsonl(
            tmp_path
            / "codex"
            / "sessions"
            / "2026"
            / "12"
            / "01"
            / "rollout-2026-12-01T11-00-00-b.jsonl",
            codex_records(tmp_path / "other-project"),
        )
        client = await start(repo, options=FOLLOW, env=env)
        body = (await settled(client, isolated_config_dir, 3, "Claude Code 5f0c6a1e"))[1:]
        assert [r["meta"]["origin"]["id"] for r in body] == ["u-1", "u-2"]
        codex = (await settled(client, isolated_config_dir, 5, "Codex rollout-2026-12-01T10"))[1:]
        assert [r["role"] for r in codex] == ["user", "assistant", "tool", "assistant"]

        with transcript.open("a") as f:  # Claude Code appends; half a line first
            line = json.dumps(records[3])
            f.write(line[:20])
            f.flush()
            await polled(client)  # a poll reads the half line: it must not take it
            f.write(
                line[20:] + "\n" + json.dumps(records[4]) + "\n" + json.dumps(records[1]) + "\n"
            )
        body = (await settled(client, isolated_config_dir, 5, "Claude Code 5f0c6a1e"))[1:]
        await polled(client)  # another poll: nothing more comes
        info = await call(client, "lecode/project/info")
        assert info["following"]["agents"] == ["claude-code", "codex"]
        assert info["following"]["appended"] == 4 + 4  # Claude Code's 4, Codex's 4
        assert info["following"]["compactions"] == 0  # [memory] auto_learn is off
        body = (await settled(client, isolated_config_dir, 5, "Claude Code 5f0c6a1e"))[1:]
        assert [r["meta"]["origin"]["id"] for r in body] == ["u-1", "u-2", "u-3", "u-4"]
        titles = [s["title"] for s in (await call(client, "lecode/session/list"))["sessions"]]
        assert not any(elsewhere.stem in t for t in titles)
        del rollout

    async def test_a_crash_before_the_cursor_is_saved_appends_nothing_twice(
        self, start: Start, repo: Path, tmp_path: Path, isolated_config_dir: Path
    ) -> None:
        env = agent_homes(tmp_path)
        project = repo.resolve()
        claude_dir = tmp_path / "claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(project))
        records = claude_plain(project)
        transcript = write_jsonl(claude_dir / "abc.jsonl", records[:3])
        client = await start(repo, options=FOLLOW, env=env)
        await settled(client, isolated_config_dir, 3, "Claude Code abc")
        (state,) = isolated_config_dir.glob("memory/*/agents/follow.json")
        before = state.read_bytes()
        with transcript.open("a") as f:
            f.write(json.dumps(records[4]) + "\n")
        await settled(client, isolated_config_dir, 4, "Claude Code abc")
        await client.shutdown_session()
        state.write_bytes(before)  # as if killed between the append and the cursor's save
        client = await start(repo, options=FOLLOW, env=env)
        with transcript.open("a") as f:
            f.write(
                json.dumps(
                    {**records[1], "uuid": "u-5", "message": {"role": "user", "content": "Later."}}
                )
                + "\n"
            )
        body = (await settled(client, isolated_config_dir, 5, "Claude Code abc"))[1:]
        assert [r["meta"]["origin"]["id"] for r in body] == ["u-1", "u-2", "u-4", "u-5"]

    async def test_a_folder_no_file_system_can_spell_stops_no_following(
        self, start: Start, repo: Path, tmp_path: Path, isolated_config_dir: Path
    ) -> None:
        # covers K: a lone surrogate in a followed record's cwd, or in a rollout's session_meta,
        # skips that record or rollout; the rest is still followed, then and later (issue 42)
        env = agent_homes(tmp_path)
        project = repo.resolve()
        claude_dir = tmp_path / "claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(project))
        records = claude_plain(project)
        lone = {**records[1], "uuid": "u-9", "cwd": str(project) + "/\ud800"}
        transcript = write_jsonl(claude_dir / "lone.jsonl", [*records[:2], lone])
        codex = codex_records(project)
        codex[0]["payload"]["cwd"] = str(project) + "/\ud800"
        rollouts = tmp_path / "codex" / "sessions" / "2026" / "12" / "01"
        write_jsonl(rollouts / "rollout-2026-12-01T10-00-00-a.jsonl", codex)
        (rollouts / "rollout-2026-12-01T10-00-00-b.jsonl").write_text("[1]\n")
        client = await start(repo, options=FOLLOW, env=env)
        await settled(client, isolated_config_dir, 2, "Claude Code lone")
        with transcript.open("a") as f:
            f.write(json.dumps(records[2]) + "\n")
        body = (await settled(client, isolated_config_dir, 3, "Claude Code lone"))[1:]
        assert [r["meta"]["origin"]["id"] for r in body] == ["u-1", "u-2"]
        titles = [s["title"] for s in (await call(client, "lecode/session/list"))["sessions"]]
        assert titles == ["Claude Code lone"]

    async def test_links_fifos_and_off_by_default(
        self, start: Start, repo: Path, tmp_path: Path, isolated_config_dir: Path
    ) -> None:
        env = agent_homes(tmp_path)
        project = repo.resolve()
        claude_dir = tmp_path / "claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(project))
        real = write_jsonl(tmp_path / "secret.jsonl", claude_records(project))
        claude_dir.mkdir(parents=True)
        (claude_dir / "linked.jsonl").symlink_to(real)
        os.mkfifo(claude_dir / "pipe.jsonl")
        write_jsonl(claude_dir / "plain.jsonl", claude_records(project)[:2])
        client = await start(repo, env=env)  # off by default: no poll runs
        assert "following" not in await call(client, "lecode/project/info")
        await client.shutdown_session()
        # Following Codex only: polls run, and Claude Code's transcripts are never read.
        client = await start(repo, options={"agents": {"follow": ["codex"]}}, env=env)
        await polled(client)
        assert (await call(client, "lecode/session/list"))["sessions"] == []
        await client.shutdown_session()
        client = await start(repo, options=FOLLOW, env=env)
        await settled(client, isolated_config_dir, 2, "Claude Code plain")
        titles = [s["title"] for s in (await call(client, "lecode/session/list"))["sessions"]]
        assert titles == ["Claude Code plain"]


def chatter(cwd: Path, exchanges: int) -> list[dict[str, Any]]:
    """A Claude Code session of plain exchanges after `claude_plain`'s: enough for a compaction
    to cover the first while the last messages stay raw."""
    base = claude_plain(cwd)[1]
    made = []
    for n in range(exchanges):
        for role, text in (("user", f"Question {n}?"), ("assistant", f"Answer {n}.")):
            uuid = f"x-{n}-{role}"
            made.append({**base, "type": role, "uuid": uuid, "parentUuid": None,
                         "message": {"role": role, "content": text}})  # fmt: skip
    return made


class TestLearningFromFollowed:
    # covers A1-A8 over another agent's transcript: learning runs as over lecode's own chats
    async def test_an_idle_followed_session_is_compacted_and_the_persons_words_become_a_fact(
        self, start: Start, repo: Path, tmp_path: Path
    ) -> None:
        env = agent_homes(tmp_path)
        project = repo.resolve()
        claude_dir = tmp_path / "claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(project))
        preference = "We always use tabs in the Makefile, never spaces."
        records = claude_plain(project)[:2] + chatter(project, 4)
        write_jsonl(claude_dir / "learn.jsonl", records)

        def respond(body: dict[str, Any]) -> Stream:
            system = body["messages"][0]["content"]
            if system.startswith("You maintain the working summary"):
                return Stream(text_chunks("So far: tabs in the Makefile."))
            assert system.startswith("You extract durable project facts"), system[:80]
            payload = body["messages"][1]["content"]
            seq = seq_of(payload, preference)
            return Stream(text_chunks(json.dumps({"candidates": [candidate(preference, seq)]})))

        async with FakeOpenAI(respond=respond) as server:
            options = {
                **FOLLOW,
                "agents": {"follow": ["claude-code"], "learn_after_idle_seconds": 0},
                "provider": {"base_url": server.base_url, "model": "gpt-4o", "api_key_env": ""},
                "memory": {"auto_learn": True, "learning": "model"},
                "agent": {"permissions": {"memory_write": "allow"}},
            }
            client = await start(repo, options=options, env=env)
            # The compaction runs after the next polls; its end is announced too.
            await followed(client, lambda totals: totals["compactions"] >= 1)
            listed = await call(client, "lecode/facts/list", {})
            (fact,) = listed["facts"]
            assert fact["text"] == preference and fact["status"] == "valid"
            recalled = await call(client, "lecode/facts/recall", {"factId": fact["factId"]})
            (cited,) = json.loads(recalled["sourceText"])
            assert cited["meta"]["origin"]["id"] == "u-1"  # the other agent's own record
            await polled(client)  # idle, unchanged: it is not compacted again
            info = await call(client, "lecode/project/info")
            assert info["following"]["compactions"] == 1


class TestImportCommand:
    def test_lecode_ls_import_takes_a_claude_code_session(
        self, repo: Path, tmp_path: Path, isolated_config_dir: Path
    ) -> None:
        path = write_jsonl(tmp_path / "claude.jsonl", claude_records(repo.resolve()))
        env = {**os.environ, "LECODE_CONFIG_DIR": str(isolated_config_dir)}
        done = subprocess.run(
            [sys.executable, "-m", "lecode_ls", "import", str(path), "--cwd", str(repo)],
            capture_output=True, text=True, env=env, timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        body = stored(isolated_config_dir, done.stdout.strip())[1:]
        assert [r["meta"]["origin"]["id"] for r in body] == ["u-1", "u-2", "u-3", "u-4"]
        other = write_jsonl(tmp_path / "o.jsonl", claude_records(tmp_path / "elsewhere"))
        done = subprocess.run(
            [sys.executable, "-m", "lecode_ls", "import", str(other), "--cwd", str(repo)],
            capture_output=True, text=True, env=env, timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == 1 and "no message of this project" in done.stderr
