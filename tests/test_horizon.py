"""``RulesBase.horizon``: the unit of the search's lookahead, per edition (one cast or one turn)."""

from __future__ import annotations

import random

import pytest

import psygym
from psygym.core import CHANCE, TERMINAL


def _play(rules, seed):
    rng = random.Random(seed)
    s = rules.initial_state()
    path = [s]
    while rules.current_player(s) != TERMINAL:
        if rules.current_player(s) == CHANCE:
            outs = rules.chance_outcomes(s)
            a = rng.choices([o for o, _ in outs], [p for _, p in outs])[0]
        else:
            a = rng.choice(rules.legal_actions(s))
        s = rules.apply(s, a)
        path.append(s)
    return path


@pytest.mark.parametrize("edition", ["7th", "8th", "rt"])
def test_horizon_never_decreases_and_rounds_follow_the_game(edition):
    rules = psygym.load(edition, "duel")
    rounds = rules.scenario.game.battle_rounds if edition != "rt" else 3
    for seed in range(15):
        path = [s for s in _play(rules, seed) if rules.current_player(s) != TERMINAL]
        marks = [rules.horizon(s) for s in path]
        assert marks == sorted(marks)
        assert {r for r, _ in marks} <= set(range(rounds + 1))


@pytest.mark.parametrize("edition", ["7th", "8th"])
def test_one_step_is_one_cast(edition):
    """A step ends exactly when a cast has been resolved and its player chooses again."""
    rules = psygym.load(edition, "duel")
    for seed in range(10):
        path = [s for s in _play(rules, seed) if rules.current_player(s) != TERMINAL]
        for before, after in zip(path, path[1:]):
            if rules.horizon(after) == rules.horizon(before) or rules.horizon(after)[0] == 0:
                continue  # round 0 is 7th power generation: one step per generated power
            # The new step starts at a choice of the active side or at a chance node that opens
            # the next phase, never inside a cast (a deny, an effect roll).
            assert not rules.is_response(after)
            if rules.current_player(after) >= 0:
                assert rules.current_player(after) == after.active


def test_rogue_trader_steps_are_player_turns():
    rules = psygym.load("rt", "duel")
    for seed in range(10):
        for s in _play(rules, seed):
            if rules.current_player(s) != TERMINAL:
                assert rules.horizon(s) == (s.turn // 2 + 1, s.turn % 2)


def test_the_default_horizon_is_the_whole_game():
    from psygym.core import RulesBase

    rules = psygym.load("2nd", "smite-skirmish")  # its own horizon is per Psychic phase
    assert {RulesBase.horizon(rules, s) for s in _play(rules, 0)} == {(0, 0)}


def test_second_edition_steps_are_psychic_phases():
    rules = psygym.load("2nd", "smite-skirmish")
    for seed in range(5):
        for s in _play(rules, seed)[1:]:
            if rules.current_player(s) != TERMINAL and s.stage != 0:  # 0: set-up, round 0
                assert rules.horizon(s) == (s.phase // 2 + 1, s.phase % 2)
