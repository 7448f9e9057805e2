"""The provider's API key before it reaches a header (agent/credentials.py), masking it by value
wherever text leaves the server (memory/secrets/known.py, the log filter), and base_url as a
setting (config.py).

# covers P5 (no secret in the log or a message), I3 (nothing sent that can only be refused), K1
"""

from __future__ import annotations

import contextlib
import logging

import pytest

from lecode_ls.agent.credentials import is_loopback_url, provider_key
from lecode_ls.agent.openai import OpenAICompatible
from lecode_ls.agent.provider import ChatRequest
from lecode_ls.config import ProviderSettings, validate
from lecode_ls.errors import ProviderError, ProviderKeyInvalid, ProviderKeyMissing
from lecode_ls.memory.secrets import log_filter, mask_secret_values, remember_secret_value
from tests.fakes.openai_server import FakeOpenAI

LOCAL = "http://127.0.0.1:8080/v1"
REMOTE = "https://openrouter.ai/api/v1"


def settings(base_url: str = REMOTE, api_key_env: str = "OPENAI_API_KEY") -> ProviderSettings:
    return ProviderSettings(base_url=base_url, api_key_env=api_key_env)


class TestProviderKey:
    def test_a_key_with_a_crlf_ending_is_trimmed(self) -> None:
        key = "gsk_unit0trimmed0key0000000000000000"
        assert provider_key(settings(), {"OPENAI_API_KEY": key + "\r\n"}) == key

    def test_a_key_with_a_control_character_inside_is_refused_without_quoting_it(self) -> None:
        key = "sk-unit-inner\x01control-0000000000"
        with pytest.raises(ProviderKeyInvalid) as raised:
            provider_key(settings(), {"OPENAI_API_KEY": key})
        assert "OPENAI_API_KEY" in raised.value.message
        assert "inner" not in raised.value.message

    @pytest.mark.parametrize("value", [None, "", " \r\n"])
    def test_a_named_variable_unset_or_empty_is_refused_even_for_a_local_server(
        self, value: str | None
    ) -> None:
        environ = {} if value is None else {"GROQ_API_KEY": value}
        with pytest.raises(ProviderKeyMissing) as raised:
            provider_key(settings(LOCAL, "GROQ_API_KEY"), environ)
        assert raised.value.code == "provider_key_missing"
        assert "GROQ_API_KEY" in raised.value.message

    def test_the_default_variable_unset_is_refused_for_a_remote_provider(self) -> None:
        with pytest.raises(ProviderKeyMissing) as raised:
            provider_key(settings(REMOTE), {})
        assert "openrouter.ai is not a server on this machine" in raised.value.message

    @pytest.mark.parametrize(
        "url", [LOCAL, "http://localhost:11434/v1", "http://[::1]:8080/v1", "http://127.9.9.9/v1"]
    )
    def test_the_default_variable_unset_sends_no_key_to_a_local_server(self, url: str) -> None:
        assert is_loopback_url(url)
        assert provider_key(settings(url), {}) is None

    def test_an_empty_variable_name_says_the_server_needs_no_key(self) -> None:
        assert provider_key(settings(REMOTE, ""), {"OPENAI_API_KEY": "unused"}) is None

    @pytest.mark.parametrize(
        "url", ["http://127.0.0.1.example.com/v1", "http://192.168.1.2:11434/v1", REMOTE]
    )
    def test_other_hosts_are_not_loopback(self, url: str) -> None:
        assert not is_loopback_url(url)


class TestMaskingByValue:
    def test_every_form_of_a_remembered_key_is_masked(self) -> None:
        key = "deepseek0unit0mask0000000000000000"
        remember_secret_value(key + "\r")
        for text in [key, f"b'Bearer {key}\\r'", f'"Bearer {key}\\r"', f"Bearer {key}\r"]:
            assert key not in mask_secret_values(text)
            assert "[secret:api-key]" in mask_secret_values(text)

    def test_a_short_value_is_not_masked(self) -> None:
        remember_secret_value("local")
        assert mask_secret_values("a local server") == "a local server"

    def test_the_log_filter_masks_a_key_in_an_exception_text(self) -> None:
        key = "sk-or-v1-unit0log0filter000000000000"
        remember_secret_value(key)
        try:
            raise ValueError(f"Illegal header value b'Bearer {key}\\r'")
        except ValueError:
            record = logging.LogRecord("t", logging.ERROR, "f", 1, "failed %s", (key,), None)
            record.exc_info = __import__("sys").exc_info()
        log_filter().filter(record)
        assert key not in record.getMessage()
        assert record.exc_text is not None and key not in record.exc_text


class TestTheAdapter:
    async def test_a_header_httpx_refuses_is_a_provider_error_naming_only_its_class(
        self,
    ) -> None:
        key = "sk-unit-adapter-cr-000000000000000"
        async with FakeOpenAI() as server:
            provider = OpenAICompatible(server.base_url, "gpt-4o", key + "\r")
            try:
                with pytest.raises(ProviderError) as raised:
                    request = ChatRequest(model="gpt-4o", messages=[])
                    async with contextlib.aclosing(provider.stream(request)) as events:
                        async for _ in events:
                            pass
            finally:
                await provider.aclose()
        assert raised.value.code == "provider_error"
        assert "LocalProtocolError" in raised.value.message
        assert key not in raised.value.message
        assert server.requests == []


class TestBaseUrl:
    @pytest.mark.parametrize(
        "url",
        [
            "ftp://example.com/v1",
            "file:///etc/passwd",
            "localhost:8080/v1",
            "http://[::1/v1",
            "http://host:99999/v1",
            "http:///v1",
            "http://exa mple.com/v1",
            "http://☃.example/v1",
            "http://xn--.example/v1",
        ],
    )
    def test_a_malformed_or_non_http_base_url_falls_back_naming_the_key(self, url: str) -> None:
        loaded, problems = validate({"provider": {"base_url": url}})
        assert loaded.provider.base_url is None
        [problem] = problems
        assert problem.startswith("provider.base_url: ")
        assert problem.endswith("; using the default")
        assert url not in problem

    def test_a_key_pasted_as_the_variable_name_is_refused_without_quoting_it(self) -> None:
        key = "sk-or-v1-pasted0as0a0name000000000"
        loaded, problems = validate({"provider": {"api_key_env": key}})
        assert loaded.provider.api_key_env == "OPENAI_API_KEY"
        [problem] = problems
        assert problem.startswith("provider.api_key_env: ") and key not in problem

    @pytest.mark.parametrize("name", ["", "GROQ_API_KEY", "_key2"])
    def test_a_variable_name_is_kept(self, name: str) -> None:
        loaded, problems = validate({"provider": {"api_key_env": name}})
        assert (loaded.provider.api_key_env, problems) == (name, [])

    @pytest.mark.parametrize(
        "url", [LOCAL, REMOTE, "http://[::1]:8080/v1", "HTTP://My-Box.lan:11434/v1"]
    )
    def test_an_http_url_is_kept(self, url: str) -> None:
        loaded, problems = validate({"provider": {"base_url": url}})
        assert (loaded.provider.base_url, problems) == (url, [])


class TestTheServersProvider:
    async def test_no_embedding_client_is_made_while_the_named_key_is_missing(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # covers I3: fact texts go to /embeddings in the background; nothing goes without a key
        from lecode_ls.config import MemorySettings, Settings
        from lecode_ls.server.chat.state import Chat

        monkeypatch.delenv("LECODE_UNIT_UNSET_KEY", raising=False)
        provider = settings(LOCAL, "LECODE_UNIT_UNSET_KEY")
        chat = Chat()
        try:
            configured = Settings(memory=MemorySettings(embeddings_model="e"), provider=provider)
            assert chat.embeddings(configured) is None
            with pytest.raises(ProviderKeyMissing):
                chat.provider(provider)
            monkeypatch.setenv("LECODE_UNIT_UNSET_KEY", "sk-unit-now-set-00000000")
            assert chat.embeddings(configured) is not None
            assert chat.provider(provider).base_url == LOCAL.rstrip("/")
        finally:
            await chat.close()
