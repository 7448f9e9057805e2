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
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

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
    tool_choice: str | None = None
    """`tool_choice` when tools are offered: None sends "auto"; "none" asks for text only."""
    cache_key: str | None = None
    """The session: sent as `prompt_cache_key` only to an endpoint known to take it."""


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts as the provider reported them."""

    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    cached_tokens: int | None = None
    """Prompt tokens served from the provider's prompt cache (`usage.prompt_tokens_details.
    cached_tokens`, or llama-server's `timings.cache_n`); None when it said nothing."""
    evaluated_tokens: int | None = None
    """Prompt tokens it evaluated anew (llama-server's `timings.prompt_n`); None when unsaid."""

    def to_json(self) -> dict[str, int]:
        """The form stored in transcripts: snake_case, as the API reports it (the cache's
        counts only when reported)."""
        value = {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
        }
        if self.cached_tokens is not None:
            value["cached_tokens"] = self.cached_tokens
        if self.evaluated_tokens is not None:
            value["evaluated_tokens"] = self.evaluated_tokens
        return value


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
