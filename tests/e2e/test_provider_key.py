"""The provider's API key, as the person meets it: it never reaches the log or an LSP message in
any form, and a request the provider could only refuse is a set-up error before anything (the
person's memory included) is sent.

The server runs with the real `--log-file` at DEBUG (so the log also reaches the client as
`window/logMessage`), and every message it sends is captured as JSON before the client decodes
it: a test reads the whole log file and every message. The provider is the loopback OpenAI
server; a remote one is an HTTPS proxy on loopback (httpx honours HTTPS_PROXY), so a request that
left for it would reach the proxy first.

# covers P5 (no secret reaches the log or a client), K (bad input), I3 (what a request carries)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from tests.e2e.chat import Deltas, new_session
from tests.e2e.conftest import Start, call, make_client
from tests.fakes.openai_server import FakeOpenAI, Reply, Stream, text_chunks

# OpenRouter's format, which the secret detector does not know: only its own value can mask it.
KEY = "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"
TAIL = KEY[-24:]  # what must not appear anywhere, whole or as part of a cut message
MEMORY = "The deploy password rotation happens on Fridays."


class Captured:
    """Every message the server sent (as JSON text, before decoding) and its log file."""

    def __init__(self, log_file: Path) -> None:
        self.log_file = log_file
        self.messages: list[str] = []

    def factory(self) -> Callable[[], LanguageClient]:
        def make() -> LanguageClient:
            client = make_client()
            structure = client.protocol.structure_message

            def record(data: dict[str, Any]) -> Any:
                if "jsonrpc" in data:  # a whole message (inner objects come first, plain)
                    self.messages.append(json.dumps(data))
                return structure(data)

            client.protocol.structure_message = record  # type: ignore[method-assign]
            return client

        return make

    def args(self) -> list[str]:
        return ["--log-file", str(self.log_file), "--log-level", "DEBUG"]

    def everything(self) -> str:
        return self.log_file.read_text(encoding="utf-8") + "\n".join(self.messages)


@pytest.fixture
def captured(tmp_path: Path) -> Captured:
    return Captured(tmp_path / "lecode-ls.log")


async def keyed_client(
    start: Start,
    repo: Path,
    server: FakeOpenAI,
    captured: Captured,
    key: str,
    **provider: Any,
) -> LanguageClient:
    options = {
        "provider": {
            "base_url": server.base_url,
            "model": "gpt-4o",
            "api_key_env": "LECODE_TEST_KEY",
            **provider,
        }
    }
    return await start(
        repo,
        options=options,
        env={"LECODE_TEST_KEY": key},
        args=captured.args(),
        client_factory=captured.factory(),
    )


async def refused(client: LanguageClient, method: str, params: dict[str, Any]) -> Any:
    with pytest.raises(JsonRpcException) as caught:
        await call(client, method, params)
    return caught.value


class TestTheKeyNeverLeaks:
    async def test_a_key_read_with_a_trailing_cr_is_trimmed_and_never_logged_or_sent_to_the_client(
        self, start: Start, repo: Path, captured: Captured
    ) -> None:
        # covers P5: a key from a CRLF env file made httpx refuse the header and log the key
        async with FakeOpenAI() as server:
            server.push(Stream(text_chunks("Hello.")))
            client = await keyed_client(start, repo, server, captured, KEY + "\r")
            session = await new_session(client)
            result = await call(client, "lecode/chat/send", {"sessionId": session, "text": "Hi"})
            await call(client, "lecode/chat/history", {"sessionId": session})
            await client.shutdown_session()
        assert result["stopReason"] == "stop"
        [request] = server.requests
        assert request.headers["authorization"] == f"Bearer {KEY}"
        log = captured.log_file.read_text(encoding="utf-8")
        assert "the API key in LECODE_TEST_KEY had spaces or line breaks around it" in log
        assert TAIL not in captured.everything()

    async def test_a_reason_phrase_quoting_the_key_is_masked_in_the_delta_transcript_and_log(
        self, start: Start, repo: Path, captured: Captured
    ) -> None:
        # covers P5: the provider's status line is provider text like its body
        async with FakeOpenAI() as server:
            server.push(Reply(400, "", reason=f"Bad credential {KEY}"))
            client = await keyed_client(start, repo, server, captured, KEY)
            deltas = Deltas(client)
            session = await new_session(client)
            result = await call(client, "lecode/chat/send", {"sessionId": session, "text": "Hi"})
            history = await call(client, "lecode/chat/history", {"sessionId": session})
            await client.shutdown_session()
        assert result["stopReason"] == "error"
        [error] = [item for item in deltas.items if item["kind"] == "error"]
        assert error["message"] == (
            "the provider answered HTTP 400: Bad credential [secret:api-key]"
        )
        assert any("[secret:api-key]" in json.dumps(item) for item in history["items"])
        assert TAIL not in captured.everything()

    async def test_a_key_with_a_control_character_inside_is_refused_unquoted_before_sending(
        self, start: Start, repo: Path, captured: Captured
    ) -> None:
        # covers K: a header cannot carry it, and no message may quote it
        async with FakeOpenAI() as server:
            client = await keyed_client(start, repo, server, captured, KEY[:20] + "\x01" + KEY[20:])
            session = await new_session(client)
            error = await refused(client, "lecode/chat/send", {"sessionId": session, "text": "Hi"})
            await client.shutdown_session()
        assert error.data == {"code": "provider_key_invalid"}
        assert "LECODE_TEST_KEY" in error.message
        assert server.requests == []
        assert TAIL not in captured.everything()


class TestARequestThatCanOnlyBeRefused:
    async def test_an_unset_named_key_variable_answers_a_set_up_error_and_sends_nothing(
        self, start: Start, repo: Path, captured: Captured
    ) -> None:
        # covers I3: MEMORY.md would have gone to the provider in the system prompt
        async with FakeOpenAI() as server:
            server.push(Stream(text_chunks("never asked")))
            client = await keyed_client(
                start, repo, server, captured, "", api_key_env="LECODE_UNSET_KEY"
            )
            write = {"file": "MEMORY.md", "content": MEMORY, "mode": "replace"}
            await call(client, "lecode/memory/write", write)
            session = await new_session(client)
            error = await refused(client, "lecode/chat/send", {"sessionId": session, "text": "Hi"})
            compact = await refused(client, "lecode/session/compact", {"sessionId": session})
            history = await call(client, "lecode/chat/history", {"sessionId": session})
        assert error.data == {"code": "provider_key_missing"}
        assert error.message.startswith(
            "[provider] api_key_env names LECODE_UNSET_KEY, which is not set"
        )
        assert compact.data == {"code": "provider_key_missing"}
        assert server.requests == []
        assert history["items"] == []

    async def test_a_remote_provider_with_no_key_answers_a_set_up_error_and_sends_nothing(
        self, start: Start, repo: Path
    ) -> None:
        # covers I3: after VS Code's "Clear API Key" the default variable is simply not set
        async with FakeOpenAI() as proxy:
            address = f"http://127.0.0.1:{proxy.port}"
            env = {"HTTPS_PROXY": address, "HTTP_PROXY": address, "NO_PROXY": ""}
            options = {"provider": {"base_url": "https://api.example.com/v1", "model": "gpt-4o"}}
            client = await start(repo, options=options, env={**env, "OPENAI_API_KEY": ""})
            info = await call(client, "lecode/provider/info")
            session = await new_session(client)
            error = await refused(client, "lecode/chat/send", {"sessionId": session, "text": "Hi"})
        assert info["apiKeySet"] is False
        assert error.data == {"code": "provider_key_missing"}
        assert "OPENAI_API_KEY is not set" in error.message
        assert "api.example.com is not a server on this machine" in error.message
        assert proxy.requests == []

    async def test_a_local_server_with_the_default_variable_unset_still_chats(
        self, start: Start, repo: Path
    ) -> None:
        # covers K2: llama-server on 127.0.0.1 needs no key, as before
        async with FakeOpenAI() as server:
            server.push(Stream(text_chunks("Local answer.")))
            options = {"provider": {"base_url": server.base_url, "model": "gpt-4o"}}
            client = await start(repo, options=options, env={"OPENAI_API_KEY": ""})
            session = await new_session(client)
            result = await call(client, "lecode/chat/send", {"sessionId": session, "text": "Hi"})
        assert result["stopReason"] == "stop"
        [request] = server.requests
        assert "authorization" not in request.headers


class TestBaseUrlIsASetting:
    @pytest.mark.parametrize(
        "base_url", ["ftp://127.0.0.1/v1", "http://[::1/v1", "http://127.0.0.1:99999/v1"]
    )
    async def test_a_malformed_base_url_is_a_settings_problem_not_an_internal_error(
        self, start: Start, repo: Path, base_url: str
    ) -> None:
        # covers K1: the key path named, the server carries on with the default (no provider)
        client = await start(repo, options={"provider": {"base_url": base_url}})
        session = await new_session(client)
        error = await refused(client, "lecode/chat/send", {"sessionId": session, "text": "Hi"})
        shown = [m.message for m in client.messages if "provider.base_url" in m.message]
        assert shown and "using the default" in shown[0]
        assert base_url not in shown[0]
        assert error.data == {"code": "provider_not_configured"}


async def test_a_key_the_person_pastes_into_a_message_is_stored_as_a_marker(
    start: Start, repo: Path, captured: Captured
) -> None:
    # covers P5: the detector knows no `sk-or-v1-` key; the one configured is found by value
    async with FakeOpenAI() as server:
        server.push(Stream(text_chunks("Noted.")))
        client = await keyed_client(start, repo, server, captured, KEY)
        session = await new_session(client)
        await call(client, "lecode/chat/send", {"sessionId": session, "text": f"my key: {KEY}"})
        history = await call(client, "lecode/chat/history", {"sessionId": session})
        await client.shutdown_session()
    stored = json.dumps(history)
    assert TAIL not in stored and "[secret:api-key:" in stored
    assert not [f for f in repo.parent.rglob("*.jsonl") if TAIL in f.read_text(errors="replace")]
