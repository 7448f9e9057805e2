"""protocol.md and the extension's protocol.ts are the contract: they must match the server.

# covers P4
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from lecode_ls.config import Settings
from lecode_ls.contract.render import (
    PROTOCOL_MD,
    PROTOCOL_TS,
    SETTINGS_MD,
    command_arguments,
    render_markdown,
    render_settings_md,
    render_typescript,
    undocumented_codes,
)
from lecode_ls.server.anchors import methods as anchors
from lecode_ls.server.chat import methods as chat
from lecode_ls.server.facts import methods as facts
from lecode_ls.server.notes import methods as notes
from lecode_ls.server.protocol import METHODS, METHODS_BY_NAME
from lecode_ls.server.questions import methods as questions
from lecode_ls.server.routes import (
    COMMANDS,
    NOTIFICATIONS,
    REQUESTS,
    register,
    registered_methods,
)
from lecode_ls.server.server import LecodeServer
from lecode_ls.server.sessions import methods as sessions
from lecode_ls.server.wiring import parse

FEATURES = (notes, sessions, facts, chat, anchors, questions)


class TestDocumentsMatchTheCode:
    def test_protocol_md_is_what_the_method_table_renders(self) -> None:
        assert PROTOCOL_MD.read_text(encoding="utf-8") == render_markdown(), (
            "protocol.md is stale: run `uv run python -m lecode_ls.contract`"
        )

    def test_protocol_ts_is_what_the_method_table_renders(self) -> None:
        assert PROTOCOL_TS.read_text(encoding="utf-8") == render_typescript(), (
            "protocol.ts is stale: run `uv run python -m lecode_ls.contract`"
        )

    def test_every_method_has_a_section_in_protocol_md(self) -> None:
        text = PROTOCOL_MD.read_text(encoding="utf-8")
        for method in METHODS:
            assert f"### `{method.name}` ({method.kind})" in text


class TestRegisteredMethodsMatchTheTable:
    def test_the_server_registers_exactly_the_documented_requests_and_commands(
        self, tmp_path: Path
    ) -> None:
        server = LecodeServer(tmp_path)
        register(server)
        served = {m.name for m in METHODS if m.kind != "notification"}
        assert registered_methods(server) == served

    def test_every_registered_name_has_a_handler_and_every_handler_a_name(self) -> None:
        handled = {m.name for m in METHODS if m.handler is not None}
        assert handled == set(REQUESTS) | set(COMMANDS)
        assert handled <= set(METHODS_BY_NAME)

    def test_only_a_notification_has_no_handler(self) -> None:
        assert {m.name for m in METHODS if m.handler is None} == {
            m.name for m in METHODS if m.kind == "notification"
        }

    @pytest.mark.parametrize("feature", FEATURES, ids=lambda f: f.__name__)
    def test_each_entry_is_answered_by_the_handlers_of_its_own_feature(self, feature) -> None:  # type: ignore[no-untyped-def]
        # covers one folder a feature: server/<feature>/methods.py names server/<feature>/handlers.py
        home = feature.__name__.removesuffix(".methods") + ".handlers"
        entries = (*feature.METHODS, *getattr(feature, "COMMANDS", ()))
        assert {m.handler.__module__ for m in entries if m.handler is not None} == {home}

    def test_the_initialize_path_imports_no_pydantic(self) -> None:
        """Start-up (P5): pydantic, the runtime and the handlers load after `initialize`."""
        code = (
            "import sys, lecode_ls.server.server, lecode_ls.server.routes, lecode_ls.cli;"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'pydantic' "
            "or m in ('lecode_ls.runtime', 'lecode_ls.config', 'lecode_ls.server.wiring')))"
        )
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout
        assert out.strip() == "[]"


class TestExamplesAreValid:
    @pytest.mark.parametrize("method", METHODS, ids=lambda m: m.name)
    def test_the_documented_example_validates_against_the_models(self, method) -> None:  # type: ignore[no-untyped-def]
        if method.kind == "command":
            names = list(method.params.model_fields)
            params = {
                method.params.model_fields[n].alias or n: v
                for n, v in zip(names, method.example_params, strict=False)
            }
            method.params.model_validate(params)
            if method.result is not None and method.result.__name__ != "CommandOutput":
                method.result.model_validate_json(json.dumps(method.example_result))
            else:
                assert isinstance(method.example_result, str)
            return
        # Validated as JSON text, the way they travel (a date-time is a string there).
        method.params.model_validate_json(json.dumps(method.example_params))
        if method.result is not None:
            method.result.model_validate_json(json.dumps(method.example_result))


COMMAND_METHODS = [m for m in METHODS if m.kind == "command"]


class TestCommandArgumentsAreWhatTheServerTakes:
    """Issue 24, item 5: the tables once showed a `params` wrapper that the server refuses."""

    @pytest.mark.parametrize("method", COMMAND_METHODS, ids=lambda m: m.name)
    def test_the_documented_arguments_are_accepted_by_the_boundary(self, method) -> None:  # type: ignore[no-untyped-def]
        # The very function the server validates `workspace/executeCommand` arguments with.
        parse(method, method.example_params)
        documented = command_arguments(method)
        assert len(method.example_params) <= len(documented)
        assert [position for position, _, _ in documented] == [
            f"arguments[{i}]" for i in range(len(documented))
        ]

    @pytest.mark.parametrize("method", COMMAND_METHODS, ids=lambda m: m.name)
    def test_the_table_shows_each_argument_by_position_and_never_a_wrapper(self, method) -> None:  # type: ignore[no-untyped-def]
        section = PROTOCOL_MD.read_text().split(f"### `{method.name}` (command)")[1]
        table = section.split("**Result**")[0]
        for position, kind, required in command_arguments(method):
            row = f"| `{position}` | `{kind.replace('|', chr(92) + '|')}` | "
            assert row + ("yes" if required else "no") in table, (method.name, row)
        assert "| `params` |" not in table

    def test_the_wrapped_form_the_old_tables_showed_is_refused(self) -> None:
        method = METHODS_BY_NAME["lecode.anchor.reanchor"]
        with pytest.raises(Exception, match="params"):
            parse(method, [{"params": method.example_params[0]}])


class TestNotifications:
    def test_the_opt_in_list_names_exactly_the_documented_notifications(self) -> None:
        assert set(NOTIFICATIONS) == {m.name for m in METHODS if m.kind == "notification"}


class TestSettingsPage:
    def test_the_settings_page_table_matches_the_settings_model(self) -> None:
        # covers K1
        page = SETTINGS_MD.read_text(encoding="utf-8")
        assert page == render_settings_md(page), (
            "docs/memory/settings.md's table is stale: run `uv run python -m lecode_ls.contract`"
        )
        for name in type(Settings().memory).model_fields:
            assert f"`[memory] {name}`" in page


class TestErrorCodes:
    def test_every_listed_error_code_is_defined_by_an_error_class(self) -> None:
        # covers P5
        assert undocumented_codes() == set()


class TestExtensions:
    def test_every_member_beyond_the_seeds_lists_is_documented(self) -> None:
        # covers A9 (issue 41): reason codes and statuses memory.md calls fixed, in one table
        from lecode_ls.contract import extensions

        assert extensions.undocumented() == set()
        assert extensions.render() in PROTOCOL_MD.read_text(encoding="utf-8")
