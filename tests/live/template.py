"""The model's own chat template, with its tool calls written as fenced JSON.

Qwen2.5-Coder 0.5B and 1.5B, asked through llama-server with their own template, write a tool call
as a fenced block (```json {"name": ..., "arguments": ...} ```) instead of the template's
<tool_call> tags, so llama-server finds no call and streams it as text (0 of 4 requests, with
tool_choice "auto"; "required" did not help the 1.5B model either). llama-server derives its
tool-call parser from the template (`--chat-template-file`), so the same template with the fence
in place of the tags makes it parse what these models write: 4 of 4 requests became structured calls. The template is read
from the GGUF file and rewritten here; a rewrite that does not apply fails loudly.

The two models' templates differ in one place: the 1.5B's writes the instruction's example call
with doubled braces. It sits in a Jinja string literal, where braces are plain text, so the 1.5B
model is shown `{{"name": <function-name>, ...}}`, which is not JSON. Both forms become the
same fenced example with single braces: the two rewritten templates are the same text
(tests/unit/test_live_template.py checks it on copies of both, in tests/live/chat_templates).
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import BinaryIO

_SCALARS = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
_STRING, _ARRAY = 8, 9

_EXAMPLE = '\\"name\\": <function-name>, \\"arguments\\": <args-json-object>'
_TAGGED = (
    "within <tool_call></tool_call> XML tags:\\n<tool_call>\\n{open}"
    + _EXAMPLE
    + "{close}\\n</tool_call>"
)

REWRITES: tuple[tuple[tuple[str, ...], str], ...] = (
    # (the forms a template may have, the text that replaces whichever it has)
    (
        (_TAGGED.format(open="{", close="}"), _TAGGED.format(open="{{", close="}}")),
        "in one ```json fenced block:\\n```json\\n{" + _EXAMPLE + "}\\n```",
    ),
    (("""'\\n<tool_call>\\n{"name": "'""",), """'\\n```json\\n{"name": "'"""),
    (("""'}\\n</tool_call>'""",), """'}\\n```'"""),
)


def _string(f: BinaryIO) -> str:
    (length,) = struct.unpack("<Q", f.read(8))
    return f.read(length).decode("utf-8")


def _skip(f: BinaryIO, kind: int) -> None:
    if kind == _STRING:
        _string(f)
    elif kind == _ARRAY:
        item, count = struct.unpack("<IQ", f.read(12))
        if item in _SCALARS:
            f.seek(_SCALARS[item] * count, 1)
        else:
            for _ in range(count):
                _skip(f, item)
    else:
        f.seek(_SCALARS[kind], 1)


def chat_template(model: Path) -> str:
    """`tokenizer.chat_template` from a GGUF file's metadata."""
    with model.open("rb") as f:
        if f.read(4) != b"GGUF":
            raise ValueError(f"{model} is not a GGUF file")
        _version, _tensors, entries = struct.unpack("<IQQ", f.read(20))
        for _ in range(entries):
            key = _string(f)
            (kind,) = struct.unpack("<I", f.read(4))
            if key == "tokenizer.chat_template" and kind == _STRING:
                return _string(f)
            _skip(f, kind)
    raise ValueError(f"{model} has no chat template")


def fenced(template: str) -> str:
    """`template` with its tool calls written as fenced JSON; ValueError if a rewrite finds nothing."""
    for olds, new in REWRITES:
        old = next((o for o in olds if o in template), None)
        if old is None:
            raise ValueError(f"the chat template has no {olds[0]!r} to rewrite")
        template = template.replace(old, new)
    return template


def fenced_template(model: Path, folder: Path) -> Path:
    """The model's template with fenced tool calls, written to `folder`."""
    path = folder / f"{model.stem}.fenced-tool-calls.jinja"
    path.write_text(fenced(chat_template(model)), encoding="utf-8")
    return path
