"""A bound on what parsing a JSON text from a client allocates.

A byte cap alone does not bound memory: 64 MiB of `[{},{},...]` parses into 21 million
dictionaries, 1.7 GiB (seen: the LSP transport), and a 4 MiB MCP line of them took 426 MiB. The
values a text can hold are counted before it is parsed, cheaply (three byte counts, in C): every
object, array, member and element needs a `{`, `[`, `,` or `:`. Characters inside strings count
too, so the count is an upper bound, and an ordinary message stays far below it.
"""

from __future__ import annotations


def structure_count(text: bytes) -> int:
    """How many of `{`, `[`, `,` and `:` `text` holds: at least its number of JSON values
    beyond the first."""
    return text.count(b"{") + text.count(b"[") + text.count(b",") + text.count(b":")


def deeper_than(value: object, most: int) -> bool:
    """Whether the JSON value `value` nests lists and objects more than `most` levels deep.
    A walk with a stack of its own, not recursion: a crafted value 100,000 levels deep costs
    one look at each level, never a RecursionError in the code that reads it next."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            if depth >= most and item:
                return True
            stack.extend((child, depth + 1) for child in item)
    return False
