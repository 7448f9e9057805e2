"""The fact methods (list, remember, recall, correct, forget, proposals): handlers.py, messages.py
(payloads), methods.py (table entries).

Importing this package loads nothing: the server imports a feature's modules when it needs them.
"""
