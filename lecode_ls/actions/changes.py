"""What an operation changed, for the door that turns it into news."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Changed:
    """What an operation changed that a client may show."""

    facts: bool = False
    """The facts or what is listed with them: a revision, a forget, a pin, a retirement, a
    proposal accepted or dismissed, a file shared in the checkout (`lecode/facts/didChange`)."""
    notes: tuple[str, ...] = ()
    """The store-relative Markdown files written (`lecode/memory/didChange`)."""

    def __or__(self, other: Changed) -> Changed:
        return Changed(self.facts or other.facts, tuple(dict.fromkeys(self.notes + other.notes)))

    def __bool__(self) -> bool:
        return self.facts or bool(self.notes)


NOTHING = Changed()
FACTS = Changed(facts=True)


@dataclass(frozen=True)
class Done(Generic[T]):
    """An operation's result and what it changed."""

    value: T
    changed: Changed = NOTHING
