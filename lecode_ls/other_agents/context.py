"""The memory section for one prompt of another agent, read without writing or waiting (I1-I5).

`lecode-ls context` runs from another agent's hook at every prompt. It builds the section the
injection would build for that turn (memory/injection.py: the same caps, the same selection,
every shown fact's evidence validated, labelled untrusted) from a read-only view of the
project's store:

- facts.sqlite3 is opened read-only (`FactStore(read_only=True)`): never created, never migrated
  (a database of another schema version gives an empty section and a reason), and without the
  open lock the language server takes; a WAL reader never waits on a writer;
- the transcripts that facts cite are read without a lock (`PeekVerdicts`);
- the Markdown notes are read as the server reads them (no lock either);
- the team's shared facts of the folder's checkout (`.lecode/facts/`, issue 29) are read and
  verified as the server's shelf does, and shown after the person's own under `[team] inject`.

No store, memory disabled, or a store that cannot be read: the section is empty and the reason
goes to the log (stderr), so a hook never fails the agent's turn because of lecode.
Settings come from `<config dir>/config.toml` only (there is no editor to overlay its own);
the embedding tier of the ranking is left out (it would need a provider call). Start-up is most
of a hook's cost, and the settings model (pydantic) is a third of the imports: a config.toml
without a `[memory]` table takes the defaults (`MemoryView`, kept equal to `MemorySettings`'s
by a test) without it; one with a `[memory]` or `[team]` table is validated by the settings
model, as the server validates it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from lecode_ls.actions.section import instructions
from lecode_ls.errors import LecodeError
from lecode_ls.memory.anchors import DriftTracker
from lecode_ls.memory.facts import FactStore
from lecode_ls.memory.injection import InjectedMemory, build_memory_section
from lecode_ls.memory.notes import MarkdownStore
from lecode_ls.memory.project import (
    AGENTS_FILE,
    checkout_root,
    resolve_project,
    store_dir,
)
from lecode_ls.memory.selection import select, turn_query
from lecode_ls.memory.sessions import PeekVerdicts
from lecode_ls.memory.team import Shelf
from lecode_ls.platform.paths import canonical

log = logging.getLogger(__name__)

TEAM_LOAD_SECONDS = 1.0
"""Time a hook spends reading and checking the checkout's shared facts (a hook starts cold at
every prompt; what is left is not shown this time)."""
TEAM_INDEX_SECONDS = 0.25
"""Time a hook spends indexing shared texts to rank them for the prompt."""

MAX_PROMPT_CHARS = 20_000
"""Of a prompt, what the ranking reads (the ranking bounds its own query further)."""


@dataclass(frozen=True)
class MemoryView:
    """The `[memory]` settings the injection reads, with `MemorySettings`'s defaults."""

    enabled: bool = True
    max_bytes: int = 32768
    facts_max_bytes: int = 8192
    drifted_facts: str = "label"


@dataclass(frozen=True)
class ContextSettings:
    memory: MemoryView = MemoryView()
    team_inject: bool = True
    """`[team] inject`: whether the checkout's valid shared facts are shown."""
    instruction_files: tuple[str, ...] = ()
    """`[agent] instruction_files`, as written (each pattern is checked where it is read)."""


NATIVE = {"claude": "CLAUDE.md", "codex": AGENTS_FILE, "gemini": "GEMINI.md"}
"""The instruction file each agent reads itself: `lecode-ls context` never sends it again."""
MAX_PATTERNS = 100


@dataclass
class ReadOnlyMemory:
    """A project's stores as the injection reads them (`ProjectMemory`), opened read-only."""

    settings: ContextSettings
    markdown: MarkdownStore
    facts: FactStore
    drift: DriftTracker
    verdicts: PeekVerdicts

    @classmethod
    def open(cls, store: Path, settings: ContextSettings, folder: Path) -> ReadOnlyMemory:
        facts = FactStore(store / "facts.sqlite3", root=store, read_only=True)
        drift = DriftTracker(facts)
        drift.add_folder(folder)
        return cls(settings, MarkdownStore(store), facts, drift, PeekVerdicts(store / "sessions"))

    def close(self) -> None:
        self.facts.close()
        self.markdown.close()


def load_settings(config_dir: Path) -> ContextSettings:
    """The `[memory]` settings of config.toml (each problem logged and that key left at its
    default, as the server does)."""
    path = config_dir / "config.toml"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ContextSettings()
    except (OSError, UnicodeDecodeError) as error:
        log.warning("config.toml could not be read (%s); using the defaults", type(error).__name__)
        return ContextSettings()
    import tomllib

    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        log.warning("config.toml is not valid TOML (%s); using the defaults", error)
        return ContextSettings()
    agent = raw.get("agent")
    listed = agent.get("instruction_files") if isinstance(agent, dict) else None
    patterns = (
        tuple(p for p in listed if isinstance(p, str))[:MAX_PATTERNS]
        if isinstance(listed, list)
        else ()
    )
    checked = {key: raw[key] for key in ("memory", "team") if raw.get(key)}
    if not checked:
        return ContextSettings(instruction_files=patterns)
    from lecode_ls.config import validate  # pydantic: only when there is a table to check

    settings, problems = validate(checked)
    for problem in problems:
        log.warning("%s", problem)
    memory = settings.memory
    return ContextSettings(
        MemoryView(memory.enabled, memory.max_bytes, memory.facts_max_bytes, memory.drifted_facts),
        settings.team.inject,
        patterns,
    )


def instructions_context(folder: Path, patterns: Sequence[str], agent: str | None) -> str:
    """AGENTS.md and the `[agent] instruction_files` of `folder`, each under the heading the
    chat's system prompt gives it (L7), leaving out the file `agent` reads itself (NATIVE):
    one project's conventions reach every agent from one place."""
    native = NATIVE.get(agent or "")
    parts = instructions(folder, patterns, skip=(native,) if native is not None else ())
    return "\n\n".join(part.rstrip("\n") for part in parts)


def agent_context(
    config_dir: Path, folder: Path, prompt: str, agent: str | None, *, instructions: bool
) -> str:
    """What `lecode-ls context` prints: with `instructions` (a session's start), the project's
    instruction files first; then the memory section for `prompt`. Never writes."""
    settings = load_settings(config_dir)
    parts = []
    if instructions:
        parts.append(instructions_context(folder, settings.instruction_files, agent))
    parts.append(memory_context(config_dir, folder, prompt, settings).text)
    return "\n\n".join(part for part in parts if part)


def team_shelf(memory: ReadOnlyMemory, folder: Path) -> Shelf | None:
    """The shared facts of `folder`'s checkout, read and verified against the disk (a hook has
    no editor buffers), or None when `[team] inject` is off or the folder is in no checkout."""
    if not memory.settings.team_inject:
        return None
    folder = canonical(folder)
    checkout = checkout_root(folder, [folder])
    if checkout is None:
        return None
    shelf = Shelf(
        checkout, memory.facts, load_seconds=TEAM_LOAD_SECONDS, index_seconds=TEAM_INDEX_SECONDS
    )
    shelf.refresh()
    return shelf


def memory_context(
    config_dir: Path, folder: Path, prompt: str, settings: ContextSettings | None = None
) -> InjectedMemory:
    """The memory section for `prompt` in the project of `folder`; empty (with the reason
    logged) when there is nothing to show or it cannot be read. Never writes."""
    settings = settings or load_settings(config_dir)
    if not settings.memory.enabled:
        log.info("memory is disabled ([memory] enabled = false): no section")
        return InjectedMemory("")
    store = store_dir(config_dir, resolve_project(folder))
    if not store.is_dir():
        log.info("this project has no memory store yet: no section")
        return InjectedMemory("")
    memory = ReadOnlyMemory.open(store, settings, folder)
    try:
        selection = select(memory, turn_query(prompt[:MAX_PROMPT_CHARS], (), ()))
        try:
            shelf = team_shelf(memory, folder)
        except Exception:  # a clone's files never cost the person's own memory its place
            log.exception("the team's shared facts could not be read")
            shelf = None
        return build_memory_section(memory, (), selection, shelf)
    except LecodeError as error:
        log.warning("the memory section could not be built: %s", error)
        return InjectedMemory("")
    finally:
        memory.close()
