"""The LSP base protocol, read in bounded pieces, and the transports that carry it.

pygls' own reader trusts its client: a `Content-Length: 1000000000000` header made it allocate
until it died, invalid JSON and batches got no answer, and a frame without `Content-Length`
desynchronised the stream for good. Here the bytes go through `Framer`, a parser with no I/O:

- a header section is at most MAX_HEADER_BYTES and must carry one decimal `Content-Length` of at
  most MAX_BODY_BYTES; anything else is a framing error;
- after a framing error the parser skips to the next `Content-Length:` it sees, so one bad frame
  costs that frame only;
- memory is bounded by one header section plus one body.

`handle_body` then answers what JSON-RPC 2.0 and LSP say must be answered: -32700 for a body that
is not UTF-8 JSON (with `id: null`), -32600 for a batch, a non-object, a wrong `jsonrpc`, a bad `id`
or `method`, and for any request after `shutdown`. A valid message goes to pygls.

Transports: stdio (the default), `--pipe NAME` and `--socket PORT` (the two that
vscode-languageclient also speaks: the client listens, the server connects), and `--tcp HOST:PORT`
(the server listens on loopback only and serves exactly one client: the first connection; the
listener closes then, so no second client can connect, read or take over the output).
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import os
import re
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.io_ import StdoutWriter
from pygls.protocol import JsonRPCProtocol

from lecode_ls.jsonbound import structure_count

log = logging.getLogger(__name__)

MAX_HEADER_BYTES = 8192
MAX_BODY_BYTES = 64 << 20  # the largest request lecode-ls accepts (a session import is the largest)
CHUNK_BYTES = 65536
QUEUED_CHUNKS = 16  # stdio read-ahead: at most 1 MiB waits for the event loop

PARSE_ERROR = -32700
INVALID_REQUEST = -32600

_CONTENT_LENGTH = re.compile(rb"content-length:", re.IGNORECASE)
_HEADER_LINE = re.compile(rb"([!-9;-~]+):[ \t]*([ -~]*?)[ \t]*")  # token ":" visible ASCII


@dataclass(frozen=True)
class FramingError:
    """Bytes that are not a frame of the base protocol; `message` says why, for the client."""

    message: str


class Framer:
    """Turns a byte stream into message bodies and framing errors, in bounded memory."""

    def __init__(self, max_body: int = MAX_BODY_BYTES) -> None:
        self.max_body = max_body
        self._buffer = bytearray()
        self._length: int | None = None  # the body length once a header section was read
        self._skipping = False  # after an error: discarding up to the next Content-Length

    def feed(self, data: bytes) -> Iterator[bytes | FramingError]:
        self._buffer += data
        while True:
            if self._skipping:
                found = _CONTENT_LENGTH.search(self._buffer)
                if found is None:
                    # Keep what could be the start of a "Content-Length:" cut by the chunk end.
                    del self._buffer[: max(len(self._buffer) - 15, 0)]
                    return
                del self._buffer[: found.start()]
                self._skipping = False
            if self._length is None:
                event = self._header()
                if event is None:
                    return
                if isinstance(event, FramingError):
                    # Skip from the next byte on: a frame may hide inside what was refused
                    # (garbage written right before a good header, or a second header field).
                    del self._buffer[:1]
                    self._skipping = True
                    yield event
                    continue
                self._length = event
            if len(self._buffer) < self._length:
                return
            body = bytes(self._buffer[: self._length])
            del self._buffer[: self._length]
            self._length = None
            yield body

    def _header(self) -> int | FramingError | None:
        """The body length of the header section at the buffer's start (consumed), an error (the
        buffer left as it is), or None (not all of it has arrived yet)."""
        # Blank lines between frames are tolerated: some clients end a body with a newline.
        stripped = self._buffer.lstrip(b"\r\n")
        if len(stripped) != len(self._buffer):
            del self._buffer[: len(self._buffer) - len(stripped)]
        end = self._buffer.find(b"\r\n\r\n", 0, MAX_HEADER_BYTES + 4)
        if end < 0:
            if len(self._buffer) > MAX_HEADER_BYTES + 3:
                return FramingError(f"a header section is longer than {MAX_HEADER_BYTES} bytes")
            return None
        lines = bytes(self._buffer[:end]).split(b"\r\n")
        length: int | None = None
        for line in lines:
            match = _HEADER_LINE.fullmatch(line)
            if match is None:
                return FramingError("a header line is not 'Name: value' in ASCII")
            if match.group(1).lower() != b"content-length":
                continue  # Content-Type and unknown fields are ignored (the body is UTF-8)
            value = match.group(2)
            if length is not None:
                return FramingError("a header section has two Content-Length fields")
            if not value.isdigit() or len(value) > 18:
                return FramingError("Content-Length is not a decimal byte count")
            length = int(value)
        if length is None:
            return FramingError("a header section has no Content-Length")
        if length > self.max_body:
            return FramingError(
                f"a message of {length:,} bytes is over the {self.max_body:,}-byte limit"
            )
        del self._buffer[: end + 4]
        return length


# -- messages --------------------------------------------------------------------------------


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def reply_error(
    protocol: JsonRPCProtocol,
    msg_id: int | str | None,
    code: int,
    text: str,
    data: dict[str, Any] | None = None,
) -> None:
    """Send an error response. `msg_id` None is JSON-RPC's `id: null` (the id was unreadable)."""
    error: dict[str, Any] = {"code": code, "message": text}
    if data is not None:
        error["data"] = data
    # pygls' _send_response drops an id of None; the envelope is written here instead.
    protocol._send_data({"jsonrpc": "2.0", "id": msg_id, "error": error})  # pygls' one writer


MAX_JSON_STRUCTURE = 2_000_000
"""At most this many `{ [ , :` in a body (lecode_ls/jsonbound.py): its parse then allocates at
most about 150 MB, where 64 MiB of `{}` took 1.7 GiB. A 1 MiB document, or an import of ten
thousand records, holds a fraction of it."""


def handle_body(protocol: JsonRPCProtocol, body: bytes) -> None:
    """Decode one message body, answer what is malformed, and give the rest to pygls."""
    if structure_count(body) > MAX_JSON_STRUCTURE:
        reply_error(
            protocol, None, INVALID_REQUEST,
            f"the body holds more than {MAX_JSON_STRUCTURE:,} JSON values; it is not parsed",
        )  # fmt: skip
        return
    try:
        data = json.loads(body.decode("utf-8"), parse_constant=_refuse_constant)
    except UnicodeDecodeError as exc:
        reply_error(protocol, None, PARSE_ERROR, f"the body is not UTF-8 (byte {exc.start})")
        return
    except RecursionError:
        reply_error(protocol, None, PARSE_ERROR, "the body is JSON nested too deeply")
        return
    except ValueError as exc:  # json.JSONDecodeError, NaN/Infinity, integers of 4,300+ digits
        reply_error(protocol, None, PARSE_ERROR, f"the body is not JSON: {exc}"[:200])
        return
    if isinstance(data, list):
        reply_error(protocol, None, INVALID_REQUEST, "batches are not supported by LSP")
        return
    if not isinstance(data, dict):
        reply_error(protocol, None, INVALID_REQUEST, "a message must be a JSON object")
        return
    msg_id = data.get("id")
    good_id = (isinstance(msg_id, int) and not isinstance(msg_id, bool)) or isinstance(msg_id, str)
    if "id" in data and not good_id:
        if "method" in data:
            reply_error(protocol, None, INVALID_REQUEST, "id: must be an integer or a string")
        return  # a response with a bad id matches no request of ours
    answer_to = msg_id if good_id else None
    method = data.get("method")
    if data.get("jsonrpc") != "2.0":
        if "method" in data and "id" in data:
            reply_error(protocol, answer_to, INVALID_REQUEST, 'jsonrpc: must be "2.0"')
        return
    if "method" in data and not isinstance(method, str):
        if "id" in data:
            reply_error(protocol, answer_to, INVALID_REQUEST, "method: must be a string")
        return
    if "method" not in data and "id" not in data:
        reply_error(protocol, None, INVALID_REQUEST, "a message needs a method or an id")
        return
    # The one place that refuses requests after `shutdown` (LSP: InvalidRequest), standard and
    # custom alike. "After" is in the order they arrive: the shutdown request is marked here,
    # before its handler (a task) has run, so a request right behind it is refused too.
    is_request = "id" in data and method is not None
    if is_request and getattr(protocol, "shutdown_requested", False) and method != types.EXIT:
        reply_error(
            protocol,
            answer_to,
            INVALID_REQUEST,
            "the server is shutting down; it takes no more requests",
            {"code": "shut_down"},
        )
        return
    if is_request and method == types.SHUTDOWN:
        protocol.shutdown_requested = True  # type: ignore[attr-defined]
    try:
        message = protocol.structure_message(data)
    except JsonRpcException as exc:  # a request was answered by structure_message itself
        log.debug("message not handled: %s", exc)
        return
    if isinstance(message, dict):  # a "message" pygls does not recognise
        log.debug("message not handled: neither request, notification nor response")
        return
    protocol.handle_message(message)


async def pump(protocol: JsonRPCProtocol, read: Callable[[], Awaitable[bytes]]) -> None:
    """Read the client's bytes until they end, handling each message as it completes."""
    framer = Framer()
    while chunk := await read():
        for event in framer.feed(chunk):
            if isinstance(event, FramingError):
                log.debug(
                    "framing error: %s", event.message
                )  # the client is told; a flood must not fill the log
                reply_error(protocol, None, PARSE_ERROR, event.message)
            else:
                try:
                    handle_body(protocol, event)
                except Exception:  # a fault in one message's handling must not end the server
                    log.exception("a message could not be handled")


# -- transports ------------------------------------------------------------------------------


async def serve_stdio(protocol: JsonRPCProtocol, stdin: BinaryIO, stdout: BinaryIO) -> None:
    protocol.set_writer(StdoutWriter(stdout))
    await pump(protocol, stdin_reader(stdin))


def stdin_reader(stdin: BinaryIO) -> Callable[[], Awaitable[bytes]]:
    """Chunks of `stdin`, read by a daemon thread (it may block until the client exits, and a
    pending read must not hold up the process's exit), at most QUEUED_CHUNKS ahead."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[bytes] = asyncio.Queue(QUEUED_CHUNKS)

    # os.read on the descriptor, not stdin.read1: a daemon thread blocked inside a buffered
    # reader holds its lock, and the interpreter aborts when it finds that lock at exit.
    fd = stdin.fileno()

    def read_all() -> None:
        while True:
            try:
                chunk = os.read(fd, CHUNK_BYTES)
            except OSError:
                chunk = b""
            try:
                asyncio.run_coroutine_threadsafe(queue.put(chunk), loop).result()
            except RuntimeError:  # the loop is closed: the server is exiting
                return
            if not chunk:
                return

    threading.Thread(target=read_all, name="lecode-stdin", daemon=True).start()
    return queue.get


def is_loopback(host: str) -> bool:
    """Whether `host` names a loopback address: "localhost" (served on 127.0.0.1, never on
    what a resolver says it is), or a loopback IP without a scope ("::1%lo" is refused: asyncio
    cannot listen on it)."""
    if host == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return address.is_loopback and "%" not in host


async def serve_tcp(protocol: JsonRPCProtocol, host: str, port: int) -> None:
    """Listen on loopback `host:port`, serve the first client, and refuse every other."""
    if not is_loopback(host):
        raise ValueError(f"--tcp: {host} is not a loopback address")
    first: asyncio.Future[tuple[asyncio.StreamReader, asyncio.StreamWriter]]
    first = asyncio.get_running_loop().create_future()

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if first.done():  # the listener is closing: nobody else is served
            writer.close()
            return
        first.set_result((reader, writer))

    # "localhost" is 127.0.0.1 here: a resolver (or /etc/hosts) may map it to a LAN address.
    bind = "127.0.0.1" if host == "localhost" else host.strip("[]")
    server = await asyncio.start_server(accept, bind, port)
    bound = [sock.getsockname()[0] for sock in server.sockets]
    if not bound or not all(ipaddress.ip_address(a.split("%")[0]).is_loopback for a in bound):
        server.close()  # what was bound, not what was asked for, is what must be loopback
        raise ValueError(f"--tcp: {host} did not bind to loopback addresses only")
    addresses = ", ".join(str(sock.getsockname()[:2]) for sock in server.sockets)
    log.info("Serving on %s (one client, loopback only)", addresses)
    reader, writer = await first
    server.close()  # stop listening: one client per server
    log.info("client connected; no other connection is accepted")
    await serve_stream(protocol, reader, writer)


async def serve_pipe(protocol: JsonRPCProtocol, name: str) -> None:
    """Connect to the client's named pipe (a Unix socket path; a `\\\\.\\pipe\\` on Windows)."""
    if sys.platform == "win32":
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=CHUNK_BYTES)
        transport, _ = await loop.create_pipe_connection(  # type: ignore[attr-defined]
            lambda: asyncio.StreamReaderProtocol(reader), name
        )
        stream_protocol = transport.get_protocol()
        writer = asyncio.StreamWriter(transport, stream_protocol, reader, loop)
    else:
        reader, writer = await asyncio.open_unix_connection(name)
    await serve_stream(protocol, reader, writer)


async def serve_socket(protocol: JsonRPCProtocol, port: int) -> None:
    """Connect to the client listening on loopback `port` (vscode-languageclient's `socket`)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    await serve_stream(protocol, reader, writer)


async def serve_stream(
    protocol: JsonRPCProtocol, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    # A StreamWriter's write and close are synchronous, as pygls' Writer protocol asks.
    protocol.set_writer(writer)
    try:
        await pump(protocol, lambda: reader.read(CHUNK_BYTES))
    except ConnectionError:
        log.info("the client's connection was lost")
    finally:
        writer.close()
