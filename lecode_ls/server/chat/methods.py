"""The protocol table's chat methods (see protocol.py)."""

from __future__ import annotations

from lecode_ls.server.chat import handlers
from lecode_ls.server.chat.messages import (
    ChatDeltaParams,
    ChatHistoryParams,
    ChatHistoryResult,
    ChatSendParams,
    ChatSendResult,
    CommandParams,
    CommandResult,
    ProviderInfoParams,
    ProviderInfoResult,
    SessionCompactResult,
)
from lecode_ls.server.method import SID, Method
from lecode_ls.server.sessions.messages import SessionParams

METHODS: tuple[Method, ...] = (
    Method(
        "lecode/chat/send",
        "request",
        "Run one chat turn in a session: the person's message, then model requests and tool "
        "calls until the model answers. Answers when the turn ends; meanwhile the turn streams "
        "`lecode/chat/delta` notifications. Every message, tool call, tool result, usage and "
        "event is appended to the session's transcript. `$/cancelRequest` stops the turn: the "
        "result then has `stopReason` `cancelled` and the transcript records the cancellation. "
        "A text starting with `/memory` runs that command instead (no model call). With "
        "`[memory] enabled = false` chat works without memory: no memory tools are offered, "
        "nothing is injected, and `/memory` answers `memory_disabled`. Where memory sits in "
        "each model request, so that a new message only appends to what the provider has "
        "cached: the system message holds the session's stable part (base prompt, instruction "
        "files, MEMORY.md, scratchpad and a facts block chosen once, until a compaction, a "
        "clear, a change of the notes or a full allocation), the history follows exactly as "
        "sent before, and each turn's own facts (those its message needs that nothing before "
        "holds, the person's and the team's shared ones chosen and ranked together) stand in "
        "front of its user message. Both are recorded in the transcript "
        "(`memory_block` events) and replayed byte for byte, each fact line validated again "
        "at every use; a server-caused cache miss is a `cache_miss` event with its reason.",
        ChatSendParams,
        ChatSendResult,
        handler=handlers.chat_send,
        errors=(
            "invalid_session_id",
            "session_not_found",
            "session_busy",
            "provider_not_configured",
            "provider_key_missing",
            "provider_key_invalid",
        ),
        example_params={"sessionId": SID, "text": "How do I build this project?"},
        example_result={
            "turnId": "t-3f2a9c41",
            "stopReason": "stop",
            "usage": {
                "calls": 2,
                "promptTokens": 2410,
                "completionTokens": 96,
                "totalTokens": 2506,
                "unknownUsageCalls": 0,
            },
        },
        notes=(
            "Only one turn runs in a session at a time; a second send gets `session_busy`.",
            "With no `[provider] base_url` set the send answers `provider_not_configured`, "
            "naming the settings, before anything is recorded or sent (`/memory` lines still "
            "run): lecode-ls never picks a provider for the person.",
            "A send the provider could only refuse answers `provider_key_missing` before "
            "anything is recorded or sent (no memory leaves the machine): the variable "
            "`[provider] api_key_env` names (other than the default OPENAI_API_KEY) is unset or "
            "empty, or no key is set and `base_url` is not a loopback address. A key holding a "
            "character a header cannot carry answers `provider_key_invalid`; spaces and line "
            "breaks around a key (a CRLF env file) are trimmed, with a warning in the log. "
            "Neither message quotes the key.",
            "A provider failure (a rejected key, an unreachable URL, an unknown model) ends the "
            "turn with `stopReason` `error` and an `error` delta whose `code` is one of "
            "`provider_auth`, `provider_unreachable`, `provider_model`, `provider_timeout`, "
            "`provider_incomplete`, `provider_error`; it is recorded in the transcript too.",
            "Write-class memory tools ask the person first unless `[agent] permissions` says "
            "allow or deny: with `window/showMessageRequest` when the client advertised "
            "`window.showMessage`, else with `window/showMessage` and the code actions "
            "`Allow <tool> (the model asks)` / `Deny <tool> (the model asks)` in every document "
            "(`lecode.answer`); the turn waits for the answer.",
        ),
    ),
    Method(
        "lecode/chat/delta",
        "notification",
        "Server to client, while a `lecode/chat/send` runs: text, tool calls, tool results, "
        "the memory injected into each model request, usage and errors, in `seq` order.",
        ChatDeltaParams,
        None,
        example_params={
            "sessionId": SID,
            "turnId": "t-3f2a9c41",
            "seq": 3,
            "kind": "memory",
            "facts": [{"factId": 12, "revision": 2}],
            "notes": ["MEMORY.md"],
        },
    ),
    Method(
        "lecode/session/compact",
        "request",
        "Compact the session's working memory now (`/compact`): the previous valid summary plus "
        "the newly covered complete exchanges, summarised by the configured model into a compact "
        "event with its lineage. Reports `$/progress`. Refused while a turn runs.",
        SessionParams,
        SessionCompactResult,
        handler=handlers.session_compact,
        errors=(
            "invalid_session_id",
            "session_not_found",
            "session_busy",
            "provider_not_configured",
            "provider_key_missing",
            "provider_key_invalid",
        ),
        example_params={"sessionId": SID},
        example_result={
            "status": "compacted",
            "coveredThrough": 41,
            "usage": {
                "calls": 1,
                "promptTokens": 5120,
                "completionTokens": 410,
                "totalTokens": 5530,
                "unknownUsageCalls": 0,
            },
        },
    ),
    Method(
        "lecode/chat/history",
        "request",
        "A session's recent visible records as chat items (the shape of `lecode/chat/delta`), "
        "for a chat view opening an existing session, and the session's usage total.",
        ChatHistoryParams,
        ChatHistoryResult,
        handler=handlers.chat_history,
        errors=("invalid_session_id", "session_not_found"),
        example_params={"sessionId": SID, "limit": 50},
        example_result={
            "items": [
                {"seq": 1, "turnId": "t-3f2a9c41", "kind": "user", "text": "How do I build?"},
                {"seq": 2, "turnId": "t-3f2a9c41", "kind": "memory", "facts": [], "notes": []},
                {"seq": 3, "turnId": "t-3f2a9c41", "kind": "text", "text": "Run `make`."},
            ],
            "truncated": False,
            "usage": {
                "calls": 1,
                "promptTokens": 2410,
                "completionTokens": 96,
                "totalTokens": 2506,
                "unknownUsageCalls": 0,
            },
        },
    ),
    Method(
        "lecode/command",
        "request",
        "Run a `/memory ...` line, or `/compact` (with `sessionId`), from any client: the same "
        "commands as in chat. `/memory correct` and `/memory forget` obey `[agent] readonly` and "
        "`permissions` as the model's tools do, asking the person where they say ask (as "
        "`lecode/chat/send` does) and waiting for the answer.",
        CommandParams,
        CommandResult,
        handler=handlers.command,
        errors=(
            "memory_disabled",
            "invalid_name",
            "invalid_pattern",
            "not_found",
            "readonly",
            "permission_denied",
        ),
        example_params={"line": "/memory search make"},
        example_result={"output": "notes/build.md:1: Run `make`."},
    ),
    Method(
        "lecode/provider/info",
        "request",
        "The chat provider the settings name: whether one is configured, its URL (credentials "
        "removed), model and API key variable, and whether that variable is set. Makes no "
        "request to the provider. Works with memory disabled.",
        ProviderInfoParams,
        ProviderInfoResult,
        handler=handlers.provider_info,
        example_params={},
        example_result={
            "configured": True,
            "baseUrl": "http://localhost:11434/v1",
            "model": "llama3.1:8b",
            "apiKeyEnv": "",
            "apiKeySet": False,
        },
    ),
)
