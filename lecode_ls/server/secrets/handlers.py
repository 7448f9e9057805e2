"""Handlers of the secret scan and scrub methods: the whole store is read (and, for a scrub,
rewritten) in a worker thread, so the server keeps answering meanwhile."""

from __future__ import annotations

import asyncio

from lecode_ls.actions import secrets
from lecode_ls.memory import scrub
from lecode_ls.server.act import act
from lecode_ls.server.secrets import messages as p
from lecode_ls.server.server import LecodeServer


async def scan_secrets(ls: LecodeServer, params: p.ScanSecretsParams) -> p.ScanSecretsResult:
    runtime, _ = await ls.runtime(params.workspace_uri)
    runtime.require_facts()
    found = await asyncio.to_thread(scrub.scan, runtime, params.limit)
    return p.ScanSecretsResult.model_validate(found)


async def scrub_secrets(ls: LecodeServer, params: p.ScrubSecretsParams) -> p.ScrubSecretsResult:
    runtime, folder_uri = await ls.runtime(params.workspace_uri)
    runtime.require_facts()
    secret = scrub.check_secret(params.secret)
    done = await act(ls, runtime, lambda: secrets.scrub(runtime, secret), folder_uri=folder_uri)
    return p.ScrubSecretsResult.model_validate(done)


async def scan_command(ls: LecodeServer, args: p.ScanSecretsCommand) -> p.ScanSecretsResult:
    return await scan_secrets(ls, args.params)


async def scrub_command(ls: LecodeServer, args: p.ScrubSecretsCommand) -> p.ScrubSecretsResult:
    return await scrub_secrets(ls, args.params)
