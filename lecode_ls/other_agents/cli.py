"""`lecode-ls context`: the memory section for another agent's prompt, for its hooks.

Imports stay light (no pygls, httpx or MCP SDK): a hook runs at every prompt, and start-up is
most of its cost (bench/context.py).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path
from typing import NoReturn


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # Not argparse's exit status 2: a Claude Code or Codex hook exiting 2 blocks the prompt.
        self.print_usage(sys.stderr)
        self.exit(1, f"{self.prog}: error: {message}\n")


def parse_args(argv: list[str]) -> argparse.Namespace:
    from lecode_ls.other_agents.hooks import FORMATS

    parser = _Parser(
        prog="lecode-ls context",
        description="Print the project memory section for a prompt (ranked, capped, validated, "
        "labelled untrusted), for another agent's hook. Without --prompt, the hook's JSON is "
        "read from stdin (Claude Code, Codex, Gemini CLI). Never writes the store.",
    )
    parser.add_argument("--prompt", help="the prompt to rank facts for (else the hook's JSON)")
    parser.add_argument("--cwd", help="the project folder (else the hook's cwd, else .)")
    parser.add_argument("--format", choices=FORMATS, default="markdown", dest="form")
    parser.add_argument(
        "--log-level", default="WARNING", choices=["DEBUG", "INFO", "WARNING", "ERROR"]
    )
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    logging.basicConfig(
        level=args.log_level, stream=sys.stderr, format="lecode-ls context: %(message)s"
    )
    log = logging.getLogger("lecode_ls.other_agents")
    from lecode_ls.other_agents.hooks import BadHookInput, HookInput, read_hook_input, render

    hook = HookInput()
    if args.prompt is None:
        try:
            hook = read_hook_input(sys.stdin.buffer)
        except BadHookInput as error:
            log.warning("%s: no section", error)
            sys.stdout.write(render("", args.form, None))
            return 0
    prompt = args.prompt if args.prompt is not None else hook.prompt
    folder = Path(args.cwd or hook.cwd or Path.cwd())

    try:
        from lecode_ls.memory.project import config_dir
        from lecode_ls.other_agents.context import agent_context

        # A session's start gets the project's instruction files too; a prompt only the
        # memory (the agent keeps what its session started with).
        agent = None if args.form == "markdown" else args.form
        text = agent_context(
            config_dir(os.environ), folder, prompt, agent, instructions=hook.event == "SessionStart"
        )
    except Exception as error:
        log.warning("no section (%s)", type(error).__name__)
        text = ""
    sys.stdout.write(render(text, args.form, hook.event))
    return 0


def import_main(argv: list[str]) -> int:
    """`lecode-ls import FILE`: a transcript into the project's sessions, as
    `lecode/session/import` with a `path` takes it (Claude Code, Codex, lecode's own export)."""
    parser = _Parser(
        prog="lecode-ls import",
        description="Import a transcript file as a new session of the project: a Claude Code "
        "session JSONL, a Codex CLI rollout JSONL, or a lecode-ls export. Records of another "
        "project's folder are left out.",
    )
    parser.add_argument("file", help="the JSONL file")
    parser.add_argument("--cwd", help="a folder of the project (default: .)")
    parser.add_argument("--title", help="the new session's title")
    args = parser.parse_args(argv)
    logging.basicConfig(level="INFO", stream=sys.stderr, format="lecode-ls import: %(message)s")
    from lecode_ls.actions import sessions
    from lecode_ls.config import Settings
    from lecode_ls.errors import LecodeError
    from lecode_ls.memory.project import config_dir
    from lecode_ls.other_agents.importing import read_import_file
    from lecode_ls.platform.paths import canonical
    from lecode_ls.runtime import Runtimes

    folder = canonical(Path(args.cwd or Path.cwd()))
    runtimes = Runtimes(config_dir(os.environ), Settings())
    try:
        runtime = runtimes.for_folder(folder)
        records, title = read_import_file(canonical(Path(args.file)), [runtime.project.root])
        session, renamed = sessions.import_records(runtime, records, args.title or title).value
    except LecodeError as error:
        print(f"lecode-ls import: {error}", file=sys.stderr)
        return 1
    finally:
        runtimes.close_all()
    print(session)
    if renamed:
        print(f"lecode-ls import: the session's own ID {renamed} was taken", file=sys.stderr)
    return 0
