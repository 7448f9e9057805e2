"""SourceVerdicts.statuses (issue 26's doctor): the verdicts `validate_source` gives, also
once a remembered valid verdict is out of date (the transcript or the exclusions changed).

# covers S1-S3 (evidence validates against the transcript as it is now)
"""

from __future__ import annotations

from pathlib import Path

from lecode_ls.memory.sessions import SessionStore, SourceVerdicts, source_snapshot


class Exclusions:
    def __init__(self) -> None:
        self.seqs: frozenset[int] = frozenset()

    def excluded_seqs(self, session_id: str) -> frozenset[int]:
        return self.seqs

    def scrubbed_digest(self, session_id: str, seqs: object, digest: str) -> str | None:
        return None  # no scrub here: the scrub's own tests use the real FactStore


def test_known_valid_references_are_not_read_again_until_something_changed(
    tmp_path: Path,
) -> None:
    store = SessionStore(tmp_path)
    session = store.create("s")
    for text in ("We use tabs.", "ok", "We use uv.", "ok"):
        role = "user" if text != "ok" else "assistant"
        store.append(session, {"kind": "message", "role": role, "content": text})
    exclusions = Exclusions()
    refs = [source_snapshot(store, session, seq, seq, exclusions=exclusions) for seq in (1, 3)]
    verdicts = SourceVerdicts(store)
    assert verdicts.statuses(refs, exclusions, 0) == ["valid", "valid"]
    assert verdicts.statuses(refs, exclusions, 0) == ["valid", "valid"]  # remembered
    transcript = store.folder / f"{session}.jsonl"

    exclusions.seqs = frozenset({3})  # a forget: the generation advances
    assert verdicts.statuses(refs, exclusions, 1) == ["valid", "hidden"]

    lines = transcript.read_text().splitlines(keepends=True)
    transcript.write_text("".join(lines).replace("We use tabs.", "We use spaces."))
    assert verdicts.statuses(refs, exclusions, 1) == ["stale", "hidden"]
    transcript.unlink()
    assert verdicts.statuses(refs, exclusions, 1) == ["missing", "missing"]
