"""Secrets never reach the store (P5): the rule set (detect-secrets' plugins, matched under RE2)
and the one redaction step every store runs before it writes or digests text.

Code outside this part imports only the names `__all__` lists (a test keeps it so).
"""

from lecode_ls.memory.secrets.known import mask_secret_values, remember_secret_value
from lecode_ls.memory.secrets.logs import RedactingFilter, log_filter
from lecode_ls.memory.secrets.redactor import (
    KEY_FILE,
    MARKER_PREFIX,
    MAX_EXTRA_PATTERNS,
    Finding,
    Redactor,
    check_extra_pattern,
)

__all__ = [
    "KEY_FILE",
    "MARKER_PREFIX",
    "MAX_EXTRA_PATTERNS",
    "Finding",
    "RedactingFilter",
    "Redactor",
    "check_extra_pattern",
    "log_filter",
    "mask_secret_values",
    "remember_secret_value",
]
