"""Leaves valued by playouts of the reference heuristic where an edition ships no board value."""

from __future__ import annotations

import numpy as np
from psygym_agents.solvers.expectiminimax import Solver
from psygym_agents.solvers.rollout_value import RolloutValue
from psygym_agents.solvers.search import NO_VALUE, LookaheadPolicy
from psygym_agents.value import general

from psygym.editions import load
from psygym.policies import reference_policy


def test_playouts_estimate_the_reference_heuristics_own_value():
    """3,000 playouts agree with the exact value of the heuristic against itself (4 se)."""
    rules = load("8th", "single-phase")
    ref = reference_policy(rules)
    s = rules.initial_state()
    exact = Solver(rules, fixed={0: ref, 1: ref}).value(s)
    one = RolloutValue(ref, rollouts=1, seed=2)
    sd = np.std([one._play_out(rules, s) for _ in range(300)])
    estimate = RolloutValue(ref, rollouts=3000, seed=1)(rules, s)
    assert abs(estimate - exact) < 4 * sd / np.sqrt(3000)
    assert abs(estimate - exact) > 0  # a playout's estimate, not the solve


def test_search_without_a_value_plays_out_the_reference_heuristic(tmp_path, monkeypatch):
    monkeypatch.setattr(general, "general_value_path", lambda e: tmp_path / "none.safetensors")
    rules = load("8th", "random:3")
    agent = LookaheadPolicy(rules, exact=False)
    assert isinstance(agent.value, RolloutValue)
    assert "games played out" in agent.note
    s = rules.initial_state()
    while rules.current_player(s) < 0:
        s = rules.apply(s, rules.chance_outcomes(s)[0][0])
    values = agent.action_values(rules, s)
    assert set(values) == set(rules.legal_actions(s))
    blind = LookaheadPolicy(rules, NO_VALUE, exact=False)
    assert blind.value is None and "counts only the score so far" in blind.note
