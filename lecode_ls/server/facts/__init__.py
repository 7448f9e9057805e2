"""The fact methods (list, remember, recall, correct, forget, proposals): handlers.py, messages.py
(payloads), methods.py (table entries), watch.py (`lecode/facts/didChange`, and the poll that
notices another process's writes) and room.py (what the server holds of it).

Importing this package loads nothing: the server imports a feature's modules when it needs them.
"""
