"""The one canonical JSON encoding, and the digest of transcript records built on it (S2).

Every source digest lecode-ls stores (in facts.sqlite3, in compact events) is the SHA-256 of bytes
made here, so these two functions are a versioned contract: changing a single byte of their output
changes every stored digest and turns every stored source `stale`. Golden tests in
tests/unit/test_canonical.py pin the exact bytes; if one of them fails, the change is the bug.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

DIGEST_PREFIX = "sha256:"
"""Every digest names its algorithm, so that a later algorithm can live beside this one."""


def _refuse(value: object) -> object:
    raise TypeError(f"canonical_json: {type(value).__name__} is not a JSON type")


def _check_tree(value: object) -> None:
    """Refuse what `json.dumps` would silently coerce: non-string keys and tuples.

    Runs after `json.dumps` succeeded, so the value is known to be finite and acyclic.
    """
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, child in item.items():
                if not isinstance(key, str):
                    raise TypeError(f"canonical_json: object key {key!r} is not a string")
                stack.append(child)
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, tuple):
            # json.dumps writes a tuple as an array, which decodes as a list: not a round trip.
            raise TypeError("canonical_json: tuple is not a JSON type; use a list")


def canonical_json(value: Any) -> bytes:
    """Encode `value` as canonical JSON bytes. Changing this changes every stored digest.

    The encoding, version 1, fixed for good:

    - UTF-8, with every character written as itself (`ensure_ascii=False`) except the escapes JSON
      requires: `\\"`, `\\\\`, `\\b \\f \\n \\r \\t`, and `\\u00XX` (lower-case hex) for the
      other control characters below U+0020. U+2028, U+2029 and DEL are written raw.
    - Object keys sorted by Unicode code point (Python's `str` order; this is not RFC 8785,
      which sorts by UTF-16 code unit), separators `,` and `:`, no whitespace anywhere.
    - Integers in full decimal, however large (up to Python's 4,300-digit conversion limit).
    - Floats as Python's `repr`: `1.0`, `0.1`, `1e-07`, `1e+16`, `-0.0`.
    - Only JSON types: dict with str keys, list, str, int, float, bool, None. NaN and the
      infinities raise ValueError; a lone surrogate in a string raises ValueError (it has no
      UTF-8 form); tuples, non-string keys and every other type raise TypeError.
    """
    try:
        text = json.dumps(
            value,
            ensure_ascii=False,
            sort_keys=True,
            separators=(",", ":"),
            allow_nan=False,
            default=_refuse,
        )
    except ValueError as error:
        raise ValueError(f"canonical_json: {error}") from None
    except TypeError as error:
        # Mixed key types fail inside sort_keys before any of our own checks can name them.
        message = str(error)
        raise TypeError(
            message if message.startswith("canonical_json") else f"canonical_json: {message}"
        ) from None
    _check_tree(value)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("canonical_json: a string holds a lone surrogate") from None


def records_digest(records: Sequence[Mapping[str, Any]]) -> str:
    """`sha256:<hex>` of the canonical JSON array of `records`. Changing this changes every digest.

    The records are hashed as one array, in the order given, each exactly as decoded from the
    transcript: every key, metadata included.
    """
    array = [dict(record) for record in records]
    return DIGEST_PREFIX + hashlib.sha256(canonical_json(array)).hexdigest()
