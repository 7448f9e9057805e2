"""One entry of the protocol table (protocol.py) and the values its examples share."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from lecode_ls.server.messages import Message

if TYPE_CHECKING:
    from lecode_ls.server.server import LecodeServer

Kind = Literal["request", "notification", "command"]

Handler = Callable[["LecodeServer", Any], Awaitable[Message | str]]
"""What answers a request or a command: validated params in, a result model (or a command's
string) out. Core errors propagate; the boundary (wiring.dispatch) converts them."""


@dataclass(frozen=True)
class Method:
    """One entry of the protocol: what protocol.md and protocol.ts are generated from."""

    name: str
    kind: Kind
    summary: str
    params: type[Message]
    result: type[Message] | None
    handler: Handler | None = None
    """None for a notification the server sends; every request and command has one."""
    errors: tuple[str, ...] = ()
    example_params: Any = None
    example_result: Any = None
    notes: tuple[str, ...] = field(default=())


WS = "file:///home/me/project"
SID = "20261129T100000Z-3f2a9c41"
DIGEST = "sha256:" + "0" * 64
