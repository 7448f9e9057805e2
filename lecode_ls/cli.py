"""The `lecode-ls` command: serve LSP over stdio (default) or TCP."""

from __future__ import annotations

import argparse
import logging
import os
import sys

from lecode_ls import __version__


class _QuietDomainErrors(logging.Filter):
    """pygls logs a traceback for every error response; ours are expected answers, not faults."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Exception occurred for message")


def _host_port(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {value!r}")
    return host, int(port)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="lecode-ls",
        description="Serve lecode's persistent project memory over the Language Server Protocol. "
        "Memory lives under $LECODE_CONFIG_DIR (default: the platform config dir)/memory.",
    )
    parser.add_argument("--version", action="version", version=f"lecode-ls {__version__}")
    parser.add_argument("--stdio", action="store_true", help="serve over stdio (the default)")
    parser.add_argument("--tcp", metavar="HOST:PORT", type=_host_port, help="serve over TCP")
    parser.add_argument("--log-file", metavar="PATH", help="write the log there, not to stderr")
    parser.add_argument(
        "--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"]
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    handler: logging.Handler = (
        logging.FileHandler(args.log_file, encoding="utf-8")
        if args.log_file
        else logging.StreamHandler(sys.stderr)
    )
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=args.log_level, handlers=[handler])
    # pygls logs every message body at INFO: too chatty, and bodies hold memory contents.
    logging.getLogger("pygls").setLevel(logging.WARNING)
    logging.getLogger("pygls.server").setLevel(logging.INFO)  # lifecycle only: "Serving on ..."
    logging.getLogger("pygls.protocol.json_rpc").addFilter(_QuietDomainErrors())

    # Imported here so `--help` and `--version` answer without loading the server.
    from lecode_ls.memory.layout import config_dir
    from lecode_ls.server.routes import register
    from lecode_ls.server.server import LecodeServer

    server = LecodeServer(config_dir(os.environ))
    register(server)
    try:
        if args.tcp:
            server.start_tcp(*args.tcp)
        else:
            server.start_io()
    finally:
        server.close()
    return 0
