"""Rule-based learning on a labelled set (issue 41): precision and recall for facts and for
proposals, with `[memory] learning` at "model", "rules" and "both", side by side.

Each sentence of bench.learning_set.SET (200+, labelled a lasting convention or not) is said
once, as the user message of its own session with one assistant reply, in a real store; then
learning runs on that exchange as it does after a compaction (`learning.learn`, the real
evidence checks and promotion). The model is scripted to propose nothing (`{"candidates": []}`),
as small local models mostly do: "model" mode therefore measures what a model that finds
nothing gives, and "both" is what the rules add to it. Each mode runs with `rules_learn` at its
default, "propose", and the "remember" rows show the opt-in.

A fact or a proposal counts for a sentence when its text is that sentence. Precision: of the
sentences that became facts (proposals), how many are conventions; recall: of the conventions,
how many became facts (proposals); "either" counts a fact or a proposal. --quick runs every
fourth sentence.
"""

from __future__ import annotations

import tempfile
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Literal

from bench.common import markdown_table, run_bench
from bench.learning_set import SET
from lecode_ls.agent.learning import learn
from lecode_ls.agent.provider import ChatRequest, Event, Finish, TextDelta
from lecode_ls.config import MemorySettings, Settings
from lecode_ls.memory.project import Project
from lecode_ls.runtime import Runtime
from lecode_ls.tools.permissions import PermissionPolicy

TITLE = "Rule-based learning on a labelled set (issue 41)"
ALLOW = PermissionPolicy({"memory_write": "allow"})
Mode = Literal["model", "rules", "both"]


class NothingFound:
    """A provider whose every answer is `{"candidates": []}`."""

    async def stream(self, request: ChatRequest) -> AsyncGenerator[Event, None]:
        yield TextDelta('{"candidates": []}')
        yield Finish("stop", None)


async def _outcome(runtime: Runtime, sentence: str) -> tuple[bool, bool]:
    """Whether `sentence` became a fact, and whether it became a proposal."""
    session = runtime.sessions.create("bench")
    user = {"kind": "message", "role": "user", "content": sentence}
    reply = {"kind": "message", "role": "assistant", "content": "Okay."}
    runtime.sessions.append(session, user)
    runtime.sessions.append(session, reply)
    group = runtime.sessions.read(session, 1, 2)
    learning = await learn(
        runtime, session, NothingFound(), [group], model="bench", window=None, policy=ALLOW,
        readonly=False, compact_seq=2,
    )  # fmt: skip
    facts = {f.text for f in runtime.facts.list()[0]}
    proposals = set() if learning is None else {p["text"] for p in learning.proposals}
    # the text may be one sentence of the item (a retracted one is followed by another)
    return (any(t in sentence for t in facts), any(t in sentence for t in proposals))


def _ratio(hits: int, total: int) -> str:
    return "n/a" if total == 0 else f"{hits / total:.0%} ({hits}/{total})"


async def _mode(mode: Mode, rules_learn: str, items: list[tuple[str, bool, str]]) -> list[object]:
    counts = {"fact": [0, 0], "proposal": [0, 0], "either": [0, 0]}  # [true hits, all hits]
    with tempfile.TemporaryDirectory() as tmp:
        memory = MemorySettings(auto_learn=True, learning=mode, rules_learn=rules_learn)
        for n, (sentence, label, _) in enumerate(items):
            project = Project(root=Path(tmp) / f"p{n}", slug=f"bench-{n:012d}")
            runtime = Runtime(project, Path(tmp) / "config", Settings(memory=memory))
            try:
                fact, proposal = await _outcome(runtime, sentence)
            finally:
                runtime.close()
            for key, hit in (("fact", fact), ("proposal", proposal), ("either", fact or proposal)):
                counts[key][0] += hit and label
                counts[key][1] += hit
    conventions = sum(label for _, label, _ in items)
    row: list[object] = [mode, rules_learn]
    for key in ("fact", "proposal", "either"):
        true, hits = counts[key]
        row += [_ratio(true, hits), _ratio(true, conventions)]
    row.append(counts["fact"][1] - counts["fact"][0])
    return row


async def measure(quick: bool = False) -> str:
    items = list(SET[::4] if quick else SET)
    rows = [
        await _mode(mode, rules_learn, items)
        for mode, rules_learn in (
            ("model", "propose"),
            ("rules", "propose"),
            ("both", "propose"),
            ("rules", "remember"),
            ("both", "remember"),
        )
    ]
    conventions = sum(label for _, label, _ in items)
    return markdown_table(
        TITLE,
        ["learning", "rules_learn", "fact precision", "fact recall", "proposal precision",
         "proposal recall", "either precision", "either recall", "non-conventions as facts"],
        rows,
        f"{len(items)} sentences, {conventions} of them conventions; the model is scripted to "
        "propose nothing. The default is learning = both, rules_learn = propose.",
    )  # fmt: skip


def main() -> None:
    run_bench(measure, __doc__)


if __name__ == "__main__":
    main()
