"""The operations: what a person or an agent can do to the memory, once, for every door.

One floor above the runtime and below every door (the LSP handlers in server/, the chat's tools
and the `/memory` line in tools/, MCP in mcp/, other agents' hooks in other_agents/, and the
chat's own learning). Each operation takes the runtime and plain values and does its work
through the stores, blocking (a door runs it in a worker thread); a write returns a `Done`: its
result and what it changed, a read its answer. A door keeps only parsing, permission questions
and conversion, and turns `changed` into its own news in one place (the LSP door:
server/act.py). The stores' writing methods are called from here only
(tests/unit/test_operations_layer.py).

    facts     remember, correct, forget, pin, retire, reanchor, accept or dismiss a proposal;
              a page for the person or the model, one fact, a recall
    team      share, unshare, correct, forget for me; a page, a recall
    notes     write, edit
    sessions  new, rename, clear, undo, redo, delete, import; a page of records, a snapshot,
              the listing with the facts citing each
    secrets   the scrub
    section   the instruction files of a prompt (the chat and hooks alike)
"""

from lecode_ls.actions.changes import FACTS, NOTHING, Changed, Done

__all__ = ["FACTS", "NOTHING", "Changed", "Done"]
