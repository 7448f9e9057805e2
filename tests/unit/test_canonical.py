"""The canonical JSON encoding and the records digest: a versioned contract (S2).

Every stored source digest is the SHA-256 of these bytes, so the golden tests pin them exactly.
A golden test that fails means a change broke every digest ever stored: the change is the bug.
The property tests state what must hold for any JSON value.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lecode_ls.memory.canonical import canonical_json, records_digest

# Strings hypothesis may draw: any code point except lone surrogates (they have no UTF-8 form).
TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=12)

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(TEXT, children, max_size=4),
    max_leaves=20,
)


class TestGoldenBytes:
    # covers S2: these bytes are the contract; never update them to make a change pass

    def test_keys_are_sorted_at_every_depth_with_no_whitespace(self) -> None:
        value = {"z": {"b": [1, {"y": None, "x": True}], "a": False}, "a": []}
        assert canonical_json(value) == b'{"a":[],"z":{"a":false,"b":[1,{"x":true,"y":null}]}}'

    def test_keys_sort_by_code_point_not_by_utf16_unit(self) -> None:
        value = {"b": 1, "a": 2, "B": 3, "é": 4, "e": 5, "😀": 6, "\uffff": 7, "": 8}
        # U+FFFF sorts before U+1F600 here; RFC 8785's UTF-16 order would put the emoji first.
        assert canonical_json(value) == (
            b'{"":8,"B":3,"a":2,"b":1,"e":5,"\xc3\xa9":4,"\xef\xbf\xbf":7,"\xf0\x9f\x98\x80":6}'
        )

    def test_non_ascii_text_is_written_as_utf8_not_escaped(self) -> None:
        value = {"text": "héllo wörld ✓ 😀", "ключ": "значение"}
        assert canonical_json(value) == ('{"text":"héllo wörld ✓ 😀","ключ":"значение"}'.encode())

    def test_only_the_escapes_json_requires_are_used(self) -> None:
        value = {"s": 'q"b\\n\nt\tr\rb\bf\f\x00\x1f\x7f\u2028\u2029/'}
        assert canonical_json(value) == (
            b'{"s":"q\\"b\\\\n\\nt\\tr\\rb\\bf\\f\\u0000\\u001f\x7f\xe2\x80\xa8\xe2\x80\xa9/"}'
        )

    def test_numbers_are_full_integers_and_python_float_repr(self) -> None:
        value = {
            "big": 12345678901234567890123456789,
            "neg": -7,
            "one": 1.0,
            "small": 1e-07,
            "large": 1e16,
            "tenth": 0.1,
            "negzero": -0.0,
            "third": 1 / 3,
        }
        assert canonical_json(value) == (
            b'{"big":12345678901234567890123456789,"large":1e+16,"neg":-7,"negzero":-0.0,'
            b'"one":1.0,"small":1e-07,"tenth":0.1,"third":0.3333333333333333}'
        )

    def test_the_records_digest_hashes_the_canonical_array(self) -> None:
        records = [
            {"seq": 1, "kind": "message", "role": "user", "content": "hi"},
            {"seq": 2, "kind": "event", "type": "usage", "tokens": 3},
        ]
        expected_bytes = (
            b'[{"content":"hi","kind":"message","role":"user","seq":1},'
            b'{"kind":"event","seq":2,"tokens":3,"type":"usage"}]'
        )
        assert canonical_json(records) == expected_bytes
        assert records_digest(records) == (
            "sha256:9b649caccb145617ca47fcb5f0fa67e1e92e4de65628704c5016c87dc2c93290"
        )
        assert records_digest(records) == "sha256:" + hashlib.sha256(expected_bytes).hexdigest()

    def test_the_digest_of_no_records_is_the_hash_of_an_empty_array(self) -> None:
        assert records_digest([]) == (
            "sha256:4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945"
        )


class TestRefusals:
    # covers S2: only JSON types, so that decoding the bytes gives back the same value

    @pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, {"x": [math.nan]}])
    def test_nan_and_infinity_are_refused(self, value: Any) -> None:
        with pytest.raises(ValueError, match="canonical_json"):
            canonical_json(value)

    def test_a_lone_surrogate_is_refused(self) -> None:
        with pytest.raises(ValueError, match="lone surrogate"):
            canonical_json({"s": "\ud800"})

    @pytest.mark.parametrize(
        "value",
        [
            (1, 2),
            {"k": (1,)},
            {1: "int key"},
            {True: "bool key"},
            {"a": 1, 2: "mixed keys"},
            {1, 2},
            b"bytes",
            object(),
        ],
        ids=["tuple", "nested-tuple", "int-key", "bool-key", "mixed-keys", "set", "bytes", "obj"],
    )
    def test_values_json_dumps_would_coerce_or_reject_are_type_errors(self, value: Any) -> None:
        with pytest.raises(TypeError, match="canonical_json"):
            canonical_json(value)

    def test_a_cycle_is_refused(self) -> None:
        looped: list[Any] = []
        looped.append(looped)
        with pytest.raises(ValueError, match="canonical_json"):
            canonical_json(looped)


class TestProperties:
    # covers S2

    @given(JSON_VALUES)
    def test_decoding_the_bytes_gives_back_the_value(self, value: Any) -> None:
        assert json.loads(canonical_json(value)) == value

    @given(st.dictionaries(TEXT, JSON_VALUES, max_size=6), st.randoms())
    def test_key_order_never_changes_the_bytes(self, value: dict[str, Any], rng: Any) -> None:
        items = list(value.items())
        rng.shuffle(items)
        assert canonical_json(dict(items)) == canonical_json(value)

    @given(JSON_VALUES)
    def test_encoding_is_a_fixed_point_of_decode_then_encode(self, value: Any) -> None:
        encoded = canonical_json(value)
        assert canonical_json(json.loads(encoded)) == encoded

    @given(st.lists(st.dictionaries(TEXT, JSON_VALUES, max_size=4), max_size=4))
    def test_the_digest_depends_only_on_the_decoded_records(
        self, records: list[dict[str, Any]]
    ) -> None:
        # A record read back from its stored line has the same digest as the one written.
        reread = [json.loads(canonical_json(record)) for record in records]
        digest = records_digest(records)
        assert records_digest(reread) == digest
        assert digest.startswith("sha256:") and len(digest) == len("sha256:") + 64
