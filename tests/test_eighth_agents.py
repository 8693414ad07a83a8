"""8th-edition heuristics (agents/eighth.py): names, legal play, and what each rule does."""

from __future__ import annotations

from fractions import Fraction as F

import numpy as np
import pytest
from psygym_agents.base import RandomPolicy
from psygym_agents.eighth.heuristics import (
    HEURISTICS,
    attempt_value,
    deny_gain,
    deny_now_value,
    future_deny_gains,
)

from psygym.core import TERMINAL, play_game
from psygym.editions import load
from psygym.editions.eighth import rules_from_data
from psygym.editions.eighth.state import Stage
from psygym.kernel import evolve
from psygym.policies import SplitPolicy, resolve_policy


def make(side0, side1, **game):
    data = {
        "edition": "8th",
        "name": "test",
        "game": game,
        "sides": [{"name": "Red", "units": side0}, {"name": "Blue", "units": side1}],
    }
    return rules_from_data(data, "test.toml")


def test_heuristic_names():
    assert set(HEURISTICS) == {
        "smite-first",
        "best-power-first",
        "cheapest-first",
        "deny-always",
        "deny-never",
        "deny-high-roll",
        "save-deny-for-best",
    }


@pytest.mark.parametrize("name", sorted(HEURISTICS))
@pytest.mark.parametrize("scenario", ["duel", "smite-spam"])
def test_heuristics_play_legal_moves(name, scenario):
    rules = load("8th", scenario)
    me = resolve_policy(name, rules)
    assert me.name == name
    rng = np.random.default_rng(1)
    for seat in (0, 1):
        for _ in range(4):
            s = rules.initial_state()
            while rules.current_player(s) != TERMINAL:
                p = rules.current_player(s)
                if p == seat:
                    (a,) = me.action_probabilities(rules, s, p)
                    s = rules.apply(s, a)  # checked: raises if illegal
                elif p >= 0:
                    s = rules.apply(s, int(rng.choice(rules.legal_actions(s))))
                else:
                    s = rules.apply(s, rules.sample_chance(s, rng))


def deny_counts(rules, caster, denier, games=100, seed=0):
    counts = {"deny_attempt": 0, "deny_chances": 0, "low": 0}

    def on_step(s, a, events):
        if s.stage == Stage.DENY and s.active == 0:
            counts["deny_chances"] += 1
            if a != rules.NO_DENY and s.total < 7:
                counts["low"] += 1
        counts["deny_attempt"] += sum(e.kind == "deny_attempt" and e.player == 1 for e in events)

    rng = np.random.default_rng(seed)
    for _ in range(games):
        play_game(rules, [caster, denier], rng, on_step=on_step)
    return counts


def test_deny_rules():
    rules = load("8th", "smite-spam")
    caster = resolve_policy("smite-first", rules)
    never = deny_counts(rules, caster, resolve_policy("deny-never", rules))
    assert never["deny_attempt"] == 0 and never["deny_chances"] > 0
    always = deny_counts(rules, caster, resolve_policy("deny-always", rules))
    assert always["deny_attempt"] == always["deny_chances"] > 0
    high = deny_counts(rules, caster, resolve_policy("deny-high-roll", rules))
    assert high["low"] == 0 and high["deny_attempt"] > 0
    nine = resolve_policy("deny-high-roll:9", rules)
    s = rules.apply(rules.initial_state(), 0)
    s = rules.apply(s, rules.cast_action("Smite", 4))
    s8, s9 = rules.apply(s, 8), rules.apply(s, 9)
    assert nine.choose(rules, s8, 1) == rules.NO_DENY
    assert nine.choose(rules, s9, 1) == rules.DENY + 4


def _smite_pending(rules, total):
    """The Acolyte (unit 0) has Smitten the closest enemy and rolled ``total``: a DENY decision."""
    witch = rules.names.index("Witch")
    s = rules.apply(rules.initial_state(), 0)
    s = rules.apply(s, rules.cast_action("Smite", witch))
    s = rules.apply(s, total)
    assert s.stage == Stage.DENY
    return s


def _seer_rules(**unit):
    # Red: the Acolyte's Smite first (D3, mean 2), the Seer's Doom (value 3) still to come.
    return make(
        [
            {"name": "Acolyte", "wounds": 2, "position": [0, 0], "psyker": True},
            {"name": "Seer", "wounds": 4, "position": [2, 0], "psyker": True, "powers": ["Doom"]},
        ],
        [{"name": "Witch", "wounds": 6, "position": [0, 12], "psyker": True, "deny": 1, **unit}],
    )


# Deny chances (8E-5.2): P(2D6 > t) for t = 5, 8, 9, 11.
DENY = {5: F(26, 36), 8: F(10, 36), 9: F(6, 36), 11: F(1, 36)}
# A deny kept for Doom (WC 7, value 3): 3 x sum over T >= 7 of P(T) x P(2D6 > T) = 3 x 175/1296
# (8E-4.1): a deny kept for a test that then fails saves nothing.
DOOM_KEPT = 3 * F(6 * 15 + 5 * 10 + 4 * 6 + 3 * 3 + 2 * 1, 36 * 36)
# A deny kept for the Seer's Smite at WC 6 on the Witch (see test_deny_gain_weighs_...).
SEER_SMITE_KEPT = F(563, 1296)


def test_save_deny_for_best_denies_a_5_when_nothing_worth_more_is_to_come():
    # The issue: a Smite test of 5 (deny chance 13/18) was let through for the Seer's Doom
    # because Doom's stake (3) beat Smite's (2), though a deny beats a passing Doom test only
    # 25/108 of the time. Deny now: 13/18 x 2 = 13/9 > keep (the best future use): 563/1296.
    rules = _seer_rules()
    s = _smite_pending(rules, 5)
    assert DENY[5] == F(13, 18)
    assert deny_now_value(rules, s) == pytest.approx(float(DENY[5] * 2))
    assert DOOM_KEPT == F(175, 432)
    # The Seer (manifest 1) is counted once, with its better use: its Smite at WC 6 (563/1296,
    # see below) rather than Doom (175/432).
    assert future_deny_gains(rules, s) == pytest.approx([float(SEER_SMITE_KEPT)])
    saver = resolve_policy("save-deny-for-best", rules)
    assert saver.choose(rules, s, 1) == rules.DENY + 2


def test_save_deny_for_best_keeps_its_deny_against_an_11():
    # The issue: a D6 Smite (test 11, 8E-7.1; stake 3.5 > Doom's 3) was denied at 1/36.
    # Deny now: 1/36 x 3.5 = 7/72 < keep for the Seer: 563/1296.
    rules = _seer_rules()
    s = _smite_pending(rules, 11)
    assert deny_now_value(rules, s) == pytest.approx(float(DENY[11] * F(7, 2)))
    saver = resolve_policy("save-deny-for-best", rules)
    assert saver.choose(rules, s, 1) == rules.NO_DENY
    assert resolve_policy("deny-always", rules).choose(rules, s, 1) == rules.DENY + 2
    # Against the Seer's Doom itself (nothing to come) it denies.
    s = rules.apply(s, rules.NO_DENY)
    s = rules.apply(s, 4)  # Smite's D6 deals 4
    s = rules.apply(s, 1)  # select the Seer
    s = rules.apply(s, rules.cast_action("Doom", 2))
    s = rules.apply(s, 8)
    assert future_deny_gains(rules, s) == []
    assert saver.choose(rules, s, 1) == rules.DENY + 2


def test_deny_gain_weighs_each_total_with_its_effect():
    # The Seer's Smite at WC 6 (one Smite already attempted, 8E-4.2) on the 6-wound Witch: D3
    # on 6..10, D6 on 11 (8E-7.1): sum of P(T) x P(deny beats T) x mean effect over T >= 6.
    # Not stake x mean deny chance: the D6 comes with the hardest tests to deny.
    rules = _seer_rules()
    s = _smite_pending(rules, 5)
    d3 = 2 * (5 * 21 + 6 * 15 + 5 * 10 + 4 * 6 + 3 * 3)
    d6 = F(7, 2) * (2 * 1 + 1 * 0)
    expected = F(d3, 1296) + d6 / 1296
    assert expected == SEER_SMITE_KEPT
    smite = rules.cast_action("Smite", rules.names.index("Witch"))
    assert deny_gain(rules, s, 1, smite) == pytest.approx(float(expected))


def test_future_deny_gains_count_a_power_once_per_army():
    # Two Seers know Doom, but only one can attempt it this round (8E-3.2); both are out of
    # Smite range (20" > 18") yet within deny range (24", 8E-5.1), so they have no other use.
    rules = make(
        [
            {"name": "Acolyte", "wounds": 2, "position": [0, 0], "psyker": True},
            {"name": "Seer", "wounds": 4, "position": [2, -8], "psyker": True, "powers": ["Doom"]},
            {
                "name": "Oracle",
                "wounds": 4,
                "position": [0, -8],
                "psyker": True,
                "powers": ["Doom"],
            },
        ],
        [{"name": "Witch", "wounds": 6, "position": [0, 12], "psyker": True, "deny": 2}],
    )
    s = _smite_pending(rules, 5)
    assert future_deny_gains(rules, s) == pytest.approx([float(DOOM_KEPT)])


def test_save_deny_for_best_compares_with_the_kth_best_future_use():
    # Still to come: the Seer's Smite (563/1296, better than its Doom), the Mystic's Psychic
    # Fortress (value 1, WC 5: 1 x 384/1296 = 8/27) and the Sage's Veil of Time (value 0.5
    # here, WC 6: 0.5 x 280/1296 = 35/324); Mystic and Sage are out of Smite range but within
    # deny range.
    rules = make(
        [
            {"name": "Acolyte", "wounds": 2, "position": [0, 0], "psyker": True},
            {"name": "Seer", "wounds": 4, "position": [2, 0], "psyker": True, "powers": ["Doom"]},
            {
                "name": "Mystic",
                "wounds": 2,
                "position": [0, -8],
                "psyker": True,
                "powers": ["Psychic Fortress"],
            },
            {
                "name": "Sage",
                "wounds": 2,
                "position": [2, -8],
                "psyker": True,
                "powers": ["Veil of Time"],
            },
        ],
        [{"name": "Witch", "wounds": 6, "position": [0, 12], "psyker": True, "deny": 2}],
        power_values={"Veil of Time": 0.5},
    )
    future = [SEER_SMITE_KEPT, F(8, 27), F(35, 324)]
    assert F(384, 1296) == future[1] and F(1, 2) * F(280, 1296) == future[2]
    saver = resolve_policy("save-deny-for-best", rules)
    witch = rules.names.index("Witch")

    def choice(total, denies):
        s = evolve(_smite_pending(rules, total), deny_left=(0, 0, 0, 0, denies))
        assert future_deny_gains(rules, s) == pytest.approx([float(f) for f in future])
        return saver.choose(rules, s, 1)

    # A test of 9: deny now 6/36 x 2 = 1/3, between the best (563/1296) and the 2nd (8/27).
    assert future[1] < DENY[9] * 2 < future[0]
    assert choice(9, 2) == rules.DENY + witch  # k = 2: 1/3 >= 8/27
    assert choice(9, 1) == rules.NO_DENY  # k = 1: 1/3 < 563/1296
    # A test of 10: deny now 3/36 x 2 = 1/6, between the 2nd (8/27) and the 3rd (35/324).
    assert future[2] < F(3, 36) * 2 < future[1]
    assert choice(10, 2) == rules.NO_DENY  # k = 2: 1/6 < 8/27 (not the worst future use)
    assert choice(10, 3) == rules.DENY + witch  # k = 3: 1/6 >= 35/324
    # A test of 11 (Smite's D6, mean 3.5): 1/36 x 7/2 = 7/72 < 35/324, the worst future use.
    assert F(1, 36) * F(7, 2) < future[2]
    assert choice(11, 3) == rules.NO_DENY
    assert choice(11, 4) == rules.DENY + witch  # more denies than future attempts


def test_casting_orders():
    rules = load("8th", "duel")
    s = rules.apply(rules.initial_state(), 0)  # Librarian: Smite, Might of Heroes, Null Zone
    choose = {
        name: rules.describe(s, resolve_policy(name, rules).choose(rules, s, 0))
        for name in ("smite-first", "best-power-first", "cheapest-first")
    }
    assert choose["smite-first"].power == "Smite"
    assert choose["cheapest-first"].power == "Smite"  # WC 5 < 6 < 8
    legal = [a for a in rules.legal_actions(s) if a != rules.STOP]
    best = max(legal, key=lambda a: attempt_value(rules, s, 0, a))
    assert choose["best-power-first"].power == rules.describe(s, best).power
    # After a Smite, cheapest-first takes Might of Heroes (WC 6) before Null Zone (WC 8).
    s = rules.apply(s, rules.cast_action("Smite", rules.names.index("Guardian Defenders")))
    s = rules.apply(s, 3)
    a = resolve_policy("cheapest-first", rules).choose(rules, s, 0)
    assert rules.describe(s, a).power == "Might of Heroes"


def test_hopeless_attempts_are_not_made():
    # Smite at WC 13+ can never pass: the heuristic stops instead (value only Perils).
    rules = load("8th", "smite-spam")
    s = rules.apply(rules.initial_state(), 0)
    s = rules.apply(s, rules.cast_action("Smite", 4))
    p = rules.power_index["Smite"]
    s = evolve(rules.apply(s, 3), attempts=(8,))
    assert rules.warp_charge(s, p) == 13
    assert resolve_policy("smite-first", rules).choose(rules, s, 0) == rules.END_PHASE


def test_split_and_beats_random():
    rules = load("8th", "duel")
    split = resolve_policy("smite-first+deny-never", rules)
    assert isinstance(split, SplitPolicy)
    rng = np.random.default_rng(3)
    best = resolve_policy("best-power-first", rules)
    scores = [rules.returns(play_game(rules, [best, RandomPolicy()], rng))[0] for _ in range(200)]
    # A clear edge: random players waste attempts and never hold denies sensibly.
    assert np.mean(scores) > 3
