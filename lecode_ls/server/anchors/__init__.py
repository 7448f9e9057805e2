"""Code anchors in the editor: the selection requests and commands (handlers.py, messages.py,
methods.py) and the standard LSP features over open buffers (lsp.py).

Importing this package loads nothing: the server imports a feature's modules when it needs them.
"""
