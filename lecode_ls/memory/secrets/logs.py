"""The server's log is a door too (P5): every record is redacted before any handler writes it.

The log has no store, so its markers are keyed by a random key of this process: equal secrets
read alike within one log, and no marker can be tested against a guessed value. The provider's
key is masked by its own value too (known.py), whatever its format: an exception's text (httpx
quoting a header) is as likely a place for it as a message.
"""

from __future__ import annotations

import logging

from lecode_ls.memory.secrets import known
from lecode_ls.memory.secrets.redactor import Redactor


class RedactingFilter(logging.Filter):
    """Replaces a record's message (and its formatted exception) by the redacted text."""

    def __init__(self) -> None:
        super().__init__()
        self.redactor = Redactor(None)
        self._formatter = logging.Formatter()

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "lecode_redacted", False):
            return True
        try:
            message = record.getMessage()
        except Exception:  # a broken format string: logging reports it; nothing to redact
            return True
        record.msg = known.mask_secret_values(self.redactor.text(message))
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = self.redactor.text(self._formatter.formatException(record.exc_info))
        if record.exc_text:
            record.exc_text = known.mask_secret_values(record.exc_text)
        if record.stack_info:
            record.stack_info = known.mask_secret_values(self.redactor.text(record.stack_info))
        record.lecode_redacted = True
        return True


_FILTER: RedactingFilter | None = None


def log_filter() -> RedactingFilter:
    """The one filter of this process (every handler shares it, so one key marks the log)."""
    global _FILTER
    if _FILTER is None:
        _FILTER = RedactingFilter()
    return _FILTER
