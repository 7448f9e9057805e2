"""`lecode-ls mcp` (issue 15) driven by the MCP SDK's own client over stdio, beside the language
server on the same store: the read tools with their bounded schemas and pages, the memory files
as resources, writes gated by `[mcp] allow`, a verified remember whose fact then shows through
the language server with its recall, its anchor and its forget, and both servers writing at once.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

from tests.e2e.conftest import Start, call, git, make_repo, uri
from tests.e2e.mcp_client import allow, mcp_session, tool, tool_error
from tests.e2e.test_anchors import WHOLE_PORT_LINE, open_doc

READERS = [
    "memory_read", "memory_search", "memory_recall", "memory_list", "memory_doctor", "memory_team",
]  # fmt: skip
WRITERS = ["memory_write", "memory_edit", "memory_correct", "memory_forget", "memory_remember"]
APP = "import os\n\nPORT = 8080\n\n\ndef main():\n    serve(PORT)\n"


def bounded_everywhere(schema: dict[str, object]) -> list[str]:
    """The names of the string and integer arguments that lack a bound."""
    missing: list[str] = []

    def walk(node: dict[str, object], name: str) -> None:
        kind = node.get("type")
        if kind == "string" and "enum" not in node and "maxLength" not in node:
            missing.append(name)
        if kind == "integer" and "maximum" not in node:
            missing.append(name)
        if kind == "array":
            walk(node["items"], name)  # type: ignore[arg-type]
        for key, child in node.get("properties", {}).items():  # type: ignore[attr-defined]
            walk(child, key)

    walk(schema, "")
    return missing


class TestReadTools:
    async def test_the_read_class_tools_alone_are_listed_by_default_with_bounded_schemas(
        self, repo: Path
    ) -> None:
        # covers T1, T2 (over MCP: the writers need [mcp] allow)
        async with mcp_session(repo) as session:
            tools = (await session.list_tools()).tools
        assert [t.name for t in tools] == READERS
        for t in tools:
            assert t.input_schema["additionalProperties"] is False
            assert bounded_everywhere(t.input_schema) == [], t.name
            assert t.annotations is not None and t.annotations.read_only_hint is True
        assert "untrusted evidence" in tools[0].description

    async def test_resource_templates_are_an_empty_list_not_an_unknown_method(
        self, repo: Path
    ) -> None:
        # Issue 24: clients ask for templates beside resources and expect a list.
        async with mcp_session(repo) as session:
            templates = await session.list_resource_templates()
        assert templates.resource_templates == []

    async def test_the_log_says_which_config_dir_and_project_it_serves(
        self, repo: Path, tmp_path: Path, isolated_config_dir: Path
    ) -> None:
        # Issue 24: a client that passes its own environment shows a wrong store in its log.
        errlog = tmp_path / "stderr.log"
        async with mcp_session(repo / "src" if (repo / "src").is_dir() else repo, errlog=errlog):
            pass
        [line] = [x for x in errlog.read_text().splitlines() if x.startswith("lecode-ls mcp ")]
        assert f": config dir {isolated_config_dir} (LECODE_CONFIG_DIR), " in line
        assert f", project {repo.resolve()}, memory {isolated_config_dir / 'memory'}" in line

    async def test_an_agent_reads_and_searches_what_the_editor_wrote(
        self, start: Start, repo: Path
    ) -> None:
        # covers T1, T6, P3 (the memory a person built in the editor, read over MCP)
        editor = await start(repo)
        await call(editor, "lecode/memory/write", {"file": "MEMORY.md", "content": "Use tabs.\n"})
        await call(
            editor, "lecode/memory/write", {"file": "notes/build.md", "content": "make all\n"}
        )
        async with mcp_session(repo) as session:
            read = await tool(session, "memory_read", file="MEMORY.md")
            found = await tool(session, "memory_search", pattern="make|tabs")
            resources = (await session.list_resources()).resources
            note = await session.read_resource("lecode://memory/notes/build.md")
        assert read == {"file": "MEMORY.md", "exists": True, "content": "Use tabs.\n"}
        assert found == {
            "hits": [
                {"file": "MEMORY.md", "line": 1, "text": "Use tabs."},
                {"file": "notes/build.md", "line": 1, "text": "make all"},
            ],
            "truncated": False,
        }
        assert [r.name for r in resources] == ["MEMORY.md", "notes/build.md"]
        assert all("Untrusted evidence" in (r.description or "") for r in resources)
        assert note.contents[0].text == "make all\n"  # type: ignore[union-attr]

    async def test_bad_arguments_and_uris_are_refused_naming_the_field(self, repo: Path) -> None:
        # covers P5 (over MCP), T6
        async with mcp_session(repo) as session:
            long_name = await tool_error(session, "memory_read", file="notes/" + "a" * 400)
            unknown = await tool_error(session, "memory_read", file="MEMORY.md", mode="x")
            bad_type = await tool_error(session, "memory_list", offset="1")
            too_big = await tool_error(session, "memory_recall", fact_id=2**40)
            escape = await tool_error(session, "memory_read", file="../secrets.md")
            no_tool = await tool_error(session, "memory_delete_everything")
            try:
                await session.read_resource("file:///etc/passwd")
            except Exception as exc:  # the SDK raises MCPError for a JSON-RPC error
                refused = str(exc)
            else:
                raise AssertionError("a file:// URI was served")
            assert (await session.send_ping()) is not None  # still serving
        assert long_name["message"].startswith("file: 406 characters; at most 300")
        assert unknown["message"] == "mode: memory_read has no argument 'mode'"
        assert bad_type["message"] == "offset: expected an integer"
        assert too_big["message"] == f"fact_id: must be at most {2**31 - 1}"
        assert escape["error"] == "invalid_name"
        assert no_tool["message"].startswith("name: there is no memory tool")
        assert refused.startswith("uri: expected lecode://memory/")


class TestConfigGatedWrites:
    async def test_a_write_the_config_denies_is_neither_listed_nor_run(
        self, repo: Path, isolated_config_dir: Path
    ) -> None:
        # covers T4 (over MCP: default deny, the refusal names the rule)
        async with mcp_session(repo) as session:
            refused = await tool_error(
                session, "memory_write", file="MEMORY.md", content="x", mode="append"
            )
            read = await tool(session, "memory_read", file="MEMORY.md")
        assert refused["error"] == "permission_denied"
        assert "[mcp] allow" in refused["message"]
        assert read["exists"] is False

    async def test_allowed_writes_are_listed_and_go_through_the_chat_validation(
        self, repo: Path, isolated_config_dir: Path
    ) -> None:
        # covers T1, T4 (each write tool allowed one by one)
        allow(isolated_config_dir, "memory_write", "memory_edit")
        async with mcp_session(repo) as session:
            names = [t.name for t in (await session.list_tools()).tools]
            wrote = await tool(
                session, "memory_write", file="notes/a.md", content="one\n", mode="append"
            )
            edited = await tool(
                session, "memory_edit", file="notes/a.md", search="one", replace="1"
            )
            bad = await tool_error(
                session, "memory_write", file="notes/a.md", content="x", mode="prepend"
            )
            forget = await tool_error(session, "memory_forget", fact_id=1)
            # The person takes the permission back while the agent runs: the next call obeys.
            allow(isolated_config_dir)
            later = await tool_error(
                session, "memory_write", file="notes/a.md", content="x", mode="append"
            )
            names_later = [t.name for t in (await session.list_tools()).tools]
            content = await tool(session, "memory_read", file="notes/a.md")
        assert names == [*READERS[:1], "memory_write", "memory_edit", *READERS[1:]]
        assert wrote == {"file": "notes/a.md", "mode": "append", "bytes": 4}
        assert edited == {"file": "notes/a.md", "replacements": 1}
        assert bad["message"] == 'mode: must be "append" or "replace", got "prepend"'
        assert forget["error"] == "permission_denied"
        assert later["error"] == "permission_denied"
        assert names_later == READERS
        assert content["content"] == "1\n"


class TestVerifiedRemember:
    async def test_a_verified_fact_shows_through_the_language_server_with_its_recall(
        self, start: Start, repo: Path, isolated_config_dir: Path
    ) -> None:
        # covers A5, S2, S3, F6, F7, R1, R7 (a fact from another agent keeps the contract)
        (repo / "app.py").write_text(APP)
        allow(isolated_config_dir, "memory_remember", "memory_forget")
        editor = await start(repo)
        # The editor shows the (empty) Facts tree, then hears of a fact another process stored:
        # VS Code's Facts tree refreshes on that notification.
        assert (await call(editor, "lecode/facts/list"))["facts"] == []
        changed = editor.protocol.wait_for_notification_async("lecode/facts/didChange")
        async with mcp_session(repo, client="Claude Code") as session:
            remembered = await tool(session, "memory_remember", path="app.py", line="PORT = 8080")
            heard = await asyncio.wait_for(changed, 30)
            again = await tool(session, "memory_remember", path="app.py", line="PORT = 8080")
            recalled = await tool(session, "memory_recall", fact_id=remembered["fact_id"])
        assert remembered["text"] == 'app.py contains "PORT = 8080"'
        assert remembered["line_number"] == 3
        assert again["fact_id"] == remembered["fact_id"]  # deduplicated (F8)
        assert recalled["status"] == "valid"
        records = json.loads(recalled["source_text"])
        assert [r["role"] for r in records] == ["user", "assistant", "tool", "assistant"]
        # The server's own read of the line, in the read tool's numbered shape.
        assert records[2]["content"].split("\n")[0] == "     3\tPORT = 8080"
        assert records[0]["meta"]["mcp_client"] == "Claude Code"
        assert heard["projectRoot"] == str(repo.resolve())

        listed = await call(editor, "lecode/facts/list")
        [fact] = listed["facts"]
        assert fact["text"] == 'app.py contains "PORT = 8080"'
        assert fact["status"] == "valid"
        assert [(a["path"], a["startLine"], a["status"]) for a in fact["anchors"]] == [
            ("app.py", 3, "current")
        ]
        sessions = await call(editor, "lecode/session/list")
        assert [s["title"] for s in sessions["sessions"]] == ["MCP: Claude Code"]
        via_editor = await call(editor, "lecode/facts/recall", {"factId": fact["factId"]})
        assert via_editor["status"] == "valid"
        source = recalled["source"]
        assert via_editor["source"] == {
            "sessionId": source["session_id"],
            "seqs": source["seqs"],
            "digest": source["digest"],
        }

        # The code changes: the anchor drifts; the agent forgets the fact, and its evidence is
        # excluded for good (F7).
        (repo / "app.py").write_text(APP.replace("8080", "9090"))
        async with mcp_session(repo) as session:
            [drifted] = (await tool(session, "memory_list"))["facts"]
            health = await tool(session, "memory_doctor")  # issue 26: the doctor over MCP
            forgot = await tool(session, "memory_forget", fact_id=remembered["fact_id"])
        assert drifted["anchors"][0]["status"] == "changed"
        assert health["drifted"] == {"count": 1, "ids": [remembered["fact_id"]]}
        assert health["by_status"]["valid"]["ids"] == [remembered["fact_id"]]
        assert forgot == {"fact_id": 1, "forgotten": True, "already_forgotten": False}
        assert (await call(editor, "lecode/facts/list"))["facts"] == []

    async def test_a_correction_cites_the_recalled_source_and_checks_the_revision(
        self, repo: Path, isolated_config_dir: Path
    ) -> None:
        # covers F2, F6 (memory_correct over MCP: the recall's source is the snapshot)
        (repo / "app.py").write_text(APP)
        allow(isolated_config_dir, "memory_remember", "memory_correct")
        async with mcp_session(repo) as session:
            fact = await tool(session, "memory_remember", path="app.py", line="PORT = 8080")
            source = (await tool(session, "memory_recall", fact_id=fact["fact_id"]))["source"]
            text = "The server listens on port 8080 (app.py)."
            arguments = {"fact_id": 1, "text": text, "source_snapshot": source}
            corrected = await tool(session, "memory_correct", expected_revision=1, **arguments)
            stale = await tool_error(session, "memory_correct", expected_revision=1, **arguments)
            forged = await tool_error(
                session,
                "memory_correct",
                expected_revision=2,
                **{**arguments, "source_snapshot": {**source, "digest": "sha256:" + "0" * 64}},
            )
            [listed] = (await tool(session, "memory_list"))["facts"]
        assert corrected == {"fact_id": 1, "revision": 2}
        assert stale["error"] == "stale_revision"
        assert forged["error"] == "source_not_valid"
        assert (listed["revision"], listed["text"]) == (2, text)

    async def test_what_the_server_cannot_verify_is_refused_naming_the_rule(
        self, repo: Path, isolated_config_dir: Path
    ) -> None:
        # covers A5 (nothing weaker than the contract), and the read tool's confinement
        (repo / "app.py").write_text(APP)
        (repo / ".env").write_text("TOKEN=abc\n")
        (repo.parent / "outside.py").write_text("PORT = 8080\n")
        (repo / "link.py").symlink_to(repo.parent / "outside.py")
        async with mcp_session(repo) as session:
            denied = await tool_error(session, "memory_remember", path="app.py", line="x")
            allow(isolated_config_dir, "memory_remember")
            absent = await tool_error(session, "memory_remember", path="app.py", line="PORT = 1")
            part = await tool_error(session, "memory_remember", path="app.py", line="PORT")
            secret = await tool_error(session, "memory_remember", path=".env", line="TOKEN=abc")
            escape = await tool_error(
                session, "memory_remember", path="../outside.py", line="PORT = 8080"
            )
            linked = await tool_error(
                session, "memory_remember", path="link.py", line="PORT = 8080"
            )
            spaced = await tool_error(session, "memory_remember", path="a b.py", line="x")
            two = await tool_error(session, "memory_remember", path="app.py", line="a\nb")
            listed = await tool(session, "memory_list")
        assert "[mcp] allow" in denied["message"]
        assert absent["message"].startswith("line: not found in app.py as one whole line")
        assert 'path contains \\"exact line\\"' not in absent["message"]
        assert 'path contains "exact line"' in absent["message"]
        assert part["error"] == "not_found"
        assert (
            secret["error"] == "permission_denied" and "[agent] secret_files" in secret["message"]
        )
        assert escape["error"] == "invalid_params"
        assert linked["error"] == "outside_workspace"
        assert spaced["message"].startswith("path: a verified fact's path has no spaces")
        assert two["message"].startswith("line: one non-blank line")
        assert listed["facts"] == []


class TestTheTeamsFacts:
    async def test_an_agent_lists_and_recalls_the_shared_facts_as_verified_here(
        self, start: Start, repo: Path
    ) -> None:
        # covers S2 (a shared fact's bundle verified before it is shown), R1, R7 (its recall,
        # paged), T1 (read-only over MCP), P5 (bad arguments name the field)
        (repo / "app.py").write_text(APP)
        git(repo, "add", ".")
        git(repo, "commit", "-q", "-m", "app")
        editor = await start(repo)
        open_doc(editor, uri(repo / "app.py"), APP)
        fact = await call(
            editor,
            "lecode/facts/rememberSelection",
            {"uri": uri(repo / "app.py"), "range": WHOLE_PORT_LINE, "text": "We serve on 8080"},
        )
        shared = await call(editor, "lecode/facts/share", {"factId": fact["factId"]})
        team_id = shared["teamId"]
        async with mcp_session(repo) as session:
            listing = await tool(session, "memory_team")
            whole = await tool(session, "memory_team", team_id=team_id)
            recalled = await tool(session, "memory_team", team_id=team_id, limit=20)
            rest = await tool(session, "memory_team", team_id=team_id, offset=20)
            bad_id = await tool_error(session, "memory_team", team_id="../../etc/passwd")
            unknown = await tool_error(session, "memory_team", team_id="0" * 20)
            stray = await tool_error(session, "memory_team", limit=5)
            (repo / shared["file"]).write_bytes(
                (repo / shared["file"]).read_bytes().replace(b"We serve on 8080", b"on 9999", 1)
            )
            [tampered] = (await tool(session, "memory_team"))["facts"]
            tampered_recall = await tool(session, "memory_team", team_id=team_id)
        [entry] = listing["facts"]
        assert (entry["team_id"], entry["status"], entry["text"], entry["local_fact_id"]) == (
            team_id, "valid", "We serve on 8080", fact["factId"],
        )  # fmt: skip
        assert (listing["total"], listing["next_offset"]) == (1, None)
        assert [(a["path"], a["status"]) for a in entry["anchors"]] == [("app.py", "current")]
        assert recalled["label"].startswith("untrusted evidence")
        assert recalled["source"] == entry["source"] and recalled["next_offset"] == 20
        assert recalled["source_text"] + rest["source_text"] == whole["source_text"]
        assert "We serve on 8080" in whole["source_text"] and rest["next_offset"] is None
        assert (bad_id["error"], bad_id["message"].split(":")[0]) == ("invalid_params", "team_id")
        assert (unknown["error"], unknown["message"].split(":")[0]) == (
            "shared_fact_not_found", "team_id",
        )  # fmt: skip
        assert stray["message"].startswith("limit:")
        assert tampered["status"] == "unverified" and "hash to its digest" in tampered["reason"]
        assert "text" not in tampered and "text" not in tampered_recall
        assert tampered_recall["status"] == "unverified"


class TestPaging:
    async def test_memory_list_pages_twenty_facts_and_recall_pages_its_source(
        self, repo: Path, isolated_config_dir: Path
    ) -> None:
        # covers R3, R8 (bounded pages over MCP)
        (repo / "many.py").write_text("".join(f"value_{n} = {n}\n" for n in range(25)))
        allow(isolated_config_dir, "memory_remember")
        async with mcp_session(repo) as session:
            for n in range(21):
                await tool(session, "memory_remember", path="many.py", line=f"value_{n} = {n}")
            first = await tool(session, "memory_list")
            second = await tool(session, "memory_list", offset=first["next_offset"])
            page = await tool(session, "memory_recall", fact_id=1, limit=100)
            rest = await tool(session, "memory_recall", fact_id=1, offset=page["next_offset"])
            # R3: a limit above 8192 is clamped, not refused (issue 41)
            clamped = await tool(session, "memory_recall", fact_id=1, limit=100_000)
            # covers issue 25 item 4: a query ranks; its syntax and length are only words
            found = await tool(session, "memory_list", query="what is value_17?")
            hostile = await tool(session, "memory_list", query='NEAR( "* -x ' + "x" * 100_000)
        assert [f["fact_id"] for f in found["facts"]][:1] == [18]
        assert found["facts"][0]["matched"] == ["value_17"]
        assert hostile["facts"] == [] and hostile["next_offset"] is None
        assert len(first["facts"]) == 20 and first["next_offset"] == 20
        assert [f["fact_id"] for f in second["facts"]] == [21] and second["next_offset"] is None
        assert len(page["source_text"]) <= 100 and page["next_offset"] == len(page["source_text"])
        assert json.loads(page["source_text"] + rest["source_text"])[2]["name"] == "read"
        assert clamped["source_text"] == page["source_text"] + rest["source_text"]


class TestBothServersAtOnce:
    async def test_the_editor_and_an_agent_write_the_same_store_at_once(
        self, start: Start, repo: Path, isolated_config_dir: Path
    ) -> None:
        # covers L5, F2 (the same store files and locks from two processes), P2
        (repo / "app.py").write_text(APP)
        allow(isolated_config_dir, "memory_write", "memory_remember")
        editor = await start(repo)
        async with mcp_session(repo) as session:

            async def from_editor(n: int) -> None:
                params = {"file": "notes/log.md", "content": f"editor {n}\n", "mode": "append"}
                await call(editor, "lecode/memory/write", params)

            async def from_agent(n: int) -> None:
                await tool(
                    session,
                    "memory_write",
                    file="notes/log.md",
                    content=f"agent {n}\n",
                    mode="append",
                )

            await asyncio.gather(
                *(from_editor(n) for n in range(15)),
                *(from_agent(n) for n in range(15)),
                tool(session, "memory_remember", path="app.py", line="def main():"),
            )
            content = (await tool(session, "memory_read", file="notes/log.md"))["content"]
        lines = sorted(content.splitlines())
        assert lines == sorted(
            [f"editor {n}" for n in range(15)] + [f"agent {n}" for n in range(15)]
        )
        [fact] = (await call(editor, "lecode/facts/list"))["facts"]
        assert fact["text"] == 'app.py contains "def main():"'

    async def test_a_subfolder_and_a_linked_worktree_serve_the_same_memory(
        self, tmp_path: Path, isolated_config_dir: Path
    ) -> None:
        # covers L2 (the same identity rules as the language server), `--project`
        repo = make_repo(tmp_path / "main")
        (repo / "src").mkdir()
        subprocess.run(
            ["git", "worktree", "add", "-q", str(tmp_path / "wt"), "-b", "wt"],
            cwd=repo,
            check=True,
            capture_output=True,
        )
        allow(isolated_config_dir, "memory_write")
        async with mcp_session(repo / "src") as session:
            await tool(session, "memory_write", file="MEMORY.md", content="shared\n", mode="append")
        async with mcp_session(tmp_path, "--project", str(tmp_path / "wt")) as session:
            read = await tool(session, "memory_read", file="MEMORY.md")
        assert read["content"] == "shared\n"


class TestInstallAndImports:
    def test_without_the_sdk_the_command_exits_2_saying_how_to_install_it(self) -> None:
        # The extra is optional: the SDK hidden from the import system as if not installed.
        code = (
            "import sys; sys.modules['mcp'] = None\n"
            "from lecode_ls.cli import main\n"
            "sys.exit(main(['mcp']))\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 2
        assert done.stderr.strip().splitlines() == [
            "lecode-ls mcp needs the MCP SDK: install lecode-ls with its mcp extra, in a clone "
            "of lecode-ls: uv tool install '.[mcp]'"
        ]

    def test_the_language_server_never_loads_the_sdk(self) -> None:
        # Everything the language server imports to serve, and nothing of the SDK among it.
        code = (
            "import sys\n"
            "from lecode_ls import cli\n"
            "from lecode_ls.server import routes, server, wiring, transport\n"
            "import lecode_ls.agent.runner, lecode_ls.tools.slash\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('mcp', 'mcp_types', 'starlette', 'uvicorn', 'lecode_ls.mcp')"
            " or m.startswith('lecode_ls.mcp')))\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
        )
        assert done.stdout.strip() == "[]"
