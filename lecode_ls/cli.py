"""The `lecode-ls` command: serve LSP over stdio (default) or TCP."""

from __future__ import annotations

import argparse
import functools
import logging
import os
import sys
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from lecode_ls import __version__
from lecode_ls.memory.secrets import log_filter

if TYPE_CHECKING:
    from pygls.protocol import JsonRPCProtocol


class _QuietDomainErrors(logging.Filter):
    """pygls logs a traceback for every error response; ours are expected answers, not faults."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Exception occurred for message")


def _port(value: str) -> int:
    if not (value.isascii() and value.isdigit() and len(value) <= 5) or int(value) > 65535:
        raise argparse.ArgumentTypeError(f"expected a port number, got {value!r}")
    return int(value)


def _pipe_name(value: str) -> str:
    if not value.strip():
        raise argparse.ArgumentTypeError("expected the name of the client's pipe, got nothing")
    return value


def _host_port(value: str) -> tuple[str, int]:
    from lecode_ls.server.transport import is_loopback

    host, sep, port = value.rpartition(":")
    digits = port.isascii() and port.isdigit() and len(port) <= 5
    if not sep or not host or not digits or int(port) > 65535:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {value!r}")
    if not is_loopback(host):
        raise argparse.ArgumentTypeError(
            f"{host} is not a loopback address: lecode-ls serves TCP on 127.0.0.1, ::1 or "
            "localhost only, since the protocol has no authentication and serves your project "
            "memory (reach it from elsewhere through an SSH tunnel)"
        )
    return host, int(port)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="lecode-ls",
        description="Serve lecode's persistent project memory over the Language Server Protocol. "
        "Memory lives under $LECODE_CONFIG_DIR (default: the platform config dir)/memory. "
        "`lecode-ls mcp --help`: the same memory over the Model Context Protocol. "
        "`lecode-ls context --help`: the memory section for another agent's hook. "
        "`lecode-ls import --help`: import a Claude Code, Codex or lecode transcript.",
    )
    parser.add_argument("--version", action="version", version=f"lecode-ls {__version__}")
    transport = parser.add_mutually_exclusive_group()
    transport.add_argument("--stdio", action="store_true", help="serve over stdio (the default)")
    transport.add_argument(
        "--tcp",
        metavar="HOST:PORT",
        type=_host_port,
        help="listen on a loopback HOST:PORT and serve the first client that connects (only "
        "that one; other hosts are refused: the protocol has no authentication)",
    )
    transport.add_argument(
        "--pipe",
        metavar="NAME",
        type=_pipe_name,
        help="connect to the client's named pipe or Unix socket (vscode-languageclient's pipe)",
    )
    transport.add_argument(
        "--socket",
        metavar="PORT",
        type=_port,
        help="connect to the client listening on 127.0.0.1:PORT (vscode-languageclient's socket)",
    )
    # vscode-languageclient passes the editor's process ID; lecode-ls ends when its input does.
    parser.add_argument("--clientProcessId", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--log-file", metavar="PATH", help="write the log there, not to stderr")
    parser.add_argument(
        "--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"]
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    given = sys.argv[1:] if argv is None else argv
    if given[:1] == ["mcp"]:  # `lecode-ls mcp ...`: the memory over MCP, not the language server
        from lecode_ls.mcp.cli import main as mcp_main

        return mcp_main(given[1:])
    if given[:1] == ["context"]:  # `lecode-ls context ...`: the memory section for a hook
        from lecode_ls.other_agents.cli import main as context_main

        return context_main(given[1:])
    if given[:1] == ["import"]:  # `lecode-ls import FILE`: another agent's transcript
        from lecode_ls.other_agents.cli import import_main

        return import_main(given[1:])
    args = parse_args(argv)
    handler: logging.Handler = (
        logging.FileHandler(args.log_file, encoding="utf-8")
        if args.log_file
        else logging.StreamHandler(sys.stderr)
    )
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(log_filter())  # no secret reaches the log (P5)
    if not args.log_file:
        # Quiet while an editor is connected: the log then goes to it (server/client_log.py).
        handler.set_name("lecode-stderr")
    logging.basicConfig(level=args.log_level, handlers=[handler])
    # pygls logs every message body at INFO: too chatty, and bodies hold memory contents.
    logging.getLogger("pygls").setLevel(logging.WARNING)
    # Lifecycle only: "Serving on ..." for TCP. Over stdio an editor files stderr under errors, so
    # pygls' "Starting async IO server" is left to DEBUG.
    quiet_start = not args.tcp and args.log_level != "DEBUG"
    logging.getLogger("pygls.server").setLevel(logging.WARNING if quiet_start else logging.INFO)
    logging.getLogger("pygls.protocol.json_rpc").addFilter(_QuietDomainErrors())

    # Imported here so `--help` and `--version` answer without loading the server.
    from lecode_ls.memory.project import config_dir
    from lecode_ls.server import transport
    from lecode_ls.server.routes import register
    from lecode_ls.server.server import LecodeServer

    server = LecodeServer(config_dir(os.environ))
    register(server)
    connect: Callable[[JsonRPCProtocol], Coroutine[Any, Any, None]]
    if args.tcp:
        connect = functools.partial(transport.serve_tcp, host=args.tcp[0], port=args.tcp[1])
    elif args.pipe is not None:
        connect = functools.partial(transport.serve_pipe, name=args.pipe)
    elif args.socket is not None:
        connect = functools.partial(transport.serve_socket, port=args.socket)
    else:
        connect = functools.partial(
            transport.serve_stdio, stdin=sys.stdin.buffer, stdout=sys.stdout.buffer
        )
    try:
        return server.serve(connect)
    finally:
        server.close()
