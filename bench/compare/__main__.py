"""`uv run python -m bench.compare`: parse the command line, run the comparison, print its report
and save its record.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence

from bench.compare.harness import run, save
from bench.compare.plan import parse
from bench.compare.report import report


def main(argv: Sequence[str] | None = None) -> None:
    plan, out = parse(argv)
    result = asyncio.run(run(plan, out))
    print(report(result))
    if out is not None:
        save(out, result)
        print(f"\nFull record: {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
