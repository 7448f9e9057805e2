"""Preflight: a conservative size estimate of the whole request, checked against the window."""

# covers C8, I6, C10

from __future__ import annotations

import json
from typing import Any

import pytest

from lecode_ls.agent.catalog import CATALOG
from lecode_ls.agent.preflight import (
    AUDIO_TOKENS,
    CALIBRATION_MAX,
    CALIBRATION_MIN,
    IMAGE_TOKENS,
    Calibration,
    estimate_tokens,
    preflight,
)
from lecode_ls.agent.provider import ChatRequest, Usage

TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "read_file",
        "description": "Read a file of the workspace and return its text.",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string", "description": "Relative path."}},
            "required": ["path"],
        },
    },
}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def request(*texts: str, tools: tuple[dict[str, Any], ...] = ()) -> ChatRequest:
    return ChatRequest(
        messages=[{"role": "system", "content": "You are helpful."}, *(user(t) for t in texts)],
        tools=tools,
    )


def utf8_size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False).encode("utf-8"))


class TestEstimate:
    def test_it_grows_with_content(self) -> None:
        short = estimate_tokens(request("hello"))
        longer = estimate_tokens(request("hello " * 200))
        more = estimate_tokens(request("hello", "and another message"))
        assert short < more < longer

    def test_tool_schemas_count(self) -> None:
        assert estimate_tokens(request("hi", tools=(TOOL,))) > estimate_tokens(request("hi"))
        assert estimate_tokens(request("hi", tools=(TOOL, TOOL))) > estimate_tokens(
            request("hi", tools=(TOOL,))
        )

    def test_tool_calls_and_results_count(self) -> None:
        base = [user("look at it")]
        call = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path": "a.py"}'},
                }
            ],
        }
        result = {"role": "tool", "tool_call_id": "c1", "content": "x = 1\n" * 500}
        without = estimate_tokens(ChatRequest(messages=base))
        with_call = estimate_tokens(ChatRequest(messages=[*base, call]))
        with_result = estimate_tokens(ChatRequest(messages=[*base, call, result]))
        assert without < with_call < with_result
        assert with_result - with_call >= len("x = 1\n" * 500) // 4

    def test_ascii_is_at_least_a_bytes_over_four_lower_bound(self) -> None:
        text = "The quick brown fox jumps over the lazy dog. " * 300
        req = ChatRequest(messages=[user(text)], tools=(TOOL,))
        lower = (utf8_size([user(text)]) + utf8_size([TOOL])) / 4
        assert estimate_tokens(req) >= lower

    def test_multibyte_text_is_counted_by_utf8_bytes(self) -> None:
        cjk = "漢字仮名交じり文" * 200  # 3 UTF-8 bytes a character
        ascii_same_length = "a" * len(cjk)
        assert estimate_tokens(request(cjk)) > 2 * estimate_tokens(request(ascii_same_length)) - 50
        # At least one token a character: a conservative bound for CJK.
        assert estimate_tokens(request(cjk)) >= len(cjk)
        emoji = "🙂" * 500  # 4 bytes each
        assert estimate_tokens(request(emoji)) >= len(emoji)

    def test_each_message_has_a_framing_allowance(self) -> None:
        one = estimate_tokens(ChatRequest(messages=[user("")]))
        two = estimate_tokens(ChatRequest(messages=[user(""), user("")]))
        assert two - one >= 4

    def test_media_parts_cost_a_fixed_allowance_not_their_payload_size(self) -> None:
        payload = "data:image/png;base64," + "A" * 400_000

        def image_message(n: int) -> dict[str, Any]:
            parts: list[dict[str, Any]] = [{"type": "text", "text": "what is this?"}]
            parts += [{"type": "image_url", "image_url": {"url": payload}}] * n
            return {"role": "user", "content": parts}

        text_only = estimate_tokens(ChatRequest(messages=[image_message(0)]))
        one = estimate_tokens(ChatRequest(messages=[image_message(1)]))
        two = estimate_tokens(ChatRequest(messages=[image_message(2)]))
        assert one - text_only >= IMAGE_TOKENS
        assert one - text_only < IMAGE_TOKENS + 50
        assert two - one >= IMAGE_TOKENS

        audio = {
            "role": "user",
            "content": [{"type": "input_audio", "input_audio": {"data": "U" * 10_000}}],
        }
        assert estimate_tokens(ChatRequest(messages=[audio])) >= AUDIO_TOKENS

    def test_calibration_scales_the_estimate(self) -> None:
        req = request("hello " * 300)
        base = estimate_tokens(req)
        assert estimate_tokens(req, calibration=1.5) >= int(base * 1.5) - 1
        assert estimate_tokens(req, calibration=0.5) <= base // 2 + 1

    def test_odd_but_json_like_content_does_not_break_it(self) -> None:
        from types import MappingProxyType

        msg = MappingProxyType({"role": "user", "content": ("a", "b")})
        assert estimate_tokens(ChatRequest(messages=[msg])) > 0


class TestCalibration:
    def test_an_unknown_model_has_factor_one(self) -> None:
        assert Calibration().factor("gpt-4o") == 1.0

    def test_reports_move_the_factor_toward_the_ratio(self) -> None:
        cal = Calibration()
        cal.observe("m", 1_000, 750)
        first = cal.factor("m")
        assert 0.75 < first < 1.0
        for _ in range(50):
            cal.observe("m", 1_000, 750)
        assert cal.factor("m") == pytest.approx(0.75, abs=0.01)
        assert cal.factor("other") == 1.0

    def test_the_factor_moves_the_estimate(self) -> None:
        cal = Calibration()
        for _ in range(50):
            cal.observe("gpt-4o", 1_000, 1_500)
        req = ChatRequest(messages=[user("hello " * 1_000)], model="gpt-4o")
        result = preflight(
            req, model="gpt-4o", configured_window=None, buffer_tokens=0, calibration=cal
        )
        assert result.estimated > result.uncalibrated
        assert result.uncalibrated == estimate_tokens(req)

    def test_it_is_clamped_and_resists_an_outlier(self) -> None:
        cal = Calibration()
        cal.observe("m", 100, 1_000_000)
        assert 1.0 < cal.factor("m") <= CALIBRATION_MAX
        assert cal.factor("m") < 1.5  # one absurd report moves it only part of the way
        for _ in range(100):
            cal.observe("m", 100, 1_000_000)
        assert cal.factor("m") <= CALIBRATION_MAX
        for _ in range(100):
            cal.observe("m", 1_000_000, 1)
        assert cal.factor("m") >= CALIBRATION_MIN

    def test_missing_usage_is_ignored_not_counted_as_zero(self) -> None:
        cal = Calibration()
        cal.observe("m", 1_000, 1_200)
        before = cal.factor("m")
        cal.observe("m", 1_000, None)
        cal.observe_usage("m", 1_000, None)
        cal.observe("m", 0, 500)
        assert cal.factor("m") == before
        assert Calibration().factor("m") == 1.0

    def test_it_takes_a_reported_usage(self) -> None:
        cal = Calibration()
        cal.observe_usage("m", 1_000, Usage(2_000, 10, 2_010))
        assert cal.factor("m") > 1.0


class TestPreflight:
    def test_the_catalog_window_wins_over_the_configured_one(self) -> None:
        result = preflight(
            request("hi"),
            model="gpt-4o",
            configured_window=4_096,
            buffer_tokens=1_000,
            calibration=Calibration(),
        )
        assert result.window == CATALOG["gpt-4o"].context_window
        assert result.budget == CATALOG["gpt-4o"].context_window - 1_000

    def test_an_unknown_model_uses_the_configured_window(self) -> None:
        result = preflight(
            request("hi"),
            model="my-finetune",
            configured_window=8_192,
            buffer_tokens=1_000,
            calibration=Calibration(),
        )
        assert result.window == 8_192
        assert result.budget == 7_192
        assert result.fits and result.reason is None

    def test_the_request_model_overrides_the_default(self) -> None:
        req = ChatRequest(messages=[user("hi")], model="gpt-4o")
        result = preflight(
            req,
            model="my-finetune",
            configured_window=8_192,
            buffer_tokens=0,
            calibration=Calibration(),
        )
        assert result.window == CATALOG["gpt-4o"].context_window

    def test_an_unknown_window_cannot_be_checked_and_says_so(self) -> None:
        result = preflight(
            request("hi " * 100_000),
            model="my-finetune",
            configured_window=None,
            buffer_tokens=1_000,
            calibration=Calibration(),
        )
        assert result.fits
        assert result.window is None and result.budget is None
        assert result.reason is not None and result.reason.startswith("unknown window")

    def test_the_boundary(self) -> None:
        req = request("some words " * 500)
        estimated = estimate_tokens(req)
        buffer = 1_000

        def check(window: int) -> bool:
            return preflight(
                req,
                model="my-finetune",
                configured_window=window,
                buffer_tokens=buffer,
                calibration=Calibration(),
            ).fits

        assert check(estimated + buffer)
        assert not check(estimated + buffer - 1)

    def test_a_larger_max_tokens_reserves_more_capped_by_the_catalog(self) -> None:
        cal = Calibration()
        asks = ChatRequest(messages=[user("hi")], max_tokens=50_000)
        custom = preflight(
            asks,
            model="my-finetune",
            configured_window=100_000,
            buffer_tokens=1_000,
            calibration=cal,
        )
        assert custom.budget == 50_000
        known = preflight(
            asks, model="gpt-4o", configured_window=None, buffer_tokens=1_000, calibration=cal
        )
        cap = CATALOG["gpt-4o"].max_output_tokens
        assert cap is not None
        assert known.budget == CATALOG["gpt-4o"].context_window - cap
        small = ChatRequest(messages=[user("hi")], max_tokens=10)
        at_least_buffer = preflight(
            small,
            model="my-finetune",
            configured_window=100_000,
            buffer_tokens=1_000,
            calibration=cal,
        )
        assert at_least_buffer.budget == 99_000

    def test_the_reason_a_person_can_read(self) -> None:
        req = request("some words " * 5_000)
        result = preflight(
            req,
            model="my-finetune",
            configured_window=4_096,
            buffer_tokens=1_000,
            calibration=Calibration(),
        )
        assert not result.fits
        assert result.reason is not None
        assert f"about {result.estimated:,} tokens" in result.reason
        assert "window leaves 3,096" in result.reason
        assert "reserved for the answer" in result.reason

    def test_a_buffer_larger_than_the_window_leaves_nothing(self) -> None:
        result = preflight(
            request("hi"),
            model="my-finetune",
            configured_window=1_000,
            buffer_tokens=5_000,
            calibration=Calibration(),
        )
        assert result.budget == 0
        assert not result.fits
