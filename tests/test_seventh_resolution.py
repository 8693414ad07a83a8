"""7th-edition rules, scripted as in ``test_seventh_rules.py``: resolving powers (7E-7), the
game's end and score (7E-8), generating powers (7E-2) and the API's labels, views and
observation. Rule ids refer to ``shared/rules/seventh.md``.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import (
    act,
    action_by_label,
    choose,
    choose_ev,
    exact_outcomes,
    force,
    force_ev,
    kinds,
    labels,
    psyker7,
    rules_from,
    scenario7,
    unit7,
    walk_exact,
)
from psygym_agents.base import RandomPolicy
from seventh_cases import (
    BROS,
    CULT,
    LIB,
    F,
    base,
    cast,
    deny,
    gen_rules,
    perils_state,
    roll,
    start,
    wounds,
)

from psygym.combat import capped
from psygym.core import CHANCE, TERMINAL, IllegalActionError, play_game
from psygym.dice import binomial
from psygym.editions.seventh.state import Stage


@pytest.fixture(scope="module")
def rules():
    return rules_from(base())


# ----------------------------------------------------------------------------- 7E-7 resolving
def test_witchfire_wounds_are_scored_by_value_per_wound_7E_7_1(rules):
    s = cast(rules, start(rules, 4), "Lib: Smite (WC 1) at Cultists", 2)
    s = deny(rules, force(rules, s, roll(1)), 0)
    assert s.stage == Stage.EFFECT and s.targets == (CULT,)
    assert exact_outcomes(rules, s) == dict(binomial(4, F(4, 9)))
    s, ev = force_ev(rules, s, 4)
    assert wounds(s)[CULT] == 6 and s.score == 2.0
    assert kinds(ev) == ["wounds"] and ev[0].player == 1


def test_effect_is_capped_by_wounds_left_7E_7_1(rules):
    s = cast(rules, start(rules, 4), "Lib: Smite (WC 1) at Sorcerer", 2)
    s = deny(rules, force(rules, s, roll(1)), 0)
    # Sorcerer: T4, 3+ save, AP2 removes it, 2 wounds: p = 4/6 * 1/2 per hit, capped at 2
    assert exact_outcomes(rules, s) == capped(dict(binomial(4, F(1, 3))), 2)


@pytest.mark.parametrize("wounds_dealt,lib_after,score", [(1, 2, 0.5), (0, 1, -1.0)])
def test_life_leech_heals_its_caster_when_it_wounds_7E_7_1(wounds_dealt, lib_after, score):
    """disciplines.md: Life Leech heals the caster one wound (scored back) if it caused any."""
    data = base()
    data["sides"][0]["units"][0]["psyker"] = psyker7(2, powers=["Life Leech"])
    rules = rules_from(data)
    s = perils_state(rules, label="Lib: Life Leech (WC 1) at Cultists")
    s = force(rules, s, 4)  # Psychic Backlash: the Librarian is down to 1 wound
    assert wounds(s)[LIB] == 1 and s.score == -1
    s = deny(rules, s, 0)
    # 2 hits, BS4 3+, S6 v T3 2+, AP2 beats the 6+ save: p = 4/6 * 5/6 = 5/9
    assert exact_outcomes(rules, s) == dict(binomial(2, F(5, 9)))
    s, ev = force_ev(rules, s, wounds_dealt)
    assert wounds(s)[LIB] == lib_after and s.score == score
    assert ("heal" in kinds(ev)) == bool(wounds_dealt)


def test_vortex_of_doom_perils_when_it_fails_7E_4_4():
    """perils_on_fail: a failed Vortex of Doom perils even without two 6s."""
    rules = rules_from(
        scenario7(
            [
                unit7(
                    "Paladin",
                    wounds=2,
                    leadership=9,
                    psyker=psyker7(2, powers=["Vortex of Doom"], grey_knight=True),
                )
            ],
            [unit7("Squad", (0, 10), models=5)],
        )
    )
    s = cast(rules, start(rules, 4), "Vortex of Doom", 3)
    failed, ev = force_ev(rules, s, roll(2))
    assert kinds(ev) == ["attempt", "perils"] and failed.stage == Stage.PERILS
    passed, ev = force_ev(rules, s, roll(3))
    assert kinds(ev) == ["attempt", "passed"] and passed.stage == Stage.DENY


def test_blessing_copies_do_not_stack_7E_7_2():
    rules = rules_from(base(phases=3, rounds=2))
    s = cast(rules, start(rules, 6), "Lib: Forewarning (WC 1) at Brothers", 2)
    s = deny(rules, force(rules, s, roll(1)), 0)
    assert s.score == 2 and (rules.power_index["Forewarning"], BROS, 0) in s.effects
    options = set(labels(rules, s).values())
    assert "Brothers: Forewarning (WC 1) at Brothers" not in options
    assert "Brothers: Forewarning (WC 1) at Lib" in options  # a different unit is fine
    assert "Lib: Iron Arm (WC 1)" in options  # a different blessing is fine
    # The blessing lasts until the caster's next Psychic phase.
    s = act(rules, s, 0)
    s = act(rules, start(rules, 1, s), 0)
    s = start(rules, 1, s)
    assert s.effects == frozenset()
    assert "Brothers: Forewarning (WC 1) at Brothers" in labels(rules, s).values()


# ----------------------------------------------------------------------------- 7E-8 game
def test_game_alternates_phases_and_ends_7E_8_1():
    rules = rules_from(base(phases=None, rounds=2, first_player=1))
    s = rules.initial_state()
    actives = []
    while not rules.is_terminal(s):
        s = start(rules, 3, s)
        actives.append((s.phase, s.active))
        s = act(rules, s, 0)
    assert actives == [(0, 1), (1, 0), (2, 1), (3, 0)]
    assert rules.current_player(s) == TERMINAL and rules.legal_actions(s) == []
    assert rules.returns(s) == (0.0, -0.0)


def test_game_ends_early_when_a_side_is_wiped_out_7E_8_1():
    rules = rules_from(
        scenario7(
            [unit7("Lib", wounds=2, psyker=psyker7(2, powers=["Smite", "Iron Arm"]))],
            [unit7("Lone", (0, 10), wounds=1)],
            phases=None,
            rounds=5,
        )
    )
    s = cast(rules, start(rules, 6), "Smite", 2)
    s = force(rules, s, roll(2))
    assert s.stage == Stage.DENY  # the defenders have the roll's dice to deny
    s = deny(rules, s, 0)
    s, ev = force_ev(rules, s, 1)
    assert "slain" in kinds(ev)
    assert s.stage == Stage.OVER and rules.returns(s) == (1.0, -1.0)


def test_game_ends_when_a_side_is_wiped_out_by_the_next_phase_7E_8_1():
    """The part of 7E-8.1 that holds today: no further phase starts once a side is gone."""
    rules = rules_from(
        scenario7(
            [unit7("Lib", wounds=2, psyker=psyker7(2, powers=["Smite"]))],
            [unit7("Lone", (0, 10), wounds=1)],
            phases=None,
            rounds=5,
        )
    )
    s = cast(rules, start(rules, 6), "Smite", 2)
    s = deny(rules, force(rules, s, roll(2)), 0)
    s = force(rules, s, 1)
    assert s.stage == Stage.OVER and s.phase == 1 and rules.returns(s) == (1.0, -1.0)


def test_score_is_zero_sum_7E_8_2(rules):
    s = perils_state(rules)
    s = force(rules, s, 4)
    a, b = rules.returns(s)
    assert a == -1 and b == 1


# ----------------------------------------------------------------------------- 7E-2 generation


def test_generation_ml2_one_discipline_gains_focus_7E_2_1_and_7E_2_3():
    rules = gen_rules(unit7("Lib", wounds=2, psyker=psyker7(2, disciplines=["Biomancy"])))
    s = rules.initial_state()
    assert s.stage == Stage.GEN_ROLL  # one discipline: no choice to make
    numbered = {
        rules.power_index[n]
        for n in ("Iron Arm", "Enfeeble", "Life Leech", "Warp Speed", "Endurance", "Haemorrhage")
    }
    assert exact_outcomes(rules, s) == {p: F(1, 6) for p in numbered}
    s = force(rules, s, rules.power_index["Iron Arm"])
    assert s.stage == Stage.SWAP and rules.current_player(s) == 0
    assert labels(rules, s) == {rules.SWAP: "Keep Iron Arm", rules.SWAP + 1: "Swap for Smite"}
    s = act(rules, s, rules.SWAP)
    # duplicates are re-rolled: Iron Arm is no longer an outcome (7E-2.1)
    assert exact_outcomes(rules, s) == {
        p: F(1, 5) for p in numbered - {rules.power_index["Iron Arm"]}
    }
    s = act(rules, force(rules, s, rules.power_index["Enfeeble"]), rules.SWAP)
    assert s.stage == Stage.PHASE_ROLL
    known = {rules.powers[p].name for p in s.units[0].powers}
    assert known == {"Iron Arm", "Enfeeble", "Smite"}  # Psychic Focus adds the Primaris


def test_generation_swap_for_primaris_7E_2_2():
    rules = gen_rules(unit7("Lib", wounds=2, psyker=psyker7(2, disciplines=["Biomancy"])))
    s = force(rules, rules.initial_state(), rules.power_index["Iron Arm"])
    s = act(rules, s, rules.SWAP + 1)
    assert {rules.powers[p].name for p in s.units[0].powers} == {"Smite"}
    # Iron Arm was given up, so it can be rolled again; the Primaris is known: no swap offer
    assert rules.power_index["Iron Arm"] in exact_outcomes(rules, s)
    s = force(rules, s, rules.power_index["Iron Arm"])
    assert s.stage == Stage.PHASE_ROLL
    assert {rules.powers[p].name for p in s.units[0].powers} == {"Smite", "Iron Arm"}


def test_generation_two_disciplines_break_focus_7E_2_3():
    rules = gen_rules(
        unit7("Lib", wounds=2, psyker=psyker7(2, disciplines=["Biomancy", "Telepathy"]))
    )
    s = rules.initial_state()
    assert s.stage == Stage.DISCIPLINE
    assert set(labels(rules, s).values()) == {"Lib rolls on Biomancy", "Lib rolls on Telepathy"}
    s = choose(rules, s, "Biomancy")
    s = act(rules, force(rules, s, rules.power_index["Iron Arm"]), rules.SWAP)
    s = choose(rules, s, "Telepathy")
    s = act(rules, force(rules, s, rules.power_index["Dominate"]), rules.SWAP)
    assert s.stage == Stage.PHASE_ROLL
    assert {rules.powers[p].name for p in s.units[0].powers} == {"Iron Arm", "Dominate"}


def test_generation_force_weapon_knows_force_and_keeps_focus_7E_2_4():
    rules = gen_rules(
        unit7("Lib", wounds=2, psyker=psyker7(1, disciplines=["Biomancy"], force_weapon=True))
    )
    s = rules.initial_state()
    assert {rules.powers[p].name for p in s.units[0].powers} == {"Force"}
    s = act(rules, force(rules, s, rules.power_index["Warp Speed"]), rules.SWAP)
    assert {rules.powers[p].name for p in s.units[0].powers} == {"Force", "Warp Speed", "Smite"}


def test_generation_fixed_powers_generate_nothing_7E_2_5():
    rules = gen_rules(
        unit7("Paladin", wounds=2, psyker=psyker7(1, powers=["Hammerhand"], grey_knight=True))
    )
    s = rules.initial_state()
    assert s.stage == Stage.PHASE_ROLL
    assert {rules.powers[p].name for p in s.units[0].powers} == {"Hammerhand"}


def test_generation_every_outcome_ends_with_ml_powers_plus_focus():
    """Exact walk of an ML3 psyker on one discipline: always 3 numbered powers + Primaris."""
    rules = gen_rules(unit7("Lib", wounds=2, psyker=psyker7(3, disciplines=["Telepathy"])))
    ends = walk_exact(
        rules,
        rules.initial_state(),
        stop=lambda s: s.stage == Stage.PHASE_ROLL,
        decide=lambda s: rules.SWAP,
    )
    assert len(ends) == 20  # C(6, 3) sets, equally likely
    assert set(ends.values()) == {F(1, 20)}
    shriek = rules.power_index["Psychic Shriek"]
    assert all(len(s.units[0].powers) == 4 and shriek in s.units[0].powers for s in ends)


# ----------------------------------------------------------------------------- API details
def test_illegal_action_lists_legal_ones_with_labels(rules):
    s = start(rules, 3)
    with pytest.raises(IllegalActionError) as err:
        rules.apply(s, 999)
    msg = str(err.value)
    assert "action 999 is not legal for player 0" in msg
    assert "0 (End the Psychic phase)" in msg
    assert (
        f"{action_by_label(rules, s, 'Lib: Smite (WC 1) at Cultists')} "
        "(Lib: Smite (WC 1) at Cultists)" in msg
    )
    c = cast(rules, s, "Lib: Smite (WC 1) at Cultists", 2)
    with pytest.raises(IllegalActionError, match=r"as a chance outcome.*2 \(1 success\)"):
        rules.apply(c, 99)


def test_current_player_and_is_response_by_stage(rules):
    s = rules.initial_state()
    assert rules.current_player(s) == CHANCE and not rules.is_response(s)
    s = start(rules, 3)
    assert rules.current_player(s) == 0 and not rules.is_response(s)
    s = cast(rules, s, "Lib: Enfeeble (WC 1) at Cultists", 2)
    assert rules.current_player(s) == CHANCE
    s = force(rules, s, roll(1))
    assert rules.current_player(s) == 1 and rules.is_response(s)


def test_observation_layout_head(rules):
    s = start(rules, 3)
    obs = rules.observe(s, 0)
    assert obs.shape == (rules.observation_size,) and obs.dtype == np.float32
    assert obs[:6].tolist() == [0, 0, 1, 0, 0, 0]  # SELECT
    assert obs[7] == 1 and obs[8] == pytest.approx(0.6) and obs[9] == pytest.approx(0.4)
    other = rules.observe(s, 1)
    assert other[7] == 0 and other[8] == pytest.approx(0.4)
    d = force(rules, cast(rules, s, "Lib: Enfeeble (WC 1) at Cultists", 2), roll(1))
    assert rules.observe(d, 1)[:6].tolist() == [0, 0, 0, 0, 1, 0]  # DENY
    c = cast(rules, s, "Lib: Enfeeble (WC 1) at Cultists", 2)
    assert rules.observe(c, 0)[:6].tolist() == [0, 0, 0, 0, 0, 1]  # chance


def test_render_shows_units_pools_and_the_cast(rules):
    s = cast(rules, start(rules, 3), "Lib: Enfeeble (WC 1) at Cultists", 2)
    text = rules.render(s)
    for part in ("Lib", "Brothers", "Sorcerer", "Cultists", "Dice", "Casting: Lib -> Enfeeble"):
        assert part in text
    assert "Game over" in rules.render(
        play_game(rules, [RandomPolicy(), RandomPolicy()], np.random.default_rng(0))
    )


def test_describe_views_are_typed(rules):
    s = start(rules, 3)
    a = action_by_label(rules, s, "Lib: Smite (WC 1) at Cultists")
    view = rules.describe(s, a)
    assert (view.psyker, view.power, view.target, view.warp_charge) == (
        "Lib",
        "Smite",
        "Cultists",
        1,
    )
    s2, _ = choose_ev(rules, s, "Lib: Smite (WC 1) at Cultists")
    assert rules.describe(s2, rules.DICE + 2).dice == 3
