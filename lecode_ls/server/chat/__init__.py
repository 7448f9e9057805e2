"""Chat: a turn streamed as deltas, compaction on request, history and the slash line; handlers.py,
messages.py, methods.py, and state.py (what chat keeps between turns).

Importing this package loads nothing: the server imports a feature's modules when it needs them.
"""
