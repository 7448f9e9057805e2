"""Transcripts: the records, the JSONL file and its offset index, the session store, the source
references into them (S1-S3), and usage totals.

Code outside this part imports only the names `__all__` lists (a test keeps it so).
"""

from lecode_ls.memory.sessions.peek import MAX_PEEK_BYTES, PeekVerdicts
from lecode_ls.memory.sessions.records import (
    CLAUDE_OPENING,
    CODEX_INJECTED,
    COMPACT,
    DISMISSED,
    LEARNING,
    USAGE,
    agent_injected,
    check_session_id,
    has_authored_text,
    new_session_id,
    well_formed_calls,
)
from lecode_ls.memory.sessions.rewrite import redact_records
from lecode_ls.memory.sessions.sources import (
    MAX_POSITIONS,
    ExclusionReader,
    SourceRef,
    judge_source,
    source_snapshot,
    validate_source,
    validate_sources,
)
from lecode_ls.memory.sessions.store import SessionInfo, SessionStore, Visibility, clean_title
from lecode_ls.memory.sessions.titles import EDITOR_TITLE, MCP_PREFIX, Origin
from lecode_ls.memory.sessions.usage import UsageTotal, session_usage
from lecode_ls.memory.sessions.verdicts import SourceVerdicts

__all__ = [
    "CLAUDE_OPENING",
    "CODEX_INJECTED",
    "COMPACT",
    "DISMISSED",
    "EDITOR_TITLE",
    "LEARNING",
    "MAX_PEEK_BYTES",
    "MAX_POSITIONS",
    "MCP_PREFIX",
    "USAGE",
    "ExclusionReader",
    "Origin",
    "PeekVerdicts",
    "SessionInfo",
    "SessionStore",
    "SourceRef",
    "SourceVerdicts",
    "UsageTotal",
    "Visibility",
    "agent_injected",
    "check_session_id",
    "clean_title",
    "has_authored_text",
    "judge_source",
    "new_session_id",
    "redact_records",
    "session_usage",
    "source_snapshot",
    "validate_source",
    "validate_sources",
    "well_formed_calls",
]
