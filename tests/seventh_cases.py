"""Shared scripts of the 7th-edition rules tests: the base scenario and the steps of a cast.

``base()`` is a small Ultramarines-against-Chaos scenario. ``start``, ``cast``, ``roll`` and
``deny`` walk a phase through explicit decisions and forced chance outcomes, ``perils_state``
reaches a Perils roll (7E-6), and ``gen_rules`` builds a scenario whose powers are generated
(7E-2). Rule ids refer to ``shared/rules/seventh.md``.
"""

from __future__ import annotations

from fractions import Fraction

from helpers import (
    act,
    choose,
    exact_outcomes,
    force,
    force_ev,
    kinds,
    psyker7,
    rules_from,
    scenario7,
    unit7,
)

from psygym.editions.seventh.state import Stage

F = Fraction
LIB, BROS, SORC, CULT = 0, 1, 2, 3
"""Unit indices of the base scenario."""


def base(**game) -> dict:
    """Ultramarines (Lib ML2, Brothers: a 5-model ML1 brotherhood) vs Chaos (Sorcerer ML1,
    10 Cultists). Pools: r + 3 for the Ultramarines, r + 1 for Chaos."""
    return scenario7(
        [
            unit7(
                "Lib",
                (0, 0),
                wounds=2,
                toughness=4,
                save=3,
                leadership=9,
                psyker=psyker7(2, powers=["Smite", "Iron Arm", "Enfeeble", "Forewarning"]),
            ),
            unit7(
                "Brothers",
                (2, 0),
                models=5,
                wounds=1,
                toughness=4,
                save=3,
                leadership=8,
                psyker=psyker7(1, powers=["Smite", "Forewarning"]),
            ),
        ],
        [
            unit7(
                "Sorcerer",
                (0, 12),
                wounds=2,
                toughness=4,
                save=3,
                leadership=9,
                ballistic_skill=4,
                psyker=psyker7(1, powers=["Smite"]),
            ),
            unit7(
                "Cultists",
                (4, 12),
                models=10,
                wounds=1,
                toughness=3,
                save=6,
                leadership=7,
                value_per_wound=0.5,
            ),
        ],
        **game,
    )


def start(rules, roll: int, state=None):
    """Force the warp charge roll (7E-3.1) of a phase and return the SELECT state."""
    s = rules.initial_state() if state is None else state
    assert s.stage == Stage.PHASE_ROLL
    assert exact_outcomes(rules, s) == {r: F(1, 6) for r in range(1, 7)}
    s = force(rules, s, roll)
    assert s.stage == Stage.SELECT
    return s


def cast(rules, s, label: str, dice: int):
    """Choose a cast by label and commit ``dice`` dice; returns the CAST_ROLL state."""
    s = choose(rules, s, label)
    assert s.stage == Stage.DICE
    s = act(rules, s, rules.DICE + dice - 1)
    assert s.stage == Stage.CAST_ROLL and s.cast.dice == dice
    return s


def roll(successes: int, perils: bool = False) -> int:
    """CAST_ROLL outcome code: 2 * successes + perils."""
    return 2 * successes + int(perils)


def wounds(s) -> tuple[int, ...]:
    return tuple(u.wounds for u in s.units)


def deny(rules, s, dice: int):
    assert s.stage == Stage.DENY
    return act(rules, s, rules.DENY + dice)


def gen_rules(*psykers, **game):
    return rules_from(
        scenario7(list(psykers), [unit7("Squad", (0, 30), models=5)], generate=True, **game)
    )


def perils_state(rules, roll_: int = 4, dice: int = 3, label="Lib: Enfeeble (WC 1) at Cultists"):
    """Cast Enfeeble with ``dice`` dice, two successes and Perils; returns the PERILS state."""
    s = cast(rules, start(rules, roll_), label, dice)
    s, ev = force_ev(rules, s, roll(2, True))
    assert kinds(ev) == ["attempt", "passed", "perils"]
    assert s.stage == Stage.PERILS and s.cast.perils
    assert exact_outcomes(rules, s) == {r: F(1, 6) for r in range(1, 7)}
    return s
