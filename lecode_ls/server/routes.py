"""What the server registers before it answers `initialize`: names, not handlers.

Answering `initialize` needs only the names of the custom methods and the command (the command
goes into the capabilities). The handlers, their pydantic models and the memory runtime cost
~120 ms to import, as much again as pygls itself, so they are imported when `initialized`
arrives (`load`), or by the first request if a client sends one before that. Everything a request
meets after that is in wiring.py.
"""

from __future__ import annotations

import importlib
import logging
import platform
from types import ModuleType
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from lecode_ls import __version__
from lecode_ls.server import client_log

if TYPE_CHECKING:
    from lecode_ls.server.server import LecodeServer

REQUESTS = (
    "lecode/ping",
    "lecode/project/info",
    "lecode/memory/list",
    "lecode/memory/read",
    "lecode/memory/write",
    "lecode/memory/edit",
    "lecode/memory/search",
    "lecode/agents/read",
    "lecode/session/list",
    "lecode/session/import",
    "lecode/session/read",
    "lecode/session/snapshot",
    "lecode/session/new",
    "lecode/session/rename",
    "lecode/session/undo",
    "lecode/session/redo",
    "lecode/session/clear",
    "lecode/session/delete",
    "lecode/facts/list",
    "lecode/facts/get",
    "lecode/facts/remember",
    "lecode/facts/recall",
    "lecode/facts/correct",
    "lecode/facts/forget",
    "lecode/facts/dismissProposal",
    "lecode/facts/acceptProposal",
    "lecode/facts/pin",
    "lecode/facts/unpin",
    "lecode/facts/retire",
    "lecode/facts/restore",
    "lecode/memory/doctor",
    "lecode/memory/scanSecrets",
    "lecode/memory/scrubSecrets",
    "lecode/facts/share",
    "lecode/facts/unshare",
    "lecode/facts/team",
    "lecode/facts/teamRecall",
    "lecode/facts/teamForget",
    "lecode/facts/teamCorrect",
    "lecode/facts/rememberSelection",
    "lecode/facts/correctSelection",
    "lecode/facts/reanchor",
    "lecode/chat/send",
    "lecode/session/compact",
    "lecode/chat/history",
    "lecode/command",
    "lecode/provider/info",
)
COMMANDS = (
    "lecode.memory",
    "lecode.anchor.rememberSelection",
    "lecode.anchor.correctSelection",
    "lecode.anchor.reanchor",
    "lecode.anchor.forget",
    "lecode.anchor.show",
    "lecode.facts.acceptProposal",
    "lecode.facts.retire",
    "lecode.facts.restore",
    "lecode.session.delete",
    "lecode.answer",
    "lecode.memory.scanSecrets",
    "lecode.memory.scrubSecrets",
    "lecode.facts.share",
    "lecode.facts.unshare",
)
NOTIFICATIONS = (
    "lecode/memory/didChange",
    "lecode/facts/didChange",
    "lecode/chat/delta",
    "lecode/anchors/didChange",
    "lecode/agents/didFollow",
)
"""The custom notifications the server sends, each only to a client that names it in
`initializationOptions.notifications` (lsp-mode warns about every notification it does not
know; eglot logs them)."""
# Standard features of the code anchors (server/anchors/lsp.py), with the options the capabilities need.
STANDARD: tuple[tuple[str, str, Any], ...] = (
    (types.TEXT_DOCUMENT_DID_OPEN, "didOpen", None),
    (types.TEXT_DOCUMENT_DID_CHANGE, "didChange", None),
    (types.TEXT_DOCUMENT_DID_CLOSE, "didClose", None),
    (types.TEXT_DOCUMENT_CODE_LENS, "codeLens", types.CodeLensOptions(resolve_provider=False)),
    (types.TEXT_DOCUMENT_HOVER, "hover", None),
    (
        types.TEXT_DOCUMENT_CODE_ACTION,
        "codeAction",
        types.CodeActionOptions(code_action_kinds=["quickfix", "refactor.lecode.remember"]),
    ),
    (types.TEXT_DOCUMENT_INLAY_HINT, "inlayHint", types.InlayHintOptions(resolve_provider=False)),
)

log = logging.getLogger(__name__)


def load() -> ModuleType:
    """The boundary module, imported on first use (Python caches it after that)."""
    return importlib.import_module("lecode_ls.server.wiring")


def register(ls: LecodeServer) -> None:
    def route(name: str) -> Any:
        async def handle(*args: Any) -> Any:
            return await load().dispatch(ls, name, args)

        return handle

    for name in REQUESTS:
        ls.feature(name)(route(name))
    for name in COMMANDS:
        ls.command(name)(route(name))

    def standard(name: str) -> Any:
        async def handle(params: Any) -> Any:
            return await load().standard(ls, name, params)

        return handle

    for method, name, options in STANDARD:
        ls.feature(method, options)(standard(name))

    @ls.feature(types.INITIALIZE)
    def on_initialize(params: types.InitializeParams) -> None:
        ls.initialization_options = params.initialization_options
        ls.notifications, ls.notification_problem = opted_in(params.initialization_options)
        ls.ready = True
        # From now on the log reaches the editor as window/logMessage, not stderr.
        client_log.attach(ls)
        client = params.client_info
        log.info(
            "lecode-ls %s (Python %s), memory under %s, client %s",
            __version__,
            platform.python_version(),
            ls.config_dir,
            f"{client.name} {client.version or ''}".strip() if client else "unnamed",
        )

    # The client sends `initialized` before any request: the place to load the handlers and the
    # settings without delaying the `initialize` result.
    @ls.feature(types.INITIALIZED)
    def on_initialized(params: types.InitializedParams) -> None:
        load().attach(ls)  # the features' rooms, and the background tasks
        ls.apply_settings(ls.initialization_options)

    @ls.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def on_configuration(params: types.DidChangeConfigurationParams) -> None:
        ls.apply_settings(params.settings)

    @ls.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    async def on_folders(params: types.DidChangeWorkspaceFoldersParams) -> None:
        await ls.forget_closed_folders()

    @ls.feature(types.SHUTDOWN)
    async def on_shutdown(params: None) -> None:
        await ls.stop_work()
        client_log.detach()


def opted_in(options: Any) -> tuple[frozenset[str], str | None]:
    """The custom notifications a client asked for in `initializationOptions.notifications` (a
    list of their names), and what was wrong with that list, if anything (then: none)."""
    if not isinstance(options, dict) or "notifications" not in options:
        return frozenset(), None
    names = options["notifications"]
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        return frozenset(), "notifications: expected a list of notification names"
    unknown = sorted(set(names) - set(NOTIFICATIONS))
    if unknown:
        return frozenset(), (
            f"notifications: {', '.join(unknown)[:200]} is not a notification of lecode-ls "
            f"(they are {', '.join(NOTIFICATIONS)})"
        )
    return frozenset(names), None


def registered_methods(ls: LecodeServer) -> set[str]:
    """The custom methods and commands this server actually serves (for the protocol test)."""
    fm = ls.protocol.fm
    return {n for n in fm.features if n.startswith("lecode/")} | set(fm.commands)
