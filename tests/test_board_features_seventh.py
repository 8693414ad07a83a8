"""7th-edition board features: names, exact values from the state and the scenario spec."""

from __future__ import annotations

import numpy as np
import pytest
from psygym_agents.seventh.board_features import FEATURES, board_features, power_worth
from psygym_agents.value import features as value_features

from psygym.editions import load
from psygym.editions.seventh.state import Stage

SCENARIOS = ("duel", "single-phase", "random:3", "random:8,psykers=3", "random:12,mastery=3-4")
KINDS = {Stage.DISCIPLINE: "discipline", Stage.SWAP: "swap", Stage.SELECT: "select",
         Stage.DICE: "dice", Stage.DENY: "deny"}  # fmt: skip


def expected(rules, s) -> dict[str, float]:
    """The features from the state's fields and the scenario spec, not from the observation."""
    specs = [(k, u) for k, side in enumerate(rules.scenario.sides) for u in side.units]
    worth = power_worth(rules)
    f = dict.fromkeys(FEATURES, 0.0)
    mastery = [sum(u.psyker.mastery if u.psyker else 0 for u in side.units) for side in
               rules.scenario.sides]  # fmt: skip
    average = [m / len(side.units) for m, side in zip(mastery, rules.scenario.sides)]
    for i, ((k, spec), u) in enumerate(zip(specs, s.units, strict=True)):
        side = ("own", "foe")[k]
        full = spec.models * spec.wounds * spec.value_per_wound
        f[f"{side}_points"] += u.wounds * spec.value_per_wound
        f[f"{side}_full_points"] += full
        f[f"{side}_units"] += u.wounds > 0
        f[f"{side}_surge"] += u.surge
        if spec.psyker is not None and u.psyker:
            f[f"{side}_psykers"] += 1
            f[f"{side}_mastery"] += spec.psyker.mastery
            f[f"{side}_reach"] += sum(worth[i][rules.power_index[n]] for n in spec.psyker.powers)
            need = 6 - (spec.psyker.mastery > average[1 - k]) - spec.psyker.adamantium_will
            f[f"{side}_deniers"] += need < 6
        f[f"{side}_known"] += sum(worth[i][p] for p in u.powers)
        f[f"{side}_warp_charge"] += sum(rules.powers[p].warp_charge for p in u.powers)
        f[f"{side}_attempted"] += sum(1 for c, _ in s.attempted if c == i)
        f[f"{side}_in_force"] += sum(1 for _, t, _ in s.effects if t == i)
    f["own_dice"], f["foe_dice"] = s.pools
    for k, side in enumerate(("own", "foe")):
        f[f"{side}_max_dice"] = 6 + mastery[k] + rules.scenario.sides[k].pool_bonus
    f[f"kind_{KINDS.get(s.stage, 'none')}"] = 1.0
    total = rules.total_phases
    rounds = (total + 1) // 2
    f["round_fraction"] = (s.phase // 2 + 1) / rounds
    f["own_phase"] = float(s.active == 0)
    f["phases_left"] = max(0, total - s.phase)
    f["phases_left_fraction"] = max(0, total - s.phase) / total
    f["rounds"] = rounds
    if s.cast is not None:
        c = s.cast
        f["cast_own"] = float(specs[c.caster][0] == 0)
        f["cast_worth"] = max(worth[t][c.power] for t in range(len(specs)))
        k, spec = specs[c.target]
        f["cast_target_points"] = spec.models * spec.wounds * spec.value_per_wound
        f.update(cast_dice=c.dice, cast_successes=c.successes, cast_perils=float(c.perils))
        f["cast_warp_charge"] = rules.powers[c.power].warp_charge
        f["cast_threshold"] = rules.deny_unit_and_threshold(s, c)[1]
    return f


def check(rules, s) -> dict[str, float]:
    """Assert the map's features equal :func:`expected` at ``s``; return them."""
    phi = board_features(rules)(rules.observe(s, 0))
    got, want = dict(zip(FEATURES, phi.tolist(), strict=True)), expected(rules, s)
    for name in FEATURES:
        assert got[name] == pytest.approx(want[name], rel=1e-5, abs=1e-5), name
    return got


@pytest.mark.parametrize("name", SCENARIOS)
def test_names_and_the_start(name):
    rules = load("7th", name)
    features = board_features(rules)
    assert features.names == FEATURES
    assert features.matrix.shape == (rules.observation_size, len(FEATURES))
    assert value_features.board_features(rules).names == FEATURES  # the manifest's tool
    got = check(rules, rules.initial_state())
    for side in ("own", "foe"):
        assert got[f"{side}_points"] == got[f"{side}_full_points"] > 0


@pytest.mark.parametrize("name", SCENARIOS)
@pytest.mark.parametrize("seed", range(3))
def test_exact_along_random_games(name, seed):
    """Every state of random games (chance by its odds): the map agrees with the state."""
    rules = load("7th", name)
    rng = np.random.default_rng(seed)
    s = rules.initial_state()
    seen_cast = False
    while s.stage != Stage.OVER:
        check(rules, s)
        seen_cast |= s.cast is not None
        if rules.current_player(s) < 0:
            outcomes, probs = zip(*rules.chance_outcomes(s), strict=True)
            s = rules.apply(s, outcomes[rng.choice(len(outcomes), p=probs)])
        else:
            s = rules.apply(s, int(rng.choice(rules.legal_actions(s))))
    check(rules, s)
    assert seen_cast or seed > 0  # the first game of each scenario checks a pending cast


def test_a_wound_costs_its_points():
    """Smite's wounds on the duel's Guardians lower foe_points by wounds x value per wound."""
    rules = load("7th", "duel")
    s = rules.initial_state()
    units = list(s.units)
    guardians = rules.names.index("Guardians")
    before = check(rules, s)["foe_points"]
    units[guardians] = type(units[guardians])(**{**units[guardians].__dict__, "wounds": 7})
    after = check(rules, type(s)(**{**s.__dict__, "units": tuple(units)}))["foe_points"]
    value = rules.specs[guardians].value_per_wound
    assert before - after == pytest.approx(3 * value)
