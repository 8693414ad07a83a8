"""2nd-edition heuristics: names, legality, hidden information, and what each one does."""

from __future__ import annotations

import numpy as np
import pytest
from psygym_agents.base import RandomPolicy
from psygym_agents.second.heuristics import HEURISTICS, AlwaysPass, CastBiggest, HoardNullify

from psygym import CHANCE, TERMINAL, load
from psygym.core import sample_action
from psygym.editions.second.actions import ENERGY_DRAIN, NULLIFY, PASS, PAY_ULTIMATE, REFLECTION
from psygym.editions.second.data import CARD_KEYS
from psygym.editions.second.state import TURN
from psygym.kernel import evolve
from psygym.policies import resolve_policy


def hand(**counts: int) -> tuple[int, ...]:
    return tuple(counts.get(k, 0) for k in CARD_KEYS)


def at_turn(rules, hand0, hand1, phase=0):
    s = rules.initial_state()
    deck = tuple(f - a - b for f, a, b in zip(rules.deck_counts, hand0, hand1))
    return evolve(s, stage=TURN, phase=phase, to_move=phase % 2, hands=(hand0, hand1), deck=deck)


def test_heuristic_names():
    assert set(HEURISTICS) == {
        "cast-biggest",
        "cast-cheapest",
        "hoard-nullify",
        "nullify-always",
        "pass",
    }
    rules = load("2nd")
    for name in HEURISTICS:
        assert resolve_policy(name, rules).name == name
    assert resolve_policy("random", rules).name == "random"
    assert resolve_policy("hoard-nullify:3.5", rules).threshold == 3.5


def _play_checked(rules, policies, rng):
    """One game in which every decision is checked to be legal (play_game does not check)."""
    s = rules.initial_state()
    while (player := rules.current_player(s)) != TERMINAL:
        if player == CHANCE:
            a = rules.sample_chance(s, rng)
        else:
            a = sample_action(policies[player], rules, s, player, rng)
        s = rules.apply(s, a)  # raises IllegalActionError on an illegal choice
    return s


@pytest.mark.parametrize("scenario", ["duel", "librarian-vs-farseer"])
def test_every_heuristic_plays_legal_games_in_both_seats(scenario):
    rules = load("2nd", scenario)
    rng = np.random.default_rng(1)
    for factory in HEURISTICS.values():
        for seat in (0, 1):
            policies = [RandomPolicy(), RandomPolicy()]
            policies[seat] = factory(rules)
            for _ in range(10):
                _play_checked(rules, policies, rng)


def test_heuristics_see_only_their_own_hand():
    """At every decision of random games, redeal the opponent's hand from the unseen cards."""
    rules = load("2nd")
    rng = np.random.default_rng(5)
    policies = [factory(rules) for factory in HEURISTICS.values()]
    checked = 0
    for _ in range(15):
        s = rules.initial_state()
        while (player := rules.current_player(s)) != TERMINAL:
            if player == CHANCE:
                s = rules.apply(s, rules.sample_chance(s, rng), check=False)
                continue
            other = 1 - player
            unseen = [c for c, n in enumerate(_sum(s.deck, s.hands[other])) for _ in range(n)]
            size = sum(s.hands[other])
            picked = rng.choice(len(unseen), size=size, replace=False) if size else []
            new_hand = [0] * len(CARD_KEYS)
            for i in picked:
                new_hand[unseen[i]] += 1
            new_deck = tuple(a - b for a, b in zip(_sum(s.deck, s.hands[other]), new_hand))
            hands = list(s.hands)
            hands[other] = tuple(new_hand)
            twin = evolve(s, hands=tuple(hands), deck=new_deck)
            assert rules.card_total(twin) == 36
            assert np.array_equal(rules.observe(s, player), rules.observe(twin, player))
            assert rules.legal_actions(s) == rules.legal_actions(twin)
            for policy in policies:
                assert policy.choose(rules, s, player) == policy.choose(rules, twin, player)
            checked += 1
            s = rules.apply(s, int(rng.choice(rules.legal_actions(s))))
    assert checked > 200


def _sum(a, b):
    return tuple(x + y for x, y in zip(a, b))


def test_cast_biggest_and_cast_cheapest_choices():
    rules = load("2nd", "librarian-vs-farseer")
    s = at_turn(rules, hand(force=3), hand())
    destroyer = rules.cast_action(0, 2, 1, 3)
    smite = rules.cast_action(0, 0, 1, 1)
    assert HEURISTICS["cast-biggest"](rules).choose(rules, s, 0) == destroyer
    assert HEURISTICS["cast-cheapest"](rules).choose(rules, s, 0) == smite
    # Ultimate Force only when Force cards cannot pay: Destroyer with one Force + UF.
    s = at_turn(rules, hand(force=1, ultimate_force=1), hand())
    assert HEURISTICS["cast-biggest"](rules).choose(rules, s, 0) == rules.cast_action(
        0, 2, 1, PAY_ULTIMATE
    )
    # The Farseer's Warp Blast: the biggest pays the most Force.
    s = at_turn(rules, hand(), hand(force=3), phase=1)
    assert CastBiggest().choose(rules, s, 1) == rules.cast_action(1, 1, 0, 3)


def test_response_rules():
    rules = load("2nd", "librarian-vs-farseer")
    small = at_turn(rules, hand(force=1), hand(nullify=1))
    small = rules.apply(small, rules.cast_action(0, 0, 1, 1))  # Smite: about 1.1 wounds
    big = at_turn(rules, hand(force=3), hand(nullify=1))
    big = rules.apply(big, rules.cast_action(0, 2, 1, 3))  # Destroyer: about 2.5 wounds
    assert rules.is_response(small) and rules.is_response(big)
    view_small, view_big = rules.view(small, 1), rules.view(big, 1)
    assert 1.0 < rules.pending_value(view_small) < 2.0 < rules.pending_value(view_big)
    hoard = HoardNullify()
    assert hoard.choose(rules, small, 1) == PASS
    assert hoard.choose(rules, big, 1) == NULLIFY
    always = HEURISTICS["nullify-always"](rules)
    assert always.choose(rules, small, 1) == NULLIFY
    assert AlwaysPass().choose(rules, big, 1) == PASS
    # With a Reflection as well, the casting heuristics answer a big attack with the sure card.
    refl = at_turn(rules, hand(force=3), hand(nullify=1, reflection=1))
    refl = rules.apply(refl, rules.cast_action(0, 2, 1, 3))
    assert CastBiggest().choose(rules, refl, 1) == REFLECTION
    assert always.choose(rules, refl, 1) == NULLIFY


def test_energy_drain_and_duel_when_nothing_to_cast():
    rules = load("2nd", "librarian-vs-farseer")
    s = at_turn(rules, hand(energy_drain=1), hand(force=2))
    assert CastBiggest().choose(rules, s, 0) == ENERGY_DRAIN  # the opponent holds cards
    s = at_turn(rules, hand(energy_drain=1), hand())
    assert CastBiggest().choose(rules, s, 0) == PASS


def test_heuristics_beat_random_and_pass_scores_nothing():
    """Fixed seed, 150 games per seat: cast-biggest scores well above a random player."""
    rules = load("2nd", "duel")
    rng = np.random.default_rng(0)
    totals = []
    for seat in (0, 1):
        policies = [RandomPolicy(), RandomPolicy()]
        policies[seat] = CastBiggest()
        score = 0.0
        for _ in range(150):
            score += rules.returns(_play_checked(rules, policies, rng))[seat]
        totals.append(score / 150)
    assert min(totals) > 3.0, totals
    s = _play_checked(rules, [AlwaysPass(), AlwaysPass()], rng)
    assert rules.returns(s) == (0.0, 0.0)


def test_caster_plus_denier_specs_use_is_response():
    rules = load("2nd", "librarian-vs-farseer")
    split = resolve_policy("cast-biggest+pass", rules)
    big = at_turn(rules, hand(force=3), hand(nullify=1))
    big = rules.apply(big, rules.cast_action(0, 2, 1, 3))
    assert rules.is_response(big)
    assert split.action_probabilities(rules, big, 1) == {PASS: 1.0}  # the denier answers
    turn = at_turn(rules, hand(force=3), hand())
    assert not rules.is_response(turn)
    assert split.action_probabilities(rules, turn, 0) == {rules.cast_action(0, 2, 1, 3): 1.0}
