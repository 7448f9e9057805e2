"""The OpenAI-compatible Chat Completions adapter, over httpx with SSE streaming (K2).

It speaks the API that OpenAI, OpenRouter, Ollama, LM Studio, vLLM and llama.cpp's server share:
POST `{base_url}/chat/completions` with `stream: true`, answered by Server-Sent Events, each a JSON
chunk, ended by `data: [DONE]`.

Retries (429, 5xx, connection failures) happen only before the first event is yielded: once the
caller has seen part of an answer, a retry would show it a different answer spliced on.

The API key goes only into the Authorization header. It never appears in an exception message,
a log line or a repr: provider error text (a reason phrase included) is quoted only after the
key is cut out of it, in every form (memory/secrets/known.py), and an httpx failure is reported
by its class alone, since httpx quotes what it refused (a header holding the key).
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import random
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any

import httpx

from lecode_ls.agent import sse
from lecode_ls.agent.provider import ChatRequest, Event, Finish, TextDelta, ToolCall, Usage
from lecode_ls.agent.server_window import probe_window
from lecode_ls.errors import (
    ContextOverflow,
    ProviderAuth,
    ProviderError,
    ProviderIncomplete,
    ProviderModel,
    ProviderTimeout,
    ProviderUnreachable,
)
from lecode_ls.memory.secrets import mask_secret_values

log = logging.getLogger(__name__)

RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
# A Retry-After longer than this is not waited out: the person is told instead.
MAX_RETRY_AFTER = 60.0
MAX_ERROR_CHARS = 300


@dataclass
class _PendingCall:
    id: str = ""
    name: str = ""
    arguments: str = ""


class OpenAICompatible:
    """A `Provider` for any OpenAI-compatible endpoint.

    `read_timeout` bounds each gap between streamed chunks (httpx applies it per read), not the
    whole answer, so a long answer that keeps streaming never times out. `sleep` and
    `backoff_base` exist so tests can retry without waiting.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None,
        *,
        client: httpx.AsyncClient | None = None,
        connect_timeout: float = 10.0,
        read_timeout: float = 60.0,
        max_retries: int = 3,
        backoff_base: float = 0.5,
        thinking: str | None = None,
        key_variable: str = "",
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self._api_key = api_key or None
        # The name of the environment variable the key came from (never the key), for messages.
        self.key_variable = key_variable
        self._owns_client = client is None
        self._client = client if client is not None else httpx.AsyncClient()
        self._timeout = httpx.Timeout(read_timeout, connect=connect_timeout)
        self.read_timeout = read_timeout
        self.max_retries = max_retries
        self.backoff_base = backoff_base
        self.thinking = thinking
        self._sleep = sleep
        self._window_lock = asyncio.Lock()
        self._window: tuple[int | None] | None = None  # (answer,) once the server was asked

    def __repr__(self) -> str:
        # Written out so that no future field can carry the key into a log line.
        key = "set" if self._api_key else "none"
        return f"OpenAICompatible(base_url={self.base_url!r}, model={self.model!r}, api_key={key})"

    async def aclose(self) -> None:
        """Close the HTTP client if this provider created it."""
        if self._owns_client:
            await self._client.aclose()

    async def server_window(self) -> int | None:
        """The window the server says it serves the configured model with, or None when it does
        not say (server_window.py). Asked once per provider (a provider is rebuilt when its
        settings change); turns that ask at once wait for the one probe."""
        async with self._window_lock:
            if self._window is None:  # a probe cut off by cancellation is made again next time
                window = await probe_window(
                    self._client, self.base_url, self.model, self._headers()
                )
                self._window = (window,)
        return self._window[0]

    @property
    def url(self) -> str:
        return f"{self.base_url}/chat/completions"

    def body(self, request: ChatRequest) -> dict[str, Any]:
        """The JSON body sent for `request`."""
        body: dict[str, Any] = {
            "model": request.model or self.model,
            "messages": [dict(message) for message in request.messages],
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if request.tools:
            body["tools"] = [dict(tool) for tool in request.tools]
            # "auto" is every API's default, but llama-cpp-python's server drops the tools when
            # tool_choice is absent: saying it costs nothing and makes the tools count there.
            # "none" (a turn's last request once its tools were stopped) keeps the tools known,
            # as some APIs require when the history holds tool calls, but asks for text.
            body["tool_choice"] = request.tool_choice or "auto"
        if request.max_tokens is not None:
            body["max_tokens"] = request.max_tokens
        if self.thinking:
            body["reasoning_effort"] = self.thinking
        if request.cache_key and takes_cache_key(self.base_url):
            body["prompt_cache_key"] = request.cache_key
        return body

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": "text/event-stream", "Cache-Control": "no-store"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        return headers

    async def stream(self, request: ChatRequest) -> AsyncGenerator[Event, None]:
        body = self.body(request)
        model = body["model"]
        attempt = 0
        while True:
            yielded = False
            retry_after: float | None = None
            try:
                async with self._client.stream(
                    "POST", self.url, json=body, headers=self._headers(), timeout=self._timeout
                ) as response:
                    if response.status_code >= 400:
                        head = await sse.read_capped(response)
                        error = self._http_error(response, model, head)
                        if response.status_code not in RETRY_STATUSES:
                            raise error
                        retry_after = _retry_after(response.headers.get("retry-after"))
                        if attempt >= self.max_retries or (
                            retry_after is not None and retry_after > MAX_RETRY_AFTER
                        ):
                            raise error
                        failure: ProviderError = error
                    else:
                        async for event in self._events(response):
                            yielded = True
                            yield event
                        return
            except httpx.ConnectError as exc:
                failure = ProviderUnreachable(self._unreachable(exc))
                if attempt >= self.max_retries:
                    raise failure from None
            except httpx.TimeoutException as exc:
                if isinstance(exc, httpx.ConnectTimeout | httpx.PoolTimeout):
                    failure = ProviderUnreachable(self._unreachable(exc))
                    if attempt >= self.max_retries:
                        raise failure from None
                else:
                    raise ProviderTimeout(
                        f"the provider at {self._safe_base()} sent nothing for "
                        f"{self.read_timeout:g} s (the read timeout between streamed chunks: "
                        "[provider] read_timeout_seconds)"
                    ) from None
            except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
                failure = ProviderIncomplete(
                    f"the provider at {self._safe_base()} closed the connection before the "
                    f"answer was complete ({exc.__class__.__name__})"
                )
                if yielded or attempt >= self.max_retries:
                    raise failure from None
            except (httpx.HTTPError, httpx.InvalidURL, UnicodeError) as exc:
                # Not retried: a refused header, an unsupported scheme or a proxy failure does not
                # mend itself (UnicodeError: a host name IDNA refuses). Its text may quote the
                # request (a header), so only its class is told.
                raise ProviderError(
                    f"the request to {self._safe_base()} failed ({exc.__class__.__name__})"
                ) from None
            delay = (
                retry_after
                if retry_after is not None
                else self.backoff_base * 2**attempt + random.uniform(0, self.backoff_base)
            )
            attempt += 1
            log.warning(
                "provider request failed (%s); retry %d of %d in %.2f s",
                failure.code,
                attempt,
                self.max_retries,
                delay,
            )
            await self._sleep(delay)

    async def _events(self, response: httpx.Response) -> AsyncIterator[Event]:
        """Turn one SSE response into events; raise if it ends before the answer does."""
        pending: dict[int, _PendingCall] = {}
        reason: str | None = None
        usage: Usage | None = None
        done = False
        kind = response.headers.get("content-type", "no content type")
        if "text/event-stream" not in kind:
            raise ProviderError(
                f"the provider at {self._safe_base()} did not answer with an event stream "
                f"({self._trim(kind)}); is base_url an OpenAI-compatible API?"
            )
        try:
            async for event in sse.data_events(response):
                data = event.strip()
                if not data:
                    continue
                if data == "[DONE]":
                    done = True
                    break
                try:
                    chunk = json.loads(data)
                except json.JSONDecodeError:
                    raise ProviderError(
                        f"the provider sent a chunk that is not JSON: {self._trim(data)}"
                    ) from None
                if not isinstance(chunk, dict):
                    continue
                if "error" in chunk:
                    said = self._error_text(chunk)
                    if _overflow(chunk, said):
                        raise ContextOverflow(self._overflow_message(said))
                    raise ProviderError(f"the provider failed mid-answer: {said}")
                usage = with_timings(_usage(chunk.get("usage")) or usage, chunk.get("timings"))
                for choice in chunk.get("choices") or ():
                    if not isinstance(choice, dict):
                        continue
                    delta = choice.get("delta") or {}
                    text = delta.get("content")
                    if isinstance(text, str) and text:
                        yield TextDelta(text)
                    for piece in delta.get("tool_calls") or ():
                        _accumulate(pending, piece)
                    if choice.get("finish_reason"):
                        reason = str(choice["finish_reason"])
        except sse.StreamTooLarge as exc:
            raise ProviderError(
                f"the provider at {self._safe_base()} sent more than lecode-ls reads for one "
                f"answer ({exc}); the answer was refused"
            ) from None
        # A finish_reason means the answer is whole even if [DONE] never came; neither means the
        # stream was cut off, and a partial answer must not pass for a complete one.
        if reason is None and not done:
            raise ProviderIncomplete(
                f"the provider at {self._safe_base()} ended the stream before the answer was "
                "complete (no finish reason and no [DONE])"
            )
        for index in sorted(pending):
            call = pending[index]
            yield ToolCall(call.id or f"call_{index}", call.name, call.arguments)
        yield Finish(reason or "unknown", usage)

    def _http_error(self, response: httpx.Response, model: str, body: bytes) -> ProviderError:
        """The error of an HTTP error answer, from the first bytes of its body, with its status."""
        error = self._status_error(response, model, body)
        error.status = response.status_code
        return error

    def _status_error(self, response: httpx.Response, model: str, body: bytes) -> ProviderError:
        status = response.status_code
        text = self._error_text(_json_or_none(body))
        if not text:
            text = self._trim(body.decode("utf-8", "replace")) or self._trim(response.reason_phrase)
        if status in (401, 403):
            return ProviderAuth(self._auth_message(status))
        if _overflow(_json_or_none(body), text) and status in (400, 413, 422, 500):
            return ContextOverflow(self._overflow_message(text))
        if _unknown_model(status, text):
            return ProviderModel(f"the provider does not know the model {model}: {text}")
        if status == 429:
            return ProviderError(f"the provider is rate limiting requests (HTTP 429): {text}")
        return ProviderError(f"the provider answered HTTP {status}: {text}")

    def _auth_message(self, status: int) -> str:
        """Why the provider refused, in terms of the one thing the person can change: the key's
        variable. Editors add how to set it (VS Code: "lecode: Set API Key", for `provider_auth`)."""
        if self._api_key:
            where = f" from {self.key_variable}" if self.key_variable else ""
            return f"the provider rejected the API key{where} (HTTP {status})"
        if self.key_variable:
            return (
                f"the provider refused the request (HTTP {status}): no API key was sent, because "
                f"the environment variable {self.key_variable} is not set"
            )
        return (
            f"the provider refused the request (HTTP {status}): no API key was sent, because "
            "[provider] api_key_env is empty"
        )

    def _overflow_message(self, text: str) -> str:
        return f"the request is longer than the model's context window (the provider said: {text})"

    def _error_text(self, payload: Any) -> str:
        """The provider's own error message from `{"error": {"message": ...}}` or similar."""
        if not isinstance(payload, dict):
            return ""
        error = payload.get("error", payload)
        if isinstance(error, dict):
            message = error.get("message") or error.get("detail") or ""
        else:
            message = error
        return self._trim(str(message)) if message else ""

    def _trim(self, text: str) -> str:
        text = mask_secret_values(text)  # before the split, which would cut a key's CR
        text = " ".join(text.split())
        if self._api_key:
            text = text.replace(self._api_key, "[secret:api-key]")
        if len(text) > MAX_ERROR_CHARS:
            text = text[: MAX_ERROR_CHARS - 1] + "…"
        return text

    def _safe_base(self) -> str:
        try:
            url = httpx.URL(self.base_url)
        except httpx.InvalidURL:  # config.py refuses such a base_url; said without it anyway
            return "base_url"
        # Credentials in a base URL (http://user:pass@host) must not reach a message.
        return str(url.copy_with(username=None, password=None)) if url.userinfo else self.base_url

    def _unreachable(self, exc: Exception) -> str:
        return f"cannot reach {self._safe_base()} ({exc.__class__.__name__}); is base_url right and the server running?"


def _accumulate(pending: dict[int, _PendingCall], piece: Any) -> None:
    """Fold one streamed tool-call fragment into the call at its index."""
    if not isinstance(piece, dict):
        return
    index = piece.get("index")
    # Some servers omit the index when they send each call whole; number those in order.
    key = index if isinstance(index, int) else len(pending)
    call = pending.setdefault(key, _PendingCall())
    if piece.get("id"):
        call.id = str(piece["id"])
    function = piece.get("function") or {}
    if function.get("name"):
        call.name += str(function["name"])
    if function.get("arguments"):
        call.arguments += str(function["arguments"])


_OVERFLOW_CODES = frozenset({"context_length_exceeded", "exceed_context_size_error"})
_OVERFLOW_HINTS = (
    "exceeds the available context size",  # llama.cpp's llama-server
    "larger than the max context size",  # llama.cpp's llama-server, without context shift
    "maximum context length",  # OpenAI, vLLM ("This model's maximum context length is ...")
    "context_length_exceeded",
    "longer than the model's context length",  # vLLM 0.6+
    "exceeds the model's context length",
    "exceeds maximum context length",  # Ollama
    "input length exceeds the context length",  # Ollama
    "context window exceeds limit",
    "prompt is too long",
)


def _overflow(payload: Any, text: str) -> bool:
    """Whether an error says the request does not fit the model's window: by the error's code or
    type where the server sets one (OpenAI, llama.cpp), else by the wording of its message."""
    error = payload.get("error", payload) if isinstance(payload, dict) else None
    if isinstance(error, dict):
        for key in ("code", "type"):
            if str(error.get(key, "")).lower() in _OVERFLOW_CODES:
                return True
    lowered = text.lower()
    return any(hint in lowered for hint in _OVERFLOW_HINTS)


def _unknown_model(status: int, text: str) -> bool:
    """Whether an error answer says the model is unknown (a 404, or a 400 naming the model)."""
    lowered = text.lower()
    if status not in (400, 404) or "model" not in lowered:
        return False
    hints = ("not found", "does not exist", "not a valid model", "unknown model", "invalid model")
    return status == 404 or any(hint in lowered for hint in hints)


def _usage(raw: Any) -> Usage | None:
    if not isinstance(raw, dict):
        return None
    try:
        prompt = int(raw.get("prompt_tokens") or 0)
        completion = int(raw.get("completion_tokens") or 0)
        total = int(raw.get("total_tokens") or prompt + completion)
    except (TypeError, ValueError):
        return None
    details = raw.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    return Usage(prompt, completion, total, _count(cached))


def _json_or_none(body: bytes) -> Any:
    try:
        return json.loads(body)
    except (ValueError, RecursionError):  # not JSON, not UTF-8, or cut at MAX_ERROR_BYTES
        return None


def _retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _count(value: object) -> int | None:
    return value if type(value) is int and value >= 0 else None


def with_timings(usage: Usage | None, timings: object) -> Usage | None:
    """`usage` with llama-server's `timings` (cache_n: prompt tokens reused from its cache,
    prompt_n: evaluated anew), which it sends in the last chunk beside or after the usage."""
    if usage is None or not isinstance(timings, dict):
        return usage
    cached, evaluated = _count(timings.get("cache_n")), _count(timings.get("prompt_n"))
    return replace(
        usage,
        cached_tokens=usage.cached_tokens if cached is None else cached,
        evaluated_tokens=usage.evaluated_tokens if evaluated is None else evaluated,
    )


CACHE_KEY_HOSTS = ("api.openai.com",)
"""Endpoints known to take `prompt_cache_key`: others may refuse an unknown field (never sent
to llama-server, vLLM or other OpenAI-compatible servers)."""


def takes_cache_key(base_url: str) -> bool:
    return httpx.URL(base_url).host in CACHE_KEY_HOSTS
