"""2nd edition's memoised observation blocks, masks and cast views give what a cold build gives.

The memos (``SecondViews`` board, psyker, slot and pending blocks; ``RulesBase.legal_mask``;
``SecondViews.cast_view``) must never change a result: a warm rules object and a fresh one see
the same vectors, masks and labels at every state of seeded games, and a caller writing into a
returned array cannot reach a memo.
"""

from __future__ import annotations

import numpy as np
from psygym_agents.base import RandomPolicy

from psygym import CHANCE, TERMINAL, load
from psygym.core import sample_action
from psygym.edition import get

EDITION = get("2nd").id


def _states(scenario: str, games: int, seed: int) -> list:
    rules = load(EDITION, scenario)
    policy = RandomPolicy()
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(games):
        s = rules.initial_state()
        while (p := rules.current_player(s)) != TERMINAL:
            out.append(s)
            if p == CHANCE:
                a = rules.sample_chance(s, rng)
            else:
                a = sample_action(policy, rules, s, p, rng)
            s = rules.apply(s, a)
        out.append(s)
    return out


def test_warm_memos_match_a_cold_build_at_every_state():
    for scenario in ("duel", "librarian-vs-farseer"):
        states = _states(scenario, games=6, seed=3)
        warm = load(EDITION, scenario)
        for s in states:  # fill every memo first
            warm.observe(s, 0), warm.observe(s, 1), warm.legal_mask(s)
        for s in states:
            cold = load(EDITION, scenario)  # nothing memoised yet
            for player in (0, 1):
                assert np.array_equal(warm.observe(s, player), cold.observe(s, player))
            assert np.array_equal(warm.legal_mask(s), cold.legal_mask(s))
            mask = np.zeros(warm.num_actions, dtype=bool)
            mask[warm.legal_actions(s)] = True
            assert np.array_equal(warm.legal_mask(s), mask)
            for a in warm.legal_actions(s):
                assert warm.describe(s, a) == cold.describe(s, a)
                assert str(warm.describe(s, a)) == str(cold.describe(s, a))


def test_returned_arrays_are_fresh_and_writable():
    rules = load(EDITION, "duel")
    s = next(x for x in _states("duel", games=1, seed=0) if rules.current_player(x) >= 0)
    obs, mask = rules.observe(s, 0), rules.legal_mask(s)
    before_obs, before_mask = obs.copy(), mask.copy()
    obs[:] = -7.0  # the caller owns these: writing into them must not reach a memo
    mask[:] = ~mask
    assert np.array_equal(rules.observe(s, 0), before_obs)
    assert np.array_equal(rules.legal_mask(s), before_mask)
