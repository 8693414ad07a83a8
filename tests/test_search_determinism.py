"""``search``'s moves depend on the game's own history, never on the games played before it.

``search`` remembers, per rules object, the units of lookahead where an exact solve of the rest
of the game did not fit. Kept across games, that memory made a game's moves depend on which
games the process had played before: ``evaluate`` gave other numbers with ``--workers 2``, or
after ``--resume``. :func:`psygym.core.play_game` and ``evaluate``'s game loop now restart each
policy as a game starts, and only the states whose rest did not fit outlive a game.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import RestartCounter

from psygym.core import play_game
from psygym.editions import load
from psygym.policies import resolve_policy


def _moves(rules, seeds, harness: bool = False) -> dict[int, list[int]]:
    """Every transition of the games ``seeds`` (search against double-wc, seats alternating).

    With ``harness``, through ``evaluate``'s game loop (common random numbers), not play_game.
    """
    from psygym_experiments.harness.games import play_crn

    search, other = resolve_policy("search", rules), resolve_policy("double-wc", rules)
    out = {}
    for i in seeds:
        out[i] = moves = []
        players = [search, other] if i % 2 == 0 else [other, search]
        record = lambda s, a, e, m=moves: m.append(a)  # noqa: E731
        if harness:
            play_crn(rules, players, seed=i, on_step=record)
        else:
            play_game(rules, players, np.random.default_rng(i), on_step=record)
    return out


@pytest.mark.parametrize(
    ("harness", "game"), [(False, 6), (True, 2)], ids=["play_game", "play_crn"]
)
def test_a_game_plays_the_same_after_other_games_as_alone(harness, game):
    # On the 7th duel, game 6 after games 0 to 5 differed from game 6 in a fresh process; in
    # evaluate's game loop, until it restarted each policy too, game 2 after games 0 and 1.
    after = _moves(load("7th", "duel"), range(game + 1), harness)[game]
    alone = _moves(load("7th", "duel"), [game], harness)[game]  # new rules: nothing remembered
    assert after == alone


def test_play_game_restarts_each_policy_once_per_game():
    rules = load("8th", "single-phase")
    both = RestartCounter()
    split = resolve_policy("smite-first+deny-never", rules)
    split.caster = RestartCounter()  # a part of a split policy is restarted through it
    for game in range(3):
        play_game(rules, [both, both], np.random.default_rng(game))
        play_game(rules, [split, both], np.random.default_rng(game))
    assert both.restarts == 6 and split.caster.restarts == 3


def test_the_evaluation_harness_restarts_each_policy_once_per_game():
    # evaluate plays through play_crn, not play_game: it never restarted a policy before.
    from psygym_experiments.harness.games import play_crn

    rules = load("8th", "single-phase")
    both, other = RestartCounter(), RestartCounter()
    for game in range(3):
        play_crn(rules, [both, both], seed=game)
        play_crn(rules, [other, both], seed=game)
    assert both.restarts == 6 and other.restarts == 3


def test_a_state_whose_rest_did_not_fit_is_not_solved_again_in_a_later_game(monkeypatch):
    # A restart forgets the failed units; the failed states stay, so a game played again does
    # not pay again for solves known not to fit, and plays the same moves.
    from psygym_agents.solvers import search

    rules = load("7th", "duel")
    first = _moves(rules, [0])[0]
    known = {s for s, budget in search._fit_of(rules).failed_states}
    assert known  # the duel's early rests are far past the budget
    fresh, solved = set(), []
    real_solver, real_solve = search.Solver, search._solve_for

    def solver(*args, **kwargs):
        made = real_solver(*args, **kwargs)
        if "within" not in kwargs:  # a solve of the rest of the game (fitted_solver)
            fresh.add(id(made))
        return made

    def solve(made, rules, state):
        if id(made) in fresh:
            solved.append(state)
        return real_solve(made, rules, state)

    monkeypatch.setattr(search, "Solver", solver)
    monkeypatch.setattr(search, "_solve_for", solve)
    assert _moves(rules, [0])[0] == first
    assert not known.intersection(solved)
