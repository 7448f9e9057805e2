"""The memory core: no LSP, agent or server code, one package a part of the product.

- project/: which project a folder is, its checkout, where its store lives, AGENTS.md;
- notes/: the Markdown notes (MEMORY.md, scratchpad, daily logs, named notes) and their index;
- sessions/: the transcripts and the source references into them;
- facts/: facts.sqlite3 (facts, revisions, evidence, exclusions, the anchors table);
- anchors/: code anchors live (line text, capture, drift, renames);
- team/: facts shared in the repository (the file format, a checkout's shelf, sharing);
- secrets/: the redaction step every store runs before it writes.

notes, sessions and facts import none of one another; anchors may import facts, sessions and
project. files.py and canonical.py are the primitives below them all; recall, injection,
selection, working, learning_status, doctor and scrub are the reads (and the scrub, the one
write) that cross the parts, above them.
"""
