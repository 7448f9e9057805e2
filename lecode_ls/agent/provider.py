"""The provider seam: what the chat runner asks of a model, and what streams back (K2).

A provider takes a `ChatRequest` and streams `Event`s: `TextDelta`s and complete `ToolCall`s in
the order the model produced them, then exactly one `Finish`, which carries the reported usage
(or None when the provider reported none, C10). A failure is raised as a `ProviderError` and is
never a silent, truncated success. Messages and tools are plain OpenAI Chat Completions dicts, so
the runner builds them once whatever the backend.

Two implementations: `lecode_ls.agent.openai.OpenAICompatible` over HTTP, and `ScriptedProvider`
below, which plays scripted turns in-process for the runner's unit tests (STYLE 8).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from lecode_ls.errors import ProviderError

Message = Mapping[str, Any]
"""One Chat Completions message: `{"role": "user", "content": "..."}` and so on."""

ToolSchema = Mapping[str, Any]
"""One Chat Completions tool: `{"type": "function", "function": {"name", "description",
"parameters"}}`."""


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """One model request."""

    messages: Sequence[Message]
    tools: Sequence[ToolSchema] = ()
    max_tokens: int | None = None
    """Cap on the completion's tokens; None leaves the provider's default."""
    model: str | None = None
    """Overrides the provider's configured model for this request; None uses it."""


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts as the provider reported them."""

    prompt_tokens: int
    completion_tokens: int
    total_tokens: int

    def to_json(self) -> dict[str, int]:
        """The form stored in transcripts: snake_case, as the API reports it."""
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
        }


OnUsage = Callable[["Usage | None"], None]
"""Called once for every provider call made, with its usage; None when it is unknown (the
provider reported none, the call failed, or it was cancelled): the run totals of C10."""


@dataclass(frozen=True, slots=True)
class TextDelta:
    """The next piece of the assistant's text."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A complete tool call. `arguments` is the raw JSON text the model wrote: it may be invalid
    JSON, and judging it is the runner's job, not the transport's."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class Finish:
    """The last event of every successful stream.

    `reason` is the provider's finish_reason passed through ("stop", "length", "tool_calls",
    "content_filter", or whatever else it sends; "unknown" when it sent none). `usage` is reported
    here and only here, so it is counted once; None when the provider reported no usage.
    """

    reason: str
    usage: Usage | None = None


Event = TextDelta | ToolCall | Finish


class Provider(Protocol):
    """A model behind the Chat Completions shape.

    Consumers that may stop early should wrap the stream in `contextlib.aclosing`, so the
    connection is released at once rather than when the generator is collected.
    """

    def stream(self, request: ChatRequest) -> AsyncGenerator[Event, None]:
        """Stream the answer to `request`; raise a `ProviderError` on failure."""
        ...


@dataclass(frozen=True, slots=True)
class Answer:
    """A whole answer, for callers that do not stream it on (compaction, learning)."""

    text: str
    calls: list[ToolCall]
    finish: Finish


async def collect(provider: Provider, request: ChatRequest) -> Answer:
    """Read the whole answer to `request`. Raises the provider's `ProviderError`; cancellation
    closes the stream at once."""
    text: list[str] = []
    calls: list[ToolCall] = []
    finish = Finish("unknown")
    async with contextlib.aclosing(provider.stream(request)) as stream:
        async for event in stream:
            if isinstance(event, TextDelta):
                text.append(event.text)
            elif isinstance(event, ToolCall):
                calls.append(event)
            else:
                finish = event
    return Answer("".join(text), calls, finish)


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
