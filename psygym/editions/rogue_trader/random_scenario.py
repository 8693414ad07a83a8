"""Random Rogue Trader scenarios (``psygym scenario random --edition rt``; :mod:`psygym.generator`).

Drawn from the edition's own data: the abilities and generation charts of ``data/`` and the unit
profiles of the shipped scenarios (``scenarios/*.toml``; a psyker's profile without its psychic
part, which is drawn). A psyker of mastery ``m`` knows abilities of levels 1 to ``m`` (RT-1.2),
drawn from the charts of those levels (RT-1.3); how many is drawn from 1 to the chart's typical
number for its mastery (RT-1.1), capped by its intelligence. Its psi-level is the typical one
of its mastery (the ``[game]`` default). A battle round is two player turns: ``rounds = R``
gives ``turns = 2R`` (RT-6.1).

psygym defaults (no source gives them): the number of abilities drawn below the typical one (to
keep the turn searches small), the numbers of units, the distance between the armies and the
battle rounds (:mod:`psygym.generator`).
"""

from __future__ import annotations

from typing import Any

from psygym.editions.rogue_trader.abilities import load_data
from psygym.editions.rogue_trader.spec import RTUnit
from psygym.generator import (
    SIDES,
    Limits,
    RandomOptions,
    army,
    describe,
    pick,
    plan,
    profile,
    sample,
    shipped_units,
    short_name,
)

LIMITS = Limits(mastery=(1, 4))
"""Psychic mastery 1-4 (RT-1.1)."""

PSYCHIC = ("mastery", "abilities", "psi_level", "psi_points")
"""The fields of a psyker's psychic part, drawn rather than taken from a shipped profile."""


def random_scenario(seed: int, options: RandomOptions) -> dict[str, Any]:
    """A random Rogue Trader scenario as TOML data (validated by the edition's loader).

    Raises:
        ScenarioError: a seed or option out of range (one line).
    """
    from psygym.editions.rogue_trader import SCENARIO_DIR

    p = plan(seed, options, LIMITS, "rt")
    rng = p.rng
    data = load_data()
    units = shipped_units(SCENARIO_DIR)
    casters = [profile(u, PSYCHIC) for u in units if u.get("mastery")]
    others = [profile(u, ()) for u in units if not u.get("mastery")]

    def psyker(unit: dict[str, Any], mastery: int) -> dict[str, Any]:
        known = [data.names[i] for i in data.by_level(mastery)]
        cap = min(
            data.mastery_row(mastery).abilities,
            int(unit.get("intelligence", RTUnit.model_fields["intelligence"].default)),
            data.charts.max_abilities,
        )
        count = int(rng.integers(1, max(cap, 1) + 1))
        return {**unit, "mastery": mastery, "abilities": sample(rng, known, count)}

    taken: set[str] = set()
    sides = []
    for side in range(2):
        psykers = [psyker(pick(rng, casters), m) for m in p.masteries(side)]
        squads = [dict(pick(rng, others)) for _ in range(p.squads[side])]
        sides.append({"name": SIDES[side], "units": army(p, side, psykers, squads, taken)})
    return {
        "edition": "rt",
        "name": short_name(seed, options),
        "description": describe(
            "rt", seed, options, "Psykers with abilities drawn from the charts."
        ),
        "game": {"turns": 2 * p.rounds, "first_player": p.first_player},
        "sides": sides,
    }


__all__ = ["LIMITS", "random_scenario"]
