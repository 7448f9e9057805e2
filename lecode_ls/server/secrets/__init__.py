"""The secret scan and scrub methods (issue 27): handlers.py, messages.py (payloads), methods.py
(table entries). The detector and the rewrite are the memory core's (memory/secrets,
memory/scrub.py).

Importing this package loads nothing: the server imports a feature's modules when it needs them.
"""
