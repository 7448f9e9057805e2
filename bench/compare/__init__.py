"""The live comparison harness (V2): baseline against hybrid, through lecode-ls; run it as
`uv run python -m bench.compare` (trial.py describes the protocol).
"""
