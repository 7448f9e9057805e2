"""The two checks a real model showed learning needs (issue 13, step 3): one code fence around
an extraction answer is taken off before strict parsing, and a quoted request or question is not
a preference.

# covers A3, A4, A6
"""

from __future__ import annotations

import json

import pytest

from lecode_ls.agent.learning_evidence import parse_answer, unfenced
from lecode_ls.agent.learning_requests import is_request

BODY = json.dumps({"candidates": []}, indent=2)


class TestOneFence:
    @pytest.mark.parametrize(
        "answer",
        [
            f"```json\n{BODY}\n```",  # as Qwen2.5-Coder 0.5B wrote it, 4 answers in 6
            f"```\n{BODY}\n```",
            f"\n\n  ```json\n{BODY}\n```  \n",
            f"```JSON \r\n{BODY}\r\n```",
        ],
        ids=["json", "bare", "whitespace-around", "upper-crlf"],
    )
    def test_one_fence_around_the_whole_answer_is_taken_off(self, answer: str) -> None:
        assert parse_answer(answer) == {"candidates": []}

    @pytest.mark.parametrize(
        "answer",
        [
            f"Here are the candidates:\n```json\n{BODY}\n```",
            f"```json\n{BODY}\n```\nI hope this helps.",
            f"```json\n{BODY}\n```\n```json\n{BODY}\n```",
            f"```json\n```json\n{BODY}\n```\n```",
            f"```python\n{BODY}\n```",
            f"```json {BODY} ```",
            '{"candidates": ```json\n[]\n```}',
            f"``json\n{BODY}\n``",
        ],
        ids=[
            "prose-before",
            "prose-after",
            "two-fences",
            "nested-fence",
            "other-language",
            "one-line",
            "fence-inside-json",
            "two-backticks",
        ],
    )
    def test_anything_else_around_the_json_stays_invalid(self, answer: str) -> None:
        assert unfenced(answer) == answer
        with pytest.raises(ValueError):
            parse_answer(answer)

    @pytest.mark.parametrize(
        "body",
        ['{"candidates": [], "candidates": []}', '{"candidates": NaN}', "[Infinity]"],
    )
    def test_a_fenced_body_is_parsed_as_strictly_as_a_bare_one(self, body: str) -> None:
        with pytest.raises(ValueError):
            parse_answer(f"```json\n{body}\n```")

    def test_backticks_inside_a_json_string_are_kept(self) -> None:
        text = "Quote code with ``` fences in docs."
        answer = "```json\n" + json.dumps({"candidates": [text]}) + "\n```"
        assert parse_answer(answer) == {"candidates": [text]}


class TestRequests:
    @pytest.mark.parametrize(
        "quote",
        [
            # The sentence a real model stored as a preference (issue 13).
            "Read pyproject.toml and tell me its requires-python line.",
            "Please fix the failing test in parser.py.",
            "please, run the tests",
            "Can you explain how the parser works",
            "Could you please open README.md and summarize it.",
            "Would you list the TODOs in src/.",
            "I want you to check the CI logs.",
            "Also bump the version.",
            "Let's delete the old migrations.",
            "Show me the diff.",
            "What does the vendor note say",
            "Which Python does this project need?",
            "Do we use tabs in this repo?",  # a question, whatever its scope
            "Should we always use tabs?",
            "Tabs or spaces?\u201d",
        ],
    )
    def test_a_request_or_a_question_is_recognised(self, quote: str) -> None:
        assert is_request(quote)

    @pytest.mark.parametrize(
        "quote",
        [
            "Always use tabs.",
            "Use pytest for tests.",
            "Never commit uv.lock.",
            "We use tabs for indentation in this repo.",
            "For this project, I prefer tabs for indentation.",
            "Prefer pathlib over os.path.",
            "Avoid global state.",
            "Don't add type: ignore without an error code.",
            "Do not reformat unrelated code.",
            "Keep functions under 50 lines.",
            "Please always answer in English.",
            "Run the tests with pytest -x in this repo.",
            "From now on, write commit messages in the imperative.",
            "When you write tests, use pytest fixtures.",
            "Let's use ruff for linting.",
            "Release notes go in CHANGELOG.md under Unreleased.",
        ],
    )
    def test_a_convention_is_not_a_request(self, quote: str) -> None:
        assert not is_request(quote)
