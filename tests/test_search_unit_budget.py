"""``search``'s unit of lookahead has a state budget, and where it does not fit the agent says so.

A list the scenario format accepts (four Rogue Trader psykers a side, thirty 7th psykers) can
hold a unit of lookahead of tens of millions of states. Then ``search`` plays the edition's
reference heuristic at that decision, and ``advise`` and the hints answer with one clear line,
instead of searching until memory runs out. Whether a unit fits depends on the state alone:
a solver kept from earlier games that passes the budget is replaced by a fresh one.
"""

from __future__ import annotations

import pytest
from engine_cases import decision_states
from psygym_agents.solvers import search
from psygym_agents.solvers.expectiminimax import Solver
from psygym_agents.solvers.search import LookaheadPolicy, UnitTooLarge

from psygym.editions import load
from psygym.policies import reference_policy


@pytest.fixture
def rules():
    """Fresh rules, so no solver kept by another test answers here."""
    return load("8th", "duel")


def _two_states_of_one_unit(rules, agent):
    """Two decisions of one unit of lookahead, each smaller than the two searched together."""
    by_unit: dict = {}
    for s in decision_states(rules, 4, 0):
        by_unit.setdefault(rules.horizon(s), []).append(s)
    for unit, states in by_unit.items():
        for a in states:
            for b in states:
                alone = [_size(rules, unit, agent, [x]) for x in (a, b)]
                if a != b and _size(rules, unit, agent, [a, b]) > max(alone) == alone[1]:
                    return a, b, alone[1]
    raise AssertionError("no unit with two states that overlap little")


def _size(rules, unit, agent, states) -> int:
    solver = Solver(rules, within=unit, leaf_value=agent.value, steps=agent.steps)
    for s in states:
        solver.value(s)
    return solver.states


def _agent(rules):
    return LookaheadPolicy(rules, exact=False)


def test_a_unit_that_fits_is_searched_whatever_the_kept_solver_holds(rules, monkeypatch):
    agent = _agent(rules)
    a, b, size_b = _two_states_of_one_unit(rules, agent)
    fresh = _agent(load("8th", "duel")).action_values(rules, b)
    monkeypatch.setattr(search, "LOOKAHEAD_BUDGET", size_b)
    agent.action_values(rules, a)  # the kept solver now holds a's states too
    assert agent.action_values(rules, b) == pytest.approx(fresh, abs=1e-12)
    assert "does not fit" not in agent.note


def test_a_unit_too_large_plays_the_reference_heuristic_and_says_so(rules, monkeypatch):
    agent = _agent(rules)
    _a, b, size_b = _two_states_of_one_unit(rules, agent)
    monkeypatch.setattr(search, "LOOKAHEAD_BUDGET", size_b - 1)
    player = rules.current_player(b)
    heuristic = reference_policy(rules).action_probabilities(rules, b, player)
    assert agent.action_probabilities(rules, b, player) == heuristic
    assert agent.choose(rules, b, player) == max(heuristic, key=heuristic.get)
    assert agent.note.startswith("the cast of this decision does not fit within ")
    assert "smite-first" in agent.note
    with pytest.raises(UnitTooLarge, match="does not fit within"):
        agent.action_values(rules, b)  # what advise and the hints ask: no values to give


def test_a_big_rogue_trader_turn_ends_within_the_budget(monkeypatch):
    """The first turn of four psykers a side holds millions of states; a small budget shows it."""
    rules = load("rt", "random:3,psykers=4")
    monkeypatch.setattr(search, "LOOKAHEAD_BUDGET", 20_000)
    state = next(decision_states(rules, 1, 0))
    agent = _agent(rules)
    player = rules.current_player(state)
    assert agent.choose(rules, state, player) in rules.legal_actions(state)
    assert "the turn of this decision does not fit within 20,000 states" in agent.note
