"""The checkout-specific AGENTS.md of the active working folder (L7).

AGENTS.md belongs to a checkout, not to the project's memory store: two worktrees of one project
share memory but may carry different instructions. So it is read from the working folder itself
(that folder only, no walk up to parents), never copied into the store, and capped.
"""

from __future__ import annotations

from pathlib import Path

from lecode_ls import platform
from lecode_ls.errors import StoreError, SymlinkRefused
from lecode_ls.memory.files import NotRegularFile, read_regular
from lecode_ls.platform.paths import canonical

AGENTS_FILE = "AGENTS.md"
AGENTS_MAX_BYTES = 256 * 1024
TRUNCATION_MARKER = f"[... {AGENTS_FILE} truncated at {AGENTS_MAX_BYTES} bytes]"


AGENTS_HEADING = "# AGENTS.md (the project's instructions for coding agents)\n\n"
"""What AGENTS.md is shown under, in the chat's system prompt and in `lecode-ls context`."""


def cut_utf8(data: bytes, limit: int) -> bytes:
    """The first `limit` bytes of `data`, shortened so no UTF-8 sequence is cut in half."""
    if len(data) <= limit:
        return data
    cut = limit
    # Step back over continuation bytes (10xxxxxx) to the start of the character that spans
    # the limit, and drop that whole character.
    while cut > 0 and data[cut] & 0xC0 == 0x80:
        cut -= 1
    return data[:cut]


def read_agents(folder: Path) -> tuple[str, bool]:
    """Return `(text, exists)` for `<folder>/AGENTS.md`; a missing file gives `("", False)`.

    A symbolic link is followed only when it resolves inside `folder` (a checkout may link
    AGENTS.md to, say, docs/AGENTS.md); one leading elsewhere raises `SymlinkRefused`. Text past
    256 KiB is cut and a marker line appended. Bytes that are not UTF-8 become U+FFFD: the file
    is the user's own instructions, and one bad byte should not hide all of them.
    """
    path = folder / AGENTS_FILE
    if platform.is_link(path):
        base = canonical(folder)
        try:
            target = canonical(path.resolve(strict=True))
        except (FileNotFoundError, RuntimeError):
            return "", False  # a dangling link (or a loop) is an absent file
        if not target.is_relative_to(base):
            raise SymlinkRefused(
                f"file: {AGENTS_FILE} is a symbolic link that leads outside the working folder; "
                "lecode-ls refuses to follow it",
                field="file",
            )
        path = target
    try:
        data = read_regular(path, AGENTS_MAX_BYTES + 1)
    except NotRegularFile:
        raise StoreError(
            f"file: {AGENTS_FILE} in the working folder is not a regular file", field="file"
        ) from None
    except OSError as exc:
        raise StoreError(
            f"file: could not read {AGENTS_FILE} in the working folder ({exc.strerror})",
            field="file",
        ) from None
    if data is None:
        return "", False
    if len(data) <= AGENTS_MAX_BYTES:
        return data.decode("utf-8", errors="replace"), True
    text = cut_utf8(data, AGENTS_MAX_BYTES).decode("utf-8", errors="replace")
    if not text.endswith("\n"):
        text += "\n"
    return text + TRUNCATION_MARKER + "\n", True
