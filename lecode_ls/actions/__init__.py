"""The operations: what a person or an agent can do to the memory, once, for every door.

One floor above the runtime and below every door (the LSP handlers in server/, the chat's tools
and the `/memory` line in tools/, MCP in mcp/, other agents' hooks in other_agents/, and the
chat's own learning). Each operation takes the runtime and plain values, does its work through
the stores in a worker thread (they block), and returns a `Done`: its result and what it
changed. A door keeps only parsing, permission questions and conversion, and turns `changed`
into its own news in one place (the LSP door: server/act.py). The stores' writing methods are
called from here only (tests/unit/test_architecture.py).

    facts     remember, correct, forget, pin, retire, accept or dismiss a proposal, a page
    team      share, unshare, correct, forget for me, a page, a recall
    notes     write, edit
    sessions  delete, import
    section   the memory section and the instruction files of a prompt (chat and hooks)
"""

from lecode_ls.actions.changes import FACTS, NOTHING, Changed, Done

__all__ = ["FACTS", "NOTHING", "Changed", "Done"]
