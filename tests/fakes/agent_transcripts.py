"""Claude Code session JSONL and Codex CLI rollout JSONL, written as those agents write them
(modelled on real files: Claude Code 2.1.x records, Codex 0.x `RolloutLine`s), for the import
and follow tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def claude_records(
    cwd: Path, session: str = "5f0c6a1e-9d2b-4c57-8f1e-2b7d3c9a4e10"
) -> list[dict[str, Any]]:
    base = {"sessionId": session, "cwd": str(cwd), "version": "2.1.1", "gitBranch": "main",
            "userType": "external", "isSidechain": False}  # fmt: skip
    return [
        {"type": "summary", "summary": "Indentation rules", "leafUuid": "u-4"},
        {**base, "type": "user", "uuid": "u-1", "parentUuid": None,
         "timestamp": "2026-12-01T09:00:00.000Z",
         "message": {"role": "user", "content": "We always use tabs in the Makefile, never spaces."}},
        {**base, "type": "assistant", "uuid": "u-2", "parentUuid": "u-1",
         "timestamp": "2026-12-01T09:00:02.000Z", "requestId": "req_1",
         "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x",
                     "content": [{"type": "thinking", "thinking": "hm", "signature": "s"},
                                 {"type": "text", "text": "Understood: tabs in the Makefile."},
                                 {"type": "tool_use", "id": "toolu_1", "name": "Read",
                                  "input": {"file_path": str(cwd / "Makefile")}}],
                     "stop_reason": "tool_use", "usage": {"input_tokens": 5, "output_tokens": 9}}},
        {**base, "type": "user", "uuid": "u-3", "parentUuid": "u-2",
         "timestamp": "2026-12-01T09:00:03.000Z",
         "message": {"role": "user", "content": [
             {"tool_use_id": "toolu_1", "type": "tool_result",
              "content": "all:\n\tcc -o app main.c\n"}]},
         "toolUseResult": {"type": "text"}},
        {**base, "type": "user", "uuid": "u-4", "parentUuid": "u-3",
         "timestamp": "2026-12-01T09:01:00.000Z",
         "message": {"role": "user", "content": [{"type": "text", "text": "Release builds go out on Fridays."}]}},
    ]  # fmt: skip


def codex_records(
    cwd: Path, session: str = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
) -> list[dict[str, Any]]:
    t = "2026-12-01T10:00:00.000Z"
    return [
        {"timestamp": t, "type": "session_meta", "payload": {
            "id": session, "timestamp": t, "cwd": str(cwd), "originator": "codex_cli_rs",
            "cli_version": "0.171.0", "instructions": None, "source": "cli",
            "model_provider": "openai", "git": {"commit_hash": "abc", "branch": "main"}}},
        {"timestamp": t, "type": "turn_context", "payload": {"cwd": str(cwd), "model": "gpt-5"}},
        {"timestamp": t, "type": "response_item", "payload": {
            "type": "message", "role": "user",
            "content": [{"type": "input_text", "text": "Our CI runs on Python 3.12 only."}]}},
        {"timestamp": t, "type": "event_msg", "payload": {
            "type": "user_message", "message": "Our CI runs on Python 3.12 only."}},
        {"timestamp": t, "type": "response_item", "payload": {
            "type": "reasoning", "summary": [], "encrypted_content": "xx"}},
        {"timestamp": t, "type": "response_item", "payload": {
            "type": "function_call", "name": "shell", "call_id": "call_1",
            "arguments": "{\"command\":[\"cat\",\"ci.yml\"]}"}},
        {"timestamp": t, "type": "response_item", "payload": {
            "type": "function_call_output", "call_id": "call_1",
            "output": "{\"output\":\"python: 3.12\\n\",\"metadata\":{\"exit_code\":0}}"}},
        {"timestamp": t, "type": "response_item", "payload": {
            "type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": "Noted: CI is Python 3.12."}]}},
    ]  # fmt: skip


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path
