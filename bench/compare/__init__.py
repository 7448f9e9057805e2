"""V2: the live comparison of working memory alone (baseline) against working memory with automatic
learning (hybrid), run through lecode-ls against any OpenAI-compatible endpoint.

    uv run python -m bench.compare --base-url URL --model MODEL [--api-key-env NAME]
        [--context-window N] [--repeats K] [--budget-tokens T] [--price-in P --price-out P]
        [--out report.json]
    uv run python -m bench.compare --scripted [--quick]     # a smoke run against FakeOpenAI

Two arms, identical except `[memory] auto_learn` (baseline false, hybrid true): each its own
temporary config dir and store, its own copy of the fixture project and the same initial MEMORY.md,
the same model settings and the same fixed prompts (bench/compare/fixture.py), in this order.

Session 1 (phase 1): an explicit lasting preference inside a longer message with a transient task;
a verified local read (pyproject.toml's requires-python line); a third-party instruction in a tool
output (docs/vendor-notes.md) and one pasted into a message; then filler exchanges, with
`lecode/session/compact` after every `--compact-every` of them (automatic compaction also runs when
the model's window is known and the request crosses `mid_turn_threshold`). Phase 1 stops early,
in either arm, once the arm's reported tokens reach `--budget-tokens`.
Session 2 (phase 2): a fresh session in the same project asks the recall question. It always runs,
so both arms are scored; its tokens are reported with the rest.

Every provider request goes through a recording tap (bench/compare/tap.py), so answers, summaries,
learning calls, retries and failed requests are all counted, with the usage the provider reported
(absent usage is counted as unknown, never as zero) and their latency. The `usage` of every
`lecode/chat/send` and `lecode/session/compact` result, and the usage, compact, memory_usage and
learning events of the transcripts, are recorded beside it as a cross-check. Scored per arm: the facts held at the end
(`lecode/facts/list`, `lecode/facts/recall`): supported-fact precision, missed and unwanted
promotions; the recall answer's correctness, and separately whether the arm holds a currently valid
fact with an exact source for the preference. A failed step or trial is recorded, never dropped.

Then step 4 of the protocol (bench/compare/events.py): extraction faults, cancellation, a forget
during a call, undo/redo, clear, a correction, deleted and corrupted sources, each checked for
exclusion and continuity; its requests are tallied apart from the scored phases'.

A scripted run makes no savings or quality claim: its answers are fixed by the harness.

The package: plan.py (the settings, the arms and the command line), client.py (the client of
lecode-ls), trial.py (one arm of one repeat), events.py (step 4: the exclusion and continuity
checks), score.py and tally.py (what a trial is scored and tallied by), harness.py (every repeat
of both arms, and the comparison), report.py (the tables), tap.py (the recording proxy),
fixture.py (the scenario and the scripted model); `python -m bench.compare` runs __main__.py.
"""
