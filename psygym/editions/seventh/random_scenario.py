"""Random 7th-edition scenarios (``psygym scenario random --edition 7th``; :mod:`psygym.generator`).

Drawn from the edition's own data: the disciplines and powers of ``data/disciplines.toml`` and
the unit profiles of the shipped scenarios (``scenarios/*.toml``; a psyker's profile without its
psychic part, which is drawn). Half the scenarios generate their powers before the game (7E-2):
each psyker rolls on one or two disciplines. The other half give each psyker fixed powers: as
many as its mastery level, from one discipline's powers (its Primaris power included) and the
powers of no discipline (Force), so every power of the data file can be drawn.

psygym defaults (no source gives them): a psyker of the Sanctic discipline is a Grey Knight and
one of the Malefic discipline a daemon (their powers double Perils for anyone else, 7E-4.4); a
psyker has a force weapon with chance :data:`FORCE_WEAPON` and Adamantium Will with chance
:data:`ADAMANTIUM_WILL`; in half the scenarios every unit advances :data:`ADVANCE` inches before
each battle round after the first, as in the shipped duel. The numbers of units, the distance
between the armies and the battle rounds are :mod:`psygym.generator`'s defaults.
"""

from __future__ import annotations

from typing import Any

from psygym.editions.seventh import SCENARIO_DIR
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
"""Mastery levels 1-4 (7E-1.2)."""

FORCE_WEAPON = 0.5
"""Chance a generated psyker has a force weapon (psygym default)."""

ADAMANTIUM_WILL = 0.25
"""Chance a generated psyker has Adamantium Will (psygym default)."""

ADVANCE = 2
"""Inches every unit advances before each later battle round, in half the scenarios (psygym
default, as in the shipped duel)."""

FLAGS = {"Sanctic": "grey_knight", "Malefic": "daemon"}
"""The psyker flag a psyker of these disciplines gets (psygym default: the armies that field
them)."""


def random_scenario(seed: int, options: RandomOptions) -> dict[str, Any]:
    """A random 7th-edition scenario as TOML data (validated by the edition's loader).

    Raises:
        ScenarioError: a seed or option out of range (one line).
    """
    from psygym.editions.seventh.spec import load_powers

    p = plan(seed, options, LIMITS, "7th")
    rng = p.rng
    powers = load_powers().power
    disciplines = sorted({pw.discipline for pw in powers if pw.discipline})
    loose = [pw.name for pw in powers if not pw.discipline]
    units = shipped_units(SCENARIO_DIR)
    casters = [profile(u, ("psyker", "advance")) for u in units if "psyker" in u]
    others = [profile(u, ("advance",)) for u in units if "psyker" not in u]
    generate = bool(rng.random() < 0.5)
    advance = ADVANCE if rng.random() < 0.5 else 0

    def psyker(mastery: int) -> dict[str, Any]:
        chosen = sample(rng, disciplines, int(rng.integers(1, 3)) if generate else 1)
        out: dict[str, Any] = {"mastery": mastery}
        if generate:
            out["disciplines"] = chosen
        else:
            pool = [pw.name for pw in powers if pw.discipline == chosen[0]] + loose
            out["powers"] = sample(rng, pool, mastery)
        for discipline, flag in FLAGS.items():
            if discipline in chosen:
                out[flag] = True
        if rng.random() < FORCE_WEAPON and "Force" not in out.get("powers", []):
            out["force_weapon"] = True
        if rng.random() < ADAMANTIUM_WILL:
            out["adamantium_will"] = True
        return out

    taken: set[str] = set()
    sides = []
    for side in range(2):
        psykers = [{**pick(rng, casters), "psyker": psyker(m)} for m in p.masteries(side)]
        squads = [dict(pick(rng, others)) for _ in range(p.squads[side])]
        placed = army(p, side, psykers, squads, taken)
        if advance:
            placed = [{**u, "advance": advance} for u in placed]
        sides.append({"name": SIDES[side], "units": placed})
    what = "powers generated before the game (7E-2)" if generate else "fixed powers"
    return {
        "edition": "7th",
        "name": short_name(seed, options),
        "description": describe("7th", seed, options, f"Psykers with {what}."),
        "game": {
            "battle_rounds": p.rounds,
            "first_player": p.first_player,
            "generate_powers": generate,
        },
        "sides": sides,
    }


__all__ = ["LIMITS", "random_scenario"]
