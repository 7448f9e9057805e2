"""Preflight: will this request fit the model's window? (C8, I6)

Before every model request the runner estimates the size of the whole outgoing request (system
prompt, messages with their tool calls and results, and the tool schemas) and checks it against
the model's window, less the headroom reserved for the answer.

The estimate is *not a tokenizer*. It is a conservative UTF-8 size estimate: the byte length of the
canonical JSON of the messages and tools, divided by `BYTES_PER_TOKEN`, plus a fixed framing
allowance per message and per tool, plus a fixed allowance per image or audio part (whose payload,
often a large base64 data URL, is not counted by size). A per-model `Calibration` learned from the
prompt tokens providers report then scales it toward what the model really counts.

Window policy: the catalog's window wins for a model it knows; `[agent] context_window` covers the
rest; with neither the window is unknown and the request cannot be checked, so it is let through
with the reason "unknown window" for the runner to surface rather than guessing a limit.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lecode_ls.agent import catalog
from lecode_ls.agent.provider import ChatRequest, Message, ToolSchema, Usage

BYTES_PER_TOKEN = 3.0
"""UTF-8 bytes counted as one token. BPE tokenizers average about 4 bytes per token on English
prose and 3.5 to 4 on code, so 3.0 overestimates both by a margin; CJK characters are 3 bytes in
UTF-8 and usually one token or so each, which 3.0 also covers. Calibration corrects the rest."""

FRAMING_TOKENS_PER_MESSAGE = 8
"""Role markers and separators the chat template wraps around each message (OpenAI documents about
3 or 4; 8 leaves room for other templates)."""

FRAMING_TOKENS_PER_TOOL = 8
"""Template overhead around each tool schema, beyond its JSON."""

FRAMING_TOKENS_PER_REQUEST = 16
"""The assistant reply primer and other fixed per-request overhead."""

IMAGE_TOKENS = 1_600
"""One image part. OpenAI's high-detail image of the largest tiling costs 1,105 tokens and
Anthropic's images cap near 1,600, so this is the larger of the two."""

AUDIO_TOKENS = 4_000
"""One audio part: a fixed allowance (a few minutes of speech at typical audio token rates); long
recordings can exceed it, which calibration from reported usage then absorbs."""

_IMAGE_PART_TYPES = frozenset({"image_url", "image", "input_image"})
_AUDIO_PART_TYPES = frozenset({"input_audio", "audio", "input_audio_url"})

CALIBRATION_MIN = 0.5
CALIBRATION_MAX = 2.0
CALIBRATION_ALPHA = 0.3
"""Weight of the newest observation in the exponential moving average."""


def _to_json_value(value: Any) -> Any:
    """Mappings and sequences the JSON encoder does not know (read-only views, tuples) as plain
    dicts and lists; anything else as its text, so the estimate never fails on odd content."""
    if isinstance(value, Mapping):
        return {str(key): item for key, item in value.items()}
    if isinstance(value, (list, tuple)) or (
        isinstance(value, Sequence) and not isinstance(value, (str, bytes, bytearray))
    ):
        return list(value)
    if isinstance(value, (bytes, bytearray)):
        return value.decode("utf-8", errors="replace")
    return str(value)


def _canonical_size(value: Any) -> int:
    """Byte length of `value` as compact, key-sorted, UTF-8 (not ASCII-escaped) JSON."""
    text = json.dumps(
        value,
        ensure_ascii=False,
        sort_keys=True,
        separators=(",", ":"),
        default=_to_json_value,
    )
    return len(text.encode("utf-8"))


def _media_kind(part: Any) -> str | None:
    if not isinstance(part, Mapping):
        return None
    kind = part.get("type")
    if kind in _IMAGE_PART_TYPES:
        return "image"
    if kind in _AUDIO_PART_TYPES:
        return "audio"
    return None


def _strip_media(message: Message) -> tuple[Message, int]:
    """`message` with each media part reduced to its type, and those parts' token allowance."""
    content = message.get("content")
    if isinstance(content, (str, bytes, bytearray)) or not isinstance(content, Sequence):
        return message, 0
    allowance = 0
    parts: list[Any] = []
    for part in content:
        kind = _media_kind(part)
        if kind is None:
            parts.append(part)
            continue
        allowance += IMAGE_TOKENS if kind == "image" else AUDIO_TOKENS
        parts.append({"type": part.get("type")})
    if allowance == 0:
        return message, 0
    stripped = dict(message)
    stripped["content"] = parts
    return stripped, allowance


def estimate_tokens(request: ChatRequest, *, calibration: float = 1.0) -> int:
    """A conservative estimate of the prompt tokens `request` will cost.

    UTF-8 bytes of the canonical JSON of the messages and the tools, over `BYTES_PER_TOKEN`, plus
    framing per message, per tool and per request, plus `IMAGE_TOKENS` / `AUDIO_TOKENS` per media
    part, all times `calibration` and rounded up. Not a tokenizer: it is meant to err high.
    """
    media = 0
    messages: list[Message] = []
    for message in request.messages:
        stripped, allowance = _strip_media(message)
        messages.append(stripped)
        media += allowance
    tools: Sequence[ToolSchema] = request.tools
    size = _canonical_size(messages) + (_canonical_size(list(tools)) if tools else 0)
    framing = (
        FRAMING_TOKENS_PER_REQUEST
        + FRAMING_TOKENS_PER_MESSAGE * len(messages)
        + FRAMING_TOKENS_PER_TOOL * len(tools)
    )
    raw = size / BYTES_PER_TOKEN + framing + media
    return math.ceil(raw * calibration)


@dataclass
class Calibration:
    """Per-model ratio of reported prompt tokens to our uncalibrated estimate.

    Each observation's ratio is clamped to [`CALIBRATION_MIN`, `CALIBRATION_MAX`] before it enters
    an exponential moving average (weight `CALIBRATION_ALPHA` for the newest), so one absurd report
    moves the factor at most part of the way toward a bound and never beyond it. The first
    observation starts the average from 1.0, not from itself, for the same reason. A model never
    observed has factor 1.0.

    Feed it the *uncalibrated* estimate (`estimate_tokens(request)`, or `Preflight.uncalibrated`):
    feeding back the calibrated one would compound the factor. Missing usage (None, C10) is unknown
    and ignored, never counted as zero; so are non-positive counts, which no real prompt has.
    """

    alpha: float = CALIBRATION_ALPHA
    _factors: dict[str, float] = field(default_factory=dict)

    def observe(
        self, model: str, estimated_prompt_tokens: int, reported_prompt_tokens: int | None
    ) -> None:
        if reported_prompt_tokens is None:
            return
        if estimated_prompt_tokens <= 0 or reported_prompt_tokens <= 0:
            return
        ratio = reported_prompt_tokens / estimated_prompt_tokens
        ratio = min(CALIBRATION_MAX, max(CALIBRATION_MIN, ratio))
        previous = self._factors.get(model, 1.0)
        updated = previous + self.alpha * (ratio - previous)
        self._factors[model] = min(CALIBRATION_MAX, max(CALIBRATION_MIN, updated))

    def observe_usage(self, model: str, estimated_prompt_tokens: int, usage: Usage | None) -> None:
        """`observe` from a `Finish.usage`, which is None when the provider reported none."""
        self.observe(
            model, estimated_prompt_tokens, usage.prompt_tokens if usage is not None else None
        )

    def factor(self, model: str) -> float:
        return self._factors.get(model, 1.0)


@dataclass(frozen=True, slots=True)
class Preflight:
    """The verdict on one request."""

    estimated: int
    """Calibrated estimate of the prompt tokens."""
    window: int | None
    """The model's window (catalog, else configured); None when unknown."""
    budget: int | None
    """Prompt tokens the window leaves after the answer's reservation; None when unknown."""
    fits: bool
    reason: str | None
    """Why it does not fit, or that it could not be checked; None when it fits."""
    uncalibrated: int = 0
    """The estimate before calibration: what `Calibration.observe` wants."""


def reserved_output_tokens(request: ChatRequest, model: str, buffer_tokens: int) -> int:
    """Tokens kept free for the answer: `[compaction] buffer_tokens`, or more when the request asks
    for a larger completion (`max_tokens`, capped at the catalog's output limit), since providers
    reject a prompt that leaves less than that room."""
    reserved = max(0, buffer_tokens)
    if request.max_tokens is not None:
        asked = request.max_tokens
        cap = catalog.max_output_tokens(model)
        if cap is not None:
            asked = min(asked, cap)
        reserved = max(reserved, asked)
    return reserved


def preflight(
    request: ChatRequest,
    *,
    model: str,
    configured_window: int | None,
    buffer_tokens: int,
    calibration: Calibration,
) -> Preflight:
    """Check `request` against the window of the model it will be sent to.

    That model is `request.model` when set (it overrides the provider's), else `model`. The window
    is the catalog's, else `configured_window` (`[agent] context_window`); with neither it is
    unknown, and the request fits with reason "unknown window ..." because it cannot be checked.
    The budget is the window less `reserved_output_tokens` (never below zero); the request fits
    when its calibrated estimate is at most the budget.
    """
    target = request.model or model
    uncalibrated = estimate_tokens(request)
    estimated = estimate_tokens(request, calibration=calibration.factor(target))
    window = catalog.context_window(target, configured_window)
    if window is None:
        return Preflight(
            estimated,
            None,
            None,
            True,
            f"unknown window: the model {target!r} is not in the catalog and "
            f"[agent] context_window is not set, so the request (about {estimated:,} tokens) "
            "could not be checked",
            uncalibrated,
        )
    reserved = reserved_output_tokens(request, target, buffer_tokens)
    budget = max(0, window - reserved)
    if estimated <= budget:
        return Preflight(estimated, window, budget, True, None, uncalibrated)
    return Preflight(
        estimated,
        window,
        budget,
        False,
        f"the request needs about {estimated:,} tokens; the model's window leaves {budget:,} "
        f"({window:,} tokens less {reserved:,} reserved for the answer)",
        uncalibrated,
    )
