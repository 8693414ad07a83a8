"""7th-edition rules, scripted through explicit decisions and forced chance outcomes: the
shipped scenarios, pools (7E-3), casting (7E-4), denying (7E-5) and Perils of the Warp (7E-6).

Each test builds a small scenario dict, walks the state machine (``tests.helpers.force`` for
dice, ``choose``/``act`` for decisions) and asserts the state after each step: stage, wounds,
pools, score. Resolving powers, the game's end, generation and the API details are in
``test_seventh_resolution.py``. Rule ids refer to ``shared/rules/seventh.md``.
"""

from __future__ import annotations

from fractions import Fraction
from itertools import product

import numpy as np
import pytest
from helpers import (
    act,
    act_ev,
    choose,
    exact_outcomes,
    force,
    force_ev,
    kinds,
    labels,
    psyker7,
    rules_from,
    scenario7,
    unit7,
)
from psygym_agents.base import RandomPolicy
from seventh_cases import BROS, CULT, LIB, F, base, cast, deny, perils_state, roll, start, wounds

import psygym
from psygym.combat import wound_distribution
from psygym.conformance import check_rules
from psygym.core import play_game
from psygym.dice import binomial
from psygym.editions import scenario_names
from psygym.editions.seventh.state import Stage


@pytest.fixture(scope="module")
def rules():
    return rules_from(base())


# ----------------------------------------------------------------------------- shipped scenarios
@pytest.mark.parametrize("name", scenario_names("7th"))
def test_check_rules_on_every_shipped_scenario(name):
    """Every API invariant along random playouts of each shipped 7th scenario."""
    rules = psygym.load("7th", name)
    report = check_rules(rules, games=25, seed=3)
    assert report.games == 25 and report.decision_nodes > 25 and report.chance_nodes > 25


def test_check_rules_on_the_scripted_scenarios(deny_rules):
    """The custom scenarios used below satisfy the API invariants too."""
    report = check_rules(rules_from(base(phases=4, rounds=2)), games=40, seed=1)
    assert report.decision_nodes > 40
    report = check_rules(deny_rules, games=20, seed=2)
    assert report.decision_nodes > 40


def test_a_thousand_random_games_without_error():
    """900 random single-phase games and 100 random duels (7E-8): all end, zero-sum, and the
    games reach perils, denies and deaths (so the random play explores the rules)."""
    seen: set[str] = set()

    def on_step(_s, _a, events):
        seen.update(e.kind for e in events)

    rng = np.random.default_rng(1000)
    for name, games in (("single-phase", 900), ("duel", 100)):
        rules = psygym.load("7th", name)
        players = [RandomPolicy(), RandomPolicy()]
        for _ in range(games):
            end = play_game(rules, players, rng, on_step=on_step)
            assert rules.is_terminal(end) and end.stage == Stage.OVER
            a, b = rules.returns(end)
            assert a == -b == end.score
    assert {
        "phase",
        "attempt",
        "passed",
        "perils",
        "deny_attempt",
        "denied",
        "manifest",
        "wounds",
        "slain",
        "generate",
    } <= seen


# ----------------------------------------------------------------------------- 7E-3 pools
def test_pools_7E_3_1_roll_plus_mastery(rules):
    for r in range(1, 7):
        s = start(rules, r)
        assert s.pools == (r + 3, r + 1)
        assert s.active == 0


def test_pool_bonus_7E_3_1_only_for_the_active_player():
    data = base(phases=2)
    data["sides"][0]["pool_bonus"] = 2
    data["sides"][1]["pool_bonus"] = 1
    rules = rules_from(data)
    s = start(rules, 3)
    assert s.pools == (3 + 3 + 2, 3 + 1)
    s = act(rules, s, 0)  # end phase: Chaos' phase
    s = start(rules, 3, s)
    assert s.active == 1
    assert s.pools == (3 + 3, 3 + 1 + 1)


def test_pool_7E_3_2_dead_psyker_keeps_the_pool_now_and_stops_counting_later():
    rules = rules_from(base(phases=3, rounds=2))
    s = start(rules, 4)  # (7, 5)
    s = cast(rules, s, "Lib: Enfeeble (WC 1) at Cultists", 3)
    s = force(rules, s, roll(2, True))
    s = force(rules, s, 1)  # Dragged into the Warp
    s = force(rules, s, 0)  # failed Leadership: removed
    assert not s.units[LIB].alive() and not s.units[LIB].psyker
    assert s.pools == (4, 5)  # 7E-3.2: not shrunk mid-phase
    s = deny(rules, s, 0)
    s = act(rules, s, 0)  # end the phase
    s = start(rules, 4, s)  # Chaos: Ultramarines deny with r + 1 (Lib is gone)
    assert (s.active, s.pools) == (1, (4 + 1, 4 + 1))
    s = act(rules, s, 0)
    s = start(rules, 4, s)
    assert (s.active, s.pools) == (0, (4 + 1, 4 + 1))


def test_side_without_a_casting_psyker_skips_its_phase_7E_3():
    data = base(phases=None, rounds=2)
    del data["sides"][1]["units"][0]  # no Sorcerer: Chaos never casts
    rules = rules_from(data)
    s = start(rules, 2)
    assert s.pools == (5, 2)  # the deny pool is the roll alone
    s, ev = act_ev(rules, s, 0)
    assert s.stage == Stage.PHASE_ROLL and (s.phase, s.active) == (2, 0)
    assert [e.text for e in ev if e.kind == "phase"] == [
        "Battle round 2: Attackers's Psychic phase"
    ]


# ----------------------------------------------------------------------------- 7E-4 casting
def test_cast_7E_4_1_dice_from_one_to_the_pool(rules):
    s = start(rules, 2)  # pool 5
    s = choose(rules, s, "Lib: Smite (WC 1) at Cultists")
    assert rules.legal_actions(s) == list(range(rules.DICE, rules.DICE + 5))
    assert labels(rules, s)[rules.DICE + 4] == "Cast Smite with 5 dice"


def test_cast_7E_4_2_each_power_once_per_psyker_per_phase(rules):
    s = start(rules, 6)
    s = cast(rules, s, "Lib: Smite (WC 1) at Cultists", 1)
    s = force(rules, s, roll(0))  # fizzles
    assert s.stage == Stage.SELECT and (LIB, rules.power_index["Smite"]) in s.attempted
    names = set(labels(rules, s).values())
    assert not any(n.startswith("Lib: Smite") for n in names)
    assert "Brothers: Smite (WC 1) at Cultists" in names  # another psyker may cast it
    assert "Lib: Enfeeble (WC 1) at Cultists" in names


def test_cast_7E_4_3_fizzle_spends_the_dice(rules):
    s = start(rules, 3)  # (6, 4)
    s = cast(rules, s, "Lib: Enfeeble (WC 1) at Cultists", 4)
    s, ev = force_ev(rules, s, roll(0))
    assert s.stage == Stage.SELECT and s.pools == (2, 4) and s.cast is None
    assert kinds(ev) == ["attempt"]
    assert s.score == 0


def test_cast_7E_4_3_warp_charge_two_needs_two_successes():
    rules = rules_from(
        scenario7(
            [unit7("Lib", wounds=2, psyker=psyker7(2, powers=["Psychic Maelstrom"]))],
            [unit7("Squad", (0, 10), models=5)],
        )
    )
    s = cast(rules, start(rules, 4), "Psychic Maelstrom", 3)
    one, ev = force_ev(rules, s, roll(1))
    assert kinds(ev) == ["attempt"] and one.stage == Stage.OVER  # fizzled, nothing left
    two, ev = force_ev(rules, s, roll(2))
    assert "passed" in kinds(ev) and two.stage == Stage.DENY


def test_perils_7E_4_4_even_when_the_power_fails():
    """Two 6s among three dice for a WC3 power: it fails (2 successes) and still perils."""
    rules = rules_from(
        scenario7(
            [
                unit7(
                    "Herald",
                    wounds=3,
                    leadership=9,
                    psyker=psyker7(2, powers=["Possession"], daemon=True),
                )
            ],
            [unit7("Squad", (0, 10), models=5)],
        )
    )
    s = cast(rules, start(rules, 4), "Possession", 3)
    s, ev = force_ev(rules, s, roll(2, True))
    assert kinds(ev) == ["attempt", "perils"]
    assert s.stage == Stage.PERILS
    s = force(rules, s, 4)  # Psychic Backlash
    assert s.units[0].wounds == 2 and s.score == -1
    assert s.stage == Stage.OVER  # nothing left to cast in this one-phase scenario


def test_outcome_labels(rules):
    s = cast(rules, start(rules, 3), "Lib: Smite (WC 1) at Cultists", 3)
    assert rules.action_label(s, roll(2, True)) == "2 successes with Perils"
    assert rules.action_label(s, roll(1)) == "1 success"


# ----------------------------------------------------------------------------- 7E-5 deny
DENIERS = [
    # name, profile, threshold: +1 psyker, +1 higher ML than the caster (ML2), +1 AW
    ("Grunts", None, 6),
    ("Acolyte", psyker7(1, powers=["Smite"]), 5),
    ("Peer", psyker7(2, powers=["Smite"]), 5),
    ("Master", psyker7(3, powers=["Smite"]), 4),
    ("Stoic", psyker7(1, powers=["Smite"], adamantium_will=True), 4),
    ("Peer AW", psyker7(2, powers=["Smite"], adamantium_will=True), 4),
    ("Master AW", psyker7(3, powers=["Smite"], adamantium_will=True), 3),
]


@pytest.fixture(scope="module")
def deny_rules():
    side1 = [
        unit7(name, (2 * i, 10), wounds=2, **({"psyker": p} if p else {}))
        for i, (name, p, _) in enumerate(DENIERS)
    ]
    return rules_from(
        scenario7(
            [
                unit7(
                    "Caster",
                    wounds=3,
                    psyker=psyker7(2, powers=["Enfeeble", "Iron Arm", "Forewarning", "Shockwave"]),
                ),
                unit7("Guard", (1, 1), models=5),
            ],
            side1,
        )
    )


def p_at_least(k: int, m: int, threshold: int) -> Fraction:
    """Brute force: at least k of m D6 roll threshold or more."""
    return F(
        sum(1 for r in product(range(1, 7), repeat=m) if sum(x >= threshold for x in r) >= k), 6**m
    )


@pytest.mark.parametrize(
    "name,threshold", [(n, t) for n, _, t in DENIERS], ids=[n for n, _, _ in DENIERS]
)
def test_deny_7E_5_2_modifiers_give_6_5_4_3(deny_rules, name, threshold):
    """Deny threshold by the targeted unit: psyker / higher ML / Adamantium Will."""
    rules = deny_rules
    s = start(rules, 3)
    s = cast(rules, s, f"Caster: Enfeeble (WC 1) at {name}", 4)
    s = force(rules, s, roll(3))
    assert s.stage == Stage.DENY and rules.current_player(s) == 1 and rules.is_response(s)
    unit, t = rules.deny_unit_and_threshold(s, s.cast)
    assert (rules.names[unit], t) == (name, threshold)
    pool = s.pools[1]
    s, ev = act_ev(rules, s, rules.DENY + 4)
    assert s.pools[1] == pool - 4 and s.stage == Stage.DENY_ROLL
    assert f"({threshold}+)" in ev[0].text and ev[0].kind == "deny_attempt"
    # 7E-5.3: all three successes must be negated by the four dice
    assert exact_outcomes(rules, s) == {
        1: p_at_least(3, 4, threshold),
        0: 1 - p_at_least(3, 4, threshold),
    }


def test_deny_7E_5_3_two_negations_do_not_stop_three_successes(deny_rules):
    rules = deny_rules
    s = cast(rules, start(rules, 3), "Caster: Enfeeble (WC 1) at Master AW", 4)
    s = force(rules, s, roll(3))
    two = deny(rules, s, 2)
    assert exact_outcomes(rules, two) == {0: F(1)}  # 2 of 3 is never enough
    three = deny(rules, s, 3)
    assert exact_outcomes(rules, three)[1] == F(4, 6) ** 3  # all three on 3+


def test_deny_7E_5_3_counts_successes_not_the_warp_charge(deny_rules):
    """A WC1 power cast with 2 successes at a 6+ unit: 3 dice need two 6s (2/27), not one."""
    rules = deny_rules
    s = cast(rules, start(rules, 3), "Caster: Enfeeble (WC 1) at Grunts", 3)
    s = deny(rules, force(rules, s, roll(2)), 3)
    assert exact_outcomes(rules, s)[1] == F(16, 216)


@pytest.mark.parametrize(
    "label", ["Caster: Iron Arm (WC 1)", "Caster: Forewarning (WC 1) at Guard"]
)
def test_deny_7E_5_2_natural_sixes_against_blessings(deny_rules, label):
    """A power that targets none of the denier's units: natural 6s only, even though the
    denying side has an ML3 Adamantium Will psyker."""
    rules = deny_rules
    s = cast(rules, start(rules, 3), label, 3)
    s = force(rules, s, roll(2))
    assert rules.deny_unit_and_threshold(s, s.cast) == (None, 6)
    assert rules.describe(s, rules.DENY + 3).unit == ""
    s = deny(rules, s, 3)
    assert exact_outcomes(rules, s) == {1: F(2, 27), 0: F(25, 27)}


def test_deny_nova_uses_the_best_unit_in_range():
    """Shockwave (nova 9"): every enemy unit in range is hit and may be denied by the unit with
    the best modifiers in range (rules default); an ML3 AW psyker out of range does not count."""
    rules = rules_from(
        scenario7(
            [unit7("Caster", wounds=3, psyker=psyker7(2, powers=["Shockwave"]))],
            [
                unit7("Grunts", (0, 5), models=5),
                unit7("Master", (5, 0), wounds=2, psyker=psyker7(3, powers=["Smite"])),
                unit7(
                    "Far Master",
                    (20, 0),
                    wounds=2,
                    psyker=psyker7(3, powers=["Smite"], adamantium_will=True),
                ),
            ],
        )
    )
    s = cast(rules, start(rules, 3), "Caster: Shockwave (WC 1)", 2)
    s = force(rules, s, roll(1))
    unit, t = rules.deny_unit_and_threshold(s, s.cast)
    assert (rules.names[unit], t) == ("Master", 4)
    assert rules.describe(s, rules.DENY + 1).unit == "Master"
    s = deny(rules, s, 0)
    assert s.stage == Stage.EFFECT and s.targets == (1, 2)  # Grunts, then Master


def test_deny_7E_5_4_denied_power_does_nothing_but_perils_stand(rules):
    s = cast(rules, start(rules, 4), "Lib: Enfeeble (WC 1) at Cultists", 3)  # (4, 5)
    s = force(rules, s, roll(2, True))
    s = force(rules, s, 4)  # Psychic Backlash: wound
    assert s.units[LIB].wounds == 1 and s.score == -1 and s.stage == Stage.DENY
    s = deny(rules, s, 3)
    s, ev = force_ev(rules, s, 1)
    assert kinds(ev) == ["denied"] and ev[0].player == 1
    assert s.stage == Stage.SELECT and s.score == -1 and s.pools == (4, 2)


def test_deny_7E_5_1_zero_dice_lets_it_through(rules):
    s = cast(rules, start(rules, 4), "Lib: Enfeeble (WC 1) at Cultists", 2)
    s = force(rules, s, roll(1))
    assert rules.action_label(s, rules.DENY) == "Do not deny"
    s, ev = act_ev(rules, s, rules.DENY)
    assert kinds(ev) == ["manifest"] and s.score == 2 and s.pools == (5, 5)


def test_deny_failed_roll_manifests(rules):
    s = cast(rules, start(rules, 4), "Lib: Enfeeble (WC 1) at Cultists", 2)
    s = deny(rules, force(rules, s, roll(1)), 2)
    s, ev = force_ev(rules, s, 0)
    assert kinds(ev) == ["deny_failed", "manifest"] and s.score == 2


# ----------------------------------------------------------------------------- 7E-6 perils
def test_perils_1_dragged_pass_is_a_wound_7E_6_1(rules):
    s = perils_state(rules)  # pools (4, 5)
    s = force(rules, s, 1)
    assert s.stage == Stage.LD_TEST
    assert exact_outcomes(rules, s) == {1: F(30, 36), 0: F(6, 36)}  # Ld 9
    s, ev = force_ev(rules, s, 1)
    assert kinds(ev) == ["ld_test", "wounds"]
    assert wounds(s)[LIB] == 1 and s.units[LIB].psyker and s.score == -1
    assert s.stage == Stage.DENY and s.pools == (4, 5)


def test_perils_1_dragged_fail_removes_a_lone_psyker_and_the_power_resolves_7E_6_1(rules):
    s = perils_state(rules)
    s = force(rules, s, 1)
    s, ev = force_ev(rules, s, 0)
    assert "slain" in kinds(ev)
    assert wounds(s)[LIB] == 0 and not s.units[LIB].psyker
    assert s.score == -2  # two wounds of value 1
    # 7E-6 note: the power still takes effect; the opponent may still deny it
    assert s.stage == Stage.DENY
    s, ev = act_ev(rules, s, rules.DENY)
    assert "manifest" in kinds(ev) and s.score == 0
    assert not any(lbl.startswith("Lib") for lbl in labels(rules, s).values())


def test_perils_1_dragged_fail_in_a_unit_brings_d6_s6_ap1_hits_7E_6_1(rules):
    s = perils_state(rules, label="Brothers: Smite (WC 1) at Cultists")
    s = force(rules, s, 1)
    assert exact_outcomes(rules, s) == {1: F(26, 36), 0: F(10, 36)}  # Ld 8
    s = force(rules, s, 0)
    assert s.stage == Stage.PERILS_HITS
    assert wounds(s)[BROS] == 4 and not s.units[BROS].psyker and s.units[BROS].alive()
    assert s.score == -1
    # D6 hits, S6 vs T4 wounds on 2+, AP1 beats the 3+ save, no invulnerable; at most 4 wounds
    expected: dict[int, Fraction] = {}
    for hits in range(1, 7):
        for k, p in binomial(hits, F(5, 6)).items():
            expected[min(k, 4)] = expected.get(min(k, 4), F(0)) + F(1, 6) * p
    assert exact_outcomes(rules, s) == expected
    s, ev = force_ev(rules, s, 3)
    assert wounds(s)[BROS] == 1 and s.score == -4
    assert s.stage == Stage.DENY  # Smite still goes on (7E-6 note)
    s = deny(rules, s, 0)
    assert s.stage == Stage.EFFECT
    s = force(rules, s, 0)
    assert s.stage == Stage.SELECT
    # the Brothers can no longer cast (their psyker is gone); the Librarian still can
    casters = {lbl.split(":")[0] for lbl in labels(rules, s).values() if ":" in lbl}
    assert casters == {"Lib"}


def test_perils_2_mental_purge_takes_a_random_power_7E_6_2(rules):
    s = perils_state(rules)
    s, ev = force_ev(rules, s, 2)
    assert kinds(ev) == ["perils_roll", "wounds"]
    assert s.stage == Stage.PURGE and wounds(s)[LIB] == 1 and s.score == -1
    known = s.units[LIB].powers
    assert len(known) == 4
    assert exact_outcomes(rules, s) == {p: F(1, 4) for p in known}
    iron_arm = rules.power_index["Iron Arm"]
    s, ev = force_ev(rules, s, iron_arm)
    assert kinds(ev) == ["purge"]
    assert iron_arm not in s.units[LIB].powers and len(s.units[LIB].powers) == 3
    assert s.stage == Stage.DENY  # the power being cast still resolves
    s = deny(rules, s, 0)
    assert s.score == 1
    assert "Lib: Iron Arm (WC 1)" not in labels(rules, s).values()
    assert "Lib: Forewarning (WC 1) at Lib" in labels(rules, s).values()


def test_perils_2_mental_purge_on_a_dying_psyker_has_no_purge_roll():
    data = base()
    data["sides"][0]["units"][0]["wounds"] = 1
    rules = rules_from(data)
    s = perils_state(rules)
    s = force(rules, s, 2)
    assert s.stage == Stage.DENY and wounds(s)[LIB] == 0


def test_perils_3_power_drain_shrinks_both_pools_not_below_zero_7E_6_3(rules):
    s = perils_state(rules, roll_=1, dice=2)  # pools (4, 2) -> (2, 2) after the cast
    assert s.pools == (2, 2)
    s = force(rules, s, 3)
    assert s.stage == Stage.DRAIN and wounds(s)[LIB] == 1 and s.score == -1
    assert exact_outcomes(rules, s) == {1: F(1, 3), 2: F(1, 3), 3: F(1, 3)}
    s, ev = force_ev(rules, s, 3)
    assert s.pools == (0, 0)
    assert kinds(ev) == ["drain", "manifest"]  # no deny dice left: it takes effect
    assert s.score == 1
    assert s.stage == Stage.OVER  # no dice left and a one-phase scenario


def test_perils_3_power_drain_one_roll_for_both(rules):
    s = perils_state(rules, roll_=6, dice=2)  # (9, 7) -> (7, 7)
    s = force(rules, force(rules, s, 3), 2)
    assert s.pools == (5, 5) and s.stage == Stage.DENY


def test_perils_4_psychic_backlash_is_a_wound_7E_6_4(rules):
    s = perils_state(rules)
    s, ev = force_ev(rules, s, 4)
    assert kinds(ev) == ["perils_roll", "wounds"]
    assert wounds(s)[LIB] == 1 and s.score == -1 and s.stage == Stage.DENY
    assert s.pools == (4, 5)


@pytest.mark.parametrize("passed,lib_wounds,score", [(1, 2, 0), (0, 1, -1)])
def test_perils_5_empyric_feedback_7E_6_5(rules, passed, lib_wounds, score):
    s = perils_state(rules)
    s = force(rules, s, 5)
    assert s.stage == Stage.LD_TEST and wounds(s)[LIB] == 2
    s = force(rules, s, passed)
    assert wounds(s)[LIB] == lib_wounds and s.score == score and s.stage == Stage.DENY


def test_perils_6_warp_surge_fail_is_a_wound_7E_6_6(rules):
    s = force(rules, force(rules, perils_state(rules), 6), 0)
    assert wounds(s)[LIB] == 1 and not s.units[LIB].surge and s.score == -1


def test_perils_6_warp_surge_pass_scores_and_gives_3_plus_invulnerable_7E_6_6():
    rules = rules_from(base(phases=3, rounds=2, warp_surge_value=0.75))
    s = perils_state(rules)
    s, ev = force_ev(rules, s, 6)
    s, ev = force_ev(rules, s, 1)
    assert kinds(ev) == ["ld_test", "surge"]
    assert s.units[LIB].surge and wounds(s)[LIB] == 2 and s.score == 0.75
    s = deny(rules, s, 0)
    assert s.score == 2.75
    s = act(rules, s, 0)  # end the phase; Chaos casts Smite at the surging Librarian
    s = start(rules, 1, s)
    assert s.active == 1 and s.units[LIB].surge
    s = cast(rules, s, "Sorcerer: Smite (WC 1) at Lib", 2)
    s = deny(rules, force(rules, s, roll(1)), 0)
    assert s.stage == Stage.EFFECT
    # 4 hits, BS4 hits on 3+, S4 v T4 wounds on 4+, AP2 removes the 3+ armour: only the 3++
    p_surge = F(4, 6) * F(1, 2) * F(1, 3)
    assert exact_outcomes(rules, s) == wound_distribution(4, p_surge, 1, cap=2)
    assert exact_outcomes(rules, s) != wound_distribution(4, F(4, 6) * F(1, 2), 1, cap=2)
    s = force(rules, s, 1)
    assert wounds(s)[LIB] == 1 and s.score == 1.75
    s = act(rules, s, 0) if rules.current_player(s) == 1 else s
    s = start(rules, 1, s)  # the Ultramarines' next phase: the surge is over
    assert s.active == 0 and not s.units[LIB].surge


def test_power_resolves_when_its_caster_dies_to_perils():
    """7E-6 note / 7E-4.4: a witchfire still hits after Psychic Backlash kills its caster."""
    data = base()
    data["sides"][0]["units"][0]["wounds"] = 1
    rules = rules_from(data)
    s = perils_state(rules, label="Lib: Smite (WC 1) at Cultists")
    s = force(rules, s, 4)
    assert wounds(s)[LIB] == 0 and s.score == -1
    s = deny(rules, s, 0)
    assert s.stage == Stage.EFFECT
    # Smite at the Cultists: BS4 3+, S4 v T3 3+, AP2 beats 6+: p = 4/9 per hit, 4 hits
    assert exact_outcomes(rules, s) == {k: p for k, p in binomial(4, F(4, 9)).items()}
    s, ev = force_ev(rules, s, 3)
    assert wounds(s)[CULT] == 7 and s.score == -1 + 1.5
    assert [e.get("amount") for e in ev if e.kind == "wounds"] == [3]


def test_conjuration_still_takes_effect_when_its_caster_dies_to_perils():
    """7E-6: "A psyker killed by Perils still lets a cast power take effect"; a conjuration
    needs no living target."""
    rules = rules_from(
        scenario7(
            [
                unit7("Herald", wounds=1, leadership=9, psyker=psyker7(1, powers=["Sacrifice"])),
                unit7("Horde", (2, 0), models=10),
            ],
            [unit7("Seer", (0, 20), wounds=2, psyker=psyker7(1, powers=["Smite"]))],
        )
    )
    s = cast(rules, start(rules, 4), "Herald: Sacrifice (WC 1)", 2)
    s = force(rules, s, roll(2, True))  # a double (any double perils for a non-daemon)
    s = force(rules, s, 4)  # Psychic Backlash kills the Herald
    assert wounds(s)[0] == 0 and s.score == -1
    assert s.stage == Stage.DENY  # the conjuration is still there to deny
    s = deny(rules, s, 0)
    assert s.score == 0  # -1 for the wound, +1 for Sacrifice
