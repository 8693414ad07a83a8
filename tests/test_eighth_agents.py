"""8th-edition heuristics (agents/eighth.py): names, legal play, and what each rule does."""

from __future__ import annotations

import numpy as np
import pytest
from psygym_agents.base import RandomPolicy
from psygym_agents.eighth.heuristics import HEURISTICS, attempt_value

from psygym.core import TERMINAL, play_game
from psygym.editions import load
from psygym.editions.eighth import rules_from_data
from psygym.editions.eighth.state import Stage
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


def test_save_deny_for_best_holds_the_deny_for_a_bigger_power():
    # Red: the Acolyte's Smite first, the Seer's Doom (value 3) still to come.
    rules = make(
        [
            {"name": "Acolyte", "wounds": 2, "position": [0, 0], "psyker": True},
            {"name": "Seer", "wounds": 4, "position": [2, 0], "psyker": True, "powers": ["Doom"]},
        ],
        [{"name": "Witch", "wounds": 6, "position": [0, 12], "psyker": True, "deny": 1}],
    )
    saver = resolve_policy("save-deny-for-best", rules)
    always = resolve_policy("deny-always", rules)
    s = rules.apply(rules.initial_state(), 0)  # Acolyte
    s = rules.apply(s, rules.cast_action("Smite", 2))
    s = rules.apply(s, 6)
    assert s.stage == Stage.DENY
    assert saver.choose(rules, s, 1) == rules.NO_DENY  # Doom (3) is worth more than a D3 Smite
    assert always.choose(rules, s, 1) == rules.DENY + 2
    # Against the Seer's Doom itself (nothing bigger to come) it denies.
    s = rules.apply(s, rules.NO_DENY)
    s = rules.apply(s, 1)  # Smite deals 1
    s = rules.apply(s, 1)  # select the Seer
    s = rules.apply(s, rules.cast_action("Doom", 2))
    s = rules.apply(s, 8)
    assert saver.choose(rules, s, 1) == rules.DENY + 2


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
    from psygym.kernel import evolve

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
