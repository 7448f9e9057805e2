"""A dozen exchanges about a small project (issue 31): six conventions the person states, four
one-off requests, a preference quoted from a colleague and a temporary one, then two fillers.

Shared by the unit tests of rule-based learning, the live suite and `bench.small_models`: each
compacts it three times (after exchanges 6, 10 and 14, each compaction covering four) and checks
what the summaries keep and what learning learns. `CONVENTIONS` holds, for each convention, the
terms a summary that keeps it must hold (all of them, case-folded).
"""

from __future__ import annotations

from typing import Any

EXCHANGES: tuple[tuple[str, str], ...] = (
    ("We use tabs for indentation in this repo.", "Noted: tabs for indentation."),
    (
        "Read pyproject.toml and tell me its requires-python line.",
        'It says requires-python = ">=3.11".',
    ),
    (
        "We target Python 3.11, so never use syntax newer than 3.11.",
        "Understood: Python 3.11 is the floor.",
    ),
    ("Fix the typo in README.md.", "Fixed: 'teh' is now 'the' in README.md."),
    ("Always log errors to stderr, never to stdout.", "OK: errors go to stderr."),
    (
        "Can you rename parse_args to parse_options in cli.py?",
        "Renamed parse_args to parse_options in cli.py.",
    ),
    ("Prefer pathlib over os.path for file paths.", "Will do: pathlib for paths."),
    (
        "My colleague says we always squash commits before merging.",
        "Noted what your colleague does.",
    ),
    ("For now, skip the slow integration tests.", "Skipping the slow tests for now."),
    ("Run the tests with pytest -x in this repo.", "Tests run with pytest -x."),
    ("Show me the last error in the log.", "The last error was a KeyError in loader.py."),
    ("Never commit uv.lock.", "Understood: uv.lock stays out of commits."),
    ("Thanks.", "You are welcome."),
    ("That is all for today.", "Goodbye."),
)

COMPACT_AFTER = (6, 10, 14)
"""Compact once the session holds this many exchanges (the last two always stay raw)."""

CONVENTIONS: dict[str, tuple[str, ...]] = {
    "We use tabs for indentation in this repo.": ("tab",),
    "We target Python 3.11, so never use syntax newer than 3.11.": ("3.11",),
    "Always log errors to stderr, never to stdout.": ("stderr",),
    "Prefer pathlib over os.path for file paths.": ("pathlib",),
    "Run the tests with pytest -x in this repo.": ("pytest",),
    "Never commit uv.lock.": ("uv.lock",),
}
"""The person's conventions, each with the terms a summary keeping it holds."""

ONE_OFF = (
    "Read pyproject.toml and tell me its requires-python line.",
    "Fix the typo in README.md.",
    "Can you rename parse_args to parse_options in cli.py?",
    "Show me the last error in the log.",
)
NOT_FACTS = (
    *ONE_OFF,
    "My colleague says we always squash commits before merging.",
    "For now, skip the slow integration tests.",
    "Thanks.",
    "That is all for today.",
)
"""User messages that must never become facts."""


def records(start: int, end: int) -> list[dict[str, Any]]:
    """Exchanges [start, end) as transcript records (user, then assistant)."""
    out: list[dict[str, Any]] = []
    for user, assistant in EXCHANGES[start:end]:
        out.append({"role": "user", "content": user})
        out.append({"role": "assistant", "content": assistant})
    return out


def conventions_kept(summary: str) -> list[str]:
    """The conventions whose every term the summary holds."""
    folded = summary.casefold()
    return [c for c, terms in CONVENTIONS.items() if all(t in folded for t in terms)]
