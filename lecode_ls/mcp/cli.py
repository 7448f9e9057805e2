"""The `lecode-ls mcp` command: serve the project memory over MCP on stdio.

The MCP SDK is an optional extra; without it this exits 2 with one line saying how to install
it, before anything else is loaded.
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import os
import sys
from pathlib import Path

from lecode_ls.memory.secrets import log_filter

INSTALL_HINT = (
    "lecode-ls mcp needs the MCP SDK: install lecode-ls with its mcp extra, in a clone of "
    "lecode-ls: uv tool install '.[mcp]'"
)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="lecode-ls mcp",
        description="Serve the project memory of lecode-ls over the Model Context Protocol "
        "(stdio), for agents such as Claude Code, Codex CLI, Cursor or VS Code's agent mode.",
    )
    parser.add_argument(
        "--project",
        metavar="PATH",
        help="a folder of the project (default: the working directory); its main Git "
        "checkout names the memory, as in the editor",
    )
    parser.add_argument("--log-file", metavar="PATH", help="write the log there, not to stderr")
    parser.add_argument(
        "--log-level", default="WARNING", choices=["DEBUG", "INFO", "WARNING", "ERROR"]
    )
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    if importlib.util.find_spec("mcp") is None:
        print(INSTALL_HINT, file=sys.stderr)
        return 2
    folder = Path(args.project) if args.project else Path.cwd()
    if not folder.is_dir():
        print(f"lecode-ls mcp: --project {args.project} is not a folder", file=sys.stderr)
        return 2
    handler: logging.Handler = (
        logging.FileHandler(args.log_file, encoding="utf-8")
        if args.log_file
        else logging.StreamHandler(sys.stderr)
    )
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(log_filter())  # no secret reaches the log (P5)
    logging.basicConfig(level=args.log_level, handlers=[handler])

    from lecode_ls.mcp.app import serve
    from lecode_ls.memory.project import config_dir
    from lecode_ls.platform.paths import canonical

    return serve(
        canonical(folder),
        config_dir(os.environ),
        from_env=bool(os.environ.get("LECODE_CONFIG_DIR")),
    )
