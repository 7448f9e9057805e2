"""The base-protocol parser (`Framer`): bodies out of any chunking, recovery after any garbage.

The server tests (tests/e2e/test_transport.py) send these bytes to the real process; here the
parser alone meets many more of them, generated.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from pygls.exceptions import JsonRpcInternalError

from lecode_ls.server.server import LecodeServer
from lecode_ls.server.transport import MAX_HEADER_BYTES, Framer, FramingError


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def feed_in(framer: Framer, data: bytes, cuts: list[int]) -> list[bytes | FramingError]:
    events: list[bytes | FramingError] = []
    start = 0
    for cut in [*sorted(c % (len(data) + 1) for c in cuts), len(data)]:
        events.extend(framer.feed(data[start:cut]))
        start = max(start, cut)
    return events


bodies = st.lists(st.binary(max_size=300), max_size=6)


class TestFramer:
    # covers P5 (issue 10.3, 10.4)

    @given(bodies, st.lists(st.integers(min_value=0), max_size=20))
    def test_frames_come_out_whole_however_the_bytes_are_cut(
        self, messages: list[bytes], cuts: list[int]
    ) -> None:
        data = b"".join(frame(body) for body in messages)
        assert feed_in(Framer(), data, cuts) == messages

    @given(st.binary(max_size=2000), st.binary(min_size=1, max_size=200))
    @settings(max_examples=300)
    def test_a_good_frame_after_any_garbage_is_recovered(self, garbage: bytes, body: bytes) -> None:
        # What the garbage may hide is its own business; the frame after it always comes out,
        # unless the garbage declares a body that swallows it (a valid frame header in it).
        events = list(Framer().feed(garbage + b"\r\n\r\n" + frame(body) + frame(b"{}")))
        assert events[-1] == b"{}"

    def test_a_header_section_over_the_limit_is_an_error_and_memory_stays_bounded(
        self,
    ) -> None:
        framer = Framer()
        events: list[bytes | FramingError] = []
        for _ in range(1000):
            events.extend(framer.feed(b"X" * 65536))
        assert isinstance(events[0], FramingError)
        assert len(framer._buffer) <= MAX_HEADER_BYTES + 65536
        assert list(framer.feed(frame(b"ok"))) == [b"ok"]

    def test_a_body_over_the_limit_is_refused_without_reading_it(self) -> None:
        framer = Framer(max_body=10)
        events = list(framer.feed(b"Content-Length: 11\r\n\r\nhello world" + frame(b"ok")))
        assert events == [
            FramingError("a message of 11 bytes is over the 10-byte limit"),
            b"ok",
        ]

    def test_header_names_are_case_insensitive_and_other_fields_ignored(self) -> None:
        data = b"content-length: 2\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\nok"
        assert list(Framer().feed(data)) == [b"ok"]

    def test_blank_lines_between_frames_are_tolerated(self) -> None:
        assert list(Framer().feed(b"\r\n" + frame(b"a") + b"\r\n\r\n" + frame(b"b"))) == [
            b"a",
            b"b",
        ]

    def test_a_signed_or_hex_content_length_is_an_error(self) -> None:
        for header in (b"Content-Length: -1\r\n\r\n", b"Content-Length: 0x10\r\n\r\n"):
            assert isinstance(next(iter(Framer().feed(header))), FramingError)


class TestNoTracebackLeaves:
    # covers P5: an exception in any handler, pygls' own included, reaches the client plainly

    def test_an_internal_error_with_a_traceback_is_sent_without_it(self, tmp_path: Path) -> None:
        server = LecodeServer(tmp_path)
        sent: list[bytes] = []
        server.protocol.set_writer(Collect(sent))
        try:
            (tmp_path / "missing" / "file").read_text()  # an error that names a local path
        except OSError:
            error = JsonRpcInternalError.of(sys.exc_info()).to_response_error()
        server.protocol._send_response(7, error=error)
        body = json.loads(sent[0].split(b"\r\n\r\n", 1)[1])
        assert body == {
            "jsonrpc": "2.0",
            "id": 7,
            "error": {
                "code": -32603,
                "message": "lecode-ls failed inside; the server log has the details",
                "data": {"code": "internal_error"},
            },
        }


class Collect:
    def __init__(self, sent: list[bytes]) -> None:
        self.sent = sent

    def write(self, data: bytes) -> None:
        self.sent.append(data)

    def close(self) -> None:
        pass
