"""`uv run python -m bench.compare`: the comparison, from the command line (trial.py's `main`)."""

from bench.compare.trial import main

main()
