"""Asking the person before memory changes (T4), for chat turns and slash commands alike.

The question is `window/showMessageRequest`, which every LSP editor can answer (Allow / Deny);
an editor that cannot, or a closed dialog, means deny.
"""

from __future__ import annotations

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from lecode_ls.server.server import LecodeServer

ALLOW, DENY = "Allow", "Deny"


async def ask_person(ls: LecodeServer, who: str, tool: str, summary: str) -> bool:
    """Whether the person allows `who` (the model, a slash command) to run `tool`."""
    try:
        answer = await ls.window_show_message_request_async(
            types.ShowMessageRequestParams(
                type=types.MessageType.Warning,
                message=f"lecode: {who} wants to run {tool}: {summary}",
                actions=[types.MessageActionItem(ALLOW), types.MessageActionItem(DENY)],
            )
        )
    except JsonRpcException:  # the client refused the request, or answered something else
        return False
    # Anything but the explicit Allow is a deny.
    return isinstance(answer, types.MessageActionItem) and answer.title == ALLOW
