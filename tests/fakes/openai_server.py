"""A real loopback HTTP server that speaks the OpenAI Chat Completions API with scripted answers.

It binds 127.0.0.1 on a free port, speaks just enough HTTP/1.1 (one request per connection,
answers in chunked transfer encoding like the real APIs) and plays a queue of scripted responses,
one per request: `Stream` (SSE chunks, optionally gated on an `asyncio.Event`, optionally cut off
without `[DONE]`) or `Reply` (a plain HTTP answer such as a 401 or a 429 with Retry-After). Every
request is recorded, and a stream whose client went away is noted in `disconnects`.

    async with FakeOpenAI() as server:
        server.push(Stream(text_chunks("Hel", "lo")))
        provider = OpenAICompatible(server.base_url, "gpt-4o", "sk-test")

It runs in the test's own event loop, so a test drives it with events, never with sleeps.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Wait:
    """A step of a stream: hold the stream until `event` is set (or the client goes away)."""

    event: asyncio.Event


@dataclass
class Stream:
    """A 200 SSE answer. Steps are chunk dicts (sent as `data: <json>`), raw strings (sent as
    `data: <string>`), or `Wait`s. `done` sends `data: [DONE]`; `truncate` drops the connection
    after the steps without ending the chunked body (a server that died mid-answer)."""

    steps: Sequence[dict[str, Any] | str | Wait]
    done: bool = True
    truncate: bool = False
    content_type: str = "text/event-stream"


@dataclass
class Reply:
    """A plain HTTP answer, typically an error."""

    status: int
    body: dict[str, Any] | str = ""
    headers: dict[str, str] = field(default_factory=dict)
    reason: str | None = None
    """The status line's reason phrase (default: the usual one for the status)."""


Response = Stream | Reply


@dataclass
class Received:
    """One request as the server saw it."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    at: float = 0.0
    """time.perf_counter() when the whole request had arrived (the benchmarks use it)."""


REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden",
           404: "Not Found", 429: "Too Many Requests", 500: "Internal Server Error",
           502: "Bad Gateway", 503: "Service Unavailable"}  # fmt: skip


def chunk(
    *,
    content: str | None = None,
    tool_calls: list[dict[str, Any]] | None = None,
    finish: str | None = None,
    model: str = "fake-model",
) -> dict[str, Any]:
    """One `chat.completion.chunk` with a single choice."""
    delta: dict[str, Any] = {}
    if content is not None:
        delta["content"] = content
    if tool_calls is not None:
        delta["tool_calls"] = tool_calls
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def usage_chunk(prompt: int, completion: int) -> dict[str, Any]:
    """The final chunk `stream_options.include_usage` asks for: empty choices, the usage."""
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "choices": [],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }


def text_chunks(
    *pieces: str, finish: str = "stop", usage: tuple[int, int] | None = None
) -> list[dict[str, Any]]:
    """A text answer streamed as `pieces`, then the finish reason, then usage if given."""
    steps = [chunk(content="")] + [chunk(content=piece) for piece in pieces]
    steps.append(chunk(finish=finish))
    if usage is not None:
        steps.append(usage_chunk(*usage))
    return steps


class FakeOpenAI:
    """The server. Use as `async with FakeOpenAI() as server`."""

    def __init__(self, respond: Callable[[Any], Response] | None = None) -> None:
        """`respond(body)`, if given, answers every request the queue has no response for (a
        model that decides from what it is asked, for long scripted sessions)."""
        self.respond = respond
        self.routes: dict[tuple[str, str], Reply] = {}
        """Fixed answers to other requests than chat, by (method, path): `/props`, `/v1/models`."""
        self.embed: Callable[[list[str]], list[list[float]]] | None = None
        """`embed(texts)`, if given, answers `POST /v1/embeddings` (one vector a text); without
        it that path is a 404 like any unknown one."""
        self.responses: list[Response] = []
        self.requests: list[Received] = []
        self.stream_ends: list[float] = []  # perf_counter() when each complete stream was sent
        self.disconnects = 0
        self.disconnected = asyncio.Event()
        self._server: asyncio.Server | None = None
        self._handlers: set[asyncio.Task[None]] = set()
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def push(self, *responses: Response) -> FakeOpenAI:
        self.responses.extend(responses)
        return self

    @property
    def bodies(self) -> list[Any]:
        """The bodies of the chat requests (window probes and other routes left out)."""
        return [r.body for r in self.requests if r.path == "/v1/chat/completions"]

    async def __aenter__(self) -> FakeOpenAI:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._handlers):
            task.cancel()
        for task in list(self._handlers):
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        try:
            await self._handle(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self._handlers.discard(task)
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        method, path, headers, raw = await read_request(reader)
        try:
            body: Any = json.loads(raw) if raw else None
        except json.JSONDecodeError:
            body = raw.decode("utf-8", "replace")
        self.requests.append(Received(method, path, headers, body, time.perf_counter()))

        if (method, path) in self.routes:
            await self._reply(writer, self.routes[method, path])
        elif (method, path) == ("POST", "/v1/embeddings") and self.embed is not None:
            vectors = self.embed(list(body["input"]))
            data = [
                {"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)
            ]
            await self._reply(writer, Reply(200, {"object": "list", "data": data}))
        elif method != "POST" or path != "/v1/chat/completions":
            await self._reply(writer, Reply(404, {"error": {"message": f"no route {path}"}}))
        elif not self.responses and self.respond is None:
            await self._reply(writer, Reply(500, {"error": {"message": "no scripted response"}}))
        else:
            if self.responses:
                response = self.responses.pop(0)
            else:
                assert self.respond is not None
                response = self.respond(body)
            if isinstance(response, Reply):
                await self._reply(writer, response)
            else:
                await self._stream(reader, writer, response)

    async def _reply(self, writer: asyncio.StreamWriter, reply: Reply) -> None:
        if isinstance(reply.body, dict):
            payload = json.dumps(reply.body).encode()
            content_type = "application/json"
        else:
            payload = reply.body.encode()
            content_type = "text/plain"
        headers = {
            "Content-Type": content_type,
            "Content-Length": str(len(payload)),
            "Connection": "close",
            **reply.headers,
        }
        writer.write(_head(reply.status, headers, reply.reason) + payload)
        await writer.drain()

    async def _stream(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, stream: Stream
    ) -> None:
        headers = {
            "Content-Type": stream.content_type,
            "Transfer-Encoding": "chunked",
            "Connection": "close",
        }
        writer.write(_head(200, headers))
        await writer.drain()
        for step in stream.steps:
            if isinstance(step, Wait):
                if not await self._wait_or_disconnect(reader, step.event):
                    return
                continue
            data = step if isinstance(step, str) else json.dumps(step)
            writer.write(_chunked(f"data: {data}\n\n".encode()))
            await writer.drain()
        if stream.truncate:
            return  # closing now leaves the chunked body unterminated
        if stream.done:
            writer.write(_chunked(b"data: [DONE]\n\n"))
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        self.stream_ends.append(time.perf_counter())

    async def _wait_or_disconnect(self, reader: asyncio.StreamReader, event: asyncio.Event) -> bool:
        """Wait for `event`; False (and a recorded disconnect) if the client closed first."""
        released = asyncio.ensure_future(event.wait())
        eof = asyncio.ensure_future(reader.read(1))
        try:
            done, _ = await asyncio.wait({released, eof}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            released.cancel()
            eof.cancel()
        if released in done:
            return True
        self.disconnects += 1
        self.disconnected.set()
        return False


async def read_request(reader: asyncio.StreamReader) -> tuple[str, str, dict[str, str], bytes]:
    """One HTTP/1.1 request: method, path, headers (names lower-cased) and the raw body."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    method, path, _ = lines[0].split(" ", 2)
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    raw = await reader.readexactly(int(headers.get("content-length", "0")))
    return method, path, headers, raw


def _head(status: int, headers: dict[str, str], reason: str | None = None) -> bytes:
    lines = [f"HTTP/1.1 {status} {reason or REASONS.get(status, 'Status')}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _chunked(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"
