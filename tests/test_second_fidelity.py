"""2nd edition rule changes (rules/second.md), scripted with forced chance outcomes.

* ``variable_min_force`` (2E-1.1): Warp Blast (``0-3``) is no longer cast for 0 Force.
* Ultimate Force (2E-5.1): a remain-in-play power paid with it cannot be nullified in play.
* The response step (2E-5.2) follows every answerable cast, whatever the responder holds.
* ``public_discards`` (2E-4.3): hands discarded at the end of a phase lie face down.

Scenario ``librarian-vs-farseer``: psyker/unit 0 = Librarian (player 0; Smite, Psychic Shield,
Destroyer), psyker/unit 1 = Farseer (player 1; Mind War, Warp Blast, Storm of Lightning).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from test_second_rules import (
    FAR,
    LIB,
    SHIELD,
    SMITE,
    WARP_BLAST,
    at_turn,
    conserved,
    hand,
    lvf,
)

from psygym import CHANCE
from psygym.editions.second.actions import NULLIFY, PASS, PAY_ULTIMATE
from psygym.editions.second.data import Card
from psygym.editions.second.state import FLUX, RESPONSE, TURN
from psygym.kernel import evolve


def _nullify_shield(r) -> int:
    return r.actions.encode_nullify(LIB, SHIELD)


# ---------------------------------------------------------------------------------------------
# 2E-1.1 variable_min_force


def test_warp_blast_needs_one_force_by_default_and_zero_only_by_setting():
    r, zero = lvf(), lvf(variable_min_force=0)
    k = r.power_index["Warp Blast"]
    assert r.settings.variable_min_force == 1
    assert r.force_range[k] == (1, 3) and zero.force_range[k] == (0, 3)
    # Fixed costs are not variable: untouched by the setting.
    smite = r.power_index["Smite"]
    assert r.force_range[smite] == zero.force_range[smite] == (1, 1)
    free_blast = r.cast_action(FAR, WARP_BLAST, LIB, 0)
    # Step 1: the Farseer holds a Nullify and no Force (phase 1, the Eldar are active).
    s = at_turn(r, hand(), hand(nullify=1), phase=1)
    assert r.current_player(s) == 1
    assert r.legal_actions(s) == [PASS]  # no free S4 shot any more (a decision: cards in hand)
    t = at_turn(zero, hand(), hand(nullify=1), phase=1)
    assert free_blast in zero.legal_actions(t)
    # Step 2 (setting 0): the free blast, the response step, then the S4 damage-1 shot.
    t = zero.apply(t, free_blast)
    assert t.stage == RESPONSE and t.pending.force == 0 and t.paid == hand()
    t = zero.apply(t, PASS)
    assert zero.current_player(t) == CHANCE and t.effects[0].force == 0
    law = dict(zero.chance_distribution(t))
    # One S4 hit on T4 (wounds on 4+), 3+ save worsened by 1 to 4+: 1/2 * 1/2.
    assert law == {0: Fraction(3, 4), 1: Fraction(1, 4)}
    t = zero.apply(t, 1)
    assert t.wounds == (2, 3) and t.score == -1.0
    # With the default, an Eldar hand with no Force card stays a decision (PASS only); an empty
    # hand passes by itself: the Space Marines pass, the Eldar follow, the phase ends.
    s = at_turn(r, hand(force=1), hand(), phase=2)
    assert r.current_player(s) == 0
    s = r.apply(s, PASS)
    assert s.stage == FLUX and s.phase == 3


def test_the_min_force_setting_never_lowers_a_cards_own_lower_bound():
    big = lvf(variable_min_force=3)
    k = big.power_index["Warp Blast"]
    assert big.force_range[k] == (3, 3)  # raised up to the card's highest
    s = at_turn(big, hand(), hand(force=2), phase=1)
    casts = [a for a in big.legal_actions(s) if big.actions.is_cast(a)]
    assert all(big.decode_cast(a).pay == 2 for a in casts)  # Storm of Lightning / Mind War only
    assert all(big.decode_cast(a).slot != WARP_BLAST for a in casts)


# ---------------------------------------------------------------------------------------------
# 2E-5.1 Ultimate Force on a remain-in-play power


def test_ultimate_force_remain_in_play_power_cannot_be_nullified_while_in_play():
    r = lvf()
    shield_uf = r.cast_action(LIB, SHIELD, LIB, PAY_ULTIMATE)
    # Step 1: the Librarian casts Psychic Shield with Ultimate Force; the Eldar hold 2 Nullify.
    s = at_turn(r, hand(ultimate_force=1), hand(nullify=2))
    s = r.apply(s, shield_uf)
    assert s.stage == RESPONSE and s.pending.ultimate
    assert r.legal_actions(s) == [PASS]  # Nullify cannot stop it (2E-5.1)
    # Step 2: no response; it takes effect and stays in play, marked as paid with UF.
    s = r.apply(s, PASS)
    assert s.score == 1.0 and len(s.in_play) == 1 and s.in_play[0].ultimate
    slot = r.views.board_start + 4 * r.num_units + 5 + SHIELD * (3 + len(r.power_data))
    obs = r.observe(s, 1)
    assert obs[slot : slot + 3].tolist() == [1.0, 1.0, 1.0]  # holds, in play, Ultimate Force
    assert "[in play, Ultimate Force]" in r.render(s, 1)
    # Step 3: the Eldar's turn (they still hold 2 Nullify): no Nullify of the power in play.
    assert r.current_player(s) == 1 and s.stage == TURN
    assert _nullify_shield(r) not in r.legal_actions(s) and r.legal_actions(s) == [PASS]
    # Step 4: the Eldar pass, the Librarian (empty hand) passes by itself; next phase, after the
    # deal (forced: Nullify to the Eldar, Force to the Space Marines), the upkeep scores it again
    # and it still cannot be nullified.
    s = r.apply(s, PASS)
    assert s.stage == FLUX and s.phase == 1 and s.in_play[0].ultimate
    s = r.apply(r.apply(r.apply(s, 2), Card.NULLIFY), Card.FORCE)
    assert s.stage == TURN and s.score == 2.0 and r.current_player(s) == 1
    assert s.hands[1][Card.NULLIFY] == 1 and _nullify_shield(r) not in r.legal_actions(s)
    # Its caster may still end it (2E-4.1).
    s = r.apply(s, PASS)
    end = r.actions.encode_end(LIB, SHIELD)
    assert end in r.legal_actions(s)
    assert r.apply(s, end).in_play == ()
    # Control: the same power paid with a Force card is offered to Nullify in play.
    t = at_turn(r, hand(force=1), hand(nullify=2))
    t = r.apply(r.apply(t, r.cast_action(LIB, SHIELD, LIB, 1)), PASS)
    assert not t.in_play[0].ultimate and _nullify_shield(r) in r.legal_actions(t)


# ---------------------------------------------------------------------------------------------
# 2E-5.2 the response step


def test_the_response_step_looks_the_same_with_and_without_a_response_card():
    r = lvf()
    smite = r.cast_action(LIB, SMITE, FAR, 1)
    # Same public table and caster's hand; the Eldar hold a Nullify or a Force card.
    holding = at_turn(r, hand(force=1), hand(nullify=1))
    empty = at_turn(r, hand(force=1), hand(force=1))
    trail = []
    for s in (holding, empty):
        s, cast_events = r.apply_with_events(s, smite)
        # Step 1: the response step happens in both cases, asked of the Eldar.
        assert s.stage == RESPONSE and r.current_player(s) == 1 and r.is_response(s)
        label = str(r.describe(s, PASS))
        s, pass_events = r.apply_with_events(s, PASS)  # declined, or nothing to play
        # Step 2: the Smite resolves at the chance node.
        assert r.current_player(s) == CHANCE and s.effects[0].power == r.power_index["Smite"]
        trail.append(
            (
                [(e.kind, e.text, e.data) for e in cast_events + pass_events],
                label,
                r.observe(s, 0).tobytes(),
                r.render(s, 0),
            )
        )
    assert r.legal_actions(r.apply(holding, smite)) == [PASS, NULLIFY]
    assert r.legal_actions(r.apply(empty, smite)) == [PASS]
    assert trail[0] == trail[1]
    assert trail[0][1] == "Eldar plays no response card"
    # With no responses allowed at all (public setting) the step is skipped for every hand.
    none = lvf(responses_per_power=0)
    s = none.apply(at_turn(none, hand(force=1), hand(nullify=1)), smite)
    assert s.pending is None and none.current_player(s) == CHANCE


# ---------------------------------------------------------------------------------------------
# 2E-4.3 face-down discards


def test_end_of_phase_discards_are_face_down_unless_public_discards():
    r, public = lvf(), lvf(public_discards=True)
    h0, h1 = hand(force=2, nullify=1), hand(force=1, reflection=1)
    other = hand(force=1, nullify=1)  # the Eldar could as well have held this
    results = {}
    for rules in (r, public):
        for theirs in (h1, other):
            s = at_turn(rules, h0, theirs)
            s = rules.apply(rules.apply(s, PASS), PASS)  # two passes: the hands are discarded
            assert s.stage == FLUX and s.phase == 1 and s.hands == (hand(), hand())
            assert s.discard == tuple(a + b for a, b in zip(h0, theirs)) and conserved(rules, s)
            results[(rules is public, theirs)] = s
    s, t = results[(False, h1)], results[(False, other)]
    assert s.face_down == (h0, h1)
    view = r.view(s, 0)
    assert view.discard == hand() and view.own_face_down == h0 and view.opponent_face_down == 2
    # Player 0 cannot tell the two discarded Eldar hands apart: same observation and text.
    assert np.array_equal(r.observe(s, 0), r.observe(t, 0))
    assert r.render(s, 0) == r.render(t, 0)
    assert "Discarded face down by Eldar: 2 cards" in r.render(s, 0)
    assert "Reflection" not in r.render(s, 0) and "Reflection" in r.render(s, 1)
    assert not np.array_equal(r.observe(s, 1), r.observe(t, 1))  # the Eldar know theirs
    # public_discards = true: the discarded hands lie face up for both players.
    s, t = results[(True, h1)], results[(True, other)]
    assert s.face_down == (hand(), hand()) and public.view(s, 0).discard == s.discard
    assert not np.array_equal(public.observe(s, 0), public.observe(t, 0))
    # Cards played lie face up whatever the setting: the Nullify played against a Smite.
    u = at_turn(r, hand(force=1), hand(nullify=1))
    u = r.apply(r.apply(r.apply(u, r.cast_action(LIB, SMITE, FAR, 1)), NULLIFY), 1)
    assert r.view(u, 0).discard == hand(force=1, nullify=1) and u.face_down == (hand(), hand())


def test_a_reshuffle_turns_every_discard_into_unseen_cards():
    r = lvf()
    s = at_turn(r, hand(force=2, nullify=1), hand(force=1, reflection=1))
    s = r.apply(r.apply(s, PASS), PASS)
    # Empty the deck into the face-up pile (conserving the 36 cards), then deal 2.
    s = evolve(s, discard=tuple(a + b for a, b in zip(s.discard, s.deck)), deck=hand())
    assert conserved(r, s) and sum(s.face_down[1]) == 2
    s, events = r.apply_with_events(s, 2)
    assert "reshuffle" in [e.kind for e in events]
    assert s.face_down == (hand(), hand()) and sum(s.discard) == 0 and sum(s.deck) == 36


def test_sample_hidden_deals_again_only_what_the_player_has_not_seen():
    r = lvf()
    s = at_turn(r, hand(force=2, nullify=1), hand(force=1, reflection=1))
    s = r.apply(r.apply(s, PASS), PASS)
    s = r.apply(r.apply(r.apply(r.apply(s, 3), Card.FORCE), Card.NULLIFY), Card.FORCE)
    s = r.apply(s, PASS)  # the Eldar (active) pass: the Space Marines decide
    assert s.stage == TURN and r.current_player(s) == 0 and sum(s.face_down[1]) == 2
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(200):
        d = r.sample_hidden(s, 0, rng)
        assert conserved(r, d) and min(d.deck) >= 0
        assert d.hands[0] == s.hands[0] and d.face_down[0] == s.face_down[0]
        assert sum(d.hands[1]) == sum(s.hands[1]) and sum(d.face_down[1]) == 2
        assert np.array_equal(r.observe(d, 0), r.observe(s, 0))
        assert r.render(d, 0) == r.render(s, 0) and r.legal_actions(d) == r.legal_actions(s)
        seen.add((d.hands[1], d.face_down[1]))
    assert len(seen) > 5  # the Eldar hand and face-down discards really are dealt again
