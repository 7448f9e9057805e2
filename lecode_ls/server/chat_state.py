"""What chat keeps between turns, for the whole server: the provider, the calibration of the
size estimate, and the turns and compactions running.

It sits below server.py (which holds one) and chat_features.py (which uses it), so neither
imports the other for it.
"""

from __future__ import annotations

import os
from typing import Any

from lecode_ls.agent.openai import OpenAICompatible
from lecode_ls.agent.preflight import Calibration
from lecode_ls.config import ProviderSettings


class Chat:
    """What chat keeps between turns: the provider (rebuilt when its settings change), the
    per-model calibration of the size estimate, and which sessions have a turn running."""

    def __init__(self) -> None:
        self.calibration = Calibration()
        self.running: set[tuple[str, str]] = set()  # (project root, session ID)
        self._provider: OpenAICompatible | None = None
        self._provider_key: tuple[Any, ...] = ()
        self._retired: list[OpenAICompatible] = []

    def provider(self, settings: ProviderSettings) -> OpenAICompatible:
        # The key is read from the environment at each turn, so a restart is not needed when
        # the variable is set for a new server process (the VS Code extension does that).
        api_key = os.environ.get(settings.api_key_env) if settings.api_key_env else None
        key = (settings.base_url, settings.model, settings.thinking, api_key)
        if self._provider is None or key != self._provider_key:
            if self._provider is not None:  # a running turn may still use it: closed at exit
                self._retired.append(self._provider)
            self._provider = OpenAICompatible(
                settings.base_url, settings.model, api_key, thinking=settings.thinking
            )
            self._provider_key = key
        return self._provider

    async def close(self) -> None:
        for provider in [*self._retired, *([self._provider] if self._provider else [])]:
            await provider.aclose()
