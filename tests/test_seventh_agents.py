"""7th-edition heuristics (agents/seventh.py): dice rules, deny rules, combos, registry."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from itertools import product

import numpy as np
import pytest
from helpers import act, choose, force, psyker7, rules_from, scenario7, unit7
from psygym_agents.base import DeterministicPolicy, RandomPolicy
from psygym_agents.seventh import BOTS
from psygym_agents.seventh.heuristics import (
    HEURISTICS,
    expected_value,
    fair_deny_dice,
    ranked_casts,
)
from psygym_experiments.simulate import run_games

import psygym
from psygym.core import CHANCE, TERMINAL, sample_action
from psygym.editions.seventh.state import Stage
from psygym.policies import SplitPolicy, agent_names, resolve_policy

F = Fraction
POWERS = ["Smite", "Psychic Maelstrom", "Summoning", "Enfeeble", "Invisibility", "Dominate"]
WC = {"Smite": 1, "Psychic Maelstrom": 2, "Summoning": 3}


@pytest.fixture(scope="module")
def rules():
    """An ML4 Librarian (pool up to 10) with WC1-3 powers; a Seer (ML1) and a squad deny."""
    return rules_from(
        scenario7(
            [
                unit7("Lib", wounds=3, psyker=psyker7(4, powers=POWERS, daemon=True)),
                unit7("Guard", (2, 0), models=5),
            ],
            [
                unit7("Seer", (0, 10), wounds=2, psyker=psyker7(1, powers=["Smite"])),
                unit7("Squad", (4, 10), models=5),
            ],
        )
    )


def select_state(rules, pools=(10, 4)):
    s = force(rules, rules.initial_state(), 6)
    return replace(s, pools=pools)


def dice_state(rules, power: str, pool: int):
    label = (
        "Lib: Summoning (WC 3)"
        if power == "Summoning"
        else f"Lib: {power} (WC {WC[power]}) at Seer"
    )
    s = choose(rules, select_state(rules), label)
    assert s.stage == Stage.DICE
    return replace(s, pools=(pool, 4))


def deny_state(rules, label: str, successes: int, deny_pool: int = 4):
    s = choose(rules, select_state(rules), label)
    s = act(rules, s, rules.DICE + max(successes, 1) + 1)
    s = force(rules, s, 2 * successes)
    assert s.stage == Stage.DENY
    return replace(s, pools=(s.pools[0], deny_pool))


def committed(rules, policy, s) -> int:
    a = policy.choose(rules, s, s.active)
    assert a in rules.legal_actions(s)
    return a - rules.DICE + 1


def denied_with(rules, policy, s) -> int:
    a = policy.choose(rules, s, 1 - s.active)
    assert a in rules.legal_actions(s)
    return a - rules.DENY


# ----------------------------------------------------------------------------- dice rules
DICE_RULES = {
    "double-wc": lambda wc, pool: min(pool, 2 * wc),
    "double-wc-plus1": lambda wc, pool: min(pool, 2 * wc + 1),
    "minimum": lambda wc, pool: wc,
    "all-in": lambda wc, pool: pool,
    "deny-always": lambda wc, pool: min(pool, 2 * wc),  # deniers cast like double-wc
    "deny-never": lambda wc, pool: min(pool, 2 * wc),
}


@pytest.mark.parametrize("name", sorted(DICE_RULES))
@pytest.mark.parametrize("power", ["Smite", "Psychic Maelstrom", "Summoning"])
def test_dice_committed_by_each_heuristic(rules, name, power):
    """double-wc: 2 x WC (clipped by the pool); minimum: WC; all-in: all; plus1: 2 x WC + 1."""
    policy = HEURISTICS[name](rules)
    wc = WC[power]
    for pool in range(wc, 11):
        got = committed(rules, policy, dice_state(rules, power, pool))
        assert got == DICE_RULES[name](wc, pool), f"{name}, WC{wc}, pool {pool}"


@pytest.mark.parametrize("name", sorted(DICE_RULES))
def test_casting_heuristics_stop_when_nothing_is_affordable(rules, name):
    """With one die left and only WC2/WC3 powers unattempted, every heuristic ends the phase."""
    policy = HEURISTICS[name](rules)
    s = select_state(rules, pools=(1, 4))
    attempted = {(0, rules.power_index[p]) for p in ("Smite", "Enfeeble", "Dominate")}
    s = replace(s, attempted=frozenset(attempted))
    assert policy.choose(rules, s, 0) == 0
    s = replace(s, pools=(2, 4))
    a = policy.choose(rules, s, 0)
    assert a != 0
    assert rules.describe(s, a).warp_charge <= 2


@pytest.mark.parametrize("name", sorted(DICE_RULES))
def test_casting_heuristics_pick_the_best_affordable_power(rules, name):
    policy = HEURISTICS[name](rules)
    for pool in range(1, 11):
        s = select_state(rules, pools=(pool, 4))
        a = policy.choose(rules, s, 0)
        affordable = [(v, act_, wc) for v, act_, wc in ranked_casts(rules, s) if wc <= pool]
        assert a == affordable[0][1]
        assert all(v <= affordable[0][0] for v, _, _ in affordable)


def test_expected_value_of_value_powers_and_attacks(rules):
    s = select_state(rules)
    idx = rules.power_index
    assert expected_value(rules, s, 0, idx["Invisibility"], 1) == 3
    assert expected_value(rules, s, 0, idx["Enfeeble"], 2) == 2
    # Smite at the Seer: 4 hits, BS4 3+, S4 v T4 4+, AP2 removes the 7+ save: p = 1/3, cap 2,
    # each wound worth 1
    from psygym.combat import wound_distribution
    from psygym.dice import mean

    expected = float(mean(wound_distribution(4, F(1, 3), 1, cap=2)))
    assert expected_value(rules, s, 0, idx["Smite"], 2) == pytest.approx(expected)


# ----------------------------------------------------------------------------- deny rules
def p_at_least(k: int, m: int, threshold: int) -> Fraction:
    return F(
        sum(1 for r in product(range(1, 7), repeat=m) if sum(x >= threshold for x in r) >= k), 6**m
    )


def fair(k: int, pool: int, threshold: int) -> int:
    # Rule change (deny keeps its dice): fewer dice than successes can never deny (7E-5.3).
    if pool < k:
        return 0
    for m in range(1, pool + 1):
        if p_at_least(k, m, threshold) >= F(1, 2):
            return m
    return pool


def test_fair_deny_dice_is_the_fewest_dice_for_an_even_chance():
    for threshold in (3, 4, 5, 6):
        for k in (1, 2, 3):
            for pool in (1, 3, 5):
                assert fair_deny_dice(pool, k, threshold) == fair(k, pool, threshold)


def test_fair_deny_keeps_its_dice_when_the_deny_cannot_succeed():
    """Rule change: 2 dice against 3 successes cannot negate them all (7E-5.3): deny with 0."""
    assert fair_deny_dice(2, 3, 3) == 0
    assert fair_deny_dice(3, 3, 3) == 3  # possible but below an even chance: all dice, as before


@pytest.mark.parametrize("successes,pool,expected", [(1, 4, 2), (2, 4, 4), (1, 1, 1), (3, 6, 6)])
def test_double_wc_denies_at_a_psyker_target(rules, successes, pool, expected):
    """Enfeeble at the Seer (ML1 psyker v an ML4 caster: 5+): fewest dice for >= 1/2, else all."""
    s = deny_state(rules, "Lib: Enfeeble (WC 1) at Seer", successes, pool)
    assert rules.deny_unit_and_threshold(s, s.cast)[1] == 5
    assert expected == fair(successes, pool, 5)
    assert denied_with(rules, HEURISTICS["double-wc"](rules), s) == expected


@pytest.mark.parametrize("successes,pool,expected", [(1, 4, 4), (2, 4, 4), (1, 1, 1), (3, 2, 0)])
def test_deny_always_throws_every_die_at_every_deniable_power(rules, successes, pool, expected):
    """Rule change: deny-always now differs from double-wc: all dice left, 0 when hopeless."""
    s = deny_state(rules, "Lib: Enfeeble (WC 1) at Seer", successes, pool)
    assert denied_with(rules, HEURISTICS["deny-always"](rules), s) == expected


def test_hopeless_deny_keeps_its_dice_in_the_deny_step(rules):
    """2 dice against 3 successes: every denying heuristic answers 0 and the pool stays at 2."""
    s = deny_state(rules, "Lib: Enfeeble (WC 1) at Seer", 3, 2)
    for name in ("double-wc", "deny-always", "deny-big:0"):
        a = resolve_policy(name, rules).choose(rules, s, 1 - s.active)
        assert a == rules.actions.deny(0)
        after = rules.apply(s, a)
        assert after.pools[1] == 2


@pytest.mark.parametrize("name", ["double-wc", "double-wc-plus1", "minimum", "all-in"])
def test_casters_deny_like_double_wc(rules, name):
    s = deny_state(rules, "Lib: Enfeeble (WC 1) at Seer", 1, 4)
    assert denied_with(rules, HEURISTICS[name](rules), s) == 2


def test_deny_never_never_denies(rules):
    policy = HEURISTICS["deny-never"](rules)
    for label, wc in (
        ("Lib: Enfeeble (WC 1) at Seer", 1),
        ("Lib: Invisibility (WC 2) at Guard", 2),
        ("Lib: Summoning (WC 3)", 3),
    ):
        for k in range(wc, 4):
            for pool in (1, 4, 8):
                assert denied_with(rules, policy, deny_state(rules, label, k, pool)) == 0


def test_deny_never_in_played_games():
    """Over 200 single-phase games, the deny-never side never makes a deny attempt."""
    r = psygym.load("7th", "single-phase")
    stats = run_games(
        r,
        [resolve_policy("double-wc", r), resolve_policy("deny-never", r)],
        200,
        0,
        show_progress=False,
    )
    assert stats.deny_attempts == [0, 0]
    always = run_games(
        r,
        [resolve_policy("double-wc", r), resolve_policy("deny-always", r)],
        200,
        0,
        show_progress=False,
    )
    assert always.deny_attempts[1] > 0


@pytest.mark.parametrize(
    "spec,label,denies",
    [
        ("deny-big", "Lib: Enfeeble (WC 1) at Seer", False),  # value 2: not above 2
        ("deny-big", "Lib: Dominate (WC 1) at Seer", False),  # 1.5
        ("deny-big", "Lib: Invisibility (WC 2) at Guard", True),  # 3
        ("deny-big", "Lib: Summoning (WC 3)", True),  # 3
        ("deny-big:1", "Lib: Enfeeble (WC 1) at Seer", True),
        ("deny-big:1", "Lib: Dominate (WC 1) at Seer", True),
        ("deny-big:5", "Lib: Invisibility (WC 2) at Guard", False),
        ("deny-big:2.5", "Lib: Summoning (WC 3)", True),
    ],
)
def test_deny_big_denies_only_above_its_threshold(rules, spec, label, denies):
    policy = resolve_policy(spec, rules)
    successes = 3 if "Summoning" in label else 2 if "Invisibility" in label else 1
    s = deny_state(rules, label, successes, 5)
    m = denied_with(rules, policy, s)
    if denies:
        _, threshold = rules.deny_unit_and_threshold(s, s.cast)
        assert m == fair(successes, 5, threshold) > 0
    else:
        assert m == 0


def test_combined_spec_casts_like_the_first_and_denies_like_the_second(rules):
    combo = resolve_policy("double-wc+deny-never", rules)
    assert isinstance(combo, SplitPolicy) and combo.name == "double-wc+deny-never"
    d = deny_state(rules, "Lib: Enfeeble (WC 1) at Seer", 1, 4)
    assert combo.action_probabilities(rules, d, 1) == {rules.DENY: 1.0}
    assert HEURISTICS["double-wc"](rules).choose(rules, d, 1) == rules.DENY + 2  # differs
    c = dice_state(rules, "Psychic Maelstrom", 7)
    assert combo.action_probabilities(rules, c, 0) == {rules.DICE + 3: 1.0}
    other = resolve_policy("all-in+deny-always", rules)
    assert other.action_probabilities(rules, c, 0) == {rules.DICE + 6: 1.0}
    # Rule change (deny-always has its own meaning): every die left, 4 here.
    assert other.action_probabilities(rules, d, 1) == {rules.DENY + 4: 1.0}


# ----------------------------------------------------------------------------- generation, legality
def test_generation_decisions_roll_on_the_first_discipline_and_keep():
    rules = psygym.load("7th", "duel")
    s = rules.initial_state()
    assert s.stage == Stage.DISCIPLINE
    policy = HEURISTICS["double-wc"](rules)
    assert policy.choose(rules, s, 0) == rules.legal_actions(s)[0]
    s = rules.apply(s, rules.legal_actions(s)[0])
    s = rules.apply(s, rules.chance_outcomes(s)[0][0])
    if s.stage == Stage.SWAP:
        assert policy.choose(rules, s, 0) == rules.SWAP


@pytest.mark.parametrize("name", sorted(HEURISTICS))
def test_every_heuristic_plays_only_legal_actions(name):
    rng = np.random.default_rng(sorted(HEURISTICS).index(name))
    for scenario, games in (("single-phase", 40), ("duel", 4)):
        rules = psygym.load("7th", scenario)
        players = [HEURISTICS[name](rules), RandomPolicy()]
        for game in range(games):
            seat = game % 2
            policies = players if seat == 0 else players[::-1]
            s = rules.initial_state()
            while rules.current_player(s) != TERMINAL:
                p = rules.current_player(s)
                if p == CHANCE:
                    a = rules.sample_chance(s, rng)
                else:
                    a = sample_action(policies[p], rules, s, p, rng)
                s = rules.apply(s, a)  # raises on an illegal action


def test_double_wc_beats_random_as_the_caster():
    """400 single-phase games each (seed 0): double-wc scores far more than a random caster."""
    r = psygym.load("7th", "single-phase")
    smart = run_games(
        r, [resolve_policy("double-wc", r), RandomPolicy()], 400, 0, show_progress=False
    )
    dumb = run_games(r, [RandomPolicy(), RandomPolicy()], 400, 0, show_progress=False)
    assert np.mean(smart.scores) > np.mean(dumb.scores) + 0.5


# ----------------------------------------------------------------------------- registry
def test_registry_exposes_every_heuristic(rules):
    expected = {
        "double-wc",
        "double-wc-plus1",
        "all-in",
        "minimum",
        "deny-always",
        "deny-never",
        "deny-big",
    }
    assert set(HEURISTICS) == expected
    assert expected <= set(BOTS.heuristics)  # the edition's manifest declares them all
    assert expected | {"random"} <= set(agent_names(rules))
    for name in expected:
        policy = resolve_policy(name, rules)
        assert isinstance(policy, DeterministicPolicy) and policy.name == name
        assert repr(policy) == f"<policy {name}>"
    assert isinstance(resolve_policy("random", rules), RandomPolicy)


def test_deterministic_policy_gives_one_action_with_probability_one(rules):
    s = select_state(rules)
    probs = HEURISTICS["double-wc"](rules).action_probabilities(rules, s, 0)
    assert len(probs) == 1 and list(probs.values()) == [1.0]


def test_heuristic_at_a_chance_node_is_an_error(rules):
    with pytest.raises(ValueError, match="no decision at stage PHASE_ROLL"):
        HEURISTICS["double-wc"](rules).choose(rules, rules.initial_state(), 0)
