"""The team-memory methods (issue 29): share and unshare a fact as a file in the repository,
list and recall the checkout's shared facts, forget one for yourself. handlers.py, messages.py
(payloads), methods.py (table entries), watch.py (the poll that notices a pull or a branch
switch, and the shared facts' drift in open documents), room.py (that poll, as the server runs
it). The files and their verification are the memory core's (memory/team).

Importing this package loads nothing: the server imports a feature's modules when it needs them.
"""
