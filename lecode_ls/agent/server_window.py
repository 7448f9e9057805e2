"""Ask the server for the model's window, when neither the catalog nor the settings know it (C8).

A local server knows the window it really serves, which is often less than the model's native
one. Each kind says it in its own place:

- llama.cpp's llama-server: `GET /props`, `default_generation_settings.n_ctx` (per slot);
- vLLM: `GET /v1/models`, `max_model_len` of the model's entry;
- Ollama: `POST /api/show`, `num_ctx` among the model's parameters; without one Ollama serves
  its default, `OLLAMA_DEFAULT_CTX`, or the model's own `<arch>.context_length` if smaller.

The probe is bounded: each request has a short timeout and reads at most `MAX_PROBE_BYTES`, and
the first answer that names a window ends it. Anything unexpected (a 404, HTML, a missing field,
a refused connection) means "this server does not say", never an error: the window then stays
unknown, as before.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

import httpx

from lecode_ls.agent import sse

log = logging.getLogger(__name__)

PROBE_TIMEOUT = 3.0
"""Seconds for each probe request, connection included."""

MAX_PROBE_BYTES = 1 << 20
"""Bytes read of a probe's answer (llama-server's /props carries the chat templates)."""

OLLAMA_DEFAULT_CTX = 4096
"""Ollama's default context length when neither the model's parameters nor the request set
`num_ctx` (its documented default; `OLLAMA_CONTEXT_LENGTH` on the server may raise it, which
this side cannot see, so it errs small: compaction comes early rather than never)."""

_NUM_CTX = re.compile(r"^\s*num_ctx\s+(\d+)\s*$", re.MULTILINE)


async def probe_window(
    client: httpx.AsyncClient, base_url: str, model: str, headers: dict[str, str]
) -> int | None:
    """The window the server at `base_url` (the OpenAI-compatible root, ".../v1") serves
    `model` with, or None when it does not say."""
    root = base_url.rstrip("/")
    headers = {**headers, "Accept": "application/json"}
    server = root.removesuffix("/v1")
    for probe in (_llama_cpp, _vllm, _ollama):
        try:
            window = await probe(client, root, server, model, headers)
        except (httpx.HTTPError, ValueError, TypeError, KeyError, RecursionError) as exc:
            log.debug("window probe %s failed: %s", probe.__name__, exc.__class__.__name__)
            continue
        if window is not None and window > 0:
            log.info("the server at %s serves %s with a %d-token window", server, model, window)
            return window
    return None


async def _get_json(
    client: httpx.AsyncClient,
    method: str,
    url: str,
    headers: dict[str, str],
    body: dict[str, Any] | None = None,
) -> Any:
    async with client.stream(
        method, url, json=body, headers=headers, timeout=PROBE_TIMEOUT
    ) as response:
        if response.status_code != 200:
            return None
        return json.loads(await sse.read_capped(response, MAX_PROBE_BYTES))


def _positive(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


async def _llama_cpp(
    client: httpx.AsyncClient, root: str, server: str, model: str, headers: dict[str, str]
) -> int | None:
    props = await _get_json(client, "GET", f"{server}/props", headers)
    if not isinstance(props, dict):
        return None
    settings = props.get("default_generation_settings")
    if isinstance(settings, dict):
        return _positive(settings.get("n_ctx"))
    return _positive(props.get("n_ctx"))


async def _vllm(
    client: httpx.AsyncClient, root: str, server: str, model: str, headers: dict[str, str]
) -> int | None:
    models = await _get_json(client, "GET", f"{root}/models", headers)
    entries = models.get("data") if isinstance(models, dict) else None
    if not isinstance(entries, list):
        return None
    for entry in entries:
        if isinstance(entry, dict) and entry.get("id") == model:
            return _positive(entry.get("max_model_len"))
    return None


async def _ollama(
    client: httpx.AsyncClient, root: str, server: str, model: str, headers: dict[str, str]
) -> int | None:
    shown = await _get_json(client, "POST", f"{server}/api/show", headers, {"model": model})
    if not isinstance(shown, dict):
        return None
    parameters = shown.get("parameters")
    if isinstance(parameters, str) and (match := _NUM_CTX.search(parameters)):
        return int(match.group(1))
    info = shown.get("model_info")
    if not isinstance(info, dict):
        return None
    native = [
        length
        for key, value in info.items()
        if isinstance(key, str)
        and key.endswith(".context_length")
        and (length := _positive(value)) is not None
    ]
    return min([OLLAMA_DEFAULT_CTX, *native])
