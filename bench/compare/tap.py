"""The comparison harness's tap: a loopback HTTP proxy between lecode-ls and the model that records
every provider request, including the retries the server's client makes on its own.

The server's `[provider] base_url` points at the tap; the tap forwards each request unchanged to the
real endpoint (or to the in-process FakeOpenAI in scripted runs), relays the answer as it streams,
and notes for each request: its purpose (a chat answer, a working summary, a learning extraction),
the harness step that was running, the HTTP status, when it started, its first byte and its end,
the usage the provider reported in the stream (None: unknown), the finish reason, the streamed
text, the names of any tool calls and, from llama-server, its `timings` (tokens evaluated and
reused from its prompt cache, and their milliseconds). Headers are forwarded, never recorded; if the bearer token
appears in recorded text it is cut out.

One request per connection, answered with `Connection: close`, as the tests' FakeOpenAI does.

Faults (the V2 protocol's step 4): `tap.faults[purpose] = "malformed" | "http500"` makes the tap
answer every request of that purpose itself, without asking the model: a complete stream whose
text is cut-off JSON (a malformed extraction), or an HTTP 500 (a failed one); and for a summary,
`"previous_summary"` answers with the previous summary its request holds, word for word (what
Qwen2.5-Coder 0.5B did, issue 31). Such a call is
marked with its `fault`. `tap.keep_bodies = True` keeps each request's body (`tap.bodies`, by
call index) so a harness can check what was, or was not, sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import httpx

from tests.fakes.openai_server import read_request

Purpose = Literal["chat", "summary", "learning", "other"]
Fault = Literal["malformed", "http500", "previous_summary"]
MALFORMED = '{"candidates": [{"text": "'
"""The text of a malformed answer: JSON cut off inside its first string."""

SUMMARY_PREFIX = "You maintain the working summary"
TEXT_CAP = 4000
"""Characters of streamed text (or of an error body) kept per request."""
FORWARDED = ("authorization", "content-type", "accept", "cache-control")
PREFIX = "/v1"
TIMINGS = ("prompt_n", "prompt_ms", "cache_n", "predicted_n", "predicted_ms")
"""llama-server's `timings` of a completion: prompt tokens evaluated (`prompt_n`), prompt tokens
taken from its cache (`cache_n`), and the tokens generated, with their milliseconds."""


def system_text(body: Any) -> str:
    """The first system message's text of a Chat Completions body ("" if none)."""
    if not isinstance(body, dict):
        return ""
    for message in body.get("messages") or []:
        if isinstance(message, dict) and message.get("role") == "system":
            content = message.get("content")
            if isinstance(content, str):
                return content
            if isinstance(content, list):
                return "\n".join(
                    str(part.get("text", "")) for part in content if isinstance(part, dict)
                )
            return ""
    return ""


def classify(body: Any) -> Purpose:
    """What a request is for, from its body alone.

    A summariser request's system message starts "You maintain the working summary"; a request
    offering no tools whose system message asks for fact candidates (or for extracting facts) is
    the learning extraction; anything offering tools is a chat answer.
    """
    if not isinstance(body, dict):
        return "other"
    system = system_text(body)
    if system.startswith(SUMMARY_PREFIX):
        return "summary"
    lowered = system.lower()
    if not body.get("tools") and (
        "candidate" in lowered or ("extract" in lowered and "fact" in lowered)
    ):
        return "learning"
    if body.get("tools") or system:
        return "chat"
    return "other"


@dataclass
class Call:
    """One HTTP request the tap saw, and what came back."""

    index: int
    step: str
    purpose: Purpose
    started: float
    request_bytes: int
    messages: int
    tools: int
    max_tokens: int | None
    status: int | None = None
    first_byte: float | None = None
    first_token: float | None = None
    """When the first text or tool-call piece arrived (llama-server may send a chunk before it has
    evaluated the prompt, so the first byte is not the first token)."""
    ended: float | None = None
    complete: bool = False
    """The whole answer was relayed (for a stream: its end was reached)."""
    usage: dict[str, int] | None = None
    finish_reason: str | None = None
    text: str = ""
    tool_calls: list[str] = field(default_factory=list)
    error: str | None = None
    timings: dict[str, float] | None = None
    """llama-server's `timings` (TIMINGS), None from servers that send none."""
    fault: Fault | None = None
    """The tap answered this request itself, with this fault; the model never saw it."""

    @property
    def ok(self) -> bool:
        return self.status == 200 and self.complete and self.error is None

    @property
    def seconds(self) -> float | None:
        return None if self.ended is None else self.ended - self.started

    def to_json(self, origin: float) -> dict[str, Any]:
        data = asdict(self)
        data["started"] = round(self.started - origin, 6)
        for key in ("first_byte", "first_token", "ended"):
            value = data[key]
            data[key] = None if value is None else round(value - origin, 6)
        data["seconds"] = None if self.seconds is None else round(self.seconds, 6)
        data["ok"] = self.ok
        return data


class _SseReader:
    """Picks usage, finish reason, text and tool-call names out of an SSE byte stream."""

    def __init__(self, call: Call) -> None:
        self.call = call
        self._buffer = b""

    def feed(self, data: bytes) -> None:
        self._buffer += data
        *lines, self._buffer = self._buffer.split(b"\n")
        for line in lines:
            self._line(line.strip())

    def close(self) -> None:
        if self._buffer.strip():
            self._line(self._buffer.strip())
        self._buffer = b""

    def _line(self, line: bytes) -> None:
        if not line.startswith(b"data:"):
            return
        payload = line[5:].strip()
        if not payload or payload == b"[DONE]":
            return
        try:
            chunk = json.loads(payload)
        except ValueError:
            return
        if isinstance(chunk, dict):
            absorb(self.call, chunk)
            if self.call.first_token is None and (self.call.text or self.call.tool_calls):
                self.call.first_token = time.perf_counter()


def absorb(call: Call, chunk: dict[str, Any]) -> None:
    """Fold one streamed chunk (or a whole non-streamed completion) into `call`."""
    usage = chunk.get("usage")
    if isinstance(usage, dict):
        call.usage = {
            name: int(usage.get(name) or 0)
            for name in ("prompt_tokens", "completion_tokens", "total_tokens")
        }
    timings = chunk.get("timings")
    if isinstance(timings, dict):
        call.timings = {
            name: float(value)
            for name in TIMINGS
            if isinstance(value := timings.get(name), int | float) and not isinstance(value, bool)
        }
    for choice in chunk.get("choices") or []:
        if not isinstance(choice, dict):
            continue
        delta = choice.get("delta") or choice.get("message") or {}
        if isinstance(delta, dict):
            content = delta.get("content")
            if isinstance(content, str) and len(call.text) < TEXT_CAP:
                call.text = (call.text + content)[:TEXT_CAP]
            for tool_call in delta.get("tool_calls") or []:
                function = tool_call.get("function") if isinstance(tool_call, dict) else None
                name = function.get("name") if isinstance(function, dict) else None
                if name:
                    call.tool_calls.append(str(name))
        if choice.get("finish_reason"):
            call.finish_reason = str(choice["finish_reason"])


class Tap:
    """The proxy. `async with Tap(upstream_base_url) as tap:` then give the server `tap.base_url`.
    Set `tap.step` to label the requests that follow."""

    def __init__(self, upstream: str, *, read_timeout: float = 120.0) -> None:
        self.upstream = upstream.rstrip("/")
        self.routes: dict[str, str] = {}
        """Other upstreams by path after /v1 (`{"/embeddings": "http://127.0.0.1:8081"}`): a
        second server for one kind of request."""
        self.step = ""
        self.calls: list[Call] = []
        self.faults: dict[Purpose, Fault] = {}
        self.keep_bodies = False
        self.bodies: dict[int, bytes] = {}
        self.origin = time.perf_counter()
        self._read_timeout = read_timeout
        self._server: asyncio.Server | None = None
        self._client: httpx.AsyncClient | None = None
        self._handlers: set[asyncio.Task[None]] = set()
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}{PREFIX}"

    async def __aenter__(self) -> Tap:
        self._client = httpx.AsyncClient(timeout=httpx.Timeout(self._read_timeout, connect=15.0))
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._handlers):
            task.cancel()
        for task in list(self._handlers):
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self._server is not None:
            await self._server.wait_closed()
        if self._client is not None:
            await self._client.aclose()

    def records(self) -> list[dict[str, Any]]:
        return [call.to_json(self.origin) for call in self.calls]

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        try:
            await self._handle(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:
            pass  # the tap is closing (__aexit__); the task ends quietly
        finally:
            self._handlers.discard(task)
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        method, path, headers, raw = await read_request(reader)
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = None
        token = headers.get("authorization", "").removeprefix("Bearer ").strip()
        call = Call(
            index=len(self.calls),
            step=self.step,
            purpose=classify(body),
            started=time.perf_counter(),
            request_bytes=len(raw),
            messages=len(body.get("messages") or []) if isinstance(body, dict) else 0,
            tools=len(body.get("tools") or []) if isinstance(body, dict) else 0,
            max_tokens=body.get("max_tokens") if isinstance(body, dict) else None,
        )
        self.calls.append(call)
        if self.keep_bodies:
            self.bodies[call.index] = raw
        fault = self.faults.get(call.purpose)
        if fault is not None:
            call.fault = fault
            try:
                await _answer_fault(call, fault, writer, body)
            finally:
                call.ended = time.perf_counter()
            return
        forward = asyncio.ensure_future(self._forward(call, method, path, headers, raw, writer))
        gone = asyncio.ensure_future(reader.read(1))  # EOF: the server closed the connection
        try:
            await asyncio.wait({forward, gone}, return_when=asyncio.FIRST_COMPLETED)
            if not forward.done():
                # The server went away (a cancelled turn, its own timeout). Give an answer that
                # was just finishing a moment, then stop waiting for the model.
                await asyncio.wait({forward}, timeout=1.0)
            if not forward.done():
                forward.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await forward
                call.error = call.error or "the server closed the connection before the answer"
            elif not forward.cancelled() and (problem := forward.exception()) is not None:
                call.error = call.error or f"tap: {type(problem).__name__}: {problem}"
        finally:
            gone.cancel()
            if not forward.done():
                forward.cancel()
            call.ended = time.perf_counter()
            if token:
                call.text = call.text.replace(token, "[key]")
                if call.error:
                    call.error = call.error.replace(token, "[key]")

    async def _forward(
        self,
        call: Call,
        method: str,
        path: str,
        headers: dict[str, str],
        raw: bytes,
        writer: asyncio.StreamWriter,
    ) -> None:
        assert self._client is not None
        suffix = path[len(PREFIX) :] if path.startswith(PREFIX) else path
        forwarded = {name: value for name, value in headers.items() if name in FORWARDED}
        answered = False
        try:
            upstream = self.routes.get(suffix, self.upstream).rstrip("/")
            async with self._client.stream(
                method, upstream + suffix, content=raw, headers=forwarded
            ) as response:
                call.status = response.status_code
                content_type = response.headers.get("content-type", "application/octet-stream")
                out = {
                    "Content-Type": content_type,
                    "Transfer-Encoding": "chunked",
                    "Connection": "close",
                }
                if "retry-after" in response.headers:
                    out["Retry-After"] = response.headers["retry-after"]
                writer.write(_head(response.status_code, out))
                await writer.drain()
                answered = True
                streaming = response.status_code == 200 and "event-stream" in content_type
                sse = _SseReader(call) if streaming else None
                whole = b""
                async for data in response.aiter_bytes():
                    if call.first_byte is None:
                        call.first_byte = time.perf_counter()
                    if sse is not None:
                        sse.feed(data)
                    elif len(whole) < 1_000_000:
                        whole += data
                    writer.write(_chunked(data))
                    await writer.drain()
                writer.write(b"0\r\n\r\n")
                await writer.drain()
                call.complete = True
                if sse is not None:
                    sse.close()
                else:
                    self._whole(call, response.status_code, whole)
        except httpx.HTTPError as error:
            call.error = f"upstream: {type(error).__name__}"
            if not answered:
                call.error += " (the tap answered 502)"
                payload = json.dumps({"error": {"message": call.error}}).encode()
                writer.write(
                    _head(
                        502,
                        {
                            "Content-Type": "application/json",
                            "Content-Length": str(len(payload)),
                            "Connection": "close",
                        },
                    )
                    + payload
                )
                with contextlib.suppress(ConnectionError):
                    await writer.drain()
        except ConnectionError:
            call.error = "the server closed the connection (cancelled or timed out)"

    @staticmethod
    def _whole(call: Call, status: int, whole: bytes) -> None:
        """A non-streamed answer: a completion's usage, or an error body (kept, capped)."""
        try:
            parsed = json.loads(whole) if whole else None
        except ValueError:
            parsed = None
        if status == 200 and isinstance(parsed, dict):
            absorb(call, parsed)
        elif status != 200:
            call.error = f"HTTP {status}: " + whole.decode("utf-8", "replace")[:300]


def previous_summary(body: Any) -> str:
    """The previous summary a summariser request holds ("" when none)."""
    messages = body.get("messages") if isinstance(body, dict) else None
    given = messages[-1].get("content", "") if isinstance(messages, list) and messages else ""
    opening = '<previous_summary inert_data="true">\n'
    if not isinstance(given, str) or opening not in given:
        return ""
    return given.split(opening, 1)[1].split("\n</previous_summary>", 1)[0]


async def _answer_fault(
    call: Call, fault: Fault, writer: asyncio.StreamWriter, body: Any = None
) -> None:
    """The tap's own answer to a faulted request (see the module's docstring)."""
    if fault == "http500":
        payload = json.dumps({"error": {"message": "tap: injected server error"}}).encode()
        call.status, call.error = 500, "HTTP 500: injected by the tap"
        head = {"Content-Type": "application/json", "Content-Length": str(len(payload))}
        writer.write(_head(500, {**head, "Retry-After": "0", "Connection": "close"}) + payload)
    else:
        text = previous_summary(body) if fault == "previous_summary" else MALFORMED
        chunks = [
            {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]},
            {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        ]
        data = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks)
        data += b"data: [DONE]\n\n"
        head = {"Content-Type": "text/event-stream", "Content-Length": str(len(data))}
        writer.write(_head(200, {**head, "Connection": "close"}) + data)
        call.status, call.complete, call.text, call.finish_reason = 200, True, text, "stop"
    call.first_byte = time.perf_counter()
    with contextlib.suppress(ConnectionError):
        await writer.drain()


def _head(status: int, headers: dict[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {status} Status"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _chunked(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"
