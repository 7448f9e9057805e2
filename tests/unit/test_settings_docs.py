"""The settings are described in three places, all generated from the one settings model
(config.py): docs/memory/settings.md's table, the VS Code extension's configuration contribution, and the
sections the extension forwards (serverSettings.ts). They must stay equal.

# covers K2 (issue 11, item 4)
"""

from __future__ import annotations

import json
import re

from lecode_ls.config import Settings
from lecode_ls.contract.settings import (
    FILE_ONLY,
    PACKAGE_JSON,
    SETTINGS_MD,
    SETTINGS_TS,
    VSCODE_README,
    render_package_json,
    render_settings_md,
    render_settings_typescript,
    render_vscode_readme,
    vscode_properties,
)

STALE = "stale: run `uv run python -m lecode_ls.contract`"


def model_keys() -> list[str]:
    """Every key an editor setting can change: the sections read from config.toml only (FILE_ONLY,
    `[mcp]`) are left out."""
    return [
        f"lecode.{section}.{key}"
        for section, field in Settings.model_fields.items()
        if section not in FILE_ONLY
        for key in field.annotation.model_fields  # type: ignore[union-attr]
    ]


class TestGeneratedFiles:
    def test_package_json_contributes_what_the_model_renders(self) -> None:
        current = PACKAGE_JSON.read_text(encoding="utf-8")
        assert current == render_package_json(current), f"package.json is {STALE}"

    def test_server_settings_ts_is_what_the_model_renders(self) -> None:
        assert SETTINGS_TS.read_text(encoding="utf-8") == render_settings_typescript(), (
            f"serverSettings.ts is {STALE}"
        )

    def test_the_readme_table_is_what_the_model_renders(self) -> None:
        page = SETTINGS_MD.read_text(encoding="utf-8")
        assert page == render_settings_md(page), f"docs/memory/settings.md's table is {STALE}"

    def test_the_marketplace_readme_lists_every_contributed_setting(self) -> None:
        # issue 30, item 6: editor/vscode/README.md lacked six settings the extension contributes
        readme = VSCODE_README.read_text(encoding="utf-8")
        manifest = json.loads(PACKAGE_JSON.read_text(encoding="utf-8"))
        assert readme == render_vscode_readme(readme, manifest), (
            f"editor/vscode/README.md's settings table is {STALE}"
        )
        listed = re.findall(r"^\| `(lecode\.[a-z_]+\.[a-z_]+)` \|", readme, re.MULTILINE)
        assert listed == list(manifest["contributes"]["configuration"]["properties"])


class TestTheThreeAgree:
    def test_every_key_of_the_model_is_an_editor_setting(self) -> None:
        properties = json.loads(PACKAGE_JSON.read_text(encoding="utf-8"))["contributes"][
            "configuration"
        ]["properties"]
        # The extension's own: lecode.server.*, and lecode.mcp.provide_to_agents ([mcp] itself
        # is config.toml's only).
        own = ("lecode.server.", "lecode.mcp.")
        server_keys = [k for k in properties if not k.startswith(own)]
        assert server_keys == model_keys() == list(vscode_properties())

    def test_every_key_of_the_model_is_in_the_readme_table(self) -> None:
        table = SETTINGS_MD.read_text(encoding="utf-8")
        assert re.findall(r"\| `(lecode\.[a-z_]+\.[a-z_]+)` \|", table) == model_keys()

    def test_every_section_is_forwarded_to_the_server(self) -> None:
        text = SETTINGS_TS.read_text(encoding="utf-8")
        match = re.search(r"export const SERVER_SECTIONS = \[(.*)\] as const;", text)
        assert match is not None
        assert json.loads(f"[{match[1]}]") == [
            s for s in Settings.model_fields if s not in FILE_ONLY
        ]

    def test_the_config_file_only_sections_are_in_the_readme_but_no_editor_setting(self) -> None:
        # A repository's workspace settings must not grant other agents writes (issue 15), nor
        # keep a secret in the store (issue 27: `[privacy] allow`).
        assert frozenset({"mcp", "privacy"}) == FILE_ONLY
        table = SETTINGS_MD.read_text(encoding="utf-8")
        assert "| `[mcp] allow` | (config.toml only) |" in table
        assert "| `[privacy] allow` | (config.toml only) |" in table
        for section in FILE_ONLY:
            assert not any(k.startswith(f"lecode.{section}.") for k in vscode_properties())
            sections = SETTINGS_TS.read_text(encoding="utf-8").split("SERVER_SECTIONS")[1]
            assert section not in sections

    def test_defaults_and_bounds_are_the_models(self) -> None:
        properties = vscode_properties()
        defaults = Settings().model_dump()
        for key in model_keys():
            _, section, name = key.split(".")
            assert properties[key]["default"] == defaults[section][name], key
        assert properties["lecode.compaction.buffer_tokens"]["minimum"] == 256
        assert properties["lecode.compaction.mid_turn_threshold"]["type"] == "number"
