"""Asking the server for the model's window when the catalog and the settings do not know it,
against the real loopback server answering as llama-server, vLLM and Ollama do.

# covers C8
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from lecode_ls.agent.openai import OpenAICompatible
from tests.fakes.openai_server import FakeOpenAI, Reply

MODEL = "qwen2.5-coder-0.5b"


@pytest.fixture
async def server() -> AsyncIterator[FakeOpenAI]:
    async with FakeOpenAI() as fake:
        yield fake


async def window(server: FakeOpenAI) -> int | None:
    provider = OpenAICompatible(server.base_url, MODEL, None)
    try:
        return await provider.server_window()
    finally:
        await provider.aclose()


def paths(server: FakeOpenAI) -> list[tuple[str, str]]:
    return [(r.method, r.path) for r in server.requests]


class TestEachServer:
    async def test_llama_server_says_n_ctx_in_props(self, server: FakeOpenAI) -> None:
        server.routes["GET", "/props"] = Reply(
            200,
            {
                "default_generation_settings": {"n_ctx": 8192, "params": {}},
                "total_slots": 1,
                "chat_template": "{{ messages }}" * 1000,
            },
        )
        assert await window(server) == 8192
        assert paths(server) == [("GET", "/props")]  # the first answer ends the probe

    async def test_vllm_says_max_model_len_of_the_model(self, server: FakeOpenAI) -> None:
        server.routes["GET", "/v1/models"] = Reply(
            200,
            {
                "object": "list",
                "data": [
                    {"id": "other", "object": "model", "max_model_len": 4096},
                    {"id": MODEL, "object": "model", "max_model_len": 32768},
                ],
            },
        )
        assert await window(server) == 32768

    async def test_ollama_says_num_ctx_among_the_parameters(self, server: FakeOpenAI) -> None:
        server.routes["POST", "/api/show"] = Reply(
            200,
            {
                "parameters": 'stop "<|im_end|>"\nnum_ctx 16384\ntemperature 0.7',
                "model_info": {"qwen2.context_length": 32768},
            },
        )
        assert await window(server) == 16384
        assert server.requests[-1].body == {"model": MODEL}

    async def test_ollama_without_num_ctx_serves_its_default(self, server: FakeOpenAI) -> None:
        server.routes["POST", "/api/show"] = Reply(
            200, {"parameters": "", "model_info": {"qwen2.context_length": 32768}}
        )
        assert await window(server) == 4096


class TestAServerThatDoesNotSay:
    async def test_the_window_stays_unknown_and_the_server_is_asked_once(
        self, server: FakeOpenAI
    ) -> None:
        server.routes["GET", "/props"] = Reply(200, "<html>not JSON</html>")
        provider = OpenAICompatible(server.base_url, MODEL, None)
        try:
            assert await provider.server_window() is None
            assert await provider.server_window() is None
        finally:
            await provider.aclose()
        assert paths(server) == [("GET", "/props"), ("GET", "/v1/models"), ("POST", "/api/show")]

    async def test_an_unreachable_server_is_unknown_not_an_error(self) -> None:
        async with FakeOpenAI() as gone:
            url = gone.base_url
        provider = OpenAICompatible(url, MODEL, None)
        try:
            assert await provider.server_window() is None
        finally:
            await provider.aclose()
