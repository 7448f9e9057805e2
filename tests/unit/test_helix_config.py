"""docs/editors/helix.md's configuration against Helix's own schema, since Helix cannot be installed
here (Debian 12 has none, Debian 13's needs glibc 2.39, and it is on neither PyPI nor npm).

What is checked was read from Helix's sources at the 25.07.1 release (helix-editor/helix
9f4ef2fc3, 2025-07-18) and 25.01 (dabfb6cee): `helix-core/src/syntax/config.rs`
(`Configuration`, `LanguageConfiguration` with `deny_unknown_fields`,
`LanguageServerConfiguration`, `LanguageServerFeature`), `helix-view/src/editor.rs` (`LspConfig`,
`deny_unknown_fields`) and `languages.toml` (the default servers of each language). A user's
`[[language]]` entry is merged by `name` into the default one and its `language-servers` list
replaces the default list, so the page's lists must keep the defaults.

# covers issue 24, item 3 (Helix)
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

from lecode_ls.server.routes import COMMANDS

HELIX_PAGE = (Path(__file__).parents[2] / "docs" / "editors" / "helix.md").read_text()

# helix-core/src/syntax/config.rs, LanguageConfiguration (kebab-case, deny_unknown_fields).
LANGUAGE_KEYS = {
    "name", "language-id", "scope", "file-types", "shebangs", "roots", "comment-token",
    "comment-tokens", "block-comment-tokens", "text-width", "soft-wrap", "auto-format",
    "formatter", "path-completion", "diagnostic-severity", "grammar", "injection-regex",
    "language-servers", "indent", "debugger", "auto-pairs", "rulers", "workspace-lsp-roots",
    "persistent-diagnostic-sources",
}  # fmt: skip
# LanguageServerConfiguration (kebab-case; unknown keys are ignored, so a typo does nothing).
SERVER_KEYS = {"command", "args", "environment", "config", "timeout", "required-root-patterns"}
# LanguageServerFeature's names, for only-features / except-features.
FEATURES = {
    "format", "goto-declaration", "goto-definition", "goto-type-definition", "goto-reference",
    "goto-implementation", "signature-help", "hover", "document-highlight", "completion",
    "code-action", "workspace-command", "document-symbols", "workspace-symbols", "diagnostics",
    "rename-symbol", "inlay-hints", "document-colors",
}  # fmt: skip
# helix-view/src/editor.rs, LspConfig (deny_unknown_fields): the keys both releases know.
LSP_KEYS_25_01 = {
    "enable", "display-progress-messages", "display-messages", "auto-signature-help",
    "display-signature-help-docs", "display-inlay-hints", "snippets",
    "goto-reference-include-declaration",
}  # fmt: skip
# languages.toml of 25.07: each language's default servers.
DEFAULT_SERVERS_25_07 = {
    "python": ["ty", "ruff", "jedi", "pylsp"],
    "rust": ["rust-analyzer"],
    "typescript": ["typescript-language-server"],
    "markdown": ["marksman", "markdown-oxide"],
}


def toml_block(containing: str) -> dict[str, Any]:
    for block in re.findall(r"```toml\n(.*?)```", HELIX_PAGE, flags=re.DOTALL):
        if containing in block:
            return tomllib.loads(block)
    raise AssertionError(f"docs/editors/helix.md has no toml block with {containing!r}")


def helix_section() -> str:
    return HELIX_PAGE


class TestLanguagesToml:
    def test_only_keys_helix_knows(self) -> None:
        config = toml_block("[language-server.lecode-ls]")
        assert set(config) <= {"language", "language-server"}
        assert set(config["language-server"]["lecode-ls"]) <= SERVER_KEYS
        for language in config["language"]:
            assert set(language) <= LANGUAGE_KEYS, language["name"]

    def test_lecode_ls_runs_as_the_set_up_installs_it(self) -> None:
        server = toml_block("[language-server.lecode-ls]")["language-server"]["lecode-ls"]
        assert server["command"] == "lecode-ls"
        assert server.get("args", []) == []  # stdio, no arguments: as `uv tool install .` puts it

    @pytest.mark.parametrize("name", sorted(DEFAULT_SERVERS_25_07))
    def test_each_language_keeps_its_own_servers_and_adds_lecode_ls(self, name: str) -> None:
        languages = {
            lang["name"]: lang for lang in toml_block("[language-server.lecode-ls]")["language"]
        }
        servers = languages[name]["language-servers"]
        names = [s if isinstance(s, str) else s["name"] for s in servers]
        assert names == [*DEFAULT_SERVERS_25_07[name], "lecode-ls"]
        for entry in servers:
            if isinstance(entry, dict):
                assert set(entry) <= {"name", "only-features", "except-features"}
                for key in ("only-features", "except-features"):
                    assert set(entry.get(key, [])) <= FEATURES

    def test_code_languages_are_listed_not_only_markdown(self) -> None:
        # Drift shows in code files only where lecode-ls is attached to their language.
        names = {lang["name"] for lang in toml_block("[language-server.lecode-ls]")["language"]}
        assert {"python", "rust", "typescript"} <= names


class TestConfigToml:
    def test_the_editor_lsp_keys_exist_in_25_01_and_25_07(self) -> None:
        config = toml_block("[editor.lsp]")
        assert set(config) == {"editor"} and set(config["editor"]) == {"lsp"}
        assert set(config["editor"]["lsp"]) <= LSP_KEYS_25_01
        assert config["editor"]["lsp"]["display-messages"] is True  # 25.01's default is false


class TestWhatTheSectionSays:
    def test_the_commands_it_names_exist(self) -> None:
        for command in re.findall(r"`:lsp-workspace-command (\S+)", helix_section()):
            assert command in COMMANDS

    def test_it_says_the_confirmation_code_action_and_no_prompt(self) -> None:
        section = helix_section()
        assert '"Forget fact #3 (confirm)"' in section
        assert "Method not" in section and "window/showMessageRequest" in section
