"""One entry of the protocol table (protocol.py) and the values its examples share."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from lecode_ls.server.messages import Message

Kind = Literal["request", "notification", "command"]


@dataclass(frozen=True)
class Method:
    """One entry of the protocol: what protocol.md and protocol.ts are generated from."""

    name: str
    kind: Kind
    summary: str
    params: type[Message]
    result: type[Message] | None
    errors: tuple[str, ...] = ()
    example_params: Any = None
    example_result: Any = None
    notes: tuple[str, ...] = field(default=())


WS = "file:///home/me/project"
SID = "20261129T100000Z-3f2a9c41"
DIGEST = "sha256:" + "0" * 64
