"""Rogue Trader: the public action layout, chance tables, game info, events and views."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from helpers import exact_outcomes
from psygym_agents.base import RandomPolicy
from psygym_agents.rogue_trader.heuristics import HEURISTICS, _expected_effect

from psygym.core import CHANCE, TERMINAL, EventKind, Information, play_game
from psygym.editions import load
from psygym.editions.rogue_trader import rules_from_data
from psygym.editions.rogue_trader.actions import (
    ABILITY_BASE,
    END,
    REST,
    ActionKind,
    Decoded,
    encode_ability,
)
from psygym.editions.rogue_trader.state import Phase
from psygym.kernel import evolve, weighted_choice

RANDOM_SETUP = {
    "edition": "rt",
    "name": "random-setup",
    "game": {
        "turns": 6,
        "psi_level": "random",
        "ability_count": "random",
        "abilities_per_turn": 2,
    },
    "sides": [
        {
            "name": "A",
            "units": [
                {
                    "name": "Seer",
                    "wounds": 2,
                    "position": [0.0, 0.0],
                    "mastery": 2,
                    "intelligence": 4,
                    "abilities": "random",
                },
                {
                    "name": "Adept",
                    "wounds": 1,
                    "position": [1.0, 0.0],
                    "mastery": 3,
                    "intelligence": 6,
                    "abilities": "random",
                },
            ],
        },
        {
            "name": "B",
            "units": [
                {"name": "Grunts", "models": 3, "wounds": 1, "position": [6.0, 0.0]},
                {
                    "name": "Witch",
                    "wounds": 2,
                    "position": [5.0, 1.0],
                    "mastery": 4,
                    "intelligence": 9,
                    "abilities": "random",
                },
            ],
        },
    ],
}


def all_rules():
    return [
        load("rt", "duel"),
        load("rt", "psyker-vs-squad"),
        rules_from_data(RANDOM_SETUP, "<random-setup>"),
    ]


def random_states(rules, games: int, seed: int):
    """Every state of ``games`` random playouts (RandomPolicy for both sides)."""
    rng = np.random.default_rng(seed)
    states = []
    for _ in range(games):
        play_game(
            rules,
            [RandomPolicy(), RandomPolicy()],
            rng,
            on_step=lambda s, a, e: states.append((s, a, e)),
        )
    return states


# ----------------------------------------------------------------------------- action layout
def test_action_numbers_are_unchanged():
    duel = load("rt", "duel")
    layout = duel.actions
    assert (REST, END, ABILITY_BASE) == (0, 1, 2)
    # 57 actions (was 48): bids have no cap in the books (RT-3.2, RT-3.3), so the numbers run
    # 0..12, the duel's psi-level, instead of 0..3 under the old default ``max_bid = 3``.
    assert (layout.target_base, layout.number_base, layout.num_actions) == (42, 44, 57)
    assert (duel.target_base, duel.number_base, duel.num_actions) == (42, 44, 57)
    assert encode_ability(duel.data.index["Mental Bolt"]) == 2 + duel.data.index["Mental Bolt"]
    capped = load("rt", "duel", max_bid=3)  # the old layout, now an optional house rule
    assert (capped.target_base, capped.number_base, capped.num_actions) == (42, 44, 48)


def test_number_actions_cover_the_largest_possible_bid_rt_3():
    """The numbers reach the most psi-points any psyker of the scenario can hold (RT-1.1)."""
    duel = load("rt", "duel")  # explicit psi-levels of 12
    assert (duel.max_psi_points, duel.bid_limit, duel.max_number) == (12, 12, 12)
    squad = load("rt", "psyker-vs-squad")  # mastery 3, typical psi-level 30
    assert (squad.max_psi_points, squad.bid_limit, squad.max_number) == (30, 30, 30)
    assert squad.num_actions == squad.number_base + 31
    rand = rules_from_data(RANDOM_SETUP, "test")  # random psi-levels: 12D6 for the Witch
    assert (rand.max_psi_points, rand.bid_limit) == (72, 72)
    capped = load("rt", "psyker-vs-squad", max_bid=4)
    assert (capped.bid_limit, capped.max_number) == (4, 4)
    high = load("rt", "duel", max_bid=40)  # a cap above every psi-level changes nothing
    assert (high.bid_limit, high.num_actions) == (12, duel.num_actions)
    # A bid of all 12 points is legal at the Warlock's save (the most it can ever hold).
    s = duel.apply(duel.initial_state(), ABILITY_BASE + duel.data.index["Mental Bolt"])
    s = duel.apply(s, duel.number_base)
    assert s.phase == Phase.SAVE_BID and duel.legal_actions(s)[-1] == duel.num_actions - 1


@pytest.mark.parametrize("index", [0, 1, 2])
def test_decode_and_encode_round_trip(index):
    rules = all_rules()[index]
    layout = rules.actions
    kinds = []
    for a in range(rules.num_actions):
        kind, value = layout.decode(a)
        kinds.append(kind)
        encode = {
            ActionKind.REST: lambda v: layout.rest,
            ActionKind.END: lambda v: layout.end,
            ActionKind.ABILITY: layout.ability,
            ActionKind.TARGET: layout.target,
            ActionKind.NUMBER: layout.number,
        }[kind]
        assert encode(value) == a
    assert kinds == sorted(kinds)  # the ranges follow each other
    assert kinds.count(ActionKind.ABILITY) == rules.n_abilities
    assert kinds.count(ActionKind.TARGET) == rules.n_units
    assert kinds.count(ActionKind.NUMBER) == rules.max_number + 1
    for bad in (-1, rules.num_actions):
        with pytest.raises(ValueError, match="outside range"):
            layout.decode(bad)


def test_legal_actions_decode_to_the_phase_kind():
    expected = {
        Phase.CHOOSE: {ActionKind.REST, ActionKind.END, ActionKind.ABILITY},
        Phase.TARGET: {ActionKind.TARGET},
        Phase.AMOUNT: {ActionKind.NUMBER},
        Phase.ATTACK_BID: {ActionKind.NUMBER},
        Phase.SAVE_BID: {ActionKind.NUMBER},
    }
    seen = set()
    for rules in all_rules():
        for s, _, _ in random_states(rules, 15, seed=4):
            if rules.current_player(s) < 0:
                continue
            for a in rules.legal_actions(s):
                d = rules.actions.decode(a)
                assert isinstance(d, Decoded) and d.kind in expected[s.phase]
                seen.add(s.phase)
            abilities = rules.actions.abilities_in(rules.legal_actions(s))
            assert all(rules.actions.ability(x) in rules.legal_actions(s) for x in abilities)
    assert {Phase.CHOOSE, Phase.TARGET, Phase.ATTACK_BID, Phase.SAVE_BID} <= seen


# ----------------------------------------------------------------------------- chance tables
@pytest.mark.parametrize("index", [0, 1, 2])
def test_chance_outcomes_are_the_exact_tables(index):
    rules = all_rules()[index]
    nodes = 0
    for s, _, _ in random_states(rules, 20, seed=6):
        if rules.current_player(s) != CHANCE:
            assert rules.chance_distribution(s) == []
            continue
        exact = exact_outcomes(rules, s)  # also checks floats == float(Fraction)
        assert sum(exact.values()) == 1
        assert [o for o, _ in rules.chance_outcomes(s)] == list(exact)
        nodes += 1
    assert nodes > 20


def test_sample_chance_draws_like_the_generic_weighted_choice():
    """Same seed, same draws: the table sampler is the default sampler, bit for bit."""
    for rules in all_rules():
        chance = [
            s for s, _, _ in random_states(rules, 10, seed=8) if rules.current_player(s) == CHANCE
        ]
        fast, slow = np.random.default_rng(99), np.random.default_rng(99)
        for s in chance * 5:
            outcomes = rules.chance_outcomes(s)
            expected = weighted_choice([o for o, _ in outcomes], [p for _, p in outcomes], slow)
            assert rules.sample_chance(s, fast) == expected
        assert fast.random() == slow.random()  # the same number of uniforms was used


def test_sample_chance_follows_the_test_odds_rt_2_3():
    duel = load("rt", "duel")
    s = duel.initial_state()
    units = list(s.units)
    units[0] = evolve(units[0], points=7)
    s = duel.apply(evolve(s, units=tuple(units)), ABILITY_BASE + duel.data.index["Mental Bolt"])
    assert s.phase == Phase.TEST
    rng = np.random.default_rng(2)
    n = 20_000
    works = sum(duel.sample_chance(s, rng) for _ in range(n)) / n
    # 21/36 = 0.583; 6 (7 - 1) points would give 15/36 = 0.417, far outside 4 sigma (0.014).
    assert abs(works - 21 / 36) < 0.014


def test_sample_chance_outside_chance_nodes_is_an_error():
    duel = load("rt", "duel")
    with pytest.raises(ValueError, match="chance node"):
        duel.sample_chance(duel.initial_state(), np.random.default_rng(0))


# ----------------------------------------------------------------------------- game info
def test_game_info_of_the_duel():
    duel = load("rt", "duel")
    info = duel.game_info()
    assert info.information == Information.SIMULTANEOUS
    assert (info.num_actions, info.observation_size) == (duel.num_actions, duel.observation_size)
    assert info.max_chance_outcomes == 7  # Steal Mind: saved, or D6 lost turns (RT-4.5)
    # All of the Warlock's 2 wounds (player 0) or the Librarian's 3 (player 1); values are 0.
    assert (info.min_utility, info.max_utility) == (-3.0, 2.0)


def test_game_info_counts_ability_values():
    rules = load("rt", "duel", ability_values={"Mental Bolt": 1.5, "Steal Mind": -0.5})
    info = rules.game_info()
    # 3 turns each, one psyker, one ability a turn: player 0 may score 3 x 1.5, and the Warlock's
    # Steal Mind (-0.5 for player 1) would add 3 x 0.5 more to player 0.
    assert info.max_utility == 2.0 + 3 * 1.5 + 3 * 0.5
    assert info.min_utility == -(3.0 + 3 * 1.5)


@pytest.mark.parametrize("index", [0, 1, 2])
def test_game_info_bounds_hold_in_play(index):
    rules = all_rules()[index]
    info = rules.game_info()
    most = 0
    policies = [HEURISTICS["bid-all"](rules), RandomPolicy()]
    rng = np.random.default_rng(11)
    states = []
    for g in range(40):
        states.clear()
        pair = policies if g % 2 else policies[::-1]
        end = play_game(rules, pair, rng, on_step=lambda s, a, e: states.append(s))
        for s in [*states, end]:
            assert info.min_utility <= rules.returns(s)[0] <= info.max_utility
            most = max(most, len(rules.chance_outcomes(s)))
    assert 2 <= most <= info.max_chance_outcomes


# ----------------------------------------------------------------------------- events
def test_every_event_kind_is_an_event_kind_member():
    seen = set()
    for rules in all_rules():
        for _, _, events in random_states(rules, 15, seed=3):
            for e in events:
                assert isinstance(e.kind, EventKind), e
                seen.add(e.kind)
    assert {EventKind.PHASE, EventKind.ATTEMPT, EventKind.END, EventKind.SETUP} <= seen


# ----------------------------------------------------------------------------- views
def test_observations_are_fresh_arrays():
    """The per-unit part is memoised; a caller changing one observation changes no other."""
    duel = load("rt", "duel")
    s = duel.initial_state()
    first = duel.observe(s, 0)
    first[:] = 7.0
    again = duel.observe(s, 0)
    assert again.flags.writeable and not np.shares_memory(first, again)
    assert again.max() == 1.0
    assert duel.observe(s, 1)[duel.views.units_offset] == 0.0  # unit 0 is not player 1's


def test_acting_flag_marks_only_the_deciding_psyker():
    duel = load("rt", "duel")
    size, off = duel.views.unit_size, duel.views.units_offset
    for s, _, _ in random_states(duel, 5, seed=1):
        for p in (0, 1):
            obs = duel.observe(s, p)
            flags = [obs[off + i * size + 15] for i in range(duel.n_units)]
            deciding = duel.current_player(s) not in (CHANCE, TERMINAL)
            want = [float(deciding and s.actor == i) for i in range(duel.n_units)]
            assert flags == want


# ----------------------------------------------------------------------------- heuristics
def test_memoised_expected_effect_matches_the_exact_distribution():
    for rules in all_rules()[:2]:
        checked = 0
        for s, _, _ in random_states(rules, 10, seed=5):
            if s.phase != Phase.CHOOSE:
                continue
            u = s.actor
            for a in s.units[u].abilities:
                for t in rules.targets(s, u, a):
                    if rules.abilities[a].effect not in ("mental", "missile", "remove"):
                        continue
                    probe = evolve(
                        s, phase=Phase.RESOLVE, ability=a, target=t, attack_bid=0, save_bid=0
                    )
                    dist = dict(rules.resolve_distribution(probe))
                    p_effect = float(sum((p for o, p in dist.items() if o > 0), Fraction(0)))
                    wounds = float(
                        sum((p * (o - 1) for o, p in dist.items() if o > 1), Fraction(0))
                    )
                    assert _expected_effect(rules, s, u, a, t) == (p_effect, wounds)
                    checked += 1
        assert checked > 5
