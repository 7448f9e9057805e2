"""Questions the server asks the person (forget, delete a session, a memory change in chat):
what is waiting for an answer (state.py, held by the server through room.py), and the
`lecode.answer` command that answers one."""
