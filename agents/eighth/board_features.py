"""8th-edition board features: any 8th scenario's board as the same named numbers.

The map reads player 0's observation (layout: :meth:`.rules.EighthRules.observe` of the edition)
and the scenario's facts (:mod:`psygym_agents.value.features` says why it is linear). Per side,
``own`` being player 0 and ``foe`` player 1:

- ``points``: the points still on the table, each unit's wounds left times its value per wound
  (the score counts wounds, 8E-8.2); ``units``: units alive (8E-1.3); ``full_points``: the
  points at the start (a constant);
- ``psykers``, ``casts``: living PSYKER units and the sum of their ``manifest``, the powers they
  may attempt per Psychic phase (8E-1.2, 8E-2.2);
- ``reach``: the summed worth of the powers the living psykers know (8E-3.1): each power's
  expected score for its side if attempted at the start of the game against its best target
  (the heuristics' ``attempt_value``: pass chance, denies in range, Perils, 8E-4 to 8E-7),
  never below 0;
- ``denies``: deny attempts left this phase (8E-1.2, 8E-5), counted for living psykers by the
  proxy ``deny_left - deny x (1 - alive)``: exact but for a psyker slain in this phase after it
  denied (then minus the denies it spent); ``deny_slots``: denies per phase of the living
  psykers;
- ``selected``, ``selected_casts``: units selected this phase and their summed ``manifest``
  (8E-2.3; only the active side has any).

Shared: the decision kind (five), battle round / rounds left / rounds (counts and fractions),
whose phase and who is first, the Psychic phases left (``game.phase_limit`` counted; at game
over as in the last phase, ``kind_over`` tells) and their fraction, the attempts this phase and
Smite's added warp charge (8E-4.2), and the pending cast: its caster is player 0's, the
caster's ``reach``, what the power is worth if it passes (the best over casters and targets,
before denies: a proxy for the caster/power product), whether the target is player 0's, the
target's full points (a proxy for its points left), the test total, warp charge and their
margin (8E-4.1), Perils (8E-4.3), the chance a deny beats the total (8E-5.2) and whether a deny
roll is under way. The score is not a feature.
"""

from __future__ import annotations

from typing import Any

from psygym_agents.eighth.heuristics import attempt_value
from psygym_agents.value.features import BoardFeatures, FeatureBuilder

from psygym.editions.eighth.effects import two_d6
from psygym.editions.eighth.views import DECISION_KINDS, GLOBALS, POWER_FEATURES, UNIT_FEATURES

SIDE_FEATURES = (
    "points", "full_points", "units", "psykers", "casts", "reach", "denies", "deny_slots",
    "selected", "selected_casts",
)  # fmt: skip
"""Features counted once per side."""

SHARED_FEATURES = (
    "kind_select", "kind_power", "kind_deny", "kind_chance", "kind_over",
    "round", "round_fraction", "rounds_left", "rounds_left_fraction", "rounds",
    "own_phase", "own_first", "phases_left", "phases_left_fraction", "attempts", "escalation",
    "cast_own", "caster_reach", "cast_worth", "cast_target_own", "cast_target_points",
    "cast_total", "cast_warp_charge", "cast_margin", "cast_perils", "cast_deny_chance",
    "cast_denier",
)  # fmt: skip
"""Features of the whole board."""

FEATURES = tuple(f"{side}_{n}" for side in ("own", "foe") for n in SIDE_FEATURES) + SHARED_FEATURES
"""Every 8th-edition board feature, in order."""

MONOTONE = ({"own_denies": 1.0}, {"foe_denies": -1.0})
"""Directions the board is never worth less in to a side, by the rules: a deny attempt left
this phase is the holder's to use or not (8E-5.1). In games between heuristics the denies left
are those nobody needed, and a value fitted to them alone read one more of its own denies left
as 0.14 points worse (on three boards of four) and one more of the enemy's as 0.13 better.
(Deny slots and casts have the right sign there already.)"""

_HEAD = DECISION_KINDS + GLOBALS


def power_worth(rules: Any) -> list[list[float]]:
    """Per unit and power: expected score of attempting it at the start, at its best target.

    The heuristics' ``attempt_value`` over the unit's legal casts at the initial state (8E-3.4,
    8E-7.1: Smite's target is the closest enemy), never below 0 (a worse attempt is not made);
    0 for a power the unit does not know.
    """
    s0 = rules.initial_state()
    worth = [[0.0] * rules.n_powers for _ in rules.units]
    for c in range(rules.n_units):
        for a in rules.cast_options(s0, c):
            p = rules.actions.decode_cast(a).power
            worth[c][p] = max(worth[c][p], attempt_value(rules, s0, c, a))
    return worth


def power_effect(rules: Any) -> list[float]:
    """Per power: its best expected score if the test passes, over the legal casts at the start.

    The effect's mean over the passing 2D6 totals at the base warp charge (8E-4.1, 8E-7), at
    full wounds, before any deny; never below 0.
    """
    s0, best = rules.initial_state(), [0.0] * rules.n_powers
    for c in range(rules.n_units):
        for a in rules.cast_options(s0, c):
            p, t = rules.actions.decode_cast(a)
            passing = [(k, float(q)) for k, q in two_d6() if k >= rules.powers[p].warp_charge]
            mean = sum(q * rules.mean_effect(p, c, t, k, s0.wounds[t]) for k, q in passing)
            best[p] = max(best[p], mean / sum(q for _, q in passing))
    return best


def board_features(rules: Any) -> BoardFeatures:
    """The 8th-edition board features of ``rules``' scenario (see the module docstring)."""
    b = FeatureBuilder(FEATURES, rules.observation_size, MONOTONE)
    worth, effect = power_worth(rules), power_effect(rules)
    game, side_name = rules.game, ("own", "foe")
    for t, unit in enumerate(rules.units):
        side = side_name[rules.side_of[t]]
        i = _HEAD + UNIT_FEATURES * t
        points, reach = rules.max_wounds[t] * float(unit.value_per_wound), sum(worth[t])
        b.add(f"{side}_points", i + 3, float(unit.value_per_wound))
        b.constant(f"{side}_full_points", points)
        b.add(f"{side}_units", i + 1)
        b.add(f"{side}_selected", i + 6)
        b.add(f"{side}_selected_casts", i + 6, unit.manifest if unit.psyker else 0)
        if unit.psyker:
            b.add(f"{side}_psykers", i + 1)
            b.add(f"{side}_casts", i + 1, unit.manifest)
            b.add(f"{side}_reach", i + 1, reach)
            b.add(f"{side}_denies", i + 5)
            b.add(f"{side}_denies", i + 1, unit.deny)
            b.constant(f"{side}_denies", -unit.deny)
            b.add(f"{side}_deny_slots", i + 1, unit.deny)
        if rules.side_of[t] == 0:
            b.add("cast_own", i + 7)
            b.add("cast_target_own", i + 8)
        b.add("caster_reach", i + 7, reach)
        b.add("cast_target_points", i + 8, points)
        b.add("cast_denier", i + 9)
    for k, name in enumerate(SHARED_FEATURES[:DECISION_KINDS]):
        b.add(name, k)
    rounds = game.battle_rounds
    b.add("round", 5, rounds)
    b.add("round_fraction", 5)
    for name, scale in (("rounds_left", rounds), ("rounds_left_fraction", 1.0)):
        b.add(name, 5, -scale)
        b.constant(name, scale)
    b.constant("rounds", rounds)
    b.add("own_phase", 6)
    b.add("own_first", 7)
    # Phases left, this one included: min(2R, limit) - 2 (round - 1) - phase, where phase (0 the
    # first player's, 1 the second's) is 1 - own_phase when player 0 is first, else own_phase.
    phases = min(2 * rounds, game.phase_limit or 2 * rounds)
    for name, scale in (("phases_left", 1.0), ("phases_left_fraction", 1.0 / phases)):
        b.add(name, 5, -2 * rounds * scale)
        b.add(name, 6, (1.0 if game.first_player == 0 else -1.0) * scale)
        b.constant(name, (phases + 2 - (game.first_player == 0)) * scale)
    b.add("cast_total", 8, 12)
    b.add("cast_warp_charge", 9, 12)
    b.add("cast_margin", 8, 12)
    b.add("cast_margin", 9, -12)
    b.add("cast_perils", 10)
    b.add("cast_deny_chance", 11)
    for p, power in enumerate(rules.powers):
        j = _HEAD + UNIT_FEATURES * rules.n_units + POWER_FEATURES * p
        b.add("attempts", j + 1)
        b.add("escalation", j + 1, power.escalation)
        b.add("cast_worth", j + 3, effect[p])
    return b.build()


__all__ = ["FEATURES", "MONOTONE", "board_features", "power_effect", "power_worth"]
