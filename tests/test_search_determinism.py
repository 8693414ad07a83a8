"""``search``'s moves depend on the game's own history, never on the games played before it.

``search`` remembers, per rules object, the units of lookahead where an exact solve of the rest
of the game did not fit. Kept across games, that memory made a game's moves depend on which
games the process had played before: ``evaluate`` gave other numbers with ``--workers 2``, or
after ``--resume``. :func:`psygym.core.play_game` now restarts each policy as a game starts.
"""

from __future__ import annotations

import numpy as np
from helpers import RestartCounter

from psygym.core import play_game
from psygym.editions import load
from psygym.policies import resolve_policy


def _moves(rules, seeds) -> dict[int, list[int]]:
    """Every transition of the games ``seeds`` (search against double-wc, seats alternating)."""
    search, other = resolve_policy("search", rules), resolve_policy("double-wc", rules)
    out = {}
    for i in seeds:
        out[i] = moves = []
        players = [search, other] if i % 2 == 0 else [other, search]
        play_game(
            rules, players, np.random.default_rng(i), on_step=lambda s, a, e, m=moves: m.append(a)
        )
    return out


def test_a_game_plays_the_same_after_other_games_as_alone():
    # On the 7th duel, game 6 after games 0 to 5 differed from game 6 in a fresh process.
    after = _moves(load("7th", "duel"), range(7))[6]
    alone = _moves(load("7th", "duel"), [6])[6]  # new rules: nothing remembered
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
