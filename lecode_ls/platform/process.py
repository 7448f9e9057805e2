"""A child process run to a deadline, with its whole process group stopped at the end.

A program lecode-ls runs (Git) may start children of its own that keep the output pipe open: a
`git` wrapper, a helper Git spawns. Killing the direct child then leaves the read waiting for
those to exit. On POSIX the child leads a new session and the whole group is killed at the
deadline, so the read ends with it. On Windows only the child is killed (no process groups
there; a grandchild holding the pipe is not stopped).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Finished:
    """How a bounded run ended: the exit code (negative when killed), its output (at most the
    bytes asked for, plus one to tell that there was more), and whether the deadline stopped it."""

    code: int
    output: bytes
    timed_out: bool


def run_bounded(
    command: Sequence[str], *, env: Mapping[str, str], timeout: float, max_output: int
) -> Finished:
    """Run `command` with no stdin and stderr discarded, read at most `max_output` + 1 bytes of
    its stdout, and stop it (and, on POSIX, every process of its group) after `timeout` seconds
    or once the output passed the bound. Raises OSError when it cannot be started."""
    process = subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=dict(env),
        start_new_session=sys.platform != "win32",
    )
    expired = threading.Event()

    def stop() -> None:
        expired.set()
        _kill_group(process)

    timer = threading.Timer(timeout, stop)
    timer.start()
    try:
        assert process.stdout is not None
        output = process.stdout.read(max_output + 1)
        if len(output) > max_output:
            _kill_group(process)
    finally:
        timer.cancel()
        if process.stdout is not None:
            process.stdout.close()
        code = process.wait()
        _kill_group(process)  # children it left behind, if any
    return Finished(code, output, expired.is_set())


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    if sys.platform == "win32":
        if process.poll() is None:
            process.kill()
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):  # the group is gone already
        os.killpg(process.pid, signal.SIGKILL)
