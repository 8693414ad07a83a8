"""Memos added for env speed answer exactly what the uncached code answers.

Rogue Trader's legal actions are memoised by the fields legality reads (the phase, actor,
abilities used, ability, target and every unit): in seeded random games, including a set-up with
random psi-levels and abilities, every decision's memoised answer equals a fresh computation, and
so does every answer after the memo is cleared.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_rogue_trader_fast_paths import RULES

from psygym.core import CHANCE, TERMINAL


@pytest.mark.parametrize("name", sorted(RULES))
def test_rogue_trader_memoised_legal_actions_equal_a_fresh_computation(name):
    rules = RULES[name]()
    rng = np.random.default_rng(3)
    decisions = 0
    for game in range(40):
        s = rules.initial_state()
        while (p := rules.current_player(s)) != TERMINAL:
            if p == CHANCE:
                s = rules.apply(s, rules.sample_chance(s, rng))
                continue
            fresh = rules._find_legal(s)
            assert rules.legal_actions(s) == fresh
            assert rules.legal_actions(s) == fresh  # asked again: the same answer
            decisions += 1
            s = rules.apply(s, fresh[int(rng.integers(len(fresh)))])
        if game == 20:
            rules._legal_memo.clear()
    assert decisions > 100
