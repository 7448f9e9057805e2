"""What chat keeps between turns, for the whole server: the provider, the calibration of the
size estimate, and the turns and compactions running.

The chat room (room.py) gives the server one (`ls.rooms.get(Chat)`); chat/handlers.py, the
commands that delete or compact a session and following other agents use it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Collection, Iterator
from typing import TYPE_CHECKING, Any

from lecode_ls.agent.credentials import provider_key
from lecode_ls.agent.preflight import Calibration
from lecode_ls.config import ProviderSettings
from lecode_ls.errors import LecodeError, ProviderNotConfigured, SessionBusy

if TYPE_CHECKING:
    from lecode_ls.agent.embeddings import Embeddings
    from lecode_ls.agent.openai import OpenAICompatible
    from lecode_ls.config import Settings
    from lecode_ls.runtime import Runtime

Key = tuple[str, str]
"""(project root, session ID): a session of a project."""

NOT_CONFIGURED = (
    "no chat provider is configured, so nothing was sent: set [provider] base_url (and model) "
    "in config.toml, or the editor settings lecode.provider.base_url and lecode.provider.model"
)
"""The `provider_not_configured` sentence: every client gets it, and it names the settings."""

STOP_TIMEOUT = 10.0
"""Seconds `stop` waits for cancelled turns to record their end (a tool already running
finishes first); past that, shutdown goes on and a late write meets a closed store."""


class Chat:
    """What chat keeps between turns: the provider (rebuilt when its settings change), the
    per-model calibration of the size estimate, and the request task of every session's running
    turn or compaction (one at a time per session)."""

    def __init__(self) -> None:
        self.calibration = Calibration()
        self._running: dict[Key, asyncio.Task[Any]] = {}
        self._provider: OpenAICompatible | None = None
        self._provider_key: tuple[Any, ...] = ()
        self._retired: list[OpenAICompatible] = []
        self._embeddings: Embeddings | None = None
        self._embeddings_key: tuple[Any, ...] = ()
        self._retired_embeddings: list[Embeddings] = []
        self._filling: set[str] = set()  # projects whose fact vectors are being computed

    def embeddings(self, settings: Settings) -> Embeddings | None:
        """The `/embeddings` client of `[memory] embeddings_model`, or None when it is unset
        (then no embedding request is ever made), or when no provider is configured, or when
        the provider could only refuse it (its key is missing: agent/credentials.py)."""
        model = settings.memory.embeddings_model
        provider = settings.provider
        if model is None or not settings.memory.enabled or provider.base_url is None:
            return None
        try:
            api_key = provider_key(provider, os.environ)
        except LecodeError:  # chat answers the set-up error; fact texts are not sent meanwhile
            return None
        key = (provider.base_url, model, api_key)
        if self._embeddings is None or key != self._embeddings_key:
            if self._embeddings is not None:
                self._retired_embeddings.append(self._embeddings)
            from lecode_ls.agent.embeddings import Embeddings

            self._embeddings = Embeddings(provider.base_url, model, api_key)
            self._embeddings_key = key
        return self._embeddings

    async def fill_vectors(self, runtime: Runtime, settings: Settings) -> None:
        """Compute the missing fact vectors of `runtime`'s project, one run at a time per
        project (a run asked for meanwhile is not needed: the running one reads what is
        missing as it goes). Run it as a background task (`LecodeServer.run_task`)."""
        embeddings = self.embeddings(settings)
        root = str(runtime.project.root)
        if embeddings is None or root in self._filling or runtime.closed:
            return
        from lecode_ls.agent.embeddings import backfill

        self._filling.add(root)
        try:
            await backfill(runtime.facts, embeddings)
        finally:
            self._filling.discard(root)

    def provider(self, settings: ProviderSettings) -> OpenAICompatible:
        """The provider of `settings`; ProviderNotConfigured while no base_url is set, so no
        request (a chat, a compaction, a window probe) can leave for a destination nobody
        chose; ProviderKeyMissing or ProviderKeyInvalid when the provider could only refuse
        it (agent/credentials.py), so the person's memory is not sent to be refused."""
        if settings.base_url is None:
            raise ProviderNotConfigured(NOT_CONFIGURED)
        # The key is read from the environment at each turn, so a restart is not needed when
        # the variable is set for a new server process (the VS Code extension does that).
        api_key = provider_key(settings, os.environ)
        key = (
            settings.base_url,
            settings.model,
            settings.thinking,
            settings.read_timeout_seconds,
            api_key,
        )
        if self._provider is None or key != self._provider_key:
            if self._provider is not None:  # a running turn may still use it: closed at exit
                self._retired.append(self._provider)
            # httpx (and ssl) load with the first chat: 4 MiB a server that never chats keeps.
            from lecode_ls.agent.openai import OpenAICompatible

            self._provider = OpenAICompatible(
                settings.base_url,
                settings.model,
                api_key,
                thinking=settings.thinking,
                key_variable=settings.api_key_env,
                read_timeout=float(settings.read_timeout_seconds),
            )
            self._provider_key = key
        return self._provider

    def busy(self, key: Key) -> bool:
        return key in self._running

    @contextlib.contextmanager
    def running(self, key: Key, busy_message: str) -> Iterator[None]:
        """Mark the session busy for the length of the current request task (a turn or a
        compaction); SessionBusy naming `sessionId` if it already is."""
        if key in self._running:
            raise SessionBusy(busy_message, field="sessionId")
        task = asyncio.current_task()
        assert task is not None
        self._running[key] = task
        try:
            yield
        finally:
            if self._running.get(key) is task:
                del self._running[key]

    async def stop(self, roots: Collection[str] | None = None) -> None:
        """Cancel the running turns and compactions (of the projects at `roots`, or all), as
        `$/cancelRequest` would: each records its cancellation. Returns when they have ended."""
        tasks = [
            task for (root, _), task in self._running.items() if roots is None or root in roots
        ]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=STOP_TIMEOUT)

    async def close(self) -> None:
        """Close every provider's HTTP client (K3). Call after `stop()`."""
        providers = [*self._retired, *([self._provider] if self._provider else [])]
        self._retired, self._provider, self._provider_key = [], None, ()
        for provider in providers:
            await provider.aclose()
        embedders = [*self._retired_embeddings, *([self._embeddings] if self._embeddings else [])]
        self._retired_embeddings, self._embeddings, self._embeddings_key = [], None, ()
        for embedder in embedders:
            await embedder.aclose()
