"""8th-edition rules (rules/eighth.md): exact numbers and scripted sequences with forced dice."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
import pytest

from psygym.core import CHANCE, TERMINAL, IllegalActionError
from psygym.editions import load
from psygym.editions.eighth import rules_from_data
from psygym.editions.eighth.effects import (
    attack_distribution,
    deny_chance,
    mortal_distribution,
    pass_chance,
    two_d6,
)
from psygym.editions.eighth.rules import EighthRules
from psygym.editions.eighth.state import Stage, State
from psygym.editions.eighth.views import Cast, Deny
from psygym.kernel import evolve

# ---------------------------------------------------------------- helpers


def unit(name: str, x: float, y: float = 0.0, wounds: int = 4, **kw: Any) -> dict[str, Any]:
    return {"name": name, "wounds": wounds, "position": [x, y], **kw}


def psyker(name: str, x: float, y: float = 0.0, **kw: Any) -> dict[str, Any]:
    return unit(name, x, y, psyker=True, **kw)


def make(side0: list[dict], side1: list[dict], **game: Any) -> EighthRules:
    data = {
        "edition": "8th",
        "name": "test",
        "game": game,
        "sides": [{"name": "Red", "units": side0}, {"name": "Blue", "units": side1}],
    }
    return rules_from_data(data, "test.toml")


def idx(rules: EighthRules, name: str) -> int:
    return rules.names.index(name)


def cast(rules: EighthRules, s: State, power: str, target: str | None = None) -> int:
    """The legal cast action of the selected unit for ``power`` (and ``target`` if given)."""
    for a in rules.legal_actions(s):
        view = rules.describe(s, a)
        if isinstance(view, Cast) and view.power == power:
            if target is None or view.target == target:
                return a
    raise AssertionError(f"{power} at {target} is not legal: {labels(rules, s)}")


def labels(rules: EighthRules, s: State) -> list[str]:
    return [rules.action_label(s, a) for a in rules.legal_actions(s)]


def chance(rules: EighthRules, s: State) -> dict[int, float]:
    assert rules.current_player(s) == CHANCE, s.stage
    return dict(rules.chance_outcomes(s))


def step(rules: EighthRules, s: State, action: int) -> tuple[State, list]:
    s2, events = rules.apply_with_events(s, action)
    return s2, list(events)


def kinds(events: list) -> list[str]:
    return [e.kind for e in events]


# ---------------------------------------------------------------- published numbers


def test_smite_test_passes_30_in_36():  # 8E-4.1, published numbers
    assert pass_chance(5) == Fraction(30, 36)


def test_perils_is_2_in_36_on_any_test():  # 8E-4.3
    r = load("8th", "smite-spam")
    s = r.apply(r.initial_state(), 0)  # select Malefic Lord A
    s = r.apply(s, cast(r, s, "Smite"))
    assert s.stage == Stage.TEST
    out = chance(r, s)
    assert sorted(out) == list(range(2, 13))  # aggregated by total: 11 outcomes, not 36
    exact = dict(two_d6())
    assert exact[2] + exact[12] == Fraction(2, 36)
    assert out[2] + out[12] == pytest.approx(2 / 36)
    assert sum(out.values()) == pytest.approx(1.0)


def test_smite_d6_on_11_plus_is_3_in_36():  # 8E-7.1
    exact = dict(two_d6())
    assert exact[11] + exact[12] == Fraction(3, 36)


def test_deny_against_7_is_15_in_36():  # 8E-5.2
    assert deny_chance(7) == Fraction(15, 36)
    assert deny_chance(12) == 0
    assert deny_chance(2) == Fraction(35, 36)


# ---------------------------------------------------------------- Smite (8E-4.2, 8E-7.1)


def test_smite_escalation_across_three_psykers():  # 8E-4.2
    r = load("8th", "smite-spam")
    gm = idx(r, "Grand Master")
    s = r.initial_state()
    # Malefic Lord A: WC 5, fails.
    s = r.apply(s, idx(r, "Malefic Lord A"))
    a = cast(r, s, "Smite")
    assert r.action_label(s, a) == "Malefic Lord A casts Smite (WC 5) at Grand Master"
    s = r.apply(s, a)
    assert s.warp_charge == 5
    s, ev = step(r, s, 4)  # test 4 < 5: failed
    assert "failed" in kinds(ev) and s.stage == Stage.SELECT
    assert idx(r, "Malefic Lord A") not in r.legal_actions(s)  # selected once (8E-2.3)
    # Malefic Lord B: WC 6 (one earlier attempt, failed or not), passes with 6.
    s = r.apply(s, idx(r, "Malefic Lord B"))
    s = r.apply(s, cast(r, s, "Smite"))
    assert s.warp_charge == 6
    s = r.apply(s, 6)
    assert s.stage == Stage.DENY and r.current_player(s) == 1
    s = r.apply(s, r.NO_DENY)
    assert chance(r, s) == pytest.approx({1: 1 / 3, 2: 1 / 3, 3: 1 / 3})  # D3 below 11
    s, ev = step(r, s, 2)
    assert s.wounds[gm] == 5 and "manifest" in kinds(ev)
    # Malefic Lord C: WC 7.
    s = r.apply(s, idx(r, "Malefic Lord C"))
    a = cast(r, s, "Smite")
    assert "(WC 7)" in r.action_label(s, a)
    s = r.apply(s, a)
    assert s.warp_charge == 7 and s.attempts[r.power_index["Smite"]] == 3


def test_smite_d6_when_test_is_11_or_more():  # 8E-7.1
    r = load("8th", "smite-spam")
    s = r.apply(r.initial_state(), 0)
    s = r.apply(s, cast(r, s, "Smite"))
    s = r.apply(s, 11)
    s = r.apply(s, r.NO_DENY)
    assert chance(r, s) == pytest.approx({w: 1 / 6 for w in range(1, 7)})


def test_smite_targets_closest_enemy_ties_to_lowest_index_within_18():  # 8E-7.1, 8E-3.4
    r = make(
        [psyker("Caster", 0, 0)],
        [unit("Far", 0, 18.5), unit("TieB", 10, 0), unit("TieA", -10, 0)],
    )
    s = r.apply(r.initial_state(), 0)
    casts = [v for v in map(lambda a: r.describe(s, a), r.legal_actions(s)) if isinstance(v, Cast)]
    assert [(v.power, v.target) for v in casts] == [("Smite", "TieB")]  # TieB has the lower index
    # Once TieB is destroyed, TieA is the closest.
    s2 = evolve(s, wounds=(4, 4, 0, 4))
    assert [r.describe(s2, a).target for a in r.legal_actions(s2)[:-1]] == ["TieA"]


def test_psyker_without_a_legal_target_is_not_selectable():  # 8E-3.4
    r = make([psyker("Caster", 0, 0), unit("Bait", 0, 30)], [psyker("Far", 0, 19)])
    s = r.initial_state()
    # Red's phase had nothing to do: the game went on to Blue's phase.
    assert s.active == 1 and s.stage == Stage.SELECT
    assert r.legal_actions(s) == [idx(r, "Far"), r.END_PHASE]


# ---------------------------------------------------------------- 8E-3 lockouts


def test_once_per_round_lockout_smite_exception_and_per_unit_smite():  # 8E-3.2, 8E-3.3
    r = make(
        [
            psyker("Seer", 0, 0, manifest=3, powers=["Doom", "Jinx"]),
            psyker("Warlock", 2, 0, powers=["Doom"]),
        ],
        [unit("Target", 0, 10, wounds=20)],
        battle_rounds=2,
    )
    seer, warlock = idx(r, "Seer"), idx(r, "Warlock")
    s = r.apply(r.initial_state(), seer)
    s = r.apply(s, cast(r, s, "Doom"))
    s = r.apply(s, 3)  # failed: still attempted (8E-3.2)
    s = r.apply(s, cast(r, s, "Smite"))
    s = r.apply(s, 3)
    powers = {r.describe(s, a).power for a in r.legal_actions(s) if a != r.STOP}
    assert powers == {"Jinx"}  # no second Smite for the Seer (8E-3.3), Doom locked (8E-3.2)
    s = r.apply(s, r.STOP)
    s = r.apply(s, warlock)
    powers = {r.describe(s, a).power for a in r.legal_actions(s) if a != r.STOP}
    assert powers == {"Smite"}  # Doom is locked army-wide; Smite is the exception
    assert "(WC 6)" in r.action_label(s, cast(r, s, "Smite"))
    s = r.apply(s, r.STOP)
    # Red has nobody left to select and Blue has no psyker: on to battle round 2, which resets
    # the lockout.
    assert (s.round, s.active, s.stage) == (2, 0, Stage.SELECT)
    s = r.apply(s, warlock)
    assert {r.describe(s, a).power for a in r.legal_actions(s) if a != r.STOP} == {
        "Smite",
        "Doom",
    }
    assert "(WC 5)" in r.action_label(s, cast(r, s, "Smite"))


def test_manifest_limit_per_unit_and_single_selection():  # 8E-1.2, 8E-2.2, 8E-2.3
    r = make(
        [psyker("Seer", 0, 0, manifest=2, powers=["Doom", "Jinx"]), psyker("Other", 1, 0)],
        [unit("Target", 0, 10, wounds=20)],
    )
    seer = idx(r, "Seer")
    s = r.apply(r.initial_state(), seer)
    assert s.manifests_left == 2
    s = r.apply(s, cast(r, s, "Doom"))
    s = r.apply(s, 3)
    assert s.stage == Stage.POWER and s.manifests_left == 1
    s = r.apply(s, cast(r, s, "Jinx"))
    s = r.apply(s, 3)
    # Two attempts made: back to selecting, and the Seer cannot be selected again.
    assert s.stage == Stage.SELECT and s.caster == -1
    assert r.legal_actions(s) == [idx(r, "Other"), r.END_PHASE]


def test_stop_and_end_phase_are_decisions():  # 8E-2.1, 8E-2.2
    r = load("8th", "duel")
    s = r.initial_state()
    assert r.END_PHASE in r.legal_actions(s)
    s = r.apply(s, idx(r, "Librarian"))
    assert r.STOP in r.legal_actions(s)
    s = r.apply(s, r.STOP)
    assert s.stage == Stage.SELECT and r.legal_actions(s) == [idx(r, "Primaris Psyker"), 6]
    s, ev = step(r, s, r.END_PHASE)
    assert s.active == 1 and kinds(ev) == ["phase"]


# ---------------------------------------------------------------- Perils (8E-4.3, 8E-6)


def perils_scenario(caster_wounds: int) -> EighthRules:
    return make(
        [
            psyker("Caster", 0, 0, wounds=caster_wounds, value_per_wound=2),
            unit("Friend", 3, 0, wounds=5),
            unit("FarFriend", 10, 0, wounds=5),
        ],
        [unit("Foe", 0, 5.5, wounds=5), unit("FarFoe", 0, 12, wounds=5)],
    )


def test_perils_killing_the_caster_fails_the_power_and_blasts_friend_and_foe():  # 8E-6
    r = perils_scenario(2)
    c, friend, foe = idx(r, "Caster"), idx(r, "Friend"), idx(r, "Foe")
    s = r.apply(r.initial_state(), c)
    s = r.apply(s, cast(r, s, "Smite", "Foe"))
    s, ev = step(r, s, 12)  # double 6: passed, then Perils at once, before any deny
    assert kinds(ev) == ["passed", "perils"] and s.stage == Stage.PERILS
    assert chance(r, s) == pytest.approx({1: 1 / 3, 2: 2 / 3})  # D3 capped at 2 wounds left
    s, ev = step(r, s, 2)
    assert s.wounds[c] == 0 and {"slain", "failed"} <= set(kinds(ev))
    assert s.stage == Stage.BLAST and s.blast == (friend, foe)  # within 6", either side
    assert chance(r, s) == pytest.approx({1: 1 / 3, 2: 1 / 3, 3: 1 / 3})
    s = r.apply(s, 3)
    assert s.blast == (foe,)
    s, ev = step(r, s, 1)
    assert "manifest" not in kinds(ev)
    assert s.wounds == (0, 2, 5, 4, 5)
    assert s.score == pytest.approx(-2 * 2 - 3 + 1)  # own Perils and blast count against Red
    assert r.returns(s) == (s.score, -s.score)
    # Red has no psyker left: Blue's phase (Blue has none either), then round 2 ... game goes on.
    assert s.stage in (Stage.SELECT, Stage.OVER)


def test_perils_on_a_one_wound_caster_needs_no_roll():  # 8E-6.1, single outcome resolved at once
    r = perils_scenario(1)
    s = r.apply(r.initial_state(), idx(r, "Caster"))
    s = r.apply(s, cast(r, s, "Smite", "Foe"))
    s = r.apply(s, 2)  # double 1: fails and perils; D3 always kills a 1-wound psyker
    assert s.stage == Stage.BLAST and s.wounds[idx(r, "Caster")] == 0


def test_perils_on_double_one_survived_then_nothing_else():  # 8E-4.3
    r = perils_scenario(4)
    c = idx(r, "Caster")
    s = r.apply(r.initial_state(), c)
    s = r.apply(s, cast(r, s, "Smite", "Foe"))
    s, ev = step(r, s, 2)
    assert kinds(ev) == ["failed", "perils"]
    s, ev = step(r, s, 3)
    assert s.wounds[c] == 1 and "slain" not in kinds(ev)
    assert s.score == pytest.approx(-6)
    assert s.stage != Stage.EFFECT and s.caster == -1


def test_perils_on_double_six_survived_still_manifests_with_d6():  # 8E-4.3, 8E-7.1
    r = make([psyker("Caster", 0, 0)], [psyker("Foe", 0, 10, wounds=10)])
    c, foe = idx(r, "Caster"), idx(r, "Foe")
    s = r.apply(r.initial_state(), c)
    s = r.apply(s, cast(r, s, "Smite"))
    s = r.apply(s, 12)
    s = r.apply(s, 1)
    # No deny can beat 12: no deny decision; Smite's D6.
    assert s.stage == Stage.EFFECT and s.wounds[c] == 3
    assert chance(r, s) == pytest.approx({w: 1 / 6 for w in range(1, 7)})
    s = r.apply(s, 6)
    assert s.wounds[foe] == 4 and s.score == pytest.approx(6 - 1)


# ---------------------------------------------------------------- Deny the Witch (8E-5)


def deny_scenario() -> EighthRules:
    return make(
        [psyker("Caster", 0, 0, manifest=2, powers=["Jinx"])],
        [
            unit("Target", 0, 10, wounds=20),
            psyker("Near", 0, 23.9),
            psyker("Far", 0, 24.1),
        ],
        battle_rounds=2,
    )


def test_deny_range_24_and_one_attempt_per_phase():  # 8E-5.1, 8E-5.2, 8E-1.2
    r = deny_scenario()
    near, target = idx(r, "Near"), idx(r, "Target")
    s = r.apply(r.initial_state(), idx(r, "Caster"))
    s = r.apply(s, cast(r, s, "Smite"))
    s = r.apply(s, 7)
    assert s.stage == Stage.DENY and r.is_response(s) and r.current_player(s) == 1
    assert r.legal_actions(s) == [r.DENY + near, r.NO_DENY]  # Far is 24.1" away
    view = r.describe(s, r.DENY + near)
    assert isinstance(view, Deny) and view.denier == "Near" and view.test_total == 7
    s, ev = step(r, s, r.DENY + near)
    assert kinds(ev) == ["deny_attempt"] and s.deny_left[near] == 0
    assert chance(r, s) == pytest.approx({0: 21 / 36, 1: 15 / 36})  # 2D6 > 7
    s, ev = step(r, s, 1)
    assert kinds(ev) == ["denied"] and s.wounds[target] == 20
    # Jinx passes: Near has no deny left and Far is out of range, so no deny decision.
    s = r.apply(s, cast(r, s, "Jinx"))
    s, ev = step(r, s, 8)
    assert "manifest" in kinds(ev) and s.score == pytest.approx(2.0)  # value(2) for the caster
    # Red's phase is over and Blue has nothing in range to cast at: battle round 2, where Near
    # may deny again.
    assert (s.round, s.active) == (2, 0) and s.deny_left[near] == 1
    s = r.apply(s, idx(r, "Caster"))
    s = r.apply(s, cast(r, s, "Smite"))
    s = r.apply(s, 7)
    assert s.stage == Stage.DENY


def test_failed_deny_lets_the_power_resolve():  # 8E-5.2, 8E-5.3
    r = deny_scenario()
    near, target = idx(r, "Near"), idx(r, "Target")
    s = r.apply(r.initial_state(), idx(r, "Caster"))
    s = r.apply(s, cast(r, s, "Smite"))
    s = r.apply(s, 9)
    s = r.apply(s, r.DENY + near)
    s, ev = step(r, s, 0)
    assert kinds(ev) == ["deny_failed"] and s.stage == Stage.EFFECT
    s = r.apply(s, 3)
    assert s.wounds[target] == 17 and s.score == pytest.approx(3)


# ---------------------------------------------------------------- wounds (8E-7.2, 8E-7.3)


def test_mortal_wounds_spill_over_models():  # 8E-7.2
    r = make(
        [psyker("Caster", 0, 0)],
        [unit("Squad", 0, 10, wounds=2, models=3, value_per_wound=0.5)],
    )
    squad = idx(r, "Squad")
    s = r.apply(r.initial_state(), 0)
    s = r.apply(s, cast(r, s, "Smite"))
    s = r.apply(s, 11)
    assert chance(r, s) == pytest.approx({w: 1 / 6 for w in range(1, 7)})
    s, ev = step(r, s, 5)  # 5 mortal wounds remove two whole models and one wound of the third
    assert s.wounds[squad] == 1 and s.score == pytest.approx(2.5)
    assert "Squad: 1/6 W, 1 model\n" in r.render(s) + "\n"
    assert mortal_distribution("D6", 2) == ((1, Fraction(1, 6)), (2, Fraction(5, 6)))


def test_attack_damage_does_not_spill_over():  # 8E-7.3
    certain = {"toughness": 1, "save": 7, "invulnerable": None}
    # S10 vs T1 wounds on 2+; one hit of damage 3 on 1-wound models removes one model at most.
    dist = dict(attack_distribution("1", 10, 0, "3", 1, 7, None, 5, 1))
    assert dist == {0: Fraction(1, 6), 1: Fraction(5, 6)}
    # Two hits of damage 2 on 3-wound models: 2, then the wounded model's last wound: 3, not 4.
    dist = dict(attack_distribution("2", 10, 0, "2", certain["toughness"], 7, None, 6, 3))
    assert max(dist) == 3 and dist[3] == Fraction(25, 36)
    # Saves: 3+ armour at AP -1 is a 4+; a 4+ invulnerable is no better.
    dist = dict(attack_distribution("1", 8, -1, "1", 4, 3, 4, 5, 1))
    assert dist[1] == Fraction(5, 6) * Fraction(1, 2)


def test_value_effects_score_for_the_caster_side():  # 8E-7.3, 8E-8.2
    r = make(
        [unit("Target", 0, 10, wounds=20)],
        [psyker("Seer", 0, 0, powers=["Fortune"])],
        first_player=1,
    )
    s = r.apply(r.initial_state(), idx(r, "Seer"))
    s = r.apply(s, cast(r, s, "Fortune"))
    s = r.apply(s, 7)
    assert s.score == pytest.approx(-3.0) and r.returns(s) == (-3.0, 3.0)


def test_game_lasts_battle_rounds_and_ends_when_a_side_is_gone():  # 8E-8.1
    r = make([psyker("Caster", 0, 0)], [unit("Lone", 0, 10, wounds=1)])
    s = r.apply(r.initial_state(), 0)
    s = r.apply(s, cast(r, s, "Smite"))
    s = r.apply(s, 8)  # Lone has 1 wound: the D3 always removes it, no chance node
    assert r.current_player(s) == TERMINAL and s.round == 1
    r2 = make([psyker("Caster", 0, 0)], [unit("Out of range", 0, 30)], battle_rounds=3)
    assert r2.is_terminal(r2.initial_state())  # nothing to decide in any phase
    r3 = load("8th", "duel")
    s = r3.initial_state()
    rounds = set()
    while not r3.is_terminal(s):
        rounds.add((s.round, s.active))
        s = r3.apply(s, r3.END_PHASE) if r3.current_player(s) >= 0 else s
    assert rounds == {(n, p) for n in range(1, 6) for p in (0, 1)}


def test_single_phase_stops_after_the_first_phase():
    r = load("8th", "single-phase")
    s = r.apply(r.initial_state(), r.END_PHASE)
    assert r.is_terminal(s)


# ---------------------------------------------------------------- API details


def test_illegal_action_lists_the_legal_ones():
    r = load("8th", "duel")
    s = r.initial_state()
    with pytest.raises(IllegalActionError) as err:
        r.apply(s, r.STOP)
    msg = str(err.value)
    assert "legal actions: 0 (Select Librarian), 1 (Select Primaris Psyker)" in msg
    assert "End Imperium's Psychic phase" in msg
    s = r.apply(s, 0)
    s = r.apply(s, cast(r, s, "Smite"))
    with pytest.raises(IllegalActionError, match="as a chance outcome"):
        r.apply(s, 13)


def test_labels_and_views():
    r = load("8th", "duel")
    s = r.apply(r.initial_state(), idx(r, "Librarian"))
    assert "Librarian casts Smite (WC 5) at Guardian Defenders" in labels(r, s)
    assert "Librarian casts Null Zone (WC 8)" in labels(r, s)
    assert "Librarian stops manifesting" in labels(r, s)
    s = r.apply(s, cast(r, s, "Smite"))
    assert r.action_label(s, 12) == "test 12: passed (Perils)"
    assert r.action_label(s, 4) == "test 4: failed"


def test_psychic_scourge_chooses_among_enemies_in_range():  # 8E-7.3 rolloff
    r = load("8th", "duel")
    s = r.apply(r.initial_state(), idx(r, "Primaris Psyker"))
    targets = {r.describe(s, a).target for a in r.legal_actions(s) if a != r.STOP}
    assert {"Farseer", "Warlock", "Guardian Defenders"} <= targets
    mind_war = {
        r.describe(s, a).target
        for a in r.legal_actions(s)
        if a != r.STOP and r.describe(s, a).power == "Mind War"
    }
    assert mind_war == {"Farseer", "Warlock"}  # CHARACTERs only
    # Ld 9 vs Ld 8 (Warlock): higher -> D3, tie -> 1, capped at 2 wounds.
    p = r.power_index["Psychic Scourge"]
    dist = dict(r.effect_distribution(p, idx(r, "Primaris Psyker"), idx(r, "Warlock"), 8))
    win = sum(Fraction(1, 36) for a in range(1, 7) for b in range(1, 7) if a + 9 > b + 8)
    tie = sum(Fraction(1, 36) for a in range(1, 7) for b in range(1, 7) if a + 9 == b + 8)
    assert dist[0] == 1 - win - tie
    assert dist[1] == win / 3 + tie
    assert dist[2] == 2 * win / 3


def test_observation_layout():
    r = load("8th", "duel")
    s = r.initial_state()
    obs = r.observe(s, 0)
    assert obs.shape == (r.observation_size,) and obs.dtype == np.float32
    assert list(obs[:5]) == [1, 0, 0, 0, 0]
    assert obs[6] == 1 and r.observe(s, 1)[6] == 0  # whose phase
    s = r.apply(s, 0)
    s = r.apply(s, cast(r, s, "Smite"))
    assert list(r.observe(s, 1)[:5]) == [0, 0, 0, 1, 0]
    s = r.apply(s, 7)
    obs = r.observe(s, 1)
    assert list(obs[:5]) == [0, 0, 1, 0, 0]
    assert obs[8] == pytest.approx(7 / 12) and obs[11] == pytest.approx(15 / 36)


def test_render_shows_units_and_pending_power():
    r = load("8th", "duel")
    s = r.apply(r.initial_state(), 0)
    s = r.apply(s, cast(r, s, "Smite"))
    s = r.apply(s, 7)
    text = r.render(s, 1)
    assert "Farseer: 5/5 W, PSYKER deny 2" in text
    assert "Pending: Smite (WC 5), test 7" in text
    assert "Tactical Squad: 10/10 W, 10 models" in text


def test_sampler_draws_the_exact_test_distribution():
    """20,000 fast-path draws: pass rate at WC 5 is 30/36 = 0.833 (WC 6 would be 0.722).

    Standard error 0.0026; the bound 0.015 is 5.7 standard errors and half the WC 5/6 gap.
    """
    r = load("8th", "smite-spam")
    s = r.apply(r.initial_state(), 0)
    s = r.apply(s, cast(r, s, "Smite"))
    rng = np.random.default_rng(2024)
    draws = np.array([r.sample_chance(s, rng) for _ in range(20_000)])
    assert abs(np.mean(draws >= 5) - 30 / 36) < 0.015
    assert abs(np.mean((draws == 2) | (draws == 12)) - 2 / 36) < 0.008  # SE 0.0016
