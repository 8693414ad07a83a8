"""Random Rogue Trader scenarios (``psygym scenario random --edition rt``; :mod:`psygym.generator`).

Drawn from the edition's own data: the abilities and generation charts of ``data/`` and the unit
profiles of the shipped scenarios (``scenarios/*.toml``; a psyker's profile without its psychic
part, which is drawn). A psyker of mastery ``m`` knows abilities of levels 1 to ``m`` (RT-1.2),
drawn from the charts of those levels (RT-1.3); how many is drawn from 1 to the chart's typical
number for its mastery (RT-1.1), capped by its intelligence. Its psi-level is the typical one
of its mastery (the ``[game]`` default). A battle round is two player turns: ``rounds = R``
gives ``turns = 2R`` (RT-6.1).

A list where no psyker of either side knows an ability that can score against an enemy in its
range (:func:`can_score`) is a game that always ends 0-0 (about a quarter of the draws, with
abilities such as Hammerhand or Steal Mind only): the armies are drawn again, from the same
stream, up to :data:`MAX_DRAWS` times.

psygym defaults (no source gives them): the number of abilities drawn below the typical one (to
keep the turn searches small), the numbers of units, the distance between the armies, the
battle rounds (:mod:`psygym.generator`) and :data:`MAX_DRAWS`.
"""

from __future__ import annotations

from typing import Any

from psygym.editions.rogue_trader.abilities import SCORING_EFFECTS, AbilityData, load_data
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
from psygym.scenario import distance

LIMITS = Limits(mastery=(1, 4))
"""Psychic mastery 1-4 (RT-1.1)."""

PSYCHIC = ("mastery", "abilities", "psi_level", "psi_points")
"""The fields of a psyker's psychic part, drawn rather than taken from a shipped profile."""

MAX_DRAWS = 100
"""Draws of the armies before a list that cannot score is kept anyway (psygym default: a
scoring list turns up within a few draws whenever one can, as the tests check)."""


def can_score(sides: list[dict[str, Any]], data: AbilityData) -> bool:
    """Whether some psyker knows an ability that can change the score at once (RT-4, RT-6.2).

    Such an ability has a scoring effect (:data:`.abilities.SCORING_EFFECTS`) and an enemy unit
    within its range, or a ``value`` of its own.
    """
    for side, own in enumerate(sides):
        enemies = [u["position"] for u in sides[1 - side]["units"]]
        for unit in own["units"]:
            for name in unit.get("abilities") or ():
                ab = data.abilities[data.index[name]]
                near = any(distance(unit["position"], e) <= ab.range + 1e-9 for e in enemies)
                if ab.value or (ab.effect in SCORING_EFFECTS and ab.target == "enemy" and near):
                    return True
    return False


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

    for _ in range(MAX_DRAWS):
        taken: set[str] = set()
        sides = []
        for side in range(2):
            psykers = [psyker(pick(rng, casters), m) for m in p.masteries(side)]
            squads = [dict(pick(rng, others)) for _ in range(p.squads[side])]
            sides.append({"name": SIDES[side], "units": army(p, side, psykers, squads, taken)})
        if can_score(sides, data):
            break
    return {
        "edition": "rt",
        "name": short_name(seed, options),
        "description": describe(
            "rt", seed, options, "Psykers with abilities drawn from the charts."
        ),
        "game": {"turns": 2 * p.rounds, "first_player": p.first_player},
        "sides": sides,
    }


__all__ = ["LIMITS", "MAX_DRAWS", "can_score", "random_scenario"]
