"""Which record a provider refuses (issue 31): a server that answers HTTP 500 to every request
once the history holds one record (llama-server did, for a tool call cut off halfway) makes a
session dead, and each new turn fails the same way. When a chat request fails with a 5xx after
the adapter's own retries, the runner asks this module which record it is.

The probes are the failing request with the history cut after its first k records (replayed
as every request is: agent/replay.py, so each probe is well formed), each capped at one output
token: k = 0 first (the provider fails without any history: not the session's fault), then all
of it (it answers now: not reproducible), then a bisection for the smallest k that fails; the
record at k is the one named. At most MAX_PROBES probes; each is a provider call whose usage is
counted once (`on_usage`). A probe that fails otherwise (a timeout, a 4xx) ends the search with
no answer. It assumes that once the record is in the history every longer history fails too,
which is what "every request after a particular record" means.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from lecode_ls.agent.provider import ChatRequest, OnUsage, Provider, collect
from lecode_ls.errors import ProviderError

MAX_PROBES = 14
"""Probes one diagnosis may make: 2 + a bisection over up to 4,096 records."""

Found = Literal["record", "always", "unclear"]


@dataclass(frozen=True)
class Diagnosis:
    found: Found
    """`record`: the provider fails every request whose history holds the record at `seq`;
    `always`: it fails even with no history; `unclear`: neither could be shown."""
    seq: int | None = None
    probes: int = 0


def server_error(error: ProviderError) -> bool:
    """Whether the provider answered with a server error (HTTP 5xx)."""
    return error.status is not None and 500 <= error.status < 600


async def rejected_record(
    provider: Provider,
    request: ChatRequest,
    head: Sequence[Mapping[str, Any]],
    records: Sequence[dict[str, Any]],
    replay: Callable[[Sequence[dict[str, Any]]], list[dict[str, Any]]],
    on_usage: OnUsage,
) -> Diagnosis:
    """The diagnosis of `request`, which failed with a 5xx: `head` is what precedes the history
    in it (the system prompt, the working summary), `records` the history's transcript records
    (in order, each with its seq). See the module docstring."""
    probes = 0

    async def fails(k: int) -> bool | None:
        nonlocal probes
        probes += 1
        probe = ChatRequest(
            [*head, *replay(records[:k])],
            request.tools,
            max_tokens=1,
            model=request.model,
            tool_choice=request.tool_choice,
        )
        try:
            answer = await collect(provider, probe)
        except ProviderError as error:
            on_usage(None)
            return True if server_error(error) else None
        on_usage(answer.finish.usage)
        return False

    empty = await fails(0)
    if empty:
        return Diagnosis("always", None, probes)
    if empty is None or not await fails(len(records)):
        return Diagnosis("unclear", None, probes)
    good, bad = 0, len(records)  # the first k records pass, all of them fail
    while bad - good > 1:
        if probes >= MAX_PROBES:
            return Diagnosis("unclear", None, probes)
        middle = (good + bad) // 2
        result = await fails(middle)
        if result is None:
            return Diagnosis("unclear", None, probes)
        good, bad = (good, middle) if result else (middle, bad)
    return Diagnosis("record", int(records[bad - 1]["seq"]), probes)
