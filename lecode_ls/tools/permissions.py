"""The permission policy of write-class memory tools (T4): allow, deny, or ask the person.

Every path that changes memory through a tool uses it: the model's tool calls (agent/runner.py), the
`/memory correct` and `/memory forget` slash commands (tools/slash.py), and the gate of automatic
learning (agent/learning.py). It sits below all of them so that none imports another for it.

Tools run in worker threads while the question goes to the editor on the event loop:
`ThreadAsk` is the bridge, and answers "deny" to every question once it is cancelled.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from collections.abc import Callable, Coroutine, Mapping
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from lecode_ls.config import Settings

log = logging.getLogger(__name__)

Decision = Literal["allow", "deny", "ask"]

AsyncAsk = Callable[[str, str], Coroutine[Any, Any, bool]]
"""`await ask(tool_name, summary)`: whether the person allows this memory change."""


class PermissionPolicy:
    """Per-tool decisions for write-class tools (T4): allow, deny, or ask the person.

    `ask(tool_name, summary)` is injected by the caller (the server routes it to the editor) and
    returns whether the person approved; without it, "ask" means deny. Tools without a decision
    get `default`.
    """

    def __init__(
        self,
        decisions: Mapping[str, Decision] | None = None,
        *,
        default: Decision = "ask",
        ask: Callable[[str, str], bool] | None = None,
    ) -> None:
        self.decisions = dict(decisions or {})
        self.default = default
        self.ask = ask

    def decision(self, name: str) -> Decision:
        return self.decisions.get(name, self.default)

    def permits(self, name: str, summary: str) -> bool:
        decision = self.decision(name)
        if decision == "allow":
            return True
        if decision == "ask" and self.ask is not None:
            return bool(self.ask(name, summary))
        return False

    @classmethod
    def from_settings(cls, settings: Settings) -> PermissionPolicy:
        """The policy `[agent] permissions` sets (ask for a tool it does not name)."""
        decisions: dict[str, Decision] = {n: d for n, d in settings.agent.permissions.items()}
        return cls(decisions)

    def asking(self, ask: Callable[[str, str], bool] | None) -> PermissionPolicy:
        """The same decisions, asking through `ask`."""
        return PermissionPolicy(self.decisions, default=self.default, ask=ask)


class ThreadAsk:
    """An async `ask` made callable from a worker thread: the question runs on `loop`.

    `cancel()` (the request or turn was cancelled) answers the outstanding question and every
    later one with "deny"; so does a failure to ask (the editor could not be reached).
    """

    def __init__(self, ask: AsyncAsk, loop: asyncio.AbstractEventLoop) -> None:
        self._ask = ask
        self._loop = loop
        self._pending: set[concurrent.futures.Future[bool]] = set()
        self._cancelled = False

    def __call__(self, name: str, summary: str) -> bool:
        future = asyncio.run_coroutine_threadsafe(self._ask(name, summary), self._loop)
        self._pending.add(future)
        if self._cancelled:  # cancelled before this question was registered
            future.cancel()
        try:
            return bool(future.result())
        except concurrent.futures.CancelledError:
            return False
        except Exception:  # the editor failed to ask: nothing was allowed
            log.warning("asking permission for %s failed; denied", name, exc_info=True)
            return False
        finally:
            self._pending.discard(future)

    def cancel(self) -> None:
        self._cancelled = True
        for future in list(self._pending):
            future.cancel()
