"""What a Helix 25.x user gets, driving the real server over stdio with the client capabilities
Helix 25.07 sends (helix-lsp/src/client.rs: no `window.showMessage`, which it answers "Method
not found"; no CodeLens; Markdown hovers; inlay hints without refresh). Helix itself cannot be
installed here (README, Helix): this is the server's side of the README's Helix section.

# covers issue 24, items 1 and 2 (capabilities respected, drift without CodeLens)
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.e2e.conftest import Start, call, uri
from tests.e2e.test_anchors import (
    PORT_LINE,
    SOURCE,
    diagnostics_until,
    edit,
    fix_code_action_parsing,
    open_doc,
)
from tests.e2e.test_questions import NoPrompt, actions_in, fact_ids, run_action, shown_next

HELIX_25 = types.ClientCapabilities(
    workspace=types.WorkspaceClientCapabilities(
        inlay_hint=types.InlayHintWorkspaceClientCapabilities(refresh_support=False),
        execute_command=types.ExecuteCommandClientCapabilities(dynamic_registration=False),
    ),
    text_document=types.TextDocumentClientCapabilities(
        hover=types.HoverClientCapabilities(content_format=[types.MarkupKind.Markdown]),
        code_action=types.CodeActionClientCapabilities(
            code_action_literal_support=types.ClientCodeActionLiteralOptions(
                code_action_kind=types.ClientCodeActionKindOptions(value_set=["", "quickfix"])
            )
        ),
        inlay_hint=types.InlayHintClientCapabilities(dynamic_registration=False),
        publish_diagnostics=types.PublishDiagnosticsClientCapabilities(version_support=True),
    ),
    window=types.WindowClientCapabilities(work_done_progress=True),
)
WITH_LENSES = types.ClientCapabilities(
    text_document=types.TextDocumentClientCapabilities(
        code_lens=types.CodeLensClientCapabilities(),
        inlay_hint=types.InlayHintClientCapabilities(),
    )
)
WHOLE_FILE = types.Range(types.Position(0, 0), types.Position(7, 0))


async def hints(client: LanguageClient, doc: str) -> list[tuple[int, int, Any]]:
    found = await client.text_document_inlay_hint_async(
        types.InlayHintParams(text_document=types.TextDocumentIdentifier(doc), range=WHOLE_FILE)
    )
    return [(h.position.line, h.position.character, h.label) for h in found or []]


@pytest.fixture
def doc(repo: Path) -> str:
    (repo / "src").mkdir()
    app = repo / "src" / "app.py"
    app.write_text(SOURCE)
    return uri(app)


async def remembered_with_a_code_action(client: LanguageClient, doc: str) -> None:
    """`x` on line 3, then `space a`: "Remember selection as fact"."""
    fix_code_action_parsing(client)
    found = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(doc),
            range=types.Range(types.Position(PORT_LINE, 0), types.Position(PORT_LINE + 1, 0)),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    [remember] = [a for a in found or [] if a.title == "Remember selection as fact"]
    assert isinstance(remember, types.CodeAction)
    await run_action(client, remember)


class TestHelix25:
    async def test_drift_forget_and_confirm_without_codelens_or_prompts(
        self, start: Start, repo: Path, doc: str
    ) -> None:
        client = await start(repo, capabilities=HELIX_25, notifications=())
        fix_code_action_parsing(client)
        helix = NoPrompt(client)
        open_doc(client, doc, SOURCE)
        await remembered_with_a_code_action(client, doc)
        wording = 'src/app.py contains "PORT = 8080"'
        # The inlay hint stands in for the CodeLens Helix does not have.
        assert await hints(client, doc) == [(PORT_LINE, 11, f"fact #1 r1: {wording}")]

        edit(client, doc, 2, PORT_LINE, "PORT = 8080", "PORT = 9090")
        [warning] = await diagnostics_until(client, doc, lambda found: len(found) == 1)
        assert warning.message.endswith(
            "Code actions: Correct fact #1…, Forget fact #1, Re-anchor fact #1 here"
        )
        assert await hints(client, doc) == [
            (PORT_LINE, 11, f"fact #1 r1: {wording} (changed: see its code actions)")
        ]
        hover = await client.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(doc), types.Position(PORT_LINE, 0))
        )
        assert hover is not None and isinstance(hover.contents, types.MarkupContent)
        assert hover.contents.kind == types.MarkupKind.Markdown
        assert "code actions: Correct fact #1…" in hover.contents.value

        on_line = await actions_in(client, doc, PORT_LINE)
        [forget] = [a for a in on_line if a.title == "Forget fact #1"]
        announced = shown_next(client)
        await run_action(client, forget)
        assert "Forget fact #1 (confirm)" in (await asyncio.wait_for(announced, 10)).message
        assert await fact_ids(client) == [1]
        confirm = (await actions_in(client, doc))[0]
        assert confirm.title == "Forget fact #1 (confirm)"
        await run_action(client, confirm)
        await diagnostics_until(client, doc, lambda found: found == [])
        assert await fact_ids(client) == []
        assert helix.requests == 0


class TestCapabilitiesRespected:
    async def test_a_client_with_codelens_gets_no_inlay_hints(
        self, start: Start, repo: Path, doc: str
    ) -> None:
        client = await start(repo, capabilities=WITH_LENSES)
        open_doc(client, doc, SOURCE)
        await call(
            client,
            "lecode/facts/rememberSelection",
            {
                "uri": doc,
                "range": {"start": {"line": 2, "character": 0}, "end": {"line": 3, "character": 0}},
            },
        )
        assert await hints(client, doc) == []  # the CodeLens says it: nothing shown twice

    async def test_no_custom_notification_reaches_a_client_that_asked_for_none(
        self, start: Start, repo: Path, doc: str
    ) -> None:
        client = await start(repo, capabilities=HELIX_25, notifications=())
        received: list[str] = []
        for method in (
            "lecode/facts/didChange",
            "lecode/anchors/didChange",
            "lecode/memory/didChange",
        ):

            @client.feature(method)
            def on_news(params: Any, method: str = method) -> None:
                received.append(method)

        open_doc(client, doc, SOURCE)
        await remembered_with_a_code_action(client, doc)
        await call(client, "lecode/memory/write", {"file": "MEMORY.md", "content": "x\n"})
        edit(client, doc, 2, PORT_LINE, "PORT = 8080", "PORT = 9090")
        await diagnostics_until(client, doc, lambda found: len(found) == 1)
        assert received == []

    async def test_a_bad_notification_list_is_reported_and_sends_none(
        self, start: Start, repo: Path
    ) -> None:
        client = await start(repo, notifications=("lecode/bogus",))
        await call(client, "lecode/ping")
        [message] = [m.message for m in client.messages if "notifications" in m.message]
        assert message.startswith(
            "lecode-ls settings: initializationOptions.notifications: lecode/bogus is not a "
            "notification of lecode-ls"
        )
