"""The live rig's chat template rewrite (tests/live/template.py), on both models' own templates.

tests/live/chat_templates holds `tokenizer.chat_template` as read from the two GGUF files that
scripts/test-live fetches (Qwen2.5-Coder 0.5B and 1.5B Instruct, Q4), byte for byte. The rewrite
is what lets llama-server parse the fenced tool calls these models write; without it the live
suite cannot run a tool call through either model.

# covers T1 (the tools reach the model and its calls come back as calls, on the live rig)
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from tests.live.template import chat_template, fenced, fenced_template

TEMPLATES = Path(__file__).parents[1] / "live" / "chat_templates"
SMALL = (TEMPLATES / "qwen2.5-coder-0.5b-instruct.jinja").read_text(encoding="utf-8")
LARGER = (TEMPLATES / "qwen2.5-coder-1.5b-instruct.jinja").read_text(encoding="utf-8")


def gguf_string(text: str) -> bytes:
    """A GGUF string: its UTF-8 length as a little-endian uint64, then the bytes."""
    data = text.encode("utf-8")
    return struct.pack("<Q", len(data)) + data


FENCED_EXAMPLE = (
    'in one ```json fenced block:\\n```json\\n{\\"name\\": <function-name>, '
    '\\"arguments\\": <args-json-object>}\\n```'
)


def gguf(path: Path, entries: list[tuple[str, int, bytes]]) -> Path:
    """A GGUF v3 file with these metadata entries (key, type, encoded value) and no tensors."""
    body = b"".join(
        gguf_string(key) + struct.pack("<I", kind) + value for key, kind, value in entries
    )
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, len(entries)) + body)
    return path


class TestTheTwoTemplates:
    def test_they_differ_only_in_the_braces_of_the_example_call(self) -> None:
        doubled = LARGER.replace(
            '{{\\"name\\": <function-name>, \\"arguments\\": <args-json-object>}}',
            '{\\"name\\": <function-name>, \\"arguments\\": <args-json-object>}',
        )
        assert LARGER != SMALL
        assert doubled == SMALL

    def test_both_become_the_same_fenced_template(self) -> None:
        assert fenced(LARGER) == fenced(SMALL)

    @pytest.mark.parametrize("template", [SMALL, LARGER], ids=["0.5b", "1.5b"])
    def test_no_tool_call_tag_is_left_and_the_example_is_fenced_json(self, template: str) -> None:
        rewritten = fenced(template)
        assert "tool_call>" not in rewritten
        assert rewritten.count(FENCED_EXAMPLE) == 1
        # a call the history replays is written the way the model is told to write one
        assert """'\\n```json\\n{"name": "'""" in rewritten
        assert """'}\\n```'""" in rewritten
        # the rest of the template is untouched
        assert rewritten.count("<tool_response>") == template.count("<tool_response>") == 1


class TestARewriteThatDoesNotApply:
    def test_a_template_without_the_tagged_example_is_refused(self) -> None:
        with pytest.raises(ValueError, match=r"has no .*<tool_call></tool_call> XML tags"):
            fenced("{%- for message in messages %}{{ message.content }}{%- endfor %}")

    def test_a_template_missing_one_later_rewrite_is_refused(self) -> None:
        with pytest.raises(ValueError, match=r"has no .*</tool_call>'"):
            fenced(SMALL.replace("""'}\\n</tool_call>'""", """'}'"""))


class TestReadFromTheModelFile:
    def test_the_template_is_found_after_entries_of_every_shape(self, tmp_path: Path) -> None:
        model = gguf(
            tmp_path / "tiny-q4.gguf",
            [
                ("general.architecture", 8, gguf_string("qwen2")),
                ("qwen2.block_count", 4, struct.pack("<I", 28)),
                ("qwen2.rope.freq_base", 6, struct.pack("<f", 1e6)),
                ("tokenizer.ggml.add_bos_token", 7, b"\x00"),
                (
                    "tokenizer.ggml.tokens",
                    9,
                    struct.pack("<IQ", 8, 2) + gguf_string("a") + gguf_string("b"),
                ),
                (
                    "tokenizer.ggml.token_type",
                    9,
                    struct.pack("<IQ", 5, 2) + struct.pack("<ii", 1, 1),
                ),
                ("tokenizer.chat_template", 8, gguf_string(LARGER)),
            ],
        )
        assert chat_template(model) == LARGER
        written = fenced_template(model, tmp_path)
        assert written == tmp_path / "tiny-q4.fenced-tool-calls.jinja"
        assert written.read_text(encoding="utf-8") == fenced(SMALL)

    def test_a_file_that_is_not_gguf_is_refused(self, tmp_path: Path) -> None:
        model = tmp_path / "model.gguf"
        model.write_bytes(b"PK\x03\x04" + bytes(20))
        with pytest.raises(ValueError, match="is not a GGUF file"):
            chat_template(model)

    def test_a_model_without_a_template_is_refused(self, tmp_path: Path) -> None:
        model = gguf(tmp_path / "bare.gguf", [("general.architecture", 8, gguf_string("qwen2"))])
        with pytest.raises(ValueError, match="has no chat template"):
            chat_template(model)
