"""Code anchors, live: the text of anchored lines, their capture for a verified fact, drift against
buffers and files, and renames Git can tell.

Code outside this part imports only the names `__all__` lists (a test keeps it so).
"""

from lecode_ls.memory.anchors.capture import (
    fact_path_line,
    make_anchor,
    read_line_number,
    read_paths,
    verified_fact_anchor,
)
from lecode_ls.memory.anchors.drift import MAX_FILE_BYTES, AnchorState, DriftTracker, state_json
from lecode_ls.memory.anchors.renames import (
    git_stamp,
    git_user_name,
    has_commit,
    root_commit,
    root_commits,
)
from lecode_ls.memory.anchors.text import DRIFTED, Located, Text, split_lines

__all__ = [
    "DRIFTED",
    "MAX_FILE_BYTES",
    "AnchorState",
    "DriftTracker",
    "Located",
    "Text",
    "fact_path_line",
    "git_stamp",
    "git_user_name",
    "has_commit",
    "make_anchor",
    "read_line_number",
    "read_paths",
    "root_commit",
    "root_commits",
    "split_lines",
    "state_json",
    "verified_fact_anchor",
]
