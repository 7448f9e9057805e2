"""Secrets this process holds by value (the provider's API key), masked by value wherever text
leaves it: the log (every handler shares the one filter), provider error messages, chat deltas,
transcript error events and JSON-RPC errors.

The redactor finds credentials by their format, so a key of a format it does not know
(OpenRouter's `sk-or-v1-`, DeepSeek's, Groq's, a local server's own) would pass it; the key
lecode-ls was configured with is known, though, and is masked as itself, in every form a message
can carry it: as read (a trailing CR from a CRLF env file included), trimmed, and escaped as
Python's repr and JSON write it (an exception's text quotes `b'Bearer <key>\\r'`).

A value shorter than MIN_CHARS is not masked: replacing "x" or "local" in every log line would
mangle the log without hiding anything worth the name.
"""

from __future__ import annotations

import json
import threading

MASK = "[secret:api-key]"
"""What a known secret's value is replaced by (a redaction marker, so scans count it as one)."""

MIN_CHARS = 8

_lock = threading.Lock()
_forms: tuple[str, ...] = ()  # longest first; replaced whole, so readers need no lock


def _forms_of(value: str) -> set[str]:
    forms = set()
    for text in (value, value.strip()):
        forms.add(text)
        forms.add(repr(text)[1:-1])
        forms.add(json.dumps(text)[1:-1])
        forms.add(repr(text.encode("utf-8", "backslashreplace"))[2:-1])
    return {form for form in forms if len(form) >= MIN_CHARS}


def remember_secret_value(value: str | None) -> None:
    """Mask `value` (and its trimmed and escaped forms) in every text `mask_secret_values` sees from now on."""
    global _forms
    if not value:
        return
    with _lock:
        forms = set(_forms) | _forms_of(value)
        _forms = tuple(sorted(forms, key=len, reverse=True))


def mask_secret_values(text: str) -> str:
    """`text` with every remembered secret value replaced by MASK."""
    for form in _forms:
        if form in text:
            text = text.replace(form, MASK)
    return text


def secret_values() -> tuple[str, ...]:
    """Every remembered form, longest first: what the redactor also finds in text the stores
    write (a key pasted into a chat message, whatever its format)."""
    return _forms
