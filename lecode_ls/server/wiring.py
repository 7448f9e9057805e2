"""Every custom method lecode-ls serves, behind one boundary (`dispatch`), and every feature's
room (`ROOMS`: its state, background tasks and listeners; rooms.py), added to the server here.

routes.py registers the names before `initialize`; this module, with the handlers and their
pydantic models, is imported when `initialized` arrives, so start-up does not pay for it.

The boundary is the only place where core errors become JSON-RPC errors:
- a request before `initialize` gets -32002;
- params are validated with pydantic; a failure gets -32602 naming the field;
- a `LecodeError` gets its JSON-RPC code and `data.code`;
- anything else is logged with its traceback and answered with a plain -32603, so no traceback or
  installation path reaches the client.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError
from pydantic.alias_generators import to_camel
from pygls.exceptions import JsonRpcException, JsonRpcServerNotInitialized

from lecode_ls.errors import INVALID_PARAMS, LecodeError
from lecode_ls.memory.secrets import mask_secret_values
from lecode_ls.server.anchors import lsp as anchor_lsp
from lecode_ls.server.anchors import room as anchors
from lecode_ls.server.chat import room as chat
from lecode_ls.server.facts import room as facts
from lecode_ls.server.messages import Message
from lecode_ls.server.method import Method
from lecode_ls.server.protocol import METHODS_BY_NAME
from lecode_ls.server.questions import room as questions
from lecode_ls.server.rooms import Room
from lecode_ls.server.server import LecodeServer
from lecode_ls.server.sessions import room as sessions
from lecode_ls.server.team import room as team

log = logging.getLogger(__name__)

ROOMS: tuple[Callable[[LecodeServer], Room], ...] = (
    questions.room,  # first to shut down: every open question is a no
    team.room,  # first to see a new runtime: its shared facts read the open buffers
    facts.room,
    anchors.room,  # first to hear of a facts change: the open documents are re-checked
    chat.room,
    sessions.room,
)
"""The features that keep state, run in the background or listen, in the order their
listeners are called and their tasks started."""


def parse(method: Method, raw: Any) -> Message:
    """Validate raw params (a dict, or a command's argument list) against the method's model."""
    if method.kind == "command":
        names = list(method.params.model_fields)
        if not isinstance(raw, list) or len(raw) > len(names):
            raise _invalid(
                "arguments", f"arguments: {method.name} takes at most {len(names)} arguments"
            )
        raw = {
            method.params.model_fields[n].alias or n: v for n, v in zip(names, raw, strict=False)
        }
    if raw is None or raw == []:  # absent, or by-position with no items (Neovim's `{}`)
        raw = {}
    if not isinstance(raw, dict):
        raise _invalid("params", "params must be an object")
    try:
        return method.params.model_validate(raw)
    except ValidationError as exc:
        # A command whose one argument is its request's params object (`FactRefCommand`'s
        # `params`) names the fields inside it as the request does: the client sent no `params`.
        wrapped = method.kind == "command" and list(method.params.model_fields) == ["params"]
        problems = [
            (".".join(str(part) for part in _loc(error["loc"], wrapped)) or "params", error["msg"])
            for error in exc.errors(include_input=False, include_url=False)
        ]
        message = "; ".join(f"{field}: {msg}" for field, msg in problems)
        raise _invalid(problems[0][0], message) from None


def _loc(loc: tuple[int | str, ...], wrapped: bool) -> tuple[int | str, ...]:
    if not wrapped or loc[:1] != ("params",):
        return loc
    return loc[1:] or ("arguments",)  # the object itself is missing


def _invalid(field: str, message: str) -> JsonRpcException:
    return JsonRpcException(
        message=message, code=INVALID_PARAMS, data={"code": "invalid_params", "field": field}
    )


def _elapsed(started: float) -> str:
    return f"{(time.perf_counter() - started) * 1000:.1f} ms"


def _to_rpc(exc: LecodeError) -> JsonRpcException:
    """A core error as the client sees it. The core names fields in snake_case (as the spec's
    JSON does); the protocol's fields are camelCase, so the name is converted here."""
    data: dict[str, Any] = {"code": exc.code}
    message = mask_secret_values(exc.message)  # the provider's key, whatever its format
    if exc.field:
        field = ".".join(to_camel(part) for part in exc.field.split("."))
        data["field"] = field
        if message.startswith(exc.field + ":"):
            message = field + message[len(exc.field) :]
    if (status := getattr(exc, "status", None)) is not None:
        data["status"] = status
    if (fact_id := getattr(exc, "fact_id", None)) is not None:
        data["factId"] = fact_id
    return JsonRpcException(message=message, code=exc.rpc_code, data=data)


async def dispatch(ls: LecodeServer, name: str, args: tuple[Any, ...]) -> Any:
    """Answer one request or command `name` that arrived with `args` (see routes.register)."""
    if not ls.ready:
        raise JsonRpcServerNotInitialized("the server is not initialized; send initialize first")
    collect(ls)
    method = METHODS_BY_NAME[name]
    assert method.handler is not None  # routes.py registers only methods that have one
    raw: Any = list(args) if method.kind == "command" else (args[0] if args else None)
    started = time.perf_counter()
    try:
        result = await method.handler(ls, parse(method, raw))
    except LecodeError as exc:
        log.debug("%s: %s (%s)", name, exc.code, _elapsed(started))
        raise _to_rpc(exc) from None
    except JsonRpcException as exc:
        log.debug("%s: refused: %s (%s)", name, exc.message, _elapsed(started))
        raise
    except asyncio.CancelledError:
        log.debug("%s: cancelled (%s)", name, _elapsed(started))
        raise
    except Exception:
        log.exception("%s failed", method.name)
        raise JsonRpcException(
            message=f"{method.name} failed inside lecode-ls; the server log has the details",
            code=-32603,
            data={"code": "internal_error"},
        ) from None
    log.debug("%s: answered (%s)", name, _elapsed(started))
    # exclude_unset: optional fields the core did not fill are absent, not null.
    return (
        result.model_dump(mode="json", exclude_unset=True)
        if isinstance(result, Message)
        else result
    )


def collect(ls: LecodeServer) -> None:
    """Add every feature's room to the server, once: when `initialized` arrives, or with the
    first request if a client sends one before that."""
    if not ls.rooms.collected:
        for make in ROOMS:
            ls.rooms.add(make(ls))


def attach(ls: LecodeServer) -> None:
    """When `initialized` arrives: the rooms, and the background tasks, theirs and the
    server's own."""
    collect(ls)
    for name, start in ls.rooms.tasks():
        ls.run_task(start(), name)
    ls.run_task(ls.remove_debris(), "remove-debris")


async def standard(ls: LecodeServer, name: str, params: Any) -> Any:
    """Answer a standard LSP feature of the code anchors (document sync, CodeLens, hover, code
    actions). Before `initialize`, or on any failure, the answer is empty: a failure is logged
    with its traceback, never sent, and must not break the editor's own features."""
    empty: Any = [] if name in ("codeLens", "codeAction", "inlayHint") else None
    if not ls.ready or ls.closing:
        return empty
    collect(ls)
    try:
        if name in ("didOpen", "didChange"):
            await anchor_lsp.check_document(ls, params.text_document.uri, publish=name == "didOpen")
        elif name == "didClose":
            await anchor_lsp.did_close(ls, params.text_document.uri)
        elif name == "codeLens":
            return await anchor_lsp.code_lenses(ls, params.text_document.uri)
        elif name == "hover":
            return await anchor_lsp.hover(ls, params.text_document.uri, params.position.line)
        elif name == "codeAction":
            return await anchor_lsp.code_actions(ls, params.text_document.uri, params.range)
        elif name == "inlayHint":
            return await anchor_lsp.inlay_hints(ls, params.text_document.uri, params.range)
    except asyncio.CancelledError:
        raise
    except LecodeError as exc:
        log.debug("%s: %s", name, exc.code)
    except Exception:
        log.exception("%s failed", name)
    return empty
