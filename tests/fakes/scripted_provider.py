"""The scripted provider, the model faked behind the `Provider` interface (STYLE 8): each
`stream` call plays the next scripted turn and records the request. The other seam is the
loopback OpenAI-compatible server in openai_server.py."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Iterable, Sequence
from dataclasses import dataclass, field

from lecode_ls.agent.provider import ChatRequest, Event, Finish, TextDelta, ToolCall, Usage
from lecode_ls.errors import ProviderError

Turn = Sequence[Event] | ProviderError
"""One scripted answer: the events to play, or the error to raise."""


@dataclass
class ScriptedProvider:
    """Plays scripted turns in order, one per `stream` call, and records every request.

    A turn without a trailing `Finish` gets `Finish("stop")` (or "tool_calls" if it has any).
    Asking for more turns than were scripted raises a `ProviderError`, so a runner that calls the
    model once too often fails its test instead of hanging.
    """

    turns: list[Turn] = field(default_factory=list)
    requests: list[ChatRequest] = field(default_factory=list)

    def add(self, *turns: Turn) -> ScriptedProvider:
        self.turns.extend(turns)
        return self

    async def stream(self, request: ChatRequest) -> AsyncGenerator[Event, None]:
        self.requests.append(request)
        if not self.turns:
            raise ProviderError(
                f"the scripted provider has no turn left for request {len(self.requests)}"
            )
        turn = self.turns.pop(0)
        if isinstance(turn, ProviderError):
            raise turn
        for event in turn:
            yield event
        if not turn or not isinstance(turn[-1], Finish):
            calls = any(isinstance(event, ToolCall) for event in turn)
            yield Finish("tool_calls" if calls else "stop")


def text_turn(*pieces: str, usage: Usage | None = None, reason: str = "stop") -> list[Event]:
    """A scripted turn that answers with text, streamed as the given pieces."""
    events: list[Event] = [TextDelta(piece) for piece in pieces]
    events.append(Finish(reason, usage))
    return events


def tool_turn(
    calls: Iterable[ToolCall], *, text: str = "", usage: Usage | None = None
) -> list[Event]:
    """A scripted turn that calls tools, optionally after some text."""
    events: list[Event] = [TextDelta(text)] if text else []
    events.extend(calls)
    events.append(Finish("tool_calls", usage))
    return events
