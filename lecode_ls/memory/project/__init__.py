"""Which project a folder is, its checkout, and where its store lives: identity (L1-L5), the store
layout, the Git checkout's root and HEAD, AGENTS.md and the other agents' instruction files beside it.

Code outside this part imports only the names `__all__` lists (a test keeps it so).
"""

from lecode_ls.memory.project.agents import AGENTS_FILE, AGENTS_HEADING, read_agents
from lecode_ls.memory.project.checkout import SHA, checkout_root, git_dir, head_commit, relative
from lecode_ls.memory.project.identity import Project, read_small, resolve_project
from lecode_ls.memory.project.instructions import (
    INSTRUCTIONS_MAX_BYTES,
    Instruction,
    instruction_parts,
    instruction_pattern_problem,
    read_instructions,
)
from lecode_ls.memory.project.layout import config_dir, migrate_legacy, store_dir

__all__ = [
    "AGENTS_FILE",
    "AGENTS_HEADING",
    "INSTRUCTIONS_MAX_BYTES",
    "SHA",
    "Instruction",
    "Project",
    "checkout_root",
    "config_dir",
    "git_dir",
    "head_commit",
    "instruction_parts",
    "instruction_pattern_problem",
    "migrate_legacy",
    "read_agents",
    "read_instructions",
    "read_small",
    "relative",
    "resolve_project",
    "store_dir",
]
