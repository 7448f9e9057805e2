"""pygls' protocol, changed where it would leave a client waiting or tell it too much.

pygls sends no response to a request whose params do not decode, keeps its own copy of open
documents split as Python splits lines, answers an exception with its traceback, and fails on an
answer nobody waits for. `LecodeProtocol` overrides each of those; the server (server.py) is built
with it. It knows no feature: the open documents' text it keeps (buffers.py) is read by whoever
needs it through `LecodeServer.buffers`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from functools import cached_property
from typing import Any
from urllib.parse import unquote

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

from lecode_ls.server.buffers import Buffers, Edit, Position

log = logging.getLogger(__name__)


def _range(rng: types.Range) -> tuple[Position, Position]:
    return ((rng.start.line, rng.start.character), (rng.end.line, rng.end.character))


class AnsweredError(JsonRpcInvalidParams):
    """A request whose params did not decode; its error response has already been sent."""


class LecodeProtocol(LanguageServerProtocol):
    """pygls' protocol, made to answer every request.

    pygls sends no response when a request's envelope does not decode (its params do not match an
    LSP type, or `params` is absent, which JSON-RPC allows): the client would wait forever.
    """

    shutdown_requested = False
    """Set by the transport when `shutdown` arrives: every later request is refused there."""

    @cached_property
    def buffers(self) -> Buffers:
        """The open documents' text, for code anchors' drift only (buffers.py: LSP's lines,
        within bounds)."""
        return Buffers()

    def _user_handler(self, method: str, params: Any) -> Iterator[Any]:
        if (handler := self.fm.features.get(method)) is not None:
            yield handler, (params,), None

    # pygls' own document handlers are replaced: its copy splits lines as Python does, not as
    # LSP does, and re-splits the whole document for every edit of a didChange.
    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams) -> Any:
        document = params.text_document
        if not self.buffers.open(unquote(document.uri), document.text):
            log.info("an open document is not kept: over the bounds of tracked buffers")
        yield from self._user_handler(types.TEXT_DOCUMENT_DID_OPEN, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams) -> Any:
        key = unquote(params.text_document.uri)
        if self.buffers.text(key) is None:
            return  # not kept (over the bounds), or never opened: nothing to update
        edits = [  # a message is at most 64 MiB (transport.py)
            Edit(change.text, _range(change.range))
            if isinstance(change, types.TextDocumentContentChangePartial)
            else Edit(change.text)
            for change in params.content_changes
        ]
        agreed = self.workspace.position_encoding  # an enum member, or a string
        encoding = str(getattr(agreed, "value", agreed) or "utf-16")
        if not self.buffers.change(key, edits, encoding):
            log.info("an open document is no longer kept: over the bounds of tracked buffers")
        yield from self._user_handler(types.TEXT_DOCUMENT_DID_CHANGE, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams) -> Any:
        self.buffers.close(unquote(params.text_document.uri))
        yield from self._user_handler(types.TEXT_DOCUMENT_DID_CLOSE, params)

    def structure_message(self, data: dict[str, Any]) -> Any:
        request = "jsonrpc" in data and "method" in data and "id" in data
        if request and "params" not in data:
            data = {**data, "params": None}
        try:
            return super().structure_message(data)
        except JsonRpcException:
            if "jsonrpc" in data and "id" in data and "method" not in data:
                # A client's answer to our request that is not what was asked for (a bare string
                # or {} for a question): the asker gets an error, never waits for ever.
                future = self._request_futures.pop(data["id"], None)
                if future is not None and not future.done():
                    future.set_exception(JsonRpcException(message="the answer did not decode"))
                raise AnsweredError() from None
            if not request:
                raise
            error = types.ResponseError(
                code=-32602, message=f"params: not valid params for {data['method']}"
            )
            self._send_response(data["id"], error=error)
            raise AnsweredError() from None

    def _handle_response(
        self, msg_id: Any, result: Any | None = None, error: Any | None = None
    ) -> None:
        """An answer to a request of ours that nobody waits for any more (a question answered
        another way, then withdrawn: asking.wait) is dropped; pygls would fail on it."""
        future = self._request_futures.get(msg_id)
        if future is not None and future.done():
            self._request_futures.pop(msg_id, None)
            return
        super()._handle_response(msg_id, result, error)

    @cached_property
    def after_reply(self) -> dict[Any, Callable[[], None]]:
        """What to do right after the response to a request has been written, by its ID
        (LecodeServer.after_reply)."""
        return {}

    def _send_response(
        self, msg_id: Any, result: Any | None = None, error: Any | None = None
    ) -> None:
        """pygls answers an exception in any handler (the standard ones too: initialize,
        shutdown...) with its message and traceback, which name files of the installation. Our
        own handlers never let one out (wiring.py); this catches the rest."""
        data = getattr(error, "data", None)
        if isinstance(data, dict) and "traceback" in data:  # pygls logged it with the traceback
            error = types.ResponseError(
                code=-32603,
                message="lecode-ls failed inside; the server log has the details",
                data={"code": "internal_error"},
            )
        super()._send_response(msg_id, result, error)
        then = self.after_reply.pop(msg_id, None)
        if then is not None:
            then()
