"""The poisoning benchmark's attack catalogue is well formed (issue 42, Build 5): at least 50
attacks, several a door, each with a token of its own that its canary carries and that no other
attack's token contains. The rate itself is measured by `python -m bench.poisoning`, never
asserted here."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from bench.poisoning_attacks import DOORS, Attack, canary, catalogue


def _attacks(tmp_path: Path) -> list[Attack]:
    return catalogue(lambda n: tmp_path / f"p{n:03d}")


class TestCatalogue:
    def test_it_holds_at_least_fifty_attacks_and_several_a_door(self, tmp_path: Path) -> None:
        # covers K (bad input): the hostile doors of issue 42
        attacks = _attacks(tmp_path)
        doors = Counter(attack.door for attack in attacks)
        assert len(attacks) >= 50
        assert set(doors) == set(DOORS)
        assert min(doors.values()) >= 5

    def test_each_attack_has_a_unique_token_no_other_contains(self, tmp_path: Path) -> None:
        tokens = [attack.token for attack in _attacks(tmp_path)]
        assert len(set(tokens)) == len(tokens)
        assert not [(a, b) for a in tokens for b in tokens if a != b and a in b]

    def test_each_attack_has_a_unique_name_and_one_way_in(self, tmp_path: Path) -> None:
        attacks = _attacks(tmp_path)
        assert len({(a.door, a.name) for a in attacks}) == len(attacks)
        for attack in attacks:
            ways = [bool(attack.read), bool(attack.imports), bool(attack.team), bool(attack.mcp)]
            assert sum(ways) == 1, attack.name

    def test_each_attack_carries_its_own_canary_or_token(self, tmp_path: Path) -> None:
        for attack in _attacks(tmp_path):
            carried = [
                *attack.committed.values(),
                *attack.untracked.values(),
                repr(attack.imports),
                repr(attack.mcp),
                repr(attack.followed),
                *(make("0" * 40).decode() for make in attack.team),
            ]
            assert any(attack.token in text for text in carried), attack.name
            assert attack.token in canary(attack.token)
