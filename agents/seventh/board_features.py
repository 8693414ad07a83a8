"""7th-edition board features: any 7th scenario's board as the same named numbers.

The map reads player 0's observation (its layout:
:meth:`psygym.editions.seventh.views.Observer.observe`) and the scenario's facts
(:mod:`psygym_agents.value.features` says why it is linear). Per side, ``own`` being player 0
and ``foe`` player 1:

- ``points``: the points still on the table, each unit's wounds left times its value per wound
  (the score counts wounds, 7E-8); ``units``: units alive; ``full_points``: the points at the
  start (a constant);
- ``psykers``, ``mastery``: living psykers and the sum of their mastery levels (7E-1.2, whose
  levels set the pool, 7E-3.1, and how many powers a psyker may cast, 7E-4.2);
- ``reach``: the summed worth of what the living psykers know at the start (each power's
  expected points if it goes off, against its best enemy target in any battle round: the
  heuristics' ``expected_value``), ``known``: the same worth over the powers known now (powers
  are generated before the game in some scenarios, 7E-2), ``warp_charge``: the warp charge of
  the powers known;
- ``surge``: units under Warp Surge; ``in_force``: powers in force on the side's units;
  ``attempted``: powers its psykers attempted this phase (7E-4.2);
- ``dice``: the warp charge pool (7E-3) and ``max_dice``: the largest pool it can roll;
- ``deniers``: units that can deny at better than 6 against an average caster (7E-5.2).

Shared: the decision kind (six), battle round / rounds, whose phase, phases left and their
fraction, the rounds of the game, and the pending cast: its caster is player 0's, what the power
is worth, the target's points, dice, successes, warp charge, deny threshold and Perils.
"""

from __future__ import annotations

from typing import Any

from psygym_agents.seventh.heuristics import expected_value
from psygym_agents.value.features import BoardFeatures, FeatureBuilder

from psygym.editions.seventh.views import Observer

SIDE_FEATURES = (
    "points", "full_points", "units", "psykers", "mastery", "reach", "known", "warp_charge",
    "surge", "in_force", "attempted", "dice", "max_dice", "deniers",
)  # fmt: skip
"""Features counted once per side."""

SHARED_FEATURES = (
    "kind_discipline", "kind_swap", "kind_select", "kind_dice", "kind_deny", "kind_none",
    "round_fraction", "own_phase", "phases_left", "phases_left_fraction", "rounds",
    "cast_own", "cast_worth", "cast_target_points", "cast_dice", "cast_successes",
    "cast_warp_charge", "cast_threshold", "cast_perils",
)  # fmt: skip
"""Features of the whole board."""

FEATURES = tuple(f"{side}_{n}" for side in ("own", "foe") for n in SIDE_FEATURES) + SHARED_FEATURES
"""Every 7th-edition board feature, in order."""


def power_worth(rules: Any) -> list[list[float]]:
    """Per unit and power: expected points of the power if it goes off, at its best target.

    The best over every battle round's candidate targets (7E-4.1), with the targets' wounds at
    the start of the game; 0 for a power the unit has no target for.
    """
    s0 = rules.initial_state()
    worth = [[0.0] * len(rules.powers) for _ in rules.specs]
    for c, spec in enumerate(rules.specs):
        if spec.psyker is None:
            continue
        for p in range(len(rules.powers)):
            targets = {t for table in rules.candidates_by_round for t in table.get((c, p), ())}
            values = [expected_value(rules, s0, c, p, t) for t in sorted(targets)]
            worth[c][p] = max(values, default=0.0)
    return worth


def board_features(rules: Any) -> BoardFeatures:
    """The 7th-edition board features of ``rules``' scenario (see the module docstring)."""
    obs = Observer(rules.facts)  # the layout's bases
    b = FeatureBuilder(FEATURES, rules.observation_size)
    worth = power_worth(rules)
    n_powers = len(rules.powers)
    side_name = ("own", "foe")
    avg_mastery = [
        sum(rules.mastery[t] for t in units) / max(1, len(units)) for units in rules.side_units
    ]
    for t, spec in enumerate(rules.specs):
        side = side_name[rules.owner[t]]
        i = obs.unit_base[t]
        points = rules.max_wounds[t] * float(spec.value_per_wound)
        b.add(f"{side}_points", i + 2, points)
        b.constant(f"{side}_full_points", points)
        b.add(f"{side}_units", i + 1)
        b.add(f"{side}_surge", i + 5)
        if spec.psyker is not None:
            b.add(f"{side}_psykers", i + 3)
            b.add(f"{side}_mastery", i + 3, rules.mastery[t])
            start = sum(worth[t][rules.power_index[n]] for n in spec.psyker.powers)
            b.add(f"{side}_reach", i + 3, start)
            enemy_mastery = avg_mastery[1 - rules.owner[t]]
            need = 6 - (rules.mastery[t] > enemy_mastery) - spec.psyker.adamantium_will
            if need < 6:
                b.add(f"{side}_deniers", i + 3)
        for p in range(n_powers):
            b.add(f"{side}_known", i + 6 + p, worth[t][p])
            b.add(f"{side}_warp_charge", i + 6 + p, rules.powers[p].warp_charge)
            b.add(f"{side}_attempted", i + 6 + n_powers + p)
            b.add(f"{side}_in_force", i + 6 + 2 * n_powers + p)
    # Entries 8 and 9 are player 0's and player 1's dice in player 0's observation.
    b.add("own_dice", 8, 10)
    b.add("foe_dice", 9, 10)
    for side, units in zip(side_name, rules.side_units, strict=True):
        bonus = rules.scenario.sides[side_name.index(side)].pool_bonus
        b.constant(f"{side}_max_dice", 6 + sum(rules.mastery[t] for t in units) + bonus)
    for k, name in enumerate(SHARED_FEATURES[:6]):
        b.add(name, k)
    b.add("round_fraction", 6)
    b.add("own_phase", 7)
    b.add("phases_left", 10, rules.total_phases)
    b.add("phases_left_fraction", 10)
    b.constant("rounds", obs.round_div)
    n_units = len(rules.specs)
    base = obs.cast_base
    for t in range(n_units):
        if rules.owner[t] == 0:
            b.add("cast_own", base + t)
        points = rules.max_wounds[t] * float(rules.specs[t].value_per_wound)
        b.add("cast_target_points", base + n_units + n_powers + t, points)
    for p in range(n_powers):
        best = max((worth[t][p] for t in range(n_units)), default=0.0)
        b.add("cast_worth", base + n_units + p, best)
    tail = base + 2 * n_units + n_powers
    for k, name in enumerate(("cast_dice", "cast_successes", "cast_warp_charge")):
        b.add(name, tail + k, 10 if k < 2 else 3)
    b.add("cast_threshold", tail + 3, 6)
    b.add("cast_perils", tail + 4)
    return b.build()


__all__ = ["FEATURES", "board_features", "power_worth"]
