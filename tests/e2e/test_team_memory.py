"""Team memory through Git (issue 29, its "done when"), black-box over LSP: two clones of one
repository with a bare repository as the remote, two config dirs (two people), two real servers,
and the loopback OpenAI server as the model, so every prompt is read as the model gets it.

# covers S1-S3 (evidence that travels with its digest), I1-I4 (team facts injected under the
# caps, labelled), F7 (forgotten here for good), L2 (each worktree reads its own branch's)
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from pytest_lsp import LanguageClient

from tests.e2e.chat import KEY, new_session
from tests.e2e.conftest import Start, call, git, uri
from tests.e2e.facts import error_of
from tests.e2e.test_anchors import (
    PORT_LINE,
    SOURCE,
    WHOLE_PORT_LINE,
    diagnostics_until,
    edit,
    open_doc,
)
from tests.fakes.openai_server import FakeOpenAI, Stream, text_chunks

WAIT = 20.0  # a hang guard: the poll reads a pull within about a second


def publish(clone: Path, message: str, branch: str = "HEAD:main") -> None:
    """Commit what changed under .lecode and push it, as the person would."""
    git(clone, "add", "-A", ".lecode")
    git(clone, "commit", "-q", "-m", message)
    git(clone, "push", "-q", "origin", branch)


def clones(tmp_path: Path) -> tuple[Path, Path]:
    """A bare remote and two clones of it: Ada's (a) and Bo's (b), each with its own name."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    a = tmp_path / "a"
    git(tmp_path, "clone", "-q", str(remote), str(a))
    (a / "src").mkdir()
    (a / "src" / "app.py").write_text(SOURCE)
    git(a, "add", ".")
    git(a, "commit", "-q", "-m", "init")
    git(a, "push", "-q", "origin", "HEAD:main")
    b = tmp_path / "b"
    git(tmp_path, "clone", "-q", str(remote), str(b))
    git(a, "config", "user.name", "Ada")
    git(b, "config", "user.name", "Bo")
    return a, b


async def person(
    start: Start, tmp_path: Path, name: str, server: FakeOpenAI, *folders: Path
) -> LanguageClient:
    config = tmp_path / f"config-{name}"
    config.mkdir()
    options = {
        "provider": {"base_url": server.base_url, "model": "gpt-4o", "api_key_env": "LECODE_KEY"},
    }
    return await start(
        *folders, options=options, env={"LECODE_CONFIG_DIR": str(config), "LECODE_KEY": KEY}
    )


async def team(client: LanguageClient, folder: Path) -> list[dict[str, Any]]:
    return (await call(client, "lecode/facts/team", {"workspaceUri": uri(folder)}))["facts"]


async def until_team(client: LanguageClient, folder: Path, done: Any) -> list[dict[str, Any]]:
    """The team listing once `done(listing)` holds, waiting on `lecode/facts/didChange` (sent
    when a poll finds the listing changed) between looks."""
    async with asyncio.timeout(WAIT):
        while True:
            changed = client.protocol.wait_for_notification_async("lecode/facts/didChange")
            listing = await team(client, folder)
            if done(listing):
                return listing
            await changed


async def prompt(client: LanguageClient, server: FakeOpenAI, session: str) -> str:
    """The memory of the next provider request: the system prompt (the session's stable part)
    and the new user message (the turn's own block, where a fact that changed since comes)."""
    server.push(Stream(text_chunks("ok")))
    await call(client, "lecode/chat/send", {"sessionId": session, "text": "what do we know?"})
    messages = server.bodies[-1]["messages"]
    return f"{messages[0]['content']}\n{messages[-1]['content']}"


def team_lines(system: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in system.splitlines() if line.startswith('{"team_id"')]


async def share_the_port(
    client: LanguageClient, clone: Path
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The person remembers app.py's port line as "We serve on 8080" and shares it: the fact
    and the share's answer."""
    open_doc(client, uri(clone / "src" / "app.py"), SOURCE)
    fact = await call(
        client,
        "lecode/facts/rememberSelection",
        {"uri": uri(clone / "src" / "app.py"), "range": WHOLE_PORT_LINE,
         "text": "We serve on 8080"},
    )  # fmt: skip
    shared = await call(client, "lecode/facts/share", {"factId": fact["factId"]})
    return fact, shared


async def test_a_fact_travels_with_its_evidence_and_is_checked_on_the_other_machine(
    start: Start, tmp_path: Path
) -> None:
    a, b = clones(tmp_path)
    async with FakeOpenAI() as server:
        ada = await person(start, tmp_path, "a", server, a)
        bo = await person(start, tmp_path, "b", server, b)
        bo_session = await new_session(bo)
        assert await team(bo, b) == []

        # Ada remembers the port line, shares it, commits and pushes.
        fact, shared = await share_the_port(ada, a)
        assert shared["created"] is True and shared["file"].startswith(".lecode/facts/")
        [own] = (await call(ada, "lecode/facts/list"))["facts"]
        assert own["shared"]["teamId"] == shared["teamId"] and own["shared"]["sharedBy"] == "Ada"
        [mine] = await team(ada, a)
        assert mine["localFactId"] == fact["factId"]  # one fact, not two
        assert team_lines(await prompt(ada, server, await new_session(ada))) == []
        publish(a, "share the port")

        # Bo pulls: with no restart the fact is listed, valid, injected as team evidence.
        git(b, "pull", "-q", "origin", "main")
        [seen] = await until_team(bo, b, lambda facts: len(facts) == 1)
        assert (seen["teamId"], seen["status"], seen["sharedBy"]) == (
            shared["teamId"], "valid", "Ada",
        )  # fmt: skip
        assert seen.get("localFactId") is None
        [line] = team_lines(await prompt(bo, server, bo_session))
        assert (line["team_id"], line["text"], line["anchors"][0]["status"]) == (
            shared["teamId"], "We serve on 8080", "current",
        )  # fmt: skip
        recalled = await call(bo, "lecode/facts/teamRecall", {"teamId": shared["teamId"]})
        assert recalled["status"] == "valid" and "PORT = 8080" in recalled["sourceText"]
        assert recalled["source"]["digest"] == seen["source"]["digest"]

        # Bo edits the anchored line in his editor: the fact is flagged, in the listing and
        # in the next prompt.
        doc = uri(b / "src" / "app.py")
        open_doc(bo, doc, SOURCE)
        edit(bo, doc, 2, PORT_LINE, "PORT = 8080", "PORT = 9090")
        [flagged] = await team(bo, b)
        assert (flagged["anchors"][0]["status"], flagged["anchors"][0]["checkedAgainst"]) == (
            "changed", "buffer",
        )  # fmt: skip
        [line] = team_lines(await prompt(bo, server, bo_session))
        assert line["drift"] == "changed"
        [warning] = await diagnostics_until(bo, doc, lambda found: len(found) == 1)
        assert warning.code == "team-fact-changed" and shared["teamId"] in warning.message
        assert warning.range.start.line == PORT_LINE
        edit(bo, doc, 3, PORT_LINE, "PORT = 9090", "PORT = 8080")
        await diagnostics_until(bo, doc, lambda found: found == [])

        # A tampered bundle is unverified and never injected.
        path = b / shared["file"]
        good = path.read_bytes()
        path.write_bytes(good.replace(b"We serve on 8080", b"We serve on 9999", 1))
        [tampered] = await team(bo, b)
        assert tampered["status"] == "unverified" and "hash to its digest" in tampered["reason"]
        assert team_lines(await prompt(bo, server, bo_session)) == []
        path.write_bytes(good)

        # Ada stops sharing and pushes; after Bo pulls it is gone from his prompt.
        await call(ada, "lecode/facts/unshare", {"factId": fact["factId"]})
        publish(a, "unshare the port")
        git(b, "pull", "-q", "origin", "main")
        await until_team(bo, b, lambda facts: facts == [])
        assert team_lines(await prompt(bo, server, bo_session)) == []
        [still] = (await call(ada, "lecode/facts/list"))["facts"]
        assert still["status"] == "valid" and "shared" not in still  # Ada's own fact stays


async def test_a_fact_shared_on_a_branch_is_seen_in_its_worktree_and_on_main_after_the_merge(
    start: Start, tmp_path: Path
) -> None:
    a, b = clones(tmp_path)
    async with FakeOpenAI() as server:
        ada = await person(start, tmp_path, "a", server, a)
        git(a, "switch", "-q", "-c", "feature")
        open_doc(ada, uri(a / "src" / "app.py"), SOURCE)
        fact = await call(
            ada,
            "lecode/facts/rememberSelection",
            {"uri": uri(a / "src" / "app.py"), "range": WHOLE_PORT_LINE, "text": "Port is 8080"},
        )
        shared = await call(ada, "lecode/facts/share", {"factId": fact["factId"]})
        publish(a, "share on the branch", "feature")

        git(b, "fetch", "-q", "origin")
        worktree = tmp_path / "b-feature"
        git(b, "worktree", "add", "-q", str(worktree), "-b", "feature", "origin/feature")
        bo = await person(start, tmp_path, "b", server, b, worktree)
        [on_branch] = await team(bo, worktree)
        assert (on_branch["teamId"], on_branch["status"]) == (shared["teamId"], "valid")
        assert await team(bo, b) == []  # main has not merged it

        git(b, "merge", "-q", "--ff-only", "origin/feature")
        [merged] = await until_team(bo, b, lambda facts: len(facts) == 1)
        assert merged["teamId"] == shared["teamId"]


async def test_forgetting_a_team_fact_here_hides_it_for_good_and_leaves_the_file(
    start: Start, tmp_path: Path
) -> None:
    # covers F7: the evidence is excluded (content-free); the team's file is untouched
    a, b = clones(tmp_path)
    async with FakeOpenAI() as server:
        ada = await person(start, tmp_path, "a", server, a)
        session = await new_session(ada)
        server.push(Stream(text_chunks("noted")))
        await call(ada, "lecode/chat/send", {"sessionId": session, "text": "We deploy on Fridays"})
        fact = await call(
            ada,
            "lecode/facts/remember",
            {"text": "We deploy on Fridays", "source": await snapshot(ada, session, 1)},
        )
        shared = await call(ada, "lecode/facts/share", {"factId": fact["factId"]})
        mine = await error_of(call(ada, "lecode/facts/teamForget", {"teamId": shared["teamId"]}))
        assert mine.data["code"] == "invalid_source"  # her own session: she forgets her fact
        publish(a, "share")
        git(b, "pull", "-q", "origin", "main")

        bo = await person(start, tmp_path, "b", server, b)
        forgot = await call(bo, "lecode/facts/teamForget", {"teamId": shared["teamId"]})
        assert forgot["forgotten"] is True and (b / forgot["file"]).is_file()
        [hidden] = await team(bo, b)
        assert hidden["status"] == "hidden"
        assert team_lines(await prompt(bo, server, await new_session(bo))) == []
        again = await call(bo, "lecode/facts/teamForget", {"teamId": shared["teamId"]})
        assert again["forgotten"] is False

        exc = await error_of(call(bo, "lecode/facts/share", {"factId": 99}))
        assert exc.data["code"] == "fact_not_found"
        exc = await error_of(call(bo, "lecode/facts/teamRecall", {"teamId": "../../etc"}))
        assert exc.data["field"] == "teamId"


async def snapshot(client: LanguageClient, session: str, seq: int) -> dict[str, Any]:
    found = await call(
        client, "lecode/session/snapshot", {"sessionId": session, "startSeq": seq, "endSeq": seq}
    )
    return dict(found)


async def said(client: LanguageClient, server: FakeOpenAI, text: str) -> dict[str, Any]:
    """A new session where the person said `text`; the evidence of that message."""
    session = await new_session(client)
    server.push(Stream(text_chunks("noted")))
    await call(client, "lecode/chat/send", {"sessionId": session, "text": text})
    return await snapshot(client, session, 1)


async def test_corrections_become_revisions_of_the_shared_file(
    start: Start, tmp_path: Path
) -> None:
    a, b = clones(tmp_path)
    async with FakeOpenAI() as server:
        ada = await person(start, tmp_path, "a", server, a)
        first = await said(ada, server, "Releases are cut on Mondays")
        fact = await call(
            ada, "lecode/facts/remember", {"text": "Releases are cut on Mondays", "source": first}
        )
        shared = await call(ada, "lecode/facts/share", {"factId": fact["factId"]})
        # Ada corrects her own shared fact: its file gets the new revision.
        second = await said(ada, server, "Releases are cut on Tuesdays now")
        await call(
            ada,
            "lecode/facts/correct",
            {
                "factId": fact["factId"], "expectedRevision": 1,
                "text": "Releases are cut on Tuesdays", "source": second,
            },
        )  # fmt: skip
        value = json.loads((a / shared["file"]).read_text())
        assert (value["revision"], value["text"]) == (2, "Releases are cut on Tuesdays")
        assert [entry["text"] for entry in value["history"]] == ["Releases are cut on Mondays"]
        [mine] = await team(ada, a)
        assert mine["localFactId"] == fact["factId"]
        publish(a, "share")

        # Bo corrects the team's fact with his own evidence: revision 3, his fact too.
        git(b, "pull", "-q", "origin", "main")
        bo = await person(start, tmp_path, "b", server, b)
        third = await said(bo, server, "Releases moved to Wednesdays")
        stale = await error_of(
            call(
                bo,
                "lecode/facts/teamCorrect",
                {
                    "teamId": shared["teamId"],
                    "expectedRevision": 1,
                    "text": "Releases are cut on Wednesdays",
                    "source": third,
                },
            )
        )
        assert stale.data["code"] == "stale_revision"
        done = await call(
            bo,
            "lecode/facts/teamCorrect",
            {"teamId": shared["teamId"], "expectedRevision": 2,
             "text": "Releases are cut on Wednesdays", "source": third},
        )  # fmt: skip
        assert (done["teamId"], done["revision"]) == (shared["teamId"], 3)
        [corrected] = await team(bo, b)
        assert (corrected["status"], corrected["revision"], corrected["sharedBy"]) == (
            "valid", 3, "Bo",
        )  # fmt: skip
        assert corrected["localFactId"] == done["factId"]
        value = json.loads((b / shared["file"]).read_text())
        assert [entry["revision"] for entry in value["history"]] == [1, 2]


async def test_a_fact_pulled_between_turns_only_appends_and_is_ranked_with_ones_own(
    start: Start, tmp_path: Path
) -> None:
    # covers I3 (issue 40, item 3: one selection, ranking, renderer and layout for one's own
    # and the team's facts): a teammate's fact that arrives between two turns comes beside
    # the next message, ranked for it like one's own; the request before is kept byte for byte.
    a, b = clones(tmp_path)
    async with FakeOpenAI() as server:
        ada = await person(start, tmp_path, "a", server, a)
        bo = await person(start, tmp_path, "b", server, b)
        session = await new_session(bo)
        await prompt(bo, server, session)
        before = server.bodies[-1]["messages"]
        assert team_lines(json.dumps(before)) == []

        _, shared = await share_the_port(ada, a)
        publish(a, "share the port")
        git(b, "pull", "-q", "origin", "main")
        await until_team(bo, b, lambda facts: len(facts) == 1)

        server.push(Stream(text_chunks("ok")))
        await call(bo, "lecode/chat/send", {"sessionId": session, "text": "where do we serve?"})
        after = server.bodies[-1]["messages"]
        assert after[: len(before)] == before  # the provider's cache holds all it read
        [line] = team_lines(after[-1]["content"])
        assert (line["team_id"], line["reason"]) == (shared["teamId"], "matched: serve")
        # The same renderer as one's own facts: who, why, the source, the text, the anchors.
        assert list(line) == [
            "team_id", "file", "revision", "support", "reason", "source", "text", "anchors",
        ]  # fmt: skip
