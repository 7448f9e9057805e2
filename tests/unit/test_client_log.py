"""What the server's log sends a client: never a traceback (it names files of the installation).

# covers issue 10 (no traceback or local path reaches a client)
"""

from __future__ import annotations

import logging
import sys

from lecode_ls.server.client_log import _WithoutTraceback


def test_a_logged_exception_reaches_the_client_as_its_type_only() -> None:
    try:
        raise ValueError("embedded null byte")
    except ValueError:
        exc_info = sys.exc_info()
    record = logging.LogRecord(
        "lecode_ls.server.wiring", logging.ERROR, __file__, 1, "%s failed", ("x",), exc_info
    )
    text = _WithoutTraceback().format(record)
    assert text == "lecode_ls.server.wiring: x failed (ValueError)"
    assert "Traceback" not in text and __file__ not in text
