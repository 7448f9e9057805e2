"""Chat: a turn streamed as deltas, compaction on request, history and the slash line; handlers.py,
messages.py, methods.py, state.py (what chat keeps between turns) and room.py (that state, and
what chat does when facts change, a project closes or the server shuts down).

Importing this package loads nothing: the server imports a feature's modules when it needs them.
"""
