"""The base classes of every JSON object of the protocol (each feature's messages.py holds its
own payloads).

JSON fields are camelCase; each field's docstring is its documentation (protocol.md is generated
from them). Params are strict: unknown fields and wrong types are refused with -32602.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class Message(BaseModel):
    """A JSON object of the protocol: camelCase on the wire, snake_case in Python."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        frozen=True,
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        # Schemas are built on first use, not at import: start-up time matters (bench/).
        defer_build=True,
    )


class Params(Message):
    """Params from a client: only the camelCase names are accepted."""

    model_config = ConfigDict(validate_by_name=False)


class WorkspaceParams(Params):
    workspace_uri: str | None = None
    """Any folder or file URI inside a project; default: the first workspace folder."""
