"""The floor for the benchmarks: a pygls server with nothing registered.

Started exactly like lecode-ls (`python -m bench.bare_server`, stdio), so the difference between the
two is what lecode-ls adds on top of pygls and lsprotocol.
"""

from __future__ import annotations

from pygls.lsp.server import LanguageServer


def main() -> None:
    LanguageServer("bare", "0").start_io()


if __name__ == "__main__":
    main()
