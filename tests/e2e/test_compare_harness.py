"""bench.compare's scripted run (V2), step 4 of the protocol included: the real server over stdio
in both arms, the scripted model behind the recording tap, the extraction faults injected by the
tap. What is asserted is lecode-ls's behaviour as the harness checks it, never a model's words.

# covers V2, E3, S5, S6, S3, R7, A3, A9, A11, A12, C10, I3
"""

from __future__ import annotations

import pytest

from bench.compare.events import STEPS
from bench.compare.events import summary as step4_summary
from bench.compare.harness import run
from bench.compare.plan import scripted_plan
from bench.compare.report import report

pytestmark = pytest.mark.timeout(300)


async def test_every_step_4_check_holds_in_both_arms() -> None:
    result = await run(scripted_plan(quick=True))
    trials = {t["arm"]: t for t in result["trials"]}
    assert set(trials) == {"baseline", "hybrid"}
    for trial in trials.values():
        assert trial["errors"] == []
        assert [c for c in trial["step4"] if not c["ok"]] == []
        assert {c["step"] for c in trial["step4"]} == {"setup", *STEPS}
    # Learning runs in the hybrid arm only: its two extraction steps really ran there.
    summary = step4_summary(trials["hybrid"]["step4"])
    assert summary["malformed extraction"] == "5/5"
    assert summary["failed extraction"] == "6/6"
    assert step4_summary(trials["baseline"]["step4"])["failed extraction"] == "n/a"
    # Step 4's requests are tallied apart from the scored phases', and none is lost.
    for trial in trials.values():
        phases, step4 = trial["providerUsage"]["all"], trial["step4Usage"]
        counted = phases["calls"] + phases["failed"] + step4["calls"] + step4["failed"]
        assert counted == len(trial["requests"])
        faulted = [r for r in trial["requests"] if r["fault"]]
        assert bool(faulted) is (trial["arm"] == "hybrid")
        assert all(r["purpose"] == "learning" for r in faulted)
    assert "Step 4: exclusion and continuity" in report(result)
