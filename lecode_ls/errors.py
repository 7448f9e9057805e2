"""The error tree of lecode-ls.

Every failure a client can cause is a `LecodeError` with a stable machine `code` (it reaches the
client as `error.data.code`) and a message that is a sentence naming the field or file at fault.
The core raises these; only the server boundary turns them into JSON-RPC errors. Messages never
contain a traceback or a path of the server's own installation; store paths appear only where the
client asked about the store itself.
"""

from __future__ import annotations

from typing import ClassVar

# JSON-RPC codes. -32602 is "invalid params"; -32000 is the first code of the range JSON-RPC
# leaves to implementations, used for every domain error (the stable detail is `data.code`).
INVALID_PARAMS = -32602
DOMAIN_ERROR = -32000


class LecodeError(Exception):
    """Base of every error a client may see. `code` is stable; the message is for people."""

    code: ClassVar[str] = "error"
    rpc_code: ClassVar[int] = DOMAIN_ERROR

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


class InvalidParams(LecodeError):
    """Params that do not match a request's schema."""

    code = "invalid_params"
    rpc_code = INVALID_PARAMS


class InvalidName(LecodeError):
    """A memory file or note name that is not one of the allowed store-relative names."""

    code = "invalid_name"
    rpc_code = INVALID_PARAMS


class InvalidPattern(LecodeError):
    """A search pattern that is not a valid regular expression."""

    code = "invalid_pattern"
    rpc_code = INVALID_PARAMS


class NotFound(LecodeError):
    """A named thing (file, fact, session) does not exist."""

    code = "not_found"


class NoMatch(LecodeError):
    """An edit whose search text does not occur in the file."""

    code = "no_match"


class SymlinkRefused(LecodeError):
    """A store file or folder is a symbolic link; lecode-ls never follows links in its store."""

    code = "symlink_refused"


class OutsideWorkspace(LecodeError):
    """A URI or path that lies outside every open workspace folder."""

    code = "outside_workspace"
    rpc_code = INVALID_PARAMS


class NoWorkspace(LecodeError):
    """A request that needs a project, sent while no workspace folder is open."""

    code = "no_workspace"


class MemoryDisabled(LecodeError):
    """A memory request while `[memory] enabled = false`."""

    code = "memory_disabled"

    def __init__(self) -> None:
        super().__init__(
            "project memory is disabled ([memory] enabled = false); enable it in config.toml "
            "or the editor setting lecode.memory.enabled"
        )


class StoreError(LecodeError):
    """The store could not be read or written (disk full, permissions, a damaged file)."""

    code = "store_error"
