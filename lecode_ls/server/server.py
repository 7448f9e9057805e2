"""The language server: pygls glue around the memory runtimes.

`LecodeServer` holds the settings, the runtime registry, the features' rooms (rooms.py) and the
background tasks. It knows LSP (workspace folders, URIs, notifications) and no feature: what a
feature keeps, runs or answers is in its room, which the wiring adds (wiring.collect). pygls'
protocol, as lecode-ls changes it, is pygls_protocol.py; the memory itself is the pure core's.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Callable, Coroutine
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from lsprotocol.converters import get_converter
from pygls.lsp.server import LanguageServer
from pygls.protocol import JsonRPCProtocol

from lecode_ls import __version__
from lecode_ls.errors import InvalidParams, NoWorkspace, OutsideWorkspace
from lecode_ls.platform.paths import canonical, is_within, path_problem, path_to_uri, uri_to_path
from lecode_ls.server.buffers import Buffers
from lecode_ls.server.pygls_protocol import AnsweredError, LecodeProtocol

# The settings model, the runtime and the messages import pydantic: they load after `initialize`
# has been answered (routes.py), so they are imported where first used, not here. So are the
# rooms, which the wiring fills after `initialize` too (0.9 ms saved from start-up).
if TYPE_CHECKING:
    from lecode_ls.config import Settings
    from lecode_ls.runtime import Runtime, Runtimes
    from lecode_ls.server.messages import Message
    from lecode_ls.server.rooms import Rooms

log = logging.getLogger(__name__)


class LecodeServer(LanguageServer):
    def __init__(self, config_dir: Path) -> None:
        super().__init__(
            "lecode-ls",
            __version__,
            protocol_cls=LecodeProtocol,
            # Open buffers are tracked (pygls' workspace keeps them) for code anchors' drift.
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            # Custom params then arrive as plain dicts, which the boundary validates itself.
            converter_factory=get_converter,
        )
        self.config_dir = config_dir
        self.ready = False
        self.closing = False
        """Set by `shutdown`: every later request is refused (K3)."""
        self.initialization_options: Any = None
        self.notifications: frozenset[str] = frozenset()
        """The custom notifications this client asked for (routes.opted_in); no other is sent."""
        self.notification_problem: str | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    @cached_property
    def settings(self) -> Settings:
        """The defaults until `apply_settings` replaces them."""
        from lecode_ls.config import Settings

        return Settings()

    @cached_property
    def rooms(self) -> Rooms:
        """What each feature keeps, runs and listens for (rooms.py; wiring.collect adds them)."""
        from lecode_ls.server.rooms import Rooms

        return Rooms()

    @property
    def buffers(self) -> Buffers:
        """The open documents' text, as the client holds it (buffers.py)."""
        assert isinstance(self.protocol, LecodeProtocol)
        return self.protocol.buffers

    @cached_property
    def runtimes(self) -> Runtimes:
        from lecode_ls.runtime import Runtimes

        return Runtimes(self.config_dir, self.settings)

    def report_server_error(self, error: Exception, source: Any) -> None:
        if not isinstance(error, AnsweredError):  # that one was answered to its request
            super().report_server_error(error, source)

    # --- settings ----------------------------------------------------------------------------

    def apply_settings(self, editor_settings: Any) -> None:
        """Load config.toml, overlay the editor's settings, report each invalid key (K1)."""
        from lecode_ls.config import editor_section, merge, read_config_file, validate

        path = self.config_dir / "config.toml"
        from_file, problems = read_config_file(path)
        log.debug("settings: %s %s", "read" if from_file else "no settings in", path)
        editor = editor_section(editor_settings)
        # Beside the settings sections, initializationOptions may name the notifications the
        # client handles (routes.opted_in): not a setting.
        editor.pop("notifications", None)
        # What is redacted is config.toml's to say: a repository's workspace settings must not
        # be able to keep a secret in the store (`[privacy] allow`), as for `[mcp]`.
        editor.pop("privacy", None)
        if self.notification_problem is not None:
            problems = [*problems, f"initializationOptions.{self.notification_problem}"]
            self.notification_problem = None
        raw = merge(from_file, editor)
        self.settings, invalid = validate(raw)
        self.runtimes.update_settings(self.settings)
        for problem in problems + invalid:
            log.warning("settings: %s", problem)
            self.window_show_message(
                types.ShowMessageParams(
                    type=types.MessageType.Warning, message=f"lecode-ls settings: {problem}"
                )
            )

    # --- workspace ---------------------------------------------------------------------------

    def workspace_folders(self) -> list[Path]:
        """The open workspace folders, `canonical` (one spelling per folder, links resolved)."""
        uris = [folder.uri for folder in self.workspace.folders.values()]
        if not uris and self.workspace.root_uri:
            uris.append(self.workspace.root_uri)
        return [canonical(path) for uri in uris if (path := uri_to_path(uri)) is not None]

    def folder_for(self, workspace_uri: str | None) -> Path:
        """The resolved folder a request is about (P2): its workspaceUri, or the first folder.

        A file URI means its folder. Any URI must lie inside an open workspace folder, so a
        client cannot make the server create or read stores for arbitrary paths.
        """
        folders = self.workspace_folders()
        if workspace_uri is None:
            if not folders:
                raise NoWorkspace("no workspace folder is open; pass workspaceUri")
            return folders[0]
        path_text = uri_to_path(workspace_uri)
        if path_text is None:
            raise InvalidParams(
                f"workspaceUri: {workspace_uri!r} is not a file:// URI of this machine",
                field="workspaceUri",
            )
        if (problem := path_problem(path_text)) is not None:
            raise InvalidParams(f"workspaceUri: the URI's path {problem}", field="workspaceUri")
        path = canonical(path_text)
        if folders and not any(is_within(path, folder) for folder in folders):
            raise OutsideWorkspace(
                "workspaceUri: the URI is outside every open workspace folder",
                field="workspaceUri",
            )
        return path.parent if path.is_file() else path

    async def runtime(self, workspace_uri: str | None) -> tuple[Runtime, str]:
        """The runtime of the request's project and the folder URI it was reached through."""
        folder = self.folder_for(workspace_uri)
        # Creating a runtime touches the disk; finding an existing one is a dict lookup.
        runtime = self.runtimes.existing(folder)
        if runtime is None:
            runtime = await asyncio.to_thread(self.runtimes.for_folder, folder)
            log.info("serving %s: project %s", folder, runtime.project.root)
            await self.rooms.opened(runtime)
        return runtime, path_to_uri(folder)

    async def forget_closed_folders(self) -> None:
        """Close the runtimes no open folder uses any more: their turns and compactions are
        cancelled first (recorded as cancelled), then their stores closed."""
        gone = self.runtimes.release(self.workspace_folders())
        await self.rooms.closed({str(runtime.project.root) for runtime in gone})
        for runtime in gone:
            runtime.close()
            log.info("closed the memory runtime of %s", runtime.project.root)

    # --- housekeeping ----------------------------------------------------------------------

    async def remove_debris(self, interval: float | None = None) -> None:
        """Every `interval` seconds (default: files.STALE_TEMP_SECONDS), remove from every open
        store the temp files of writes a kill interrupted (Runtime.remove_debris)."""
        from lecode_ls.memory.files import STALE_TEMP_SECONDS

        while True:
            await asyncio.sleep(STALE_TEMP_SECONDS if interval is None else interval)
            for runtime in self.runtimes.all():
                await asyncio.to_thread(runtime.remove_debris, due_only=True)

    # --- messages and tasks ------------------------------------------------------------------

    def send(self, method: str, message: Message) -> None:
        """Send a server-to-client notification of the protocol, if the client asked for it
        (`initializationOptions.notifications`)."""
        if method not in self.notifications:
            return
        # exclude_unset: a field the sender did not set is absent; one set to None is null.
        self.protocol.notify(method, message.model_dump(mode="json", exclude_unset=True))

    def after_reply(self, then: Callable[[], None]) -> None:
        """Run `then` once the response to the request being handled has been written (at once
        outside a request). A question a command asks must reach the client after the command's
        response: eglot shows the question while it waits, and would time the command out."""
        assert isinstance(self.protocol, LecodeProtocol)
        msg_id = self.protocol._ctx_msg_id.get(None)
        if msg_id is None:
            then()
        else:
            self.protocol.after_reply[msg_id] = then

    def progress_begin(self, title: str) -> str | None:
        """Start LSP work-done progress (`$/progress`) if the client supports it; its token."""
        window = self.client_capabilities.window
        if window is None or not window.work_done_progress:
            return None
        token = f"lecode-{secrets.token_hex(6)}"
        self.work_done_progress.create(token)
        self.work_done_progress.begin(token, types.WorkDoneProgressBegin(title=title))
        return token

    def progress_end(self, token: str | None, message: str) -> None:
        if token is not None:
            self.work_done_progress.end(token, types.WorkDoneProgressEnd(message=message))

    def run_task(self, coro: Coroutine[Any, Any, Any], name: str) -> asyncio.Task[Any]:
        """Start a background task that is held, named, logged on failure and cancelled on close."""
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self._tasks.add(task)

        def done(task: asyncio.Task[Any]) -> None:
            self._tasks.discard(task)
            if not task.cancelled() and (exc := task.exception()) is not None:
                log.error("background task %s failed", name, exc_info=exc)

        task.add_done_callback(done)
        return task

    # --- serving --------------------------------------------------------------------------------

    def serve(self, connect: Callable[[JsonRPCProtocol], Coroutine[Any, Any, None]]) -> int:
        """Serve one client over the transport `connect` opens; returns the process exit code.

        The client's `exit` ends the process with 0 after `shutdown` and 1 without (LSP); the
        client hanging up ends it with 0. A transport that cannot be opened is logged as one line.
        """
        try:
            asyncio.run(connect(self.protocol))
        except SystemExit as exc:  # pygls' `exit` handler
            return exc.code if isinstance(exc.code, int) else 1
        except KeyboardInterrupt:
            return 130
        except BrokenPipeError:
            log.info("the client closed the connection")
        except (OSError, ValueError) as exc:
            log.error("cannot serve: %s", exc)
            return 2
        finally:
            self.shutdown()  # type: ignore[no-untyped-call]
        return 0

    async def stop_work(self) -> None:
        """Stop all work and close everything on the LSP `shutdown` request (K3): refuse later
        requests, cancel the running turns and compactions as `$/cancelRequest` would (each
        records its cancellation), close the provider clients, cancel background tasks and close
        every runtime's stores. (Not pygls' `shutdown`, which stops the transport at exit.)"""
        self.closing = True
        await self.rooms.shutdown()  # every open question is a no; turns cancelled, clients closed
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)
        self.close()

    def close(self) -> None:
        """Close every runtime's stores and refuse later requests. Also what runs when the
        event loop has ended without a `shutdown` (exit, or the client went away): the turns
        ended with the loop. Idempotent."""
        self.closing = True
        if "runtimes" in self.__dict__:  # created on first use
            self.runtimes.close_all()
