"""The server's log through `window/logMessage` while a client is connected.

Editors file a language server's stderr under errors (Neovim's lsp.log marks every stderr line
ERROR), so once `initialize` has arrived, log records go to the client as `window/logMessage` at
their own level, and stderr stays quiet; `--log-file` keeps receiving everything. Before
`initialize` (and after the client is gone) stderr is the log, as usual.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import TYPE_CHECKING

from lsprotocol import types

from lecode_ls.memory.secrets import log_filter

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

# The name cli.py gives its stderr handler, which this module quiets while a client listens.
STDERR_HANDLER = "lecode-stderr"


class _WithoutTraceback(logging.Formatter):
    """`name: message`, and for a record with an exception only the exception's type: a
    traceback names files of the installation, which no client is sent (the log file keeps it)."""

    def format(self, record: logging.LogRecord) -> str:
        text = f"{record.name}: {record.getMessage()}"
        if record.exc_info and record.exc_info[1] is not None:
            text += f" ({type(record.exc_info[1]).__name__})"
        return text


_LEVELS = (
    (logging.ERROR, types.MessageType.Error),
    (logging.WARNING, types.MessageType.Warning),
    (logging.INFO, types.MessageType.Info),
)


def message_type(level: int) -> types.MessageType:
    """The LSP message type of a logging level (DEBUG is `Log`)."""
    for floor, kind in _LEVELS:
        if level >= floor:
            return kind
    return types.MessageType.Log


class ClientLogHandler(logging.Handler):
    """Sends each record as `window/logMessage`, from any thread, on the server's event loop."""

    def __init__(self, ls: LanguageServer, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__()
        self.ls = ls
        self.loop = loop
        self.connected = True
        self._sending = threading.local()
        self.setFormatter(_WithoutTraceback())

    def filter(self, record: logging.LogRecord) -> bool:
        # pygls logs what it sends: a record about sending a log message would loop.
        return (
            log_filter().filter(record)  # no secret reaches the client's log (P5)
            and self.connected
            and not record.name.startswith("pygls")
            and not getattr(self._sending, "active", False)
        )

    def emit(self, record: logging.LogRecord) -> None:
        params = types.LogMessageParams(
            type=message_type(record.levelno), message=self.format(record)
        )
        try:
            if _on_loop(self.loop):
                self._send(params)
            else:
                self.loop.call_soon_threadsafe(self._send, params)
        except RuntimeError:  # the loop closed: the client is gone
            self.connected = False

    def _send(self, params: types.LogMessageParams) -> None:
        self._sending.active = True
        try:
            self.ls.window_log_message(params)
        except Exception:  # the transport closed under us; never let logging raise
            self.connected = False
        finally:
            self._sending.active = False


def _on_loop(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


class _QuietWhileConnected(logging.Filter):
    def __init__(self, handler: ClientLogHandler) -> None:
        super().__init__()
        self.handler = handler

    def filter(self, record: logging.LogRecord) -> bool:
        return not self.handler.connected


def attach(ls: LanguageServer) -> ClientLogHandler | None:
    """Route the log to the client from now on (call once `initialize` has arrived, on the loop).
    Returns the handler, or None when one is attached already."""
    root = logging.getLogger()
    if any(isinstance(handler, ClientLogHandler) for handler in root.handlers):
        return None
    handler = ClientLogHandler(ls, asyncio.get_running_loop())
    root.addHandler(handler)
    for other in root.handlers:
        if other.get_name() == STDERR_HANDLER:
            other.addFilter(_QuietWhileConnected(handler))
    return handler


def detach() -> None:
    """Back to stderr (the client is gone)."""
    root = logging.getLogger()
    for handler in [h for h in root.handlers if isinstance(h, ClientLogHandler)]:
        handler.connected = False
        root.removeHandler(handler)
