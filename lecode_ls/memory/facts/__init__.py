"""facts.sqlite3: its schema and migrations, its connection, the values it holds, FactStore, and the
anchors table.

Code outside this part imports only the names `__all__` lists (a test keeps it so).
"""

from lecode_ls.memory.facts.anchor_rows import MAX_ANCHOR_LINES, NewAnchor, StoredAnchor, check_path
from lecode_ls.memory.facts.model import MAX_TEXT_BYTES, Fact, Purpose, SourceLike, check_text
from lecode_ls.memory.facts.ranked import MAX_QUERY_CHARS, MAX_RESULTS, Hit, TextIndex, check_query
from lecode_ls.memory.facts.schema import canonical_text
from lecode_ls.memory.facts.scrubs import Moved
from lecode_ls.memory.facts.store import FactStore
from lecode_ls.memory.facts.vectors import MAX_DIMENSIONS, Missing

__all__ = [
    "MAX_ANCHOR_LINES",
    "MAX_DIMENSIONS",
    "MAX_QUERY_CHARS",
    "MAX_RESULTS",
    "MAX_TEXT_BYTES",
    "Fact",
    "FactStore",
    "Hit",
    "Missing",
    "Moved",
    "NewAnchor",
    "Purpose",
    "SourceLike",
    "StoredAnchor",
    "TextIndex",
    "canonical_text",
    "check_path",
    "check_query",
    "check_text",
]
