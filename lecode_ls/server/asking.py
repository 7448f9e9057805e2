"""Asking the person before memory changes (T4), for chat turns and slash commands alike.

The question is `window/showMessageRequest`, which every LSP editor can answer (Allow / Deny);
an editor that cannot, or a closed dialog, means deny.
"""

from __future__ import annotations

from lsprotocol import types

from lecode_ls.server.server import LecodeServer

ALLOW, DENY = "Allow", "Deny"


async def ask_person(ls: LecodeServer, who: str, tool: str, summary: str) -> bool:
    """Whether the person allows `who` (the model, a slash command) to run `tool`."""
    answer = await ls.window_show_message_request_async(
        types.ShowMessageRequestParams(
            type=types.MessageType.Warning,
            message=f"lecode: {who} wants to run {tool}: {summary}",
            actions=[types.MessageActionItem(ALLOW), types.MessageActionItem(DENY)],
        )
    )
    return answer is not None and answer.title == ALLOW
