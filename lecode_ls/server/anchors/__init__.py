"""Code anchors in the editor: the selection requests and commands (handlers.py, messages.py,
methods.py), the standard LSP features over open buffers (lsp.py), and room.py (their state,
the Git poll and the re-check after a facts change, as the server holds them).

Importing this package loads nothing: the server imports a feature's modules when it needs them.
"""
