"""The ping, project-info, Markdown-memory (notes) and AGENTS.md methods, and the `lecode.memory`
command: handlers.py, messages.py (payloads), methods.py (table entries).

Importing this package loads nothing: the server imports a feature's modules when it needs them.
"""
