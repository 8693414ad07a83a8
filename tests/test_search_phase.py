"""Advice's ``search`` searches the whole Psychic phase whenever it fits, and says so.

Every cast and deny of both sides up to the phase's end (``rules.phase_horizon``) is searched
exactly, a leaf past the phase worth the score so far plus the board value
(:func:`psygym_agents.solvers.search.phase_solver`); one cast is the fallback. Where the game is
one phase, the phase search is the exact solve, so at every decision (mid-phase ones with powers
still to come included) its values are a fresh exact solve's to 1e-9.
"""

from __future__ import annotations

import pytest
from engine_cases import decision_states
from psygym_agents.solvers import NotSolvable
from psygym_agents.solvers.expectiminimax import Solver
from psygym_agents.solvers.search import LookaheadPolicy, make_search, phase_solver
from psygym_agents.value import shipped_value
from test_search_exact_fit import _renamed

from psygym.editions import load


def _decisions(rules, games, seed, agent=None):
    choose = None if agent is None else (lambda s, p: agent.choose(rules, s, p))
    return decision_states(rules, games, seed, choose)


@pytest.mark.parametrize(("folder", "edition"), [("seventh", "7th"), ("eighth", "8th")])
def test_a_one_phase_game_searched_by_phase_is_the_exact_solve(tmp_path, folder, edition):
    rules = load(edition, _renamed(tmp_path, folder, "single-phase"))
    agent = LookaheadPolicy(rules, exact=False, phase=True)  # the phase search, not exact-fit
    exact = Solver(rules)
    checked = 0
    for s in _decisions(rules, 20, seed=5, agent=agent):
        got, want = agent.action_values(rules, s), exact.action_values(s)
        assert agent.note.startswith("exact over the whole Psychic phase") and not agent.exact
        assert got.keys() == want.keys()
        assert max(abs(got[a] - want[a]) for a in want) <= 1e-9
        checked += 1
    assert checked >= 40


@pytest.mark.parametrize("edition", ["7th", "8th"])
def test_the_core_s_phase_search_is_the_reference_s(edition):
    rules = load(edition, "duel")
    value = shipped_value(rules)
    checked = 0
    for s in _decisions(rules, 4, seed=1):
        if rules.phase_horizon(s)[0] < 1:  # power generation: no phase yet
            continue
        unit = rules.phase_horizon(s)
        budget = 15_000  # what the Python search holds in half a second or so
        fast = Solver(rules, within=unit, phases=True, leaf_value=value, max_states=budget)
        slow = Solver(rules, within=unit, phases=True, leaf_value=value, engine="python",
                      max_states=budget)  # fmt: skip
        assert fast._core is not None and slow._core is None
        try:
            want = slow.action_values(s)
        except NotSolvable:  # a phase past the budget: the core must say so too
            with pytest.raises(NotSolvable):
                fast.action_values(s)
            continue
        got = fast.action_values(s)
        assert got.keys() == want.keys()
        assert max(abs(got[a] - want[a]) for a in want) <= 1e-9
        assert fast.states == slow.states
        checked += 1
        if checked >= 8:
            break
    assert checked >= 4


def test_the_duel_s_phases_are_searched_whole_where_they_fit_and_the_search_is_reused():
    rules = load("8th", "duel")
    agent = LookaheadPolicy(rules, exact=False, phase=True)
    value = shipped_value(rules)
    whole = cast = 0
    for s in _decisions(rules, 3, seed=3, agent=agent):
        values = agent.action_values(rules, s)
        if not agent.note.startswith("exact over the whole Psychic phase"):
            assert "the whole Psychic phase does not fit within 250,000 states" in agent.note
            cast += 1
            continue
        whole += 1  # a fresh search of the phase from here agrees with the reused one
        unit = rules.phase_horizon(s)
        fresh = Solver(rules, within=unit, phases=True, leaf_value=value).action_values(s)
        assert max(abs(values[a] - fresh[a]) for a in fresh) <= 1e-9
    assert whole >= 20 and cast >= 1


def test_a_phase_past_the_budget_falls_back_to_the_cast_and_is_not_tried_again():
    rules = load("7th", "duel")
    s = next(s for s in _decisions(rules, 1, seed=0) if rules.phase_horizon(s) == (1, 0))
    calls = []
    real_value = Solver.value

    def counted(self, state=None):
        calls.append((self.max_states, self.phases))
        return real_value(self, state)

    Solver.value = counted
    try:
        assert phase_solver(rules, s, budget=1_000) is None
        assert phase_solver(rules, s, budget=1_000) is None
    finally:
        Solver.value = real_value
    assert calls == [(1_000, True)]
    agent = LookaheadPolicy(rules, exact=False, phase=True)
    agent.action_values(rules, s)
    if not agent.note.startswith("exact over the whole Psychic phase"):
        assert "the whole Psychic phase does not fit" in agent.note


def test_search_options_phase(tmp_path):
    rules = load("8th", "duel")
    s = next(_decisions(rules, 1, seed=0))
    agent = make_search(rules, "phase=no,exact=no")
    agent.action_values(rules, s)
    assert agent.note.startswith("exact over each cast") and "Psychic phase" not in agent.note
    assert make_search(rules, "phase=fit").phase is True
    with pytest.raises(ValueError, match="phase must be no or fit"):
        make_search(rules, "phase=yes")


def test_three_turns_searched_whole_reach_the_end_of_a_four_turn_game_exactly():
    # Rogue Trader's Psychic phase is a player's turn: from the second of four turns on, three
    # phases reach the game's end, so the values are a fresh exact solve's, whatever V says.
    rules = load("rt", "random:23,rounds=2,psykers=1")
    assert rules.game.turns == 4
    agent = LookaheadPolicy(rules, exact=False, phases=3)
    exact = Solver(rules)
    reached = early = 0
    for s in _decisions(rules, 30, seed=2, agent=agent):
        got = agent.action_values(rules, s)
        assert agent.note.startswith("exact over the whole Psychic phase and the 2 after it")
        if s.turn == 0:  # the leaf is the last turn's board: V
            early += 1
            continue
        want = exact.action_values(s)
        assert got.keys() == want.keys()
        assert max(abs(got[a] - want[a]) for a in want) <= 1e-9
        reached += 1
    assert reached >= 30 and early >= 10


def test_search_options_phases():
    rules = load("rt", "random:22,rounds=2,psykers=1")
    agent = make_search(rules, "exact=no;phases=3")
    assert agent.phases == 3 and not agent.phase
    want = "exact over the whole Psychic phase and the 2 after it where they fit within 250,000"
    assert agent.note.startswith(want + " states, else within each turn")
    assert make_search(rules, "exact=no").phases == 3  # the edition value's search_phases
    assert make_search(rules, "exact=no;phases=1").phases == 1
    for bad in ("phases=0", "phases=two"):
        with pytest.raises(ValueError, match="phases must be a whole number from 1 to"):
            make_search(rules, bad)
