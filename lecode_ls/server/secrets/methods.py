"""The secret scan and scrub methods' entries in the protocol table (protocol.py)."""

from __future__ import annotations

from lecode_ls.server.method import SID, Method
from lecode_ls.server.secrets import handlers
from lecode_ls.server.secrets.messages import (
    ScanSecretsCommand,
    ScanSecretsParams,
    ScanSecretsResult,
    ScrubSecretsCommand,
    ScrubSecretsParams,
    ScrubSecretsResult,
)

SCAN_EXAMPLE = {
    "found": 2,
    "kinds": {"github-token": 1, "url-password": 1},
    "places": [
        {"kind": "github-token", "file": f"sessions/{SID}.jsonl", "sessionId": SID, "seq": 3},
        {"kind": "url-password", "file": "MEMORY.md.bak", "line": 12},
    ],
    "truncated": False,
    "raw": [{"file": "facts.sqlite3-wal", "found": 1, "kinds": {"github-token": 1}}],
    "unreadable": [],
}
SCRUB_EXAMPLE = {
    "notes": ["MEMORY.md", "MEMORY.md.bak"],
    "titles": False,
    "sessions": [SID],
    "records": 1,
    "reattached": 2,
    "facts": [4],
    "revisions": 1,
    "purged": True,
    "remaining": 0,
}
SCRUB_SUMMARY = (
    "Rewrite every copy of every secret the detector finds in the project's store, and of "
    "`secret` if given (an exact string, detectable or not, such as a token just rotated): "
    "Markdown files and their `.bak`, transcript records and their index, fact revisions and "
    "their full-text indexes, and SQLite's leftovers (free pages, WAL). Each becomes its "
    "marker (`[secret:github-token:3fa9c2d1]`; a given string `[secret:given:…]`). Evidence "
    "survives: a fact whose source covered a rewritten record is re-attached to the record's "
    "new digest (it stays `valid`), and the scrub is recorded (when, which records, the digests "
    "before and after; never a value), so recall shows the evidence as scrubbed. A source that "
    "did not hold before is left as it was. Crash-safe at every instant. Sends "
    "`lecode/memory/didChange` and `lecode/facts/didChange` for what changed."
)

METHODS: tuple[Method, ...] = (
    Method(
        "lecode/memory/scanSecrets",
        "request",
        "Where the secrets detector finds credentials in the project's store: each place "
        "(a note and line, a session record, a fact revision) and its kind, never the value, "
        "and the other store files whose bytes hold one (SQLite's free pages and WAL "
        "included). Read in a worker thread; `lecode/ping` is answered meanwhile.",
        ScanSecretsParams,
        ScanSecretsResult,
        handler=handlers.scan_secrets,
        errors=("memory_disabled", "store_error"),
        example_params={"limit": 100},
        example_result=SCAN_EXAMPLE,
    ),
    Method(
        "lecode/memory/scrubSecrets",
        "request",
        SCRUB_SUMMARY,
        ScrubSecretsParams,
        ScrubSecretsResult,
        handler=handlers.scrub_secrets,
        errors=("memory_disabled", "store_error"),
        example_params={"secret": "the-token-I-just-rotated"},
        example_result=SCRUB_EXAMPLE,
    ),
)

COMMANDS: tuple[Method, ...] = (
    Method(
        "lecode.memory.scanSecrets",
        "command",
        "`workspace/executeCommand` form of `lecode/memory/scanSecrets` (one argument: its "
        "params, optional).",
        ScanSecretsCommand,
        ScanSecretsResult,
        handler=handlers.scan_command,
        errors=("memory_disabled", "store_error"),
        example_params=[{"limit": 100}],
        example_result=SCAN_EXAMPLE,
    ),
    Method(
        "lecode.memory.scrubSecrets",
        "command",
        "`workspace/executeCommand` form of `lecode/memory/scrubSecrets` (one argument: its "
        "params, optional).",
        ScrubSecretsCommand,
        ScrubSecretsResult,
        handler=handlers.scrub_command,
        errors=("memory_disabled", "store_error"),
        example_params=[{}],
        example_result=SCRUB_EXAMPLE,
    ),
)
