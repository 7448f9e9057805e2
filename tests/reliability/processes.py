"""Start the worker script (workers.py) as a subprocess and read its reports, every wait bounded."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from pathlib import Path
from typing import Any

WORKERS = Path(__file__).with_name("workers.py")
TIMEOUT = 60  # seconds any single wait on a worker may take before the test fails


class Worker:
    """One worker process. Its stderr is the test's, so a traceback shows in the report."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    @classmethod
    async def start(cls, *args: str) -> Worker:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            str(WORKERS),
            *args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
        )
        return cls(process)

    async def line(self) -> dict[str, Any]:
        """The next report; fails if the worker exits or stays silent for TIMEOUT seconds."""
        assert self.process.stdout is not None
        raw = await asyncio.wait_for(self.process.stdout.readline(), TIMEOUT)
        assert raw.endswith(b"\n"), f"the worker exited (code {self.process.returncode})"
        report: dict[str, Any] = json.loads(raw)
        return report

    async def until(self, key: str, count: int = 1) -> list[dict[str, Any]]:
        """Read reports until the `count`-th one holding `key`; returns every report read."""
        reports: list[dict[str, Any]] = []
        seen = 0
        while seen < count:
            reports.append(await self.line())
            seen += key in reports[-1]
        return reports

    def send(self, text: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(text.encode())

    async def kill(self) -> list[dict[str, Any]]:
        """SIGKILL the worker now; returns the reports it had printed that were not read yet.

        Only complete lines count: each was printed after its operation returned.
        """
        self.process.kill()
        assert self.process.stdout is not None
        rest = await asyncio.wait_for(self.process.stdout.read(), TIMEOUT)
        await asyncio.wait_for(self.process.wait(), TIMEOUT)
        assert self.process.returncode == -signal.SIGKILL
        return [json.loads(line) for line in rest.split(b"\n")[:-1]]

    async def finish(self) -> list[dict[str, Any]]:
        """Close its stdin and read every report until it exits; it must exit cleanly."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        out, _ = await asyncio.wait_for(self.process.communicate(), TIMEOUT)
        assert self.process.returncode == 0
        return [json.loads(line) for line in out.splitlines()]
