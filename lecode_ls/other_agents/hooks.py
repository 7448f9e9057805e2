"""What other agents' hooks send `lecode-ls context` on stdin, and the form each reads back.

Verified against each agent's documentation (docs/agents/hooks.md):

- Claude Code (`UserPromptSubmit`, `SessionStart`): stdin holds `session_id`, `transcript_path`,
  `cwd`, `hook_event_name`, and `prompt` (UserPromptSubmit) or `source` (SessionStart); stdout
  `{"hookSpecificOutput": {"hookEventName": ..., "additionalContext": ...}}` (`--format claude`).
- Codex CLI (`[features] codex_hooks = true`; `UserPromptSubmit`, `SessionStart` in hooks.json):
  the same input fields and the same output object (`--format codex`).
- Gemini CLI (`BeforeAgent`, `SessionStart`): stdin holds `prompt` (BeforeAgent), `cwd`,
  `hook_event_name`; stdout must be JSON only; context goes in
  `hookSpecificOutput.additionalContext` (`--format gemini`).
- Cursor: `beforeSubmitPrompt` answers only `continue`/`user_message`: it cannot add context, so
  there is no Cursor form (Cursor reaches the memory over MCP). Its `workspace_roots` is read as
  the folder, so `--format markdown` works from it for a person to look at.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, BinaryIO

MAX_STDIN_BYTES = 8 * 1024 * 1024
"""A hook's JSON larger than this is refused (the section is then empty, with the reason)."""
FORMATS = ("markdown", "claude", "codex", "gemini")
_EVENTS = {
    "claude": ("UserPromptSubmit", ("UserPromptSubmit", "SessionStart")),
    "codex": ("UserPromptSubmit", ("UserPromptSubmit", "SessionStart")),
    "gemini": ("BeforeAgent", ("BeforeAgent", "SessionStart")),
}


class BadHookInput(Exception):
    """The hook's stdin is not the JSON object a hook sends (the message says why)."""


@dataclass(frozen=True)
class HookInput:
    prompt: str = ""
    cwd: str | None = None
    event: str | None = None


def read_hook_input(stream: BinaryIO) -> HookInput:
    """The prompt, folder and event of a hook's JSON on `stream`, read up to MAX_STDIN_BYTES."""
    data = stream.read(MAX_STDIN_BYTES + 1)
    if len(data) > MAX_STDIN_BYTES:
        raise BadHookInput(f"the hook's input is larger than {MAX_STDIN_BYTES} bytes")
    if not data.strip():
        return HookInput()
    try:
        payload: Any = json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError):  # RecursionError: nested deeper than Python parses
        raise BadHookInput("the hook's input is not JSON") from None
    if not isinstance(payload, dict):
        raise BadHookInput("the hook's input is not a JSON object")
    prompt = payload.get("prompt")
    cwd = payload.get("cwd")
    roots = payload.get("workspace_roots")  # Cursor
    if not isinstance(cwd, str) and isinstance(roots, list) and roots:
        cwd = roots[0]
    event = payload.get("hook_event_name")
    return HookInput(
        prompt if isinstance(prompt, str) else "",
        cwd if isinstance(cwd, str) and cwd else None,
        event if isinstance(event, str) else None,
    )


def render(text: str, form: str, event: str | None) -> str:
    """The section as `form` prints it: Markdown as is, or the hook's JSON object (`{}` when
    there is nothing to add: Gemini CLI reads stdout as JSON whatever it holds)."""
    if form == "markdown":
        return text
    default, known = _EVENTS[form]
    if not text:
        return "{}\n"
    name = event if event in known else default
    output = {"hookSpecificOutput": {"hookEventName": name, "additionalContext": text}}
    return json.dumps(output, ensure_ascii=False) + "\n"
