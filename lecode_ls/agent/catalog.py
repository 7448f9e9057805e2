"""A small catalog of well-known models' limits, for preflighting requests against the window.

A model the catalog does not know takes `[agent] context_window`; with that unset its window is
unknown (None) and the caller must say so rather than guess.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ModelLimits:
    """Token limits of one model."""

    context_window: int
    """Prompt plus completion, in tokens."""
    max_output_tokens: int | None
    """Cap on one completion, in tokens; None when the vendor publishes none."""


# The vendors' published limits (model cards and API docs) as of 2025. Local models (Ollama,
# llama.cpp) list the model's native window; the server may be configured to use less, which is
# what `[agent] context_window` is for.
CATALOG: dict[str, ModelLimits] = {
    # OpenAI
    "gpt-4o": ModelLimits(128_000, 16_384),
    "gpt-4o-mini": ModelLimits(128_000, 16_384),
    "gpt-4.1": ModelLimits(1_047_576, 32_768),
    "gpt-4.1-mini": ModelLimits(1_047_576, 32_768),
    "gpt-4.1-nano": ModelLimits(1_047_576, 32_768),
    "o3-mini": ModelLimits(200_000, 100_000),
    "o4-mini": ModelLimits(200_000, 100_000),
    # Anthropic (through OpenRouter)
    "anthropic/claude-sonnet-4": ModelLimits(200_000, 64_000),
    "anthropic/claude-3.5-sonnet": ModelLimits(200_000, 8_192),
    # Local models (Ollama names)
    "llama3.1:8b": ModelLimits(131_072, None),
    "qwen2.5-coder:7b": ModelLimits(32_768, None),
    "qwen2.5-coder:32b": ModelLimits(32_768, None),
}

# OpenRouter prefixes OpenAI models with the vendor ("openai/gpt-4o"): the same model.
_VENDOR_PREFIXES = ("openai/",)


def lookup(model: str) -> ModelLimits | None:
    """The catalog's limits for `model`, or None when it does not know it."""
    name = model.strip()
    if name in CATALOG:
        return CATALOG[name]
    for prefix in _VENDOR_PREFIXES:
        if name.startswith(prefix) and name[len(prefix) :] in CATALOG:
            return CATALOG[name[len(prefix) :]]
    return None


def context_window(model: str, configured: int | None) -> int | None:
    """The window to preflight against: the catalog's, else `[agent] context_window`, else None.

    The catalog wins for a model it knows; `configured` covers the models it does not.
    """
    limits = lookup(model)
    if limits is not None:
        return limits.context_window
    return configured


def max_output_tokens(model: str) -> int | None:
    """The catalog's completion cap for `model`, or None when unknown."""
    limits = lookup(model)
    return limits.max_output_tokens if limits is not None else None
