"""The model catalog: known models' limits, and `[agent] context_window` for the rest."""

# covers K2

from __future__ import annotations

from lecode_ls.agent.catalog import CATALOG, ModelLimits, context_window, lookup, max_output_tokens
from lecode_ls.config import validate


class TestLookup:
    def test_a_known_model_has_its_published_limits(self) -> None:
        assert lookup("gpt-4o") == ModelLimits(128_000, 16_384)

    def test_an_openrouter_vendor_prefix_finds_the_same_model(self) -> None:
        assert lookup("openai/gpt-4o-mini") == CATALOG["gpt-4o-mini"]

    def test_the_catalog_covers_hosted_and_local_models(self) -> None:
        for model in ("gpt-4.1", "o3-mini", "anthropic/claude-sonnet-4", "llama3.1:8b"):
            assert lookup(model) is not None
        assert any(name.startswith("qwen2.5-coder") for name in CATALOG)

    def test_an_unknown_model_is_none(self) -> None:
        assert lookup("my-finetune") is None
        assert max_output_tokens("my-finetune") is None

    def test_every_entry_is_plausible(self) -> None:
        for limits in CATALOG.values():
            assert limits.context_window >= 8_192
            assert (
                limits.max_output_tokens is None or limits.max_output_tokens < limits.context_window
            )


class TestContextWindow:
    def test_the_catalog_wins_for_a_known_model(self) -> None:
        assert context_window("gpt-4o", 4096) == 128_000

    def test_an_unknown_model_falls_back_to_the_configured_window(self) -> None:
        assert context_window("my-finetune", 32_768) == 32_768

    def test_an_unknown_model_without_configuration_is_unknown(self) -> None:
        assert context_window("my-finetune", None) is None

    def test_agent_context_window_comes_from_settings(self) -> None:
        settings, problems = validate({"agent": {"context_window": 16_384}})
        assert problems == []
        assert context_window("my-finetune", settings.agent.context_window) == 16_384


class TestProviderSettings:
    def test_defaults_and_a_thinking_level(self) -> None:
        settings, problems = validate(
            {
                "provider": {
                    "base_url": "http://localhost:11434/v1",
                    "model": "llama3.1:8b",
                    "api_key_env": "",
                    "thinking": "high",
                }
            }
        )
        assert problems == []
        assert settings.provider.model == "llama3.1:8b" and settings.provider.thinking == "high"
        assert validate({})[0].agent.context_window is None

    def test_an_invalid_thinking_level_names_the_key(self) -> None:
        settings, problems = validate({"provider": {"thinking": "max"}})
        assert settings.provider.thinking is None
        assert len(problems) == 1 and problems[0].startswith("provider.thinking:")


class TestAgentSettings:
    """# covers K1, T2, T4: readonly and per-tool permissions, each bad key dropped alone."""

    def test_permissions_for_write_tools_are_kept(self) -> None:
        settings, problems = validate(
            {"agent": {"readonly": True, "permissions": {"memory_write": "allow"}}}
        )
        assert problems == []
        assert settings.agent.readonly is True
        assert settings.agent.permissions == {"memory_write": "allow"}

    def test_a_bad_tool_name_drops_that_entry_only(self) -> None:
        settings, problems = validate(
            {"agent": {"permissions": {"memory_write": "allow", "memory_read": "deny"}}}
        )
        assert settings.agent.permissions == {"memory_write": "allow"}
        assert len(problems) == 1 and problems[0].startswith("agent.permissions.memory_read:")

    def test_a_bad_decision_and_a_bad_table_fall_back_to_the_default(self) -> None:
        settings, problems = validate({"agent": {"permissions": {"memory_forget": "yes"}}})
        assert settings.agent.permissions == {} and len(problems) == 1
        settings, problems = validate({"agent": {"permissions": 5}})
        assert settings.agent.permissions == {}
        assert problems[0].startswith("agent.permissions:")
