"""No provider configured: lecode-ls never picks a destination for the person's messages.

With `[provider] base_url` unset (the default) every client gets `provider_not_configured`,
naming the settings, and no request leaves the machine: the server is given an HTTPS proxy on
loopback (httpx honours HTTPS_PROXY), so a request to any remote provider would reach it first.
A provider set in config.toml, or by the editor, works as before, and `lecode/provider/info`
says which one the settings name.

# covers K2 (the provider is the person's choice), P7 (issue 30: a set-up step, not a default)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from tests.e2e.chat import new_session
from tests.e2e.conftest import Start, call
from tests.fakes.openai_server import FakeOpenAI, Stream, text_chunks


def proxied(proxy: FakeOpenAI) -> dict[str, str]:
    """An environment whose every HTTP(S) request would go through `proxy`, with a key set, as
    on a machine where the person exported OPENAI_API_KEY for another tool."""
    address = f"http://127.0.0.1:{proxy.port}"
    return {
        "HTTPS_PROXY": address,
        "HTTP_PROXY": address,
        "NO_PROXY": "",
        "OPENAI_API_KEY": "sk-not-for-lecode-0123456789",
    }


async def refused(client: Any, method: str, params: dict[str, Any]) -> JsonRpcException:
    with pytest.raises(JsonRpcException) as caught:
        await call(client, method, params)
    return caught.value


class TestNoProviderConfigured:
    async def test_a_chat_is_refused_naming_the_settings_and_nothing_is_sent_or_recorded(
        self, start: Start, repo: Path
    ) -> None:
        async with FakeOpenAI() as proxy:
            client = await start(repo, env=proxied(proxy))
            session = await new_session(client)
            error = await refused(
                client, "lecode/chat/send", {"sessionId": session, "text": "How do I build?"}
            )
            assert error.data["code"] == "provider_not_configured"
            assert "[provider] base_url" in error.message
            assert "lecode.provider.base_url" in error.message
            assert proxy.requests == []
            history = await call(client, "lecode/chat/history", {"sessionId": session})
            assert history["items"] == []

    async def test_compaction_is_refused_too(self, start: Start, repo: Path) -> None:
        async with FakeOpenAI() as proxy:
            client = await start(repo, env=proxied(proxy))
            session = await new_session(client)
            error = await refused(client, "lecode/session/compact", {"sessionId": session})
            assert error.data["code"] == "provider_not_configured"
            assert proxy.requests == []

    async def test_memory_lines_still_run_without_a_provider(
        self, start: Start, repo: Path
    ) -> None:
        async with FakeOpenAI() as proxy:
            client = await start(repo, env=proxied(proxy))
            session = await new_session(client)
            result = await call(
                client, "lecode/chat/send", {"sessionId": session, "text": "/memory help"}
            )
            assert result["stopReason"] == "stop"
            assert proxy.requests == []

    async def test_provider_info_says_none_is_configured(self, start: Start, repo: Path) -> None:
        client = await start(repo)
        info = await call(client, "lecode/provider/info", {})
        assert info["configured"] is False
        assert info["baseUrl"] is None
        assert info["model"] == "gpt-4o-mini"


class TestAConfiguredProvider:
    async def test_config_toml_keeps_working_and_provider_info_names_it(
        self, start: Start, repo: Path, isolated_config_dir: Path
    ) -> None:
        async with FakeOpenAI() as server:
            server.push(Stream(text_chunks("Run make.")))
            (isolated_config_dir / "config.toml").write_text(
                f'[provider]\nbase_url = "{server.base_url}"\nmodel = "gpt-4o"\n'
                'api_key_env = "LECODE_TEST_KEY"\n',
                encoding="utf-8",
            )
            client = await start(repo, env={"LECODE_TEST_KEY": "sk-test"})
            info = await call(client, "lecode/provider/info", {})
            assert info == {
                "configured": True,
                "baseUrl": server.base_url,
                "model": "gpt-4o",
                "apiKeyEnv": "LECODE_TEST_KEY",
                "apiKeySet": True,
            }
            session = await new_session(client)
            result = await call(client, "lecode/chat/send", {"sessionId": session, "text": "hi"})
            assert result["stopReason"] == "stop"
            assert len(server.bodies) == 1

    async def test_the_editor_configures_it_while_the_server_runs(
        self, start: Start, repo: Path
    ) -> None:
        async with FakeOpenAI() as server:
            server.push(Stream(text_chunks("Hello.")))
            client = await start(repo)
            session = await new_session(client)
            error = await refused(client, "lecode/chat/send", {"sessionId": session, "text": "a"})
            assert error.data["code"] == "provider_not_configured"
            provider = {"base_url": server.base_url, "model": "gpt-4o", "api_key_env": ""}
            client.workspace_did_change_configuration(
                types.DidChangeConfigurationParams(settings={"lecode": {"provider": provider}})
            )
            info = await call(client, "lecode/provider/info", {})
            assert (info["configured"], info["baseUrl"]) == (True, server.base_url)
            result = await call(client, "lecode/chat/send", {"sessionId": session, "text": "b"})
            assert result["stopReason"] == "stop"

    async def test_provider_info_never_carries_credentials_of_the_url(
        self, start: Start, repo: Path
    ) -> None:
        options = {"provider": {"base_url": "https://me:sk-secret@example.invalid/v1"}}
        client = await start(repo, options=options)
        info = await call(client, "lecode/provider/info", {})
        assert info["baseUrl"] == "https://example.invalid/v1"
        assert "sk-secret" not in str(info)
