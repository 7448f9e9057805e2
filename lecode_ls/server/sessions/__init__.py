"""The session (transcript) methods: handlers.py, messages.py (payloads, and the source reference
the fact payloads share), methods.py (table entries), follow.py (following other agents'
transcripts), state.py and room.py (what following did, as the server holds it).

Importing this package loads nothing: the server imports a feature's modules when it needs them.
"""
