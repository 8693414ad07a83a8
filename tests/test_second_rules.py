"""2nd edition (rules/second.md): scripted rules with forced chance outcomes (a stacked deck).

Scenario ``librarian-vs-farseer``: psyker 0 = Librarian (unit 0, player 0, ML3, psychic hood;
slots: Smite, Psychic Shield, Destroyer), psyker 1 = Farseer (unit 1, player 1, ML3; slots:
Mind War, Warp Blast, Storm of Lightning). Scenario ``duel``: psykers Epistolary (ML3, hood),
Codicier (ML2), Farseer (ML3), Warlock (ML1); units 0-2 Space Marines, 3-5 Eldar.
"""

from __future__ import annotations

from dataclasses import fields, replace
from fractions import Fraction
from math import comb

import numpy as np
import pytest
from helpers import exact_outcomes, kinds, outcomes, walk_exact

from psygym import CHANCE, IllegalActionError, load
from psygym.dice import distribution
from psygym.editions.second import SCENARIO_DIR, rules_from_data
from psygym.editions.second.actions import (
    DAEMONIC_ATTACK,
    DESTROY_POWER,
    DUEL_BASE,
    ENERGY_DRAIN,
    NULLIFY,
    PASS,
    PAY_ULTIMATE,
    REFLECTION,
)
from psygym.editions.second.data import CARD_KEYS, Card, PowersFile, load_deck
from psygym.editions.second.odds import flux_cards, hand_chance
from psygym.editions.second.rules import SecondRules, nullify_chance
from psygym.editions.second.state import (
    DEAL,
    FLUX,
    OVER,
    RESPONSE,
    ROLL,
    SETUP,
    TURN,
    Effect,
    InPlay,
    SecondState,
)
from psygym.kernel import evolve
from psygym.scenario import read_toml

LIB, FAR = 0, 1  # psyker (and unit) indices in librarian-vs-farseer
SMITE, SHIELD, DESTROYER = 0, 1, 2  # Librarian's slots
MIND_WAR, WARP_BLAST, STORM = 0, 1, 2  # Farseer's slots


def hand(**counts: int) -> tuple[int, ...]:
    """A hand (or any card multiset) from card names: ``hand(force=2, nullify=1)``."""
    unknown = set(counts) - set(CARD_KEYS)
    assert not unknown, unknown
    return tuple(counts.get(k, 0) for k in CARD_KEYS)


NO_CARDS = hand()


def lvf(**settings):
    """Rules of librarian-vs-farseer, with some [rules] settings changed."""
    return with_settings("librarian-vs-farseer", **settings)


def with_settings(name: str, **settings):
    """Rules of a shipped scenario with some [rules] settings changed."""
    path = str(SCENARIO_DIR / f"{name}.toml")
    data = read_toml(path)
    data["rules"] = {**data.get("rules", {}), **settings}
    return rules_from_data(data, path)


def at_turn(rules, hand0=NO_CARDS, hand1=NO_CARDS, *, phase=0, **changes) -> SecondState:
    """A state at the start of alternating play of ``phase``, with the given hands.

    The hands' cards are taken out of a fresh deck, so the 36 cards stay conserved.
    """
    s = rules.initial_state()
    while s.stage == SETUP:  # duel: take the first power card of each draw
        s = rules.apply(s, rules.chance_outcomes(s)[0][0])
    deck = tuple(f - a - b for f, a, b in zip(rules.deck_counts, hand0, hand1))
    assert min(deck) >= 0
    active = (rules.game.first_player + phase) % 2
    return evolve(
        s, stage=TURN, phase=phase, to_move=active, hands=(hand0, hand1), deck=deck, **changes
    )


def conserved(rules, s) -> bool:
    return rules.card_total(s) == 36


# ---------------------------------------------------------------------------------------------
# 2E-2 the deck, 2E-3 warp flux and dealing


def test_deck_has_36_cards_of_the_published_mix():
    deck = load_deck()
    assert sum(deck) == 36
    assert deck == hand(
        force=22,
        nullify=8,
        daemonic_attack=1,
        destroy_power=1,
        psychic_duel=1,
        reflection=1,
        ultimate_force=1,
        energy_drain=1,
    )


def test_flux_2d6_deals_seven_cards_with_probability_6_in_36():
    r = lvf()
    s = r.initial_state()
    assert s.stage == FLUX and r.flux_dice(s) == 2
    got = exact_outcomes(r, s)
    assert sorted(got) == list(range(2, 13))
    assert got[7] == Fraction(6, 36) == flux_cards(2)[7]


def test_dealing_alternates_starting_with_the_active_player():
    r = lvf()
    s = r.apply(r.initial_state(), 5)  # flux: 5 cards
    assert s.stage == DEAL and s.to_deal == 5
    stacked = [Card.FORCE, Card.NULLIFY, Card.REFLECTION, Card.ENERGY_DRAIN, Card.FORCE]
    for card, receiver in zip(stacked, [0, 1, 0, 1, 0]):
        assert r.current_player(s) == CHANCE and s.deal_to == receiver
        got = exact_outcomes(r, s)
        assert got[card] == Fraction(s.deck[card], sum(s.deck))
        s = r.apply(s, card)
    # Odd total: the active player has the extra card.
    assert s.hands == (hand(force=2, reflection=1), hand(nullify=1, energy_drain=1))
    assert s.stage == TURN and r.current_player(s) == 0
    assert conserved(r, s)
    # Second phase: player 1 is active and gets the first card. (Player 1, with an empty hand,
    # passes by itself since Warp Blast needs a Force card: variable_min_force = 1, 2E-1.1.)
    s = r.apply(at_turn(r), PASS)
    assert s.stage == FLUX and s.phase == 1 and r.active(s) == 1
    s = r.apply(s, 3)
    assert s.deal_to == 1


def test_deal_first_setting_gives_the_first_card_to_the_other_player():
    r = lvf(deal_first="inactive")
    s = r.apply(r.initial_state(), 3)
    assert s.deal_to == 1
    s = r.apply(r.apply(r.apply(s, Card.FORCE), Card.FORCE), Card.NULLIFY)
    assert s.hands == (hand(force=1), hand(force=1, nullify=1))


def test_deck_reshuffles_only_when_empty_and_a_card_is_needed():
    r = lvf()
    discard = tuple(f - d for f, d in zip(r.deck_counts, hand(force=1, nullify=1)))
    s = evolve(
        at_turn(r), stage=DEAL, deck=hand(force=1, nullify=1), discard=discard, to_deal=3, deal_to=0
    )
    assert conserved(r, s)
    # Only the two cards left in the deck can come: the discards are not shuffled in yet.
    assert exact_outcomes(r, s) == {Card.FORCE: Fraction(1, 2), Card.NULLIFY: Fraction(1, 2)}
    s, events = r.apply_with_events(s, Card.FORCE)
    assert s.discard == discard and "reshuffle" not in kinds(events)
    s, events = r.apply_with_events(s, Card.NULLIFY)
    # Deck empty and one card still to deal: the discard pile becomes the new deck.
    assert "reshuffle" in kinds(events)
    assert s.deck == discard and s.discard == hand()
    assert exact_outcomes(r, s)[Card.FORCE] == Fraction(21, 34)
    assert conserved(r, s)


def test_an_empty_deck_is_not_reshuffled_until_a_card_is_needed():
    r = lvf()
    discard = tuple(f - d for f, d in zip(r.deck_counts, hand(force=2)))
    s = evolve(at_turn(r), stage=DEAL, deck=hand(force=2), discard=discard, to_deal=2)
    s = r.apply(r.apply(s, Card.FORCE), Card.FORCE)
    assert sum(s.deck) == 0 and s.discard == discard  # no card needed yet: no reshuffle
    assert s.stage == TURN
    # Both pass: the hands go to the discard pile; the next flux needs cards: reshuffle then.
    s = r.apply(r.apply(s, PASS), PASS)
    assert s.stage == FLUX and s.discard == r.deck_counts
    s, events = r.apply_with_events(s, 4)
    assert "reshuffle" in kinds(events)
    assert s.deck == r.deck_counts and sum(s.discard) == 0


def test_five_card_hand_from_a_fresh_deck_has_no_force_with_c14_5_over_c36_5():
    exact = Fraction(comb(14, 5), comb(36, 5))
    assert 1 - hand_chance(5, 1) == exact
    # The same number through the rules' chance nodes: every way of dealing five cards.
    r = lvf()
    dealt = walk_exact(r, r.apply(r.initial_state(), 5), lambda s: s.stage != DEAL)
    no_force = sum(p for s, p in dealt.items() if s.hands[0][0] + s.hands[1][0] == 0)
    assert no_force == exact
    assert all(sum(map(sum, s.hands)) == 5 and r.card_total(s) == 36 for s in dealt)


def test_flux_is_capped_by_the_psykers_left_after_deaths():
    r = load("2nd", "duel")
    s = at_turn(r, hand(psychic_duel=1), hand())
    assert r.flux_dice(s) == 2
    # Codicier (unit 1) and Farseer (unit 3) died earlier; Epistolary duels the Warlock.
    s = evolve(s, wounds=(2, 0, 5, 0, 1, 5))
    warlock, epistolary = 3, 0
    s = r.apply(s, DUEL_BASE + epistolary * r.num_psykers + warlock)
    assert s.stage == ROLL
    s, events = r.apply_with_events(s, 1)  # the Warlock loses its only wound
    assert "slain" in kinds(events)
    while s.stage == TURN:
        s = r.apply(s, PASS)
    assert s.stage == FLUX and s.phase == 1
    assert r.flux_dice(s) == 1  # one psyker on the table: 1D6 (2E-3.2)
    assert exact_outcomes(r, s) == {k: Fraction(1, 6) for k in range(1, 7)}
    uncapped = with_settings("duel", flux_cap="none")
    assert uncapped.flux_dice(s) == 2
    # A psyker who lost every power card cannot use powers: no psyker left, the game ends.
    no_cards = evolve(s, stage=TURN, powers=((-1,) * r.num_slots,) + s.powers[1:])
    assert r.flux_dice(no_cards) == 0
    end = r.apply(evolve(no_cards, to_move=1), PASS)  # and player 0 passes by itself
    assert end.stage == OVER


def test_more_flux_dice_are_capped_by_three_psykers():
    r = with_settings("duel", warp_flux_dice=4)
    s = at_turn(r)
    assert r.flux_dice(s) == 4
    s = evolve(s, wounds=(2, 0, 5, 3, 1, 5))
    assert r.flux_dice(s) == 3


# ---------------------------------------------------------------------------------------------
# 2E-4 alternating play, 2E-5 casting and responses


def test_one_power_per_psyker_and_force_costs():
    r = lvf()
    s = at_turn(r, hand(force=2), hand())
    legal = r.legal_actions(s)
    assert r.cast_action(LIB, SMITE, FAR, 1) in legal
    assert r.cast_action(LIB, DESTROYER, FAR, 3) not in legal  # costs 3, two Force in hand
    assert r.cast_action(LIB, SMITE, FAR, 2) not in legal  # fixed cost: exactly 1
    s = r.apply(s, r.cast_action(LIB, SMITE, FAR, 1))
    # The response step happens although the Eldar hold no card (2E-5.2; skipping it only for
    # such hands would tell what they hold): their one action is "no response".
    assert s.stage == RESPONSE and r.current_player(s) == 1 and r.legal_actions(s) == [PASS]
    assert s.used == (True, False) and s.hands[0] == hand(force=1) and s.paid == hand(force=1)
    s = r.apply(s, PASS)
    assert s.discard == hand(force=1) and s.paid == hand()
    assert r.current_player(s) == CHANCE and s.effects == (Effect(0, 1, LIB, FAR),)
    s = r.apply(s, 0)  # Smite misses
    # The Eldar, with an empty hand, cannot cast (Warp Blast needs a Force card since
    # variable_min_force = 1): they pass by themselves. The Librarian has cast and holds one
    # card: its turn is a decision with PASS only (its hand is not empty).
    assert r.current_player(s) == 0 and s.passes == 1 and r.legal_actions(s) == [PASS]
    s = r.apply(s, PASS)  # two passes end the phase
    assert s.stage == FLUX and s.phase == 1


def test_variable_cost_choices():
    r = lvf()
    s = at_turn(r, hand(), hand(force=2), phase=1)
    legal = r.legal_actions(s)
    blasts = [r.cast_action(FAR, WARP_BLAST, LIB, k) for k in range(4)]
    # Warp Blast (0-3) needs at least one Force by default (variable_min_force = 1, 2E-1.1).
    assert [a in legal for a in blasts] == [False, True, True, False]
    assert r.describe(s, blasts[2]).force == 2


def test_two_passes_in_a_row_end_the_phase_and_acting_resets_them():
    r = lvf()
    s = at_turn(r, hand(force=1), hand(force=1))
    s = r.apply(s, PASS)
    assert s.stage == TURN and r.current_player(s) == 1 and s.passes == 1
    s = r.apply(s, r.cast_action(FAR, WARP_BLAST, LIB, 1))
    s = r.apply(s, PASS)  # the response step (player 0's hand holds only Force): no response
    s = r.apply(s, 0)  # no wounds
    assert s.stage == TURN and r.current_player(s) == 0 and s.passes == 0
    s = r.apply(s, PASS)  # player 1 has an empty hand: passes by itself -> two passes
    assert s.stage == FLUX and s.phase == 1


def test_ultimate_force_pays_up_to_three_and_blocks_nullify():
    r = lvf()
    s = at_turn(r, hand(ultimate_force=1), hand(nullify=2, destroy_power=1))
    legal = r.legal_actions(s)
    ultimate = r.cast_action(LIB, DESTROYER, FAR, PAY_ULTIMATE)
    assert ultimate in legal and r.cast_action(LIB, DESTROYER, FAR, 3) not in legal
    s = r.apply(s, ultimate)
    assert s.stage == RESPONSE and r.is_response(s)
    assert s.pending.ultimate and s.pending.force == 3
    assert s.hands[0] == hand() and s.paid == hand(ultimate_force=1)
    assert r.legal_actions(s) == [PASS, DESTROY_POWER]  # Nullify cannot stop it
    # With only Nullify cards the opponent cannot answer, but the response step still happens
    # (PASS only), as it would with any other hand (hidden hands, 2E-5.2).
    s = at_turn(r, hand(ultimate_force=1), hand(nullify=2))
    s, events = r.apply_with_events(s, ultimate)
    assert "manifest" not in kinds(events) and r.legal_actions(s) == [PASS]
    s, events = r.apply_with_events(s, PASS)
    assert "manifest" in kinds(events)
    assert s.pending is None and s.discard == hand(ultimate_force=1)
    assert s.effects == (Effect(r.power_index["Destroyer"], 3, LIB, FAR),)  # the chance node
    # On a variable power Ultimate Force pays the highest Force.
    s = at_turn(r, hand(), hand(ultimate_force=1), phase=1)
    s = r.apply(s, r.cast_action(FAR, WARP_BLAST, LIB, PAY_ULTIMATE))
    s = r.apply(s, PASS)  # the Space Marines' response step: an empty hand, no response
    assert s.effects[0].force == 3


def test_nullify_at_4_plus_is_one_half_and_three_quarters_with_a_hood():
    assert nullify_chance(4, False) == Fraction(1, 2)
    assert nullify_chance(4, True) == Fraction(3, 4)
    r = lvf()
    # The Librarian casts; the Eldar (ML3, no hood) nullify on 4+.
    s = at_turn(r, hand(force=1), hand(nullify=1))
    s = r.apply(s, r.cast_action(LIB, SMITE, FAR, 1))
    assert r.legal_actions(s) == [PASS, NULLIFY]
    s = r.apply(s, NULLIFY)
    assert s.stage == ROLL and s.roll.need == 4 and not s.roll.reroll
    assert exact_outcomes(r, s) == {0: Fraction(1, 2), 1: Fraction(1, 2)}
    stopped = r.apply(s, 1)
    assert stopped.pending is None and not stopped.effects
    # Both hands are empty now: both pass by themselves and the phase ends (the Farseer's Warp
    # Blast needs a Force card, variable_min_force = 1).
    assert stopped.stage == FLUX and stopped.phase == 1
    assert stopped.discard == hand(force=1, nullify=1) and conserved(r, stopped)
    # A failed Nullify: with one response per power the Smite resolves (no second window).
    failed = r.apply(s, 0)
    assert failed.effects == (Effect(0, 1, LIB, FAR),)
    # The Farseer casts; the Librarian's psychic hood re-rolls a failure: 3/4.
    s = at_turn(r, hand(nullify=1), hand(force=2), phase=1)
    s = r.apply(s, r.cast_action(FAR, MIND_WAR, LIB, 2))
    s = r.apply(s, NULLIFY)
    assert s.roll.need == 4 and s.roll.reroll
    assert exact_outcomes(r, s) == {0: Fraction(1, 4), 1: Fraction(3, 4)}


def test_nullify_is_shifted_by_mastery_levels():
    r = load("2nd", "duel")
    warlock, epistolary = 3, 0
    s = at_turn(r, hand(nullify=1), hand(force=1), phase=1)
    s = evolve(s, powers=tuple((4, -1, -1) if i == warlock else p for i, p in enumerate(s.powers)))
    assert r.power_data[4].name == "Aura of Fortitude"
    s = r.apply(s, r.cast_action(warlock, 0, 4, 1))  # the Warlock's unit is unit 4
    s = r.apply(s, NULLIFY)
    # Best Space Marine psyker ML3 against the Warlock's ML1: 4+ two steps easier = 2+, hood.
    assert s.roll.need == 2 and s.roll.reroll
    assert exact_outcomes(r, s)[1] == Fraction(35, 36)
    flat = with_settings("duel", nullify_ml_step=0)
    assert flat.nullify_need(s, 0, warlock) == (4, True)
    assert r.nullify_need(s, 1, epistolary) == (4, False)  # Farseer ML3 vs Epistolary ML3
    farseer_dead = evolve(s, wounds=(2, 1, 5, 0, 1, 5))
    assert r.nullify_need(farseer_dead, 1, epistolary) == (6, False)  # Warlock ML1: 6+


def test_destroy_power_cancels_and_removes_the_card():
    r = lvf()
    s = at_turn(r, hand(force=1), hand(destroy_power=1))
    s, events = r.apply_with_events(r.apply(s, r.cast_action(LIB, SMITE, FAR, 1)), DESTROY_POWER)
    assert "denied" in kinds(events)
    assert s.pending is None and not s.effects
    assert s.powers[LIB][SMITE] == -1 and s.discard == hand(force=1, destroy_power=1)
    keep = lvf(destroy_power="cancel")
    t = at_turn(keep, hand(force=1), hand(destroy_power=1))
    t = keep.apply(keep.apply(t, keep.cast_action(LIB, SMITE, FAR, 1)), DESTROY_POWER)
    assert t.powers[LIB][SMITE] == keep.power_index["Smite"] and not t.effects


def test_reflection_turns_an_attack_against_the_caster():
    r = lvf()
    s = at_turn(r, hand(reflection=1), hand(force=2), phase=1)
    s = r.apply(r.apply(s, r.cast_action(FAR, WARP_BLAST, LIB, 2)), REFLECTION)
    assert s.effects == (Effect(1, 2, FAR, LIB, reflected=True),)
    expected = r.effect_distribution(1, 2, FAR, FAR, 3)  # Farseer's unit hits itself
    assert exact_outcomes(r, s) == {w: p for w, p in expected.items() if p}
    s = r.apply(s, 2)
    assert s.wounds == (3, 1) and s.score == 2.0


def test_reflection_of_a_value_power_scores_for_the_reflecting_side():
    r = lvf()
    s = at_turn(r, hand(force=1), hand(reflection=1))
    s = r.apply(r.apply(s, r.cast_action(LIB, SHIELD, LIB, 1)), REFLECTION)
    assert s.score == -1.0 and s.in_play == ()
    off = lvf(reflection="cancel")
    t = at_turn(off, hand(force=1), hand(reflection=1))
    t = off.apply(off.apply(t, off.cast_action(LIB, SHIELD, LIB, 1)), REFLECTION)
    assert t.score == 0.0 and t.in_play == ()


def test_daemonic_attack_cancels_and_may_slay_the_caster():
    r = lvf()
    s = at_turn(r, hand(force=1), hand(daemonic_attack=1))
    s = r.apply(r.apply(s, r.cast_action(LIB, SMITE, FAR, 1)), DAEMONIC_ATTACK)
    assert s.stage == ROLL and s.pending is None
    assert exact_outcomes(r, s) == {0: 1}  # D6 + 3 is never below 4
    r7 = lvf(daemonic_attack_below=7)
    s = at_turn(r7, hand(force=1), hand(daemonic_attack=1))
    s = r7.apply(r7.apply(s, r7.cast_action(LIB, SMITE, FAR, 1)), DAEMONIC_ATTACK)
    assert exact_outcomes(r7, s) == {0: Fraction(1, 2), 1: Fraction(1, 2)}  # 1, 2, 3 + 3 < 7
    s, events = r7.apply_with_events(s, 1)
    assert s.wounds[LIB] == 0 and "slain" in kinds(events)
    assert s.stage == OVER and r7.returns(s) == (-3.0, 3.0)
    duel = load("2nd", "duel")
    assert duel.daemonic_chance(3) == Fraction(1, 3)  # Warlock ML1: 1 or 2 + 1 < 4


def test_two_responses_per_power_setting():
    r = lvf(responses_per_power=2)
    s = at_turn(r, hand(force=1), hand(nullify=2))
    s = r.apply(r.apply(s, r.cast_action(LIB, SMITE, FAR, 1)), NULLIFY)
    s = r.apply(s, 0)  # fails
    assert s.stage == RESPONSE and s.pending.responses == 1
    assert r.legal_actions(s) == [PASS, NULLIFY]
    s = r.apply(r.apply(s, NULLIFY), 1)
    assert s.pending is None and not s.effects and s.discard == hand(force=1, nullify=2)


def test_psychic_duel_two_d6_plus_ml():
    r = lvf()
    s = at_turn(r, hand(psychic_duel=1), hand())
    duel = DUEL_BASE + LIB * r.num_psykers + FAR
    assert duel in r.legal_actions(s)
    s = r.apply(s, duel)
    got = exact_outcomes(r, s)
    assert got[0] == Fraction(146, 1296)  # equal ML: a tie when both 2D6 are equal
    two = distribution("2D6")
    at_least_3 = sum(p * q for x, p in two.items() for y, q in two.items() if x - y >= 3)
    assert got[3] == at_least_3 == got[-3]  # capped at the Farseer's (Librarian's) 3 wounds
    s = r.apply(s, -2)
    assert s.wounds == (1, 3) and s.score == -2.0 and r.current_player(s) != 0


def test_energy_drain_ends_the_phase_and_hands_are_discarded():
    r = lvf()
    s = at_turn(r, hand(energy_drain=1, force=2, nullify=1), hand(force=3, reflection=1))
    s, events = r.apply_with_events(s, ENERGY_DRAIN)
    assert "energy_drain" in kinds(events)
    assert s.stage == FLUX and s.phase == 1
    assert s.hands == (hand(), hand())
    assert s.discard == hand(energy_drain=1, force=5, nullify=1, reflection=1)
    keep = lvf(retain_specials=True)
    t = at_turn(keep, hand(energy_drain=1, force=2, nullify=1), hand(force=3, reflection=1))
    t = keep.apply(t, ENERGY_DRAIN)
    assert t.hands == (hand(nullify=1), hand(reflection=1))
    assert t.discard == hand(energy_drain=1, force=5) and conserved(keep, t)


def test_remain_in_play_power_applies_each_phase_until_nullified():
    r = lvf()
    s = at_turn(r, hand(force=1), hand())
    cast = r.cast_action(LIB, SHIELD, LIB, 1)
    s = r.apply(s, cast)
    s = r.apply(s, PASS)  # the Eldar's response step (empty hand): value 1 at once (2E-6)
    assert s.score == 1.0 and [(e.psyker, e.slot) for e in s.in_play] == [(LIB, SHIELD)]
    # Both hands are empty: both pass by themselves, two passes end the phase.
    assert s.stage == FLUX and s.phase == 1
    s = r.apply(r.apply(s, 2), Card.NULLIFY)  # flux 2: player 1 (active) gets a Nullify
    assert s.score == 1.0  # not yet: cards are dealt first
    s, events = r.apply_with_events(s, Card.FORCE)
    assert s.score == 2.0 and "value" in kinds(events)  # 2E-3.4 upkeep
    assert r.current_player(s) == 1
    nullify_shield = r.nullify_base + LIB * r.num_slots + SHIELD
    assert nullify_shield in r.legal_actions(s)
    s = r.apply(s, nullify_shield)
    assert s.roll.need == 4 and exact_outcomes(r, s) == {0: Fraction(1, 2), 1: Fraction(1, 2)}
    s = r.apply(s, 1)
    assert s.in_play == () and r.current_player(s) == 0
    # The card is back with the Librarian, who has not cast this phase: it may cast it again.
    assert cast in r.legal_actions(s)
    s = r.apply(s, PASS)  # and the Eldar, with an empty hand now, pass by themselves
    assert s.stage == FLUX and s.phase == 2
    s = r.apply(r.apply(r.apply(s, 2), Card.NULLIFY), Card.NULLIFY)
    assert s.stage == TURN and s.score == 2.0  # no upkeep any more


def test_a_remain_in_play_power_cannot_be_cast_again_and_can_be_ended():
    r = lvf()
    s = at_turn(r, hand(force=2), hand(force=1), phase=2)
    s = evolve(s, in_play=(InPlay(LIB, SHIELD, 1, LIB, 1),))
    legal = r.legal_actions(s)
    assert r.cast_action(LIB, SHIELD, LIB, 1) not in legal
    end = r.end_base + LIB * r.num_slots + SHIELD
    assert end in legal
    s = r.apply(s, end)
    assert s.in_play == () and s.used[LIB]  # ending it is the Librarian's action this phase


def test_a_slain_psyker_loses_its_remain_in_play_powers():
    r = load("2nd", "duel")
    s = at_turn(r, hand(), hand(psychic_duel=1), phase=1)
    s = evolve(s, in_play=(InPlay(1, 0, 1, 1, 1),))  # Codicier's power in play
    s = r.apply(s, DUEL_BASE + 2 * r.num_psykers + 1)  # Farseer duels the Codicier
    s = r.apply(s, 1)
    assert s.wounds[1] == 0 and s.in_play == ()


# ---------------------------------------------------------------------------------------------
# Hidden information, errors


def test_observation_hides_the_other_hand():
    r = lvf()
    s1 = at_turn(r, hand(force=2, nullify=1), hand(force=3, reflection=1))
    # Same public state and own hand; the opponent holds a Nullify where it held a Force.
    s2 = at_turn(r, hand(force=2, nullify=1), hand(force=2, nullify=1, reflection=1))
    assert s1 != s2 and sum(s1.deck) == sum(s2.deck)
    assert conserved(r, s1) and conserved(r, s2)
    assert np.array_equal(r.observe(s1, 0), r.observe(s2, 0))
    assert r.view(s1, 0) == r.view(s2, 0)
    assert r.legal_actions(s1) == r.legal_actions(s2)
    assert r.render(s1, 0) == r.render(s2, 0)
    assert "Reflection" not in r.render(s1, 0) and "Reflection" in r.render(s1, 1)
    assert not np.array_equal(r.observe(s1, 1), r.observe(s2, 1))
    from psygym_agents.second.heuristics import HEURISTICS

    for name, factory in HEURISTICS.items():
        policy = factory(r)
        assert policy.choose(r, s1, 0) == policy.choose(r, s2, 0), name


def test_illegal_action_raises_with_the_legal_ones():
    r = lvf()
    s = at_turn(r, hand(force=1), hand())
    with pytest.raises(IllegalActionError) as err:
        r.apply(s, r.cast_action(LIB, DESTROYER, FAR, 3))
    assert "legal actions: 0 (Space Marines passes)" in str(err.value)
    with pytest.raises(IllegalActionError):
        r.apply(s, NULLIFY)


def test_evolve_matches_dataclasses_replace():
    r = lvf()
    s = at_turn(r, hand(force=1), hand())
    for f in fields(SecondState):
        value = getattr(s, f.name)
        assert evolve(s, **{f.name: value}) == replace(s, **{f.name: value})
    assert evolve(s, passes=1) == replace(s, passes=1)


def test_fast_sampling_draws_the_exact_deal_law():
    r = lvf()
    s = r.apply(r.initial_state(), 7)
    rng = np.random.default_rng(7)
    n = 36_000
    counts = np.bincount([r.sample_chance(s, rng) for _ in range(n)], minlength=8)
    for card, p in outcomes(r, s).items():
        # 4 standard deviations: a Force card at 21/36 instead of 22/36 is 7 sd away.
        sd = (n * p * (1 - p)) ** 0.5
        assert abs(counts[card] - n * p) < 4 * sd + 1, (card, counts[card], n * p)


# ---------------------------------------------------------------------------------------------
# Set-up draws (2E-1.1) and the remaining settings


def test_set_up_draws_power_cards_from_the_disciplines():
    r = load("2nd", "duel")
    s = r.initial_state()
    assert s.stage == SETUP and r.current_player(s) == CHANCE
    adeptus = [p.name for p in r.power_data if "Adeptus" in p.disciplines]
    got = exact_outcomes(r, s)
    assert sorted(r.power_data[k].name for k in got) == sorted(adeptus)
    assert set(got.values()) == {Fraction(1, len(adeptus))}
    s = r.apply(s, r.power_index["Smite"])
    got = exact_outcomes(r, s)  # without replacement: Smite cannot come again
    assert r.power_index["Smite"] not in got and set(got.values()) == {Fraction(1, 6)}
    rng = np.random.default_rng(0)
    while s.stage == SETUP:
        s = r.apply(s, r.sample_chance(s, rng))
    assert s.stage == FLUX
    for i, cards in enumerate(s.powers):
        held = [k for k in cards if k >= 0]
        assert len(held) == r.ml[i] == len(set(held))
        assert all(k in r.draw_pools[i] for k in held)


def test_ml_limits_power_level_setting():
    warlock = 3
    for rules, allowed in (
        (load("2nd", "duel"), True),
        (with_settings("duel", ml_limits_power_level=True), False),
    ):
        s = at_turn(rules, hand(), hand(force=2), phase=1)
        storm = rules.power_index["Storm of Lightning"]  # level 2, the Warlock is ML1
        s = evolve(s, powers=s.powers[:3] + ((storm, -1, -1),))
        cast = rules.cast_action(warlock, 0, 0, 2)
        assert (cast in rules.legal_actions(s)) is allowed


def test_no_responses_setting():
    r = lvf(responses_per_power=0)
    s = at_turn(r, hand(force=1), hand(nullify=1, reflection=1))
    s = r.apply(s, r.cast_action(LIB, SMITE, FAR, 1))
    assert s.pending is None and s.effects  # resolved without asking the Eldar


def test_psychic_duel_without_mastery_levels():
    duel = load("2nd", "duel")
    plain = with_settings("duel", psychic_duel_add_ml=False, psychic_duel_dice="D6")
    s = at_turn(duel, hand(psychic_duel=1), hand())
    epistolary, warlock = 0, 3
    with_ml = duel.duel_distribution(s, epistolary, warlock)  # 2D6+3 against 2D6+1
    wins = sum(p for k, p in with_ml.items() if k > 0)
    assert wins > sum(p for k, p in with_ml.items() if k < 0)
    flat = plain.duel_distribution(s, epistolary, warlock)  # D6 against D6, Warlock has 1 wound
    # The Warlock loses its 1 wound on any win; the Epistolary (2 wounds) loses up to 2.
    assert flat == {
        -2: Fraction(10, 36),
        -1: Fraction(5, 36),
        0: Fraction(6, 36),
        1: Fraction(15, 36),
    }


def test_area_power_that_remains_in_play_hits_every_enemy_each_phase():
    extra = PowersFile.model_validate(
        {
            "powers": [
                {
                    "name": "Firestorm",
                    "cost": 1,
                    "disciplines": ["Test"],
                    "target": "enemies",
                    "range": 24,
                    "remain_in_play": True,
                    "effects": [{"force": 1, "type": "mortal", "wounds": 1}],
                }
            ]
        }
    ).powers
    base = load("2nd", "duel")
    r = SecondRules(base.scenario, powers=base.power_data + tuple(extra))
    firestorm = len(base.power_data)
    s = at_turn(r, hand(force=1), hand())
    s = evolve(s, powers=((firestorm, -1, -1),) + s.powers[1:])
    area = r.num_units
    s = r.apply(s, r.cast_action(0, 0, area, 1))
    s = r.apply(s, PASS)  # the Eldar's response step (empty hand)
    # One mortal wound on each Eldar unit (units 3, 4, 5): three chance nodes of one outcome.
    assert [e.target for e in s.effects] == [3, 4, 5]
    for _ in range(3):
        assert exact_outcomes(r, s) == {1: 1}
        s = r.apply(s, 1)
    assert s.wounds[3:] == (2, 0, 4) and s.score == 2 * 1 + 2 * 1 + 1
    assert [ip.target for ip in s.in_play] == [area]
    # Next phase, after dealing: it strikes every enemy unit still standing again.
    while s.stage != DEAL:
        s = r.apply(s, PASS if r.current_player(s) >= 0 else r.chance_outcomes(s)[0][0])
    while s.stage == DEAL:
        s = r.apply(s, Card.FORCE)
    assert [e.target for e in s.effects] == [3, 5]
