"""Questions the server asks the person (forget, delete a session, a memory change in chat):
what is waiting for an answer, and the `lecode.answer` command that answers one."""
