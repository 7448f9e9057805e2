"""Server-Sent Events read in bounded memory (agent/sse.py), from bytes cut anywhere."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lecode_ls.agent.sse import StreamTooLarge, data_events, read_capped


class Chunks(httpx.AsyncByteStream):
    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            yield chunk


def response(*chunks: bytes) -> httpx.Response:
    return httpx.Response(200, stream=Chunks(list(chunks)))


async def events(*chunks: bytes, limit: int = 1 << 20) -> list[str]:
    return [data async for data in data_events(response(*chunks), limit)]


def cut(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    return [data[a:b] for a, b in itertools.pairwise(points)]


STREAM = (
    b": a comment\r\n"
    b'data: {"a": 1}\r\n\r\n'
    b"event: ignored\ndata: line one\ndata:line two\n\n"
    b"data: \xe2\x82\xac\r\r"
    b"data: [DONE]\n\n"
    b"data: unfinished"
)


class TestDataEvents:
    async def test_events_are_the_joined_data_fields(self) -> None:
        assert await events(STREAM) == ['{"a": 1}', "line one\nline two", "\u20ac", "[DONE]"]

    @given(st.lists(st.integers(min_value=0), max_size=12))
    async def test_the_same_events_however_the_bytes_are_cut(self, cuts: list[int]) -> None:
        assert await events(*cut(STREAM, cuts)) == await events(STREAM)

    async def test_a_stream_past_the_limit_is_refused(self) -> None:
        with pytest.raises(StreamTooLarge):
            await events(b"data: " + b"x" * 100, b"y" * 100, limit=150)


class TestReadCapped:
    async def test_only_the_first_bytes_are_kept(self) -> None:
        assert await read_capped(response(b"abc", b"def", b"ghi"), 5) == b"abcde"
