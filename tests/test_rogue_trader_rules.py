"""Rogue Trader psionics: exact chances and scripted rule sequences (rules/rogue-trader.md)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from psygym.core import CHANCE, TERMINAL, IllegalActionError
from psygym.editions import load
from psygym.editions.rogue_trader import rules_from_data
from psygym.editions.rogue_trader.actions import ABILITY_BASE, END, REST
from psygym.editions.rogue_trader.chances import armour_needed, psychic_save_chance, works_chance
from psygym.editions.rogue_trader.state import Phase, State
from psygym.kernel import evolve

LIB, WAR = 0, 1  # duel: Librarian (player 0) and Warlock (player 1)


@pytest.fixture(scope="module")
def duel():
    return load("rt", "duel", turns=12)


def ab(rules, name: str) -> int:
    return ABILITY_BASE + rules.data.index[name]


def num(rules, k: int) -> int:
    return rules.number_base + k


def with_unit(state: State, i: int, **changes) -> State:
    units = list(state.units)
    units[i] = evolve(units[i], **changes)
    return evolve(state, units=tuple(units))


def scenario(units0: list[dict], units1: list[dict], **game) -> dict:
    return {
        "edition": "rt",
        "name": "test",
        "game": game,
        "sides": [{"name": "A", "units": units0}, {"name": "B", "units": units1}],
    }


def psyker(name: str, abilities: list[str], pos=(0.0, 0.0), **kw) -> dict:
    return {
        "name": name,
        "wounds": 3,
        "toughness": 4,
        "save": 4,
        "will_power": 8,
        "intelligence": 9,
        "position": list(pos),
        "mastery": 4,
        "psi_level": 20,
        "abilities": abilities,
        **kw,
    }


# ----------------------------------------------------------------------- published numbers
@pytest.mark.parametrize(
    ("points", "expected"),
    [(1, Fraction(0)), (2, Fraction(1, 36)), (7, Fraction(21, 36)), (11, Fraction(35, 36))]
    + [(r, Fraction(1)) for r in range(12, 21)],
)
def test_works_chance_rt_2_3(points, expected):
    assert works_chance(points) == expected


def test_psychic_save_rt_3():
    assert psychic_save_chance(7) == Fraction(21, 36)
    assert psychic_save_chance(7, enhanced=2) == Fraction(10, 36)
    assert psychic_save_chance(7, augmented=1) == Fraction(26, 36)
    assert psychic_save_chance(5, enhanced=2, augmented=2) == Fraction(10, 36)
    # each point of enhanced attack lowers the save one step of the 2D6 ladder
    ladder = [psychic_save_chance(12, enhanced=k) for k in range(12)]
    assert ladder == sorted(ladder, reverse=True)
    assert psychic_save_chance(2, enhanced=1) == 0


def test_test_node_probabilities_rt_2_3(duel):
    s = with_unit(duel.initial_state(), LIB, points=7)
    s = duel.apply(s, ab(duel, "Mental Bolt"))
    assert s.phase == Phase.TEST and duel.current_player(s) == CHANCE
    assert dict(duel.chance_outcomes(s)) == pytest.approx({1: 21 / 36, 0: 15 / 36})


def test_twelve_points_needs_no_test_rt_2_3(duel):
    s = duel.initial_state()
    assert s.units[LIB].points == 12
    s = duel.apply(s, ab(duel, "Mental Bolt"))
    assert s.phase == Phase.ATTACK_BID  # no TEST node: it works
    assert s.units[LIB].points == 8  # cost deducted (RT-2.4)


# ----------------------------------------------------------------------- RT-2 costs
def test_cost_deducted_on_failure_rt_2_4(duel):
    s = with_unit(duel.initial_state(), LIB, points=7)
    s = duel.apply(s, ab(duel, "Mental Bolt"))
    s2, events = duel.apply_with_events(s, 0)  # the test fails
    assert s2.units[LIB].points == 3
    assert s2.units[WAR].hp == 2 and s2.score == 0
    assert "failed" in [e.kind for e in events]
    assert s2.active == 1  # the Librarian's turn is over
    s3 = duel.apply(s, 1)  # the test passes
    assert s3.units[LIB].points == 3 and s3.phase == Phase.ATTACK_BID


def test_cannot_attempt_beyond_points_rt_2_2(duel):
    s = with_unit(duel.initial_state(), LIB, points=3)
    legal = duel.legal_actions(s)
    assert ab(duel, "Mental Bolt") not in legal  # costs 4
    assert ab(duel, "Mental Blow") in legal and ab(duel, "Aura of Protection") in legal
    with pytest.raises(IllegalActionError, match="legal actions: 0 \\(Librarian rests\\)"):
        duel.apply(s, ab(duel, "Mental Bolt"))


def test_only_rest_left_is_automatic(duel):
    s = with_unit(duel.initial_state(), LIB, points=0)
    s = duel._settle(s, [])
    assert s.active == 1 and s.units[LIB].resting  # no forced single-choice node


def test_abilities_per_turn_rt_2_1():
    rules = rules_from_data(
        scenario(
            [psyker("P", ["Mental Blow", "Aura of Resistance"])],
            [psyker("Q", ["Mental Blow"], pos=(5, 0))],
            abilities_per_turn=2,
            max_bid=0,
        ),
        "test",
    )
    s = rules.initial_state()
    s = rules.apply(s, ab(rules, "Aura of Resistance"))
    assert s.phase == Phase.CHOOSE and s.active == 0 and s.used == 1
    assert REST not in rules.legal_actions(s) and END in rules.legal_actions(s)
    s = rules.apply(s, ab(rules, "Mental Blow"))  # second ability; no bids (max_bid 0)
    assert s.phase == Phase.RESOLVE
    s = rules.apply(s, 0)  # saved
    assert s.active == 1  # two abilities used: the turn is over


# ----------------------------------------------------------------------- RT-5 resting
def test_rest_regains_one_point_next_turn_rt_5(duel):
    s = with_unit(duel.initial_state(), LIB, points=10)
    s = duel.apply(s, REST)
    assert s.units[LIB].points == 10 and s.units[LIB].resting  # not before its next turn
    assert s.active == 1
    s = duel.apply(s, REST)  # the Warlock rests too
    assert s.active == 0 and s.units[LIB].points == 11 and not s.units[LIB].resting


def test_rest_not_above_psi_level_rt_5(duel):
    s = duel.initial_state()
    assert s.units[LIB].points == s.units[LIB].level == 12
    s = duel.apply(duel.apply(s, REST), REST)
    assert s.units[LIB].points == 12


def test_augmenting_a_save_cancels_the_rest(duel):
    s = duel.apply(duel.initial_state(), REST)  # Librarian rests at 12 (no gain anyway)
    s = with_unit(s, LIB, points=9)
    s = duel.apply(s, ab(duel, "Mental Bolt"))
    s = duel.apply(s, num(duel, 0))
    s = duel.apply(s, num(duel, 1))  # the Librarian augments by 1
    assert not s.units[LIB].resting and s.units[LIB].points == 8


# ----------------------------------------------------------------------- RT-3 bids
def test_bids_deducted_whatever_happens_rt_3_4(duel):
    s = duel.apply(duel.initial_state(), ab(duel, "Mental Bolt"))
    s = duel.apply(s, num(duel, 2))  # enhance 2
    assert s.phase == Phase.SAVE_BID and duel.current_player(s) == 1
    assert s.units[LIB].points == 8  # not yet deducted: the bid is secret
    s = duel.apply(s, num(duel, 3))  # augment 3
    assert s.phase == Phase.RESOLVE
    assert (s.units[LIB].points, s.units[WAR].points) == (6, 9)
    # WP 9 - 2 + 3 = 10: saved with 33/36
    dist = dict(duel.resolve_distribution(s))
    assert dist[0] == Fraction(33, 36)
    # Mental Bolt S4 vs T3 wounds on 3+; D4 capped at the Warlock's 2 wounds
    assert dist[3] == Fraction(3, 36) * Fraction(4, 6) * Fraction(3, 4)
    for outcome in (0, 2, 3):
        after = duel.apply(s, outcome)
        assert (after.units[LIB].points, after.units[WAR].points) == (6, 9)
    saved = duel.apply(s, 0)
    assert saved.units[WAR].hp == 2 and saved.score == 0
    hit = duel.apply(s, 3)
    assert hit.phase == Phase.OVER and hit.units[WAR].hp == 0 and hit.score == 2.0
    assert duel.current_player(hit) == TERMINAL


def test_bids_are_limited_only_by_points_rt_3_2_rt_3_3(duel):
    s = with_unit(duel.initial_state(), WAR, points=2)
    s = duel.apply(s, ab(duel, "Mental Bolt"))
    assert s.units[LIB].points == 8
    assert duel.legal_actions(s) == [num(duel, k) for k in range(9)]  # all 8 points, no cap
    s = duel.apply(s, num(duel, 8))
    assert duel.legal_actions(s) == [num(duel, k) for k in range(3)]  # 2 points


def test_max_bid_house_rule_caps_both_bids():
    capped = load("rt", "duel", max_bid=3)  # optional: the books have no cap
    s = capped.apply(capped.initial_state(), ab(capped, "Mental Bolt"))
    assert capped.legal_actions(s) == [num(capped, k) for k in range(4)]  # 8 points, cap 3
    with pytest.raises(IllegalActionError, match="enhances the attack by 3"):
        capped.apply(s, num(capped, 4))
    s = capped.apply(s, num(capped, 3))
    assert capped.legal_actions(s) == [num(capped, k) for k in range(4)]  # 12 points, cap 3
    s = capped.apply(s, num(capped, 3))
    assert (s.units[LIB].points, s.units[WAR].points, s.phase) == (5, 9, Phase.RESOLVE)


def test_scripted_uncapped_bids_rt_3():
    """A scripted duel with bids above the old cap of 3, forced outcomes, state after each step.

    RT-3.2/RT-3.3 set no limit on a bid but the bidder's psi-points; RT-3.4 deducts both bids
    whatever happens; RT-2.3 tests below 12 points; RT-5 a rest gives 1 point back.
    """
    duel = load("rt", "duel")
    s = duel.initial_state()
    assert (s.units[LIB].points, s.units[WAR].points) == (12, 12)
    # Turn 1: the Librarian's Mental Bolt (4 points; 12 points: no test, RT-2.3).
    s = duel.apply(s, ab(duel, "Mental Bolt"))
    assert s.phase == Phase.ATTACK_BID and s.units[LIB].points == 8
    assert duel.legal_actions(s) == [num(duel, k) for k in range(9)]
    info = duel.simultaneous_info(s)
    assert info.row_actions == [num(duel, k) for k in range(9)]
    assert info.col_actions == [num(duel, k) for k in range(13)]  # the Warlock's 12 points
    # All 8 remaining points on the enhanced attack: still secret, not yet deducted.
    s = duel.apply(s, num(duel, 8))
    assert s.phase == Phase.SAVE_BID and duel.current_player(s) == WAR
    assert (s.attack_bid, s.units[LIB].points) == (8, 8)
    assert duel.legal_actions(s) == [num(duel, k) for k in range(13)]
    # The Warlock augments by 5: both bids deducted (RT-3.4).
    s = duel.apply(s, num(duel, 5))
    assert s.phase == Phase.RESOLVE and (s.attack_bid, s.save_bid) == (8, 5)
    assert (s.units[LIB].points, s.units[WAR].points) == (0, 7)
    dist = dict(duel.resolve_distribution(s))
    assert dist[0] == Fraction(15, 36)  # WP 9 - 8 + 5 = 6
    # Mental Bolt S4 vs T3 wounds on 3+; D4 wounds capped at the Warlock's 2
    assert dist[1] == Fraction(21, 36) * Fraction(2, 6)
    assert dist[2] == Fraction(21, 36) * Fraction(4, 6) * Fraction(1, 4)
    # Forced outcome 2: one wound. Turn 2 is the Warlock's.
    s = duel.apply(s, 2)
    assert (s.units[WAR].hp, s.score, s.active, s.turn) == (1, 1.0, WAR, 1)
    assert s.phase == Phase.CHOOSE and (s.units[LIB].points, s.units[WAR].points) == (0, 7)
    # The Warlock's Mental Bolt with 7 points: a test (RT-2.3), forced to work.
    s = duel.apply(s, ab(duel, "Mental Bolt"))
    assert s.phase == Phase.TEST and dict(duel.chance_outcomes(s)) == pytest.approx(
        {0: 15 / 36, 1: 21 / 36}
    )
    s = duel.apply(s, 1)
    assert s.phase == Phase.ATTACK_BID and s.units[WAR].points == 3
    assert duel.legal_actions(s) == [num(duel, k) for k in range(4)]
    assert duel.simultaneous_info(s) is None  # the Librarian has no point to bid
    s = duel.apply(s, num(duel, 3))  # the save bid (0) is skipped
    assert s.phase == Phase.RESOLVE and (s.attack_bid, s.save_bid) == (3, 0)
    assert (s.units[LIB].points, s.units[WAR].points) == (0, 0)
    assert dict(duel.resolve_distribution(s))[0] == Fraction(10, 36)  # WP 8 - 3 = 5
    # Forced outcome 1: no wound. Both psykers are empty, so both rest through turns 3 and 4
    # automatically (only REST is legal); the Librarian starts turn 5 with 1 point back (RT-5),
    # the resting Warlock gets its point at the start of its own turn.
    s = duel.apply(s, 1)
    assert (s.units[LIB].hp, s.score) == (3, 1.0)
    assert (s.turn, s.active, s.phase) == (4, LIB, Phase.CHOOSE)
    assert (s.units[LIB].points, s.units[WAR].points) == (1, 0)
    assert not s.units[LIB].resting and s.units[WAR].resting
    assert duel.legal_actions(s) == [REST, ab(duel, "Mental Blow")]


def test_defender_does_not_see_the_pending_bid_rt_3_4(duel):
    s = duel.apply(duel.initial_state(), ab(duel, "Mental Bolt"))
    assert duel.is_response(s) is False
    bids = [duel.apply(s, num(duel, k)) for k in range(4)]
    assert len(set(bids)) == 4  # the state holds the pending bid
    assert all(duel.is_response(b) for b in bids)
    first = duel.observe(bids[0], WAR)
    for b in bids[1:]:
        np.testing.assert_array_equal(duel.observe(b, WAR), first)
        assert duel.render(b, WAR) == duel.render(bids[0], WAR)
        assert duel.legal_actions(b) == duel.legal_actions(bids[0])
    assert "secret" in duel.render(bids[2], WAR)
    assert "bid: 2" in duel.render(bids[2], LIB) and "bid: 2" in duel.render(bids[2])
    assert duel.observe(bids[0], WAR)[0:6].tolist() == [0, 0, 0, 0, 1, 0]  # a save bid is asked


def test_simultaneous_info_matrix_game_rt_3_4(duel):
    s0 = duel.initial_state()
    assert duel.simultaneous_info(s0) is None
    s = duel.apply(s0, ab(duel, "Mental Bolt"))
    info = duel.simultaneous_info(s)
    assert info is not None
    row_player, rows, col_player, cols, fn = info
    assert (row_player, col_player) == (0, 1)
    # No cap (RT-3.2, RT-3.3): the Librarian's 8 points left after the bolt, the Warlock's 12.
    assert rows == [num(duel, k) for k in range(9)] and cols == [num(duel, k) for k in range(13)]
    after = fn(rows[1], cols[2])
    assert after == duel.apply(duel.apply(s, rows[1]), cols[2])
    assert (after.attack_bid, after.save_bid, after.phase) == (1, 2, Phase.RESOLVE)
    assert duel.simultaneous_info(duel.apply(s, rows[1])) is None  # not at the second node


def test_no_simultaneous_move_against_a_non_psyker():
    rules = load("rt", "psyker-vs-squad")
    s = rules.apply(rules.initial_state(), ab(rules, "Rout"))
    s = rules.apply(s, rules.target_base + 1)  # the Ork Boyz
    assert s.phase == Phase.ATTACK_BID
    assert rules.simultaneous_info(s) is None
    s = rules.apply(s, num(rules, 4))
    assert s.phase == Phase.RESOLVE and s.save_bid == 0  # no save bid node for a squad
    # WP 6 - 4: saved on 2 only
    assert dict(rules.resolve_distribution(s)) == {0: Fraction(1, 36), 1: Fraction(35, 36)}
    routed = rules.apply(s, 1)
    assert routed.units[1].out and routed.score == 5.0  # remaining wounds (RT-4.5)


# ----------------------------------------------------------------------- RT-2.5 / RT-4.6 cures
def test_cure_injury_failure_wound_rt_2_5(duel):
    s = with_unit(duel.initial_state(), LIB, points=5, hp=2)
    s = evolve(s, score=-1.0)
    assert ab(duel, "Cure Injury") in duel.legal_actions(s)
    s = duel.apply(s, ab(duel, "Cure Injury"))
    assert s.phase == Phase.TEST  # its only target (itself) is chosen automatically
    failed, events = duel.apply_with_events(s, 0)
    assert failed.units[LIB].hp == 1 and failed.units[LIB].points == 2
    assert failed.score == -2.0
    assert [e.get("amount") for e in events if e.kind == "wounds"] == [1]
    healed = duel.apply(s, 1)
    assert healed.units[LIB].hp == 3 and healed.score == 0.0 and healed.units[LIB].points == 2


def test_cure_injury_only_exactly_one_wound_down(duel):
    s = with_unit(duel.initial_state(), LIB, hp=1)
    assert ab(duel, "Cure Injury") not in duel.legal_actions(s)
    s = with_unit(duel.initial_state(), LIB, hp=3)
    assert ab(duel, "Cure Injury") not in duel.legal_actions(s)


def test_cure_wounds_ten_points_per_wound_rt_4_6():
    rules = rules_from_data(
        scenario(
            [psyker("P", ["Cure Wounds", "Mental Blow"], psi_level=40, wounds=5)],
            [psyker("Q", ["Mental Blow"], pos=(5, 0))],
        ),
        "test",
    )
    s = with_unit(rules.initial_state(), 0, hp=1, points=25)
    s = rules.apply(s, ab(rules, "Cure Wounds"))
    assert s.phase == Phase.AMOUNT
    assert rules.legal_actions(s) == [num(rules, 1), num(rules, 2)]  # 25 points: 2 wounds
    s = rules.apply(s, num(rules, 2))  # 25 >= 12: works without a test
    assert s.units[0].hp == 3 and s.units[0].points == 5 and s.score == 2.0


# ----------------------------------------------------------------------- RT-4.3 auras
def test_aura_stacking_rt_4_3():
    rules = rules_from_data(
        scenario(
            [
                psyker(
                    "P",
                    ["Aura of Resistance", "Aura of Protection", "Aura of Invulnerability"],
                    save=5,
                )
            ],
            [psyker("Q", ["Telekinesis 2", "Destroy Aura"], pos=(5, 0), toughness=3)],
            turns=10,
            max_bid=0,
        ),
        "test",
    )
    res, pro, inv = (
        ab(rules, n)
        for n in ("Aura of Resistance", "Aura of Protection", "Aura of Invulnerability")
    )
    s = rules.apply(rules.initial_state(), res)
    assert s.units[0].aura == 1
    s = rules.apply(s, REST)  # Q rests
    assert set(rules.legal_actions(s)) == {REST, pro, inv}  # only a higher aura (one at a time)
    s = rules.apply(s, pro)
    assert s.units[0].aura == 2  # replaced, not added (+2, not +3)
    # TK2 S3 vs T4: 5+ to wound; armour 5+ with +2 aura: 3+
    assert armour_needed(5, 2) == 3 and armour_needed(7, 1) == 6 and armour_needed(4, 4) == 0
    s_q = rules.apply(s, ab(rules, "Telekinesis 2"))
    dist = dict(rules.resolve_distribution(s_q))
    p_wound = Fraction(2, 6) * Fraction(2, 6)
    assert dist[1] == 1 - p_wound
    assert ab(rules, "Destroy Aura") in rules.legal_actions(s)  # level 2: can be dispelled
    s = rules.apply(s, ab(rules, "Destroy Aura"))  # no save
    assert s.units[0].aura == 0 and s.active == 0
    s = rules.apply(s, inv)
    s = with_unit(s, 1, points=20)
    assert s.units[0].aura == 4
    assert ab(rules, "Destroy Aura") not in rules.legal_actions(s)  # level 4 is out of reach
    assert set(rules.legal_actions(s)) == {REST, ab(rules, "Telekinesis 2")}


# ----------------------------------------------------------------------- RT-4.5 Steal Mind
def test_steal_mind_skips_the_targets_turns_rt_4_5(duel):
    s = duel.initial_state()
    s = duel.apply(s, REST)  # Librarian
    s = duel.apply(s, ab(duel, "Steal Mind"))  # Warlock, 12 points: works
    s = duel.apply(s, num(duel, 0))
    s = duel.apply(s, num(duel, 0))
    assert s.phase == Phase.RESOLVE
    assert dict(duel.resolve_distribution(s))[2] == (1 - Fraction(26, 36)) / 6  # WP 8
    s, events = duel.apply_with_events(s, 2)  # mind stolen for 2 of its turns
    # the Librarian's next turn is skipped straight away: the Warlock is to move again
    assert s.active == 1 and s.turn == 3 and duel.current_player(s) == 1
    assert s.units[LIB].stolen == 1
    assert [e.kind for e in events].count("idle") == 1
    s = duel.apply(s, REST)  # Warlock
    assert s.active == 1 and s.turn == 5 and s.units[LIB].stolen == 0  # second turn skipped
    assert ab(duel, "Steal Mind") in duel.legal_actions(s)
    s = duel.apply(s, REST)
    assert s.active == 0 and duel.current_player(s) == 0 and s.phase == Phase.CHOOSE
    assert s.turn == 6


def test_a_stolen_mind_cannot_augment(duel):
    s = evolve(duel.initial_state(), active=1)
    s = with_unit(s, LIB, stolen=1)
    s = duel._next_actor(s, -1, [])
    s = duel.apply(s, ab(duel, "Mental Bolt"))
    s = duel.apply(s, num(duel, 1))
    assert s.phase == Phase.RESOLVE and s.save_bid == 0


# ----------------------------------------------------------------------- other effects
def test_confusion_fear_and_strength_of_mind():
    rules = rules_from_data(
        scenario(
            [psyker("P", ["Cause Confusion", "Cause Fear", "Strength of Mind"])],
            [psyker("Q", ["Mental Blow"], pos=(5, 0), will_power=7)],
            max_bid=0,
            turns=10,
            ability_values={"Cause Fear": 0.5},
        ),
        "test",
    )
    s = rules.apply(rules.initial_state(), ab(rules, "Cause Fear"))
    s = rules.apply(s, 1)
    assert s.units[1].afraid and s.score == 0.5
    s = rules.apply(s, REST)
    assert ab(rules, "Cause Fear") not in rules.legal_actions(s)  # not twice
    s = rules.apply(s, ab(rules, "Cause Confusion"))
    s = rules.apply(s, 1)
    assert s.units[1].confused
    assert s.phase == Phase.RECOVER and s.actor == 1  # Q tests at the start of its turn
    assert dict(rules.chance_outcomes(s)) == pytest.approx({1: 21 / 36, 0: 15 / 36})
    still = rules.apply(s, 0)
    assert still.active == 0 and still.units[1].confused  # it did nothing
    recovered = rules.apply(s, 1)
    assert recovered.active == 1 and rules.current_player(recovered) == 1
    s = rules.apply(still, ab(rules, "Strength of Mind"))
    assert s.phase == Phase.TEST  # 10 points left
    s = rules.apply(s, 1)
    assert s.units[0].wp_bonus == 1 and rules.will_power(s, 0) == 9
    s = rules.apply(s, 0)  # Q's recovery fails again
    assert ab(rules, "Strength of Mind") not in rules.legal_actions(s)  # once


def test_value_only_ability_scores_its_value():
    rules = rules_from_data(
        scenario(
            [psyker("P", ["Wind Blast", "Telepathy 1"])],
            [psyker("Q", [], pos=(5, 0))],
            ability_values={"Wind Blast": 1.5},
        ),
        "test",
    )
    s, events = rules.apply_with_events(rules.initial_state(), ab(rules, "Wind Blast"))
    assert s.score == 1.5
    assert [e.get("value") for e in events if e.kind == "manifest"] == [1.5]


def test_wounds_do_not_spill_over_models():
    rules = load("rt", "psyker-vs-squad")
    s = rules.apply(rules.initial_state(), ab(rules, "Mental Blitz"))
    s = rules.apply(s, rules.target_base + 1)
    s = rules.apply(s, num(rules, 0))
    dist = dict(rules.resolve_distribution(s))
    assert max(dist) == 2  # at most 1 wound: one Boy of 1 wound
    s = rules.apply(s, 2)
    assert s.units[1].hp == 4 and s.score == 1.0


def test_game_ends_when_a_side_has_no_unit_left_rt_6_1(duel):
    s = with_unit(duel.initial_state(), WAR, hp=1, points=0)
    s = duel.apply(s, ab(duel, "Mental Blow"))
    s = duel.apply(s, num(duel, 0))
    assert s.phase == Phase.RESOLVE  # the Warlock has no points: no save bid node
    s = duel.apply(s, 2)
    assert duel.is_terminal(s) and duel.returns(s) == (1.0, -1.0)


def test_game_lasts_the_set_number_of_turns_rt_6_1():
    rules = load("rt", "duel")
    s = rules.initial_state()
    for _ in range(6):
        assert not rules.is_terminal(s)
        s = rules.apply(s, REST)
    assert rules.is_terminal(s) and s.turn == 6


# ----------------------------------------------------------------------- RT-1 generation
def test_random_generation_rt_1():
    data = scenario(
        [psyker("P", "random", psi_level=None, mastery=2, intelligence=3)],
        [psyker("Q", "random", pos=(5, 0), psi_level=None, mastery=1)],
        psi_level="random",
        ability_count="random",
    )
    rules = rules_from_data(data, "test")
    s = rules.initial_state()
    assert s.phase == Phase.SETUP_LEVEL and s.actor == 0
    levels = dict(rules.chance_outcomes(s))
    assert min(levels) == 6 and max(levels) == 36  # 6D6 for mastery 2 (RT-1.1)
    assert sum(levels.values()) == pytest.approx(1.0)
    s = rules.apply(s, 20)
    assert s.units[0].level == 20 and s.units[0].points == 20
    assert s.phase == Phase.SETUP_COUNT
    counts = dict(rules.chance_outcomes(s))
    assert counts == pytest.approx({2: 1 / 36, 3: 35 / 36})  # 2D6 capped at intelligence 3
    s = rules.apply(s, 3)
    pool = dict(rules.chance_outcomes(s))
    assert len(pool) == 20 and all(p == pytest.approx(1 / 20) for p in pool.values())
    assert all(rules.abilities[a].level <= 2 for a in pool)  # RT-1.2
    first = rules.data.index["Mental Bolt"]
    s = rules.apply(s, first)
    pool = dict(rules.chance_outcomes(s))
    assert first not in pool and len(pool) == 19  # a repeated roll is re-rolled (RT-1.3)
    rng = np.random.default_rng(3)
    while rules.current_player(s) == CHANCE:
        s = rules.apply(s, rules.sample_chance(s, rng))
    assert len(s.units[0].abilities) == 3 and len(set(s.units[0].abilities)) == 3
    assert 1 <= len(s.units[1].abilities) <= 6
    assert all(rules.abilities[a].level == 1 for a in s.units[1].abilities)
    assert 3 <= s.units[1].level <= 18


def test_typical_generation_rt_1():
    rules = rules_from_data(
        scenario(
            [psyker("P", "random", psi_level=None, mastery=3, intelligence=7)],
            [psyker("Q", [], pos=(5, 0))],
        ),
        "test",
    )
    s = rules.initial_state()
    assert s.units[0].level == 30  # typical 10 x mastery
    assert s.phase == Phase.SETUP_DRAW and s.left == 7  # typical 9, capped by intelligence
    assert len(rules.chance_outcomes(s)) == 30


# ----------------------------------------------------------------------- sampling
def test_sampled_tests_follow_the_exact_chance(duel):
    s = with_unit(duel.initial_state(), LIB, points=7)
    s = duel.apply(s, ab(duel, "Mental Bolt"))
    rng = np.random.default_rng(12345)
    n = 20000
    works = sum(duel.sample_chance(s, rng) for _ in range(n)) / n
    # 21/36 = 0.583; off-by-one rules give 15/36 = 0.417 or 26/36 = 0.722
    assert abs(works - 21 / 36) < 0.015
