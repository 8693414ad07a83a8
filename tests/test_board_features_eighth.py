"""8th-edition board features: names, exact values from the scenario spec, the manifest tool."""

from __future__ import annotations

import numpy as np
import pytest
from engine_cases import random_game
from psygym_agents.eighth.board_features import (
    FEATURES,
    MONOTONE,
    board_features,
    power_effect,
)
from psygym_agents.eighth.heuristics import attempt_value
from psygym_agents.value import features as value_features

from psygym.editions import load
from psygym.editions.eighth.state import Stage

SCENARIOS = ("duel", "single-phase", "smite-spam", "random:3", "random:11,psykers=3", "random:7")


def _specs(rules):
    """Every unit's spec in index order, read from the scenario (side 0's, then side 1's)."""
    return [(k, u) for k, side in enumerate(rules.scenario.sides) for u in side.units]


def _reach(rules):
    """Per unit: summed best attempt value at the start of the powers it knows (>= 0 each).

    The targets from the facts' candidate lists, the closest only for Smite-like powers (8E-7.1)
    (the map itself reads the legal casts).
    """
    s0 = rules.initial_state()
    out = []
    for c, known in enumerate(rules.known):
        total = 0.0
        for p in known:
            targets = rules.targets[c][p]
            if rules.powers[p].target in ("closest_enemy", "self", "none", "friendly"):
                targets = targets[:1]  # the closest; or the first for a value effect
            cast = rules.actions.cast
            total += max([0.0] + [attempt_value(rules, s0, c, cast(p, t)) for t in targets])
        out.append(total)
    return out


def _deny_chance(total: int) -> float:
    return sum(a + b > total for a in range(1, 7) for b in range(1, 7)) / 36 if total else 0.0


def expected(rules, s) -> dict[str, float]:
    """The features computed from the state and the scenario spec, not from the observation."""
    specs, reach, game = _specs(rules), _reach(rules), rules.scenario.game
    f = dict.fromkeys(FEATURES, 0.0)
    for i, (k, u) in enumerate(specs):
        side, w, alive = ("own", "foe")[k], s.wounds[i], s.wounds[i] > 0
        f[f"{side}_points"] += w * u.value_per_wound
        f[f"{side}_full_points"] += u.models * u.wounds * u.value_per_wound
        f[f"{side}_units"] += alive
        if (s.selected >> i) & 1:
            f[f"{side}_selected"] += 1
            f[f"{side}_selected_casts"] += u.manifest if u.psyker else 0
        if u.psyker:
            f[f"{side}_psykers"] += alive
            f[f"{side}_casts"] += u.manifest * alive
            f[f"{side}_reach"] += reach[i] * alive
            f[f"{side}_deny_slots"] += u.deny * alive
            # the proxy: a dead psyker counts minus the denies it spent this phase
            f[f"{side}_denies"] += s.deny_left[i] - (0 if alive else u.deny)
    kinds = {Stage.SELECT: "select", Stage.POWER: "power", Stage.DENY: "deny", Stage.OVER: "over"}
    f[f"kind_{kinds.get(s.stage, 'chance')}"] = 1.0
    rounds = game.battle_rounds
    f.update(round=s.round, round_fraction=s.round / rounds, rounds=rounds)
    f.update(rounds_left=rounds - s.round, rounds_left_fraction=(rounds - s.round) / rounds)
    f.update(own_phase=float(s.active == 0), own_first=float(game.first_player == 0))
    total = 2 * rounds
    left = total - 2 * (s.round - 1) - s.phase
    if game.phase_limit is not None:
        total = min(total, game.phase_limit)
        left = min(left, game.phase_limit - s.phases_played)
    f.update(phases_left=left, phases_left_fraction=left / total)
    f["attempts"] = sum(s.attempts)
    f["escalation"] = sum(p.escalation * n for p, n in zip(rules.powers, s.attempts, strict=True))
    if s.caster >= 0:
        f["cast_own"] = float(specs[s.caster][0] == 0)
        f["caster_reach"] = reach[s.caster]
    if s.power >= 0:
        f["cast_worth"] = power_effect(rules)[s.power]
        k, u = specs[s.target]
        f.update(cast_target_own=float(k == 0), cast_total=s.total, cast_warp_charge=s.warp_charge)
        f["cast_target_points"] = u.models * u.wounds * u.value_per_wound
        f["cast_margin"] = s.total - s.warp_charge
        f["cast_perils"] = float(s.total in (2, 12))
        f["cast_deny_chance"] = _deny_chance(s.total)
    f["cast_denier"] = float(s.denier >= 0)
    return f


def features_of(rules, s) -> dict[str, float]:
    """The map's features of ``s`` by name."""
    phi = board_features(rules)(rules.observe(s, 0))
    return dict(zip(FEATURES, phi.tolist(), strict=True))


def check(rules, s) -> dict[str, float]:
    """Assert the map's features equal :func:`expected` at ``s``; return them."""
    got, want = features_of(rules, s), expected(rules, s)
    for name in FEATURES:
        assert got[name] == pytest.approx(want[name], rel=1e-5, abs=1e-5), name
    return got


@pytest.mark.parametrize("name", SCENARIOS)
def test_names_finite_and_exact_at_the_start(name):
    rules = load("8th", name)
    features = board_features(rules)
    assert features.names == FEATURES
    assert features.matrix.shape == (rules.observation_size, len(FEATURES))
    s = rules.initial_state()
    got = check(rules, s)
    assert np.isfinite(list(got.values())).all()
    for side in ("own", "foe"):
        assert got[f"{side}_points"] == got[f"{side}_full_points"] > 0
        assert got[f"{side}_denies"] == got[f"{side}_deny_slots"]
    assert got["phases_left_fraction"] == pytest.approx(1.0)


@pytest.mark.parametrize("name", SCENARIOS)
@pytest.mark.parametrize("seed", range(3))
def test_exact_along_random_games(name, seed):
    """Every state of a few random games: the map agrees with the state, chance included."""
    rules = load("8th", name)
    states = random_game(rules, seed)
    for s in states:
        check(rules, s)
    assert states[-1].stage == Stage.OVER


def test_a_scripted_smite_in_the_duel():
    rules = load("8th", "duel")
    layout, smite = rules.actions, rules.power_index["Smite"]
    s = rules.apply(rules.initial_state(), layout.select(1))  # Primaris Psyker (8E-2.1)
    got = check(rules, s)
    assert got["kind_power"] == got["cast_own"] == 1.0
    assert got["caster_reach"] > 0
    s = rules.apply(s, layout.cast(smite, 5))  # at Guardian Defenders
    got = check(rules, s)
    assert got["kind_chance"] == 1.0
    assert got["cast_warp_charge"] == pytest.approx(5)  # 8E-4.2
    # Smite at 1-wound models of value 1: D3, D6 on 11+ (8E-7.1), given a pass on 5+
    assert got["cast_worth"] == pytest.approx((27 * 2 + 3 * 3.5) / 30)
    assert got["cast_target_points"] == pytest.approx(10)
    assert got["cast_target_own"] == 0.0
    assert dict(rules.chance_outcomes(s))[9] == pytest.approx(4 / 36)
    s = rules.apply(s, 9)
    got = check(rules, s)
    assert got["kind_deny"] == 1.0 and got["cast_total"] == pytest.approx(9)
    assert got["cast_margin"] == pytest.approx(4)
    assert got["cast_deny_chance"] == pytest.approx(6 / 36)  # 8E-5.2
    before = got["foe_denies"]
    s = rules.apply(s, layout.deny(3))  # the Farseer denies
    got = check(rules, s)
    assert got["cast_denier"] == 1.0 and got["foe_denies"] == pytest.approx(before - 1)
    s = rules.apply(s, 0)  # not denied
    points = got["foe_points"]
    assert s.stage == Stage.EFFECT and 2 in dict(rules.chance_outcomes(s))
    s = rules.apply(s, 2)  # the Guardians lose 2 wounds of value 1 (8E-7.2, 8E-8.2)
    got = check(rules, s)
    assert got["foe_points"] == pytest.approx(points - 2 * 1.0)
    assert got["foe_units"] == 3.0 and got["own_selected_casts"] == 1.0
    assert got["attempts"] == 1.0 and got["escalation"] == 1.0
    assert s.stage == Stage.SELECT
    s = rules.apply(s, layout.END_PHASE)  # the Eldar's Psychic phase
    got = check(rules, s)
    assert got["own_phase"] == 0.0 and got["phases_left"] == pytest.approx(9)
    assert got["foe_denies"] == pytest.approx(3) and got["attempts"] == 0.0


def test_a_fatal_perils_removes_points_units_and_psykers():
    rules = load("8th", "duel")
    layout = rules.actions
    s = rules.apply(rules.initial_state(), layout.select(1))  # Primaris Psyker, 3 wounds
    s = rules.apply(s, layout.cast(rules.power_index["Smite"], 5))
    s = rules.apply(s, 12)  # a double 6: Perils (8E-4.3)
    before = check(rules, s)
    assert before["cast_perils"] == 1.0 and before["cast_deny_chance"] == 0.0
    while s.stage in (Stage.PERILS, Stage.BLAST):  # the most wounds each time (8E-6)
        s = rules.apply(s, max(o for o, _ in rules.chance_outcomes(s)))
        check(rules, s)
    got = check(rules, s)
    assert s.wounds[:3] == (4, 0, 7)  # slain; the blast hits the Tactical Squad 5.4" away
    assert got["own_points"] == pytest.approx(before["own_points"] - 3 * 2.0 - 3 * 1.0)
    assert got["own_psykers"] == 1.0 and got["own_units"] == 2.0
    assert got["own_casts"] == 2.0 and got["own_deny_slots"] == got["own_denies"] == 1.0
    assert got["own_reach"] == pytest.approx(_reach(rules)[0])


def test_the_manifest_tool_finds_the_map():
    rules = load("8th", "random:11,psykers=3")
    assert value_features.features_tool("8th") is board_features
    via = value_features.board_features(rules)
    direct = board_features(rules)
    assert via.names == FEATURES
    np.testing.assert_array_equal(via.matrix, direct.matrix)
    np.testing.assert_array_equal(via.offset, direct.offset)


def test_the_monotone_directions_are_one_more_deny_left():
    """Own denies left up, the enemy's down: a deny is the holder's choice (8E-5.1)."""
    rows = board_features(load("8th", "random:3")).directions()
    assert rows.shape == (len(MONOTONE), len(FEATURES)) and (np.count_nonzero(rows, 1) == 1).all()
    got = {FEATURES[j]: rows[i, j] for i, j in zip(*np.nonzero(rows))}
    assert got == {"own_denies": 1.0, "foe_denies": -1.0}
