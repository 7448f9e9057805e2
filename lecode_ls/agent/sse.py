"""A provider's answer read in bounded memory: Server-Sent Events and error bodies.

A provider is a network peer: a misconfigured `base_url`, a proxy or a broken server can send an
event stream that never ends a line, or a gigabyte of error page. httpx-sse buffers a line until
it ends and httpx reads a whole body, so here the bytes are counted as they arrive:

- an event stream may carry at most MAX_STREAM_BYTES; past that the answer is refused;
- an error body is read up to MAX_ERROR_BYTES and the rest is never read.

The event format is the WHATWG one, reduced to what chat completions use: `data` fields (joined
with newlines), comments and other fields ignored, an event dispatched by an empty line, and an
unfinished event at the end of the stream dropped.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import AsyncIterator

import httpx

MAX_STREAM_BYTES = 16 << 20
MAX_ERROR_BYTES = 64 << 10

_EOL = re.compile(r"\r\n|\r|\n")


class StreamTooLarge(Exception):
    """The event stream passed MAX_STREAM_BYTES."""


async def read_capped(response: httpx.Response, limit: int = MAX_ERROR_BYTES) -> bytes:
    """The first `limit` bytes of the body; the rest is left unread."""
    data = bytearray()
    async for chunk in response.aiter_bytes():
        data += chunk[: limit - len(data)]
        if len(data) >= limit:
            break
    return bytes(data)


async def data_events(
    response: httpx.Response, limit: int = MAX_STREAM_BYTES
) -> AsyncIterator[str]:
    """The `data` of each event of the stream, in order; StreamTooLarge past `limit` bytes."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    received = 0
    pending: list[str] = []  # the start of a line whose end has not arrived, in pieces
    data: list[str] = []
    async for chunk in response.aiter_bytes():
        received += len(chunk)
        if received > limit:
            raise StreamTooLarge(f"the answer passed {limit >> 20} MiB")
        piece = decoder.decode(chunk)
        if _EOL.search(piece) is None:
            pending.append(piece)  # joined once its line ends: no quadratic copying
            continue
        text = "".join([*pending, piece])
        start = 0
        for end in _EOL.finditer(text):
            if end.group() == "\r" and end.end() == len(text):
                break  # maybe the first half of "\r\n": wait for the next chunk
            line = text[start : end.start()]
            start = end.end()
            if not line:
                if data:
                    yield "\n".join(data)
                    data = []
                continue
            name, _, value = line.partition(":")
            if name == "data":
                data.append(value.removeprefix(" "))
        pending = [text[start:]]
