"""Every string a client can send, made hostile, in every request and in the `lecode.memory`
command: an error that names the field (or an answer), never -32603 (issue 23, item 5, and the
same class of hole everywhere else: a NUL, a lone surrogate, a name over 255 bytes, a
20,000-character path, a character int() takes for a digit).

# covers R1-R8, P2, P5
"""

from __future__ import annotations

import typing
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pydantic import BaseModel
from pygls.exceptions import JsonRpcException

from lecode_ls.server.protocol import METHODS
from tests.e2e.conftest import Start, call, uri

HOSTILE = ["\x00", "a\x00b", "\ud800", "n" * 300, "d/" * 10_000 + "x", "²", "-1", " "]
# Chat would reach a model; these two run a turn or a compaction.
SKIPPED = {"lecode/chat/send", "lecode/session/compact"}


def string_fields(model: type[BaseModel], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """The camelCase paths of the model's string fields, nested models included."""
    found = []
    hints = typing.get_type_hints(model)
    for name, field in model.model_fields.items():
        hint, path = hints.get(name), (*prefix, field.alias or name)
        nested = [t for t in typing.get_args(hint) or (hint,) if isinstance(t, type)]
        models = [t for t in nested if issubclass(t, BaseModel)]
        if models:
            found += string_fields(models[0], path)
        elif "str" in str(hint):
            found.append(path)
    return found


def nest(path: tuple[str, ...], value: str) -> dict[str, Any]:
    params: dict[str, Any] = {path[-1]: value}
    for name in reversed(path[:-1]):
        params = {name: params}
    return params


def values(field: str, folder: str) -> list[str]:
    if field.lower().endswith("uri"):
        return [f"{folder}/{text}" for text in ("%00", "%ED%A0%80", "n" * 300, "d/" * 10_000)]
    return HOSTILE


CASES = [
    (method.name, path)
    for method in METHODS
    if method.kind == "request" and method.handler is not None and method.name not in SKIPPED
    for path in string_fields(method.params)
]


@pytest.mark.parametrize(
    ("name", "path"), CASES, ids=lambda x: ".".join(x) if isinstance(x, tuple) else x
)
async def test_a_hostile_string_in_a_request_is_refused_naming_the_field_or_answered(
    start: Start, repo: Path, name: str, path: tuple[str, ...]
) -> None:
    client = await start(repo)
    for value in values(path[-1], uri(repo)):
        try:
            await call(client, name, nest(path, value))
        except JsonRpcException as error:
            assert error.code != -32603, (name, path, value[:20], error.message)
    assert await call(client, "lecode/ping") == {}


@pytest.mark.parametrize("position", [0, 1], ids=["text", "workspaceUri"])
async def test_a_hostile_string_in_the_memory_command_is_refused_or_answered(
    start: Start, repo: Path, position: int
) -> None:
    client = await start(repo)
    for value in values("workspaceUri" if position else "text", uri(repo)):
        for line in ([value], [f"facts {value}"], [f"search {value}"], [f"show {value}"]):
            arguments: list[Any] = line if position == 0 else ["show", value]
            try:
                await client.workspace_execute_command_async(
                    types.ExecuteCommandParams(command="lecode.memory", arguments=arguments)
                )
            except JsonRpcException as error:
                assert error.code != -32603, (arguments[0][:20], error.message)
    assert await call(client, "lecode/ping") == {}
