"""Embeddings for semantic fact ranking, opt-in with `[memory] embeddings_model` (issue 25).

The configured provider's OpenAI-compatible `POST {base_url}/embeddings` (llama-server with
`--embeddings`, Ollama, vLLM, hosted APIs), with the chat's API key. Without the setting nothing
here runs and no embedding request is ever made. Two uses, neither of which can hold up a turn
for long:

- `backfill`: the vectors of facts that have none yet (new, corrected, or from before the setting),
  a batch at a time, the newest facts first, run by the server in the background (never inside a
  turn): a turn that finds no vector for a fact ranks it by BM25 alone;
- `query_vector`: the vector of a turn's message, asked once per turn under QUERY_TIMEOUT; a
  failure or a slow answer leaves that turn to BM25.

The answer is untrusted: its size is capped, and it must hold one finite vector a text, of one
length, at most 4,096 dimensions (memory/facts/vectors.py checks each).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Sequence
from typing import Any

import httpx

from lecode_ls.errors import LecodeError, ProviderError
from lecode_ls.memory.facts import MAX_DIMENSIONS, FactStore

log = logging.getLogger(__name__)

BATCH = 32  # texts in one request
MAX_ANSWER_BYTES = 16 * 1024 * 1024
QUERY_TIMEOUT = 2.0  # seconds a turn waits for its message's vector, at most
BACKFILL_LIMIT = 2_000  # facts embedded by one background run, at most (the next run goes on)
MAX_QUERY_CHARS = 4_000


class Embeddings:
    """A client of one provider's `/embeddings` for one model."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None,
        *,
        client: httpx.AsyncClient | None = None,
        timeout: float = 30.0,
    ) -> None:
        self.url = base_url.rstrip("/") + "/embeddings"
        self.model = model
        self._api_key = api_key or None
        self._owns_client = client is None
        self._client = client if client is not None else httpx.AsyncClient()
        self._timeout = httpx.Timeout(timeout, connect=10.0)

    def __repr__(self) -> str:
        key = "set" if self._api_key else "none"
        return f"Embeddings(url={self.url!r}, model={self.model!r}, api_key={key})"

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order. ProviderError when the provider fails or answers
        something else than one vector a text."""
        headers = {"Content-Type": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        body = {"model": self.model, "input": list(texts)}
        try:
            async with self._client.stream(
                "POST", self.url, json=body, headers=headers, timeout=self._timeout
            ) as response:
                data = bytearray()
                async for chunk in response.aiter_bytes():
                    data += chunk
                    if len(data) > MAX_ANSWER_BYTES:
                        raise ProviderError("embeddings: the answer is larger than 16 MiB")
                status = response.status_code
        except httpx.HTTPError as error:
            raise ProviderError(
                f"embeddings: the request failed ({type(error).__name__})"
            ) from None
        if status != 200:
            raise ProviderError(f"embeddings: the provider answered HTTP {status}")
        return _vectors(bytes(data), len(texts))


def _vectors(data: bytes, count: int) -> list[list[float]]:
    try:
        answer: Any = json.loads(data)
    except ValueError:
        raise ProviderError("embeddings: the answer is not JSON") from None
    items = answer.get("data") if isinstance(answer, dict) else None
    if not isinstance(items, list) or len(items) != count:
        raise ProviderError(f"embeddings: expected {count} vectors in `data`")
    vectors: list[list[float] | None] = [None] * count
    for position, item in enumerate(items):
        index = item.get("index", position) if isinstance(item, dict) else None
        vector = item.get("embedding") if isinstance(item, dict) else None
        if type(index) is not int or not 0 <= index < count or vectors[index] is not None:
            raise ProviderError("embeddings: a vector's `index` is missing or repeated")
        if not isinstance(vector, list) or not 0 < len(vector) <= MAX_DIMENSIONS:
            raise ProviderError("embeddings: a vector is not a list of numbers")
        vectors[index] = vector
    found = [v for v in vectors if v is not None]
    if len({len(v) for v in found}) != 1:
        raise ProviderError("embeddings: the vectors differ in length")
    return found


async def query_vector(embeddings: Embeddings, text: str) -> list[float] | None:
    """The vector of a turn's message, or None (no text, a failure, or slower than
    QUERY_TIMEOUT: that turn ranks by BM25 alone)."""
    if not text.strip():
        return None
    try:
        async with asyncio.timeout(QUERY_TIMEOUT):
            [vector] = await embeddings.embed([text[:MAX_QUERY_CHARS]])
    except (TimeoutError, ProviderError) as error:
        log.info("no vector for the turn's message, BM25 alone: %s", _why(error))
        return None
    return vector


async def backfill(facts: FactStore, embeddings: Embeddings) -> int:
    """Embed the facts that have no vector of the model yet, BATCH at a time, the newest first,
    at most BACKFILL_LIMIT; returns how many were stored. Stops at the first failure (logged):
    the next run tries again."""
    stored = 0
    for _ in range(BACKFILL_LIMIT // BATCH):
        missing = await asyncio.to_thread(facts.vectors.missing, embeddings.model, BATCH)
        if not missing:
            break
        try:
            vectors = await embeddings.embed([item.text for item in missing])
            done = await asyncio.to_thread(
                facts.vectors.put, embeddings.model, list(zip(missing, vectors, strict=True))
            )
        except LecodeError as error:
            log.warning("fact vectors not computed: %s", error.message)
            break
        if done == 0:  # all corrected or forgotten meanwhile: the next batch differs
            continue
        stored += done
    return stored


def _why(error: BaseException) -> str:
    return error.message if isinstance(error, LecodeError) else "no answer in time"
