"""A server on a store it cannot write answers every read request (issue 10 item 10).

A first server writes a session, a fact and a note; a second one starts on the same config
folder made read-only for real (a read-only bind mount as root, permissions otherwise; see
tests/read_only.py) and is asked what an editor asks when it opens the Facts and Memory views.
"""

from __future__ import annotations

import os
from pathlib import Path

from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.e2e.conftest import SERVER, Start, call, make_client, uri
from tests.e2e.test_facts import imported, remember
from tests.read_only import read_only


async def test_facts_list_and_every_read_answer_from_a_read_only_store(
    start: Start, repo: Path, isolated_config_dir: Path
) -> None:
    writer = await start(repo)
    session = await imported(writer)
    await remember(writer, session, 3, "We use tabs for indentation in this repo.")
    await call(writer, "lecode/memory/write", {"file": "MEMORY.md", "content": "- tabs\n"})
    await writer.shutdown_session()

    with read_only(isolated_config_dir) as wrap:
        config = ClientServerConfig(
            server_command=wrap(SERVER), client_factory=make_client, server_env=dict(os.environ)
        )
        client = await config.start()
        assert isinstance(client, LanguageClient)
        try:
            await client.initialize_session(
                types.InitializeParams(
                    capabilities=types.ClientCapabilities(),
                    workspace_folders=[types.WorkspaceFolder(uri=uri(repo), name=repo.name)],
                )
            )
            listed = await call(client, "lecode/facts/list")
            assert [(f["factId"], f["status"]) for f in listed["facts"]] == [(1, "valid")]
            recalled = await call(client, "lecode/facts/recall", {"factId": 1})
            assert recalled["status"] == "valid"
            sessions = await call(client, "lecode/session/list")
            assert [s["sessionId"] for s in sessions["sessions"]] == [session]
            read = await call(client, "lecode/memory/read", {"file": "MEMORY.md"})
            assert read["content"] == "- tabs\n"
        finally:
            if not client.stopped and client.error is None:
                await client.shutdown_session()  # shutdown and exit: the server stops
            if not client.stopped:
                await client.stop()
