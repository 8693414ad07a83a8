"""Random 8th-edition scenarios (``psygym scenario random --edition 8th``; :mod:`psygym.generator`).

Drawn from the edition's own data: the powers of ``data/powers.toml`` and the unit profiles of
the shipped scenarios (``scenarios/*.toml``; a PSYKER's profile without its psychic part, which
is drawn). Every PSYKER knows Smite (the data's ``known_by_all_psykers``) and as many other
powers as its mastery, drawn from the rest of the data file.

The 8th edition has no mastery levels: here a PSYKER's "mastery" ``m`` (1-3) is the number of
powers it may attempt in its own Psychic phase (``manifest``, 8E-1.2, as a Librarian's 2) and
of powers it knows besides Smite; it may deny 1 to ``m`` powers (drawn) in each enemy phase.
Those are psygym defaults, as are the numbers of units, the distance between the armies and the
battle rounds (:mod:`psygym.generator`).
"""

from __future__ import annotations

from typing import Any

from psygym.editions.eighth.spec import load_powers
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

LIMITS = Limits(mastery=(1, 3))
"""Powers a turn (``manifest``) 1-3 (the shipped PSYKERs attempt 1 or 2)."""

PSYCHIC = ("psyker", "powers", "manifest", "deny")
"""The fields of a PSYKER's psychic part, drawn rather than taken from a shipped profile."""


def random_scenario(seed: int, options: RandomOptions) -> dict[str, Any]:
    """A random 8th-edition scenario as TOML data (validated by the edition's loader).

    Raises:
        ScenarioError: a seed or option out of range (one line).
    """
    from psygym.editions.eighth import SCENARIO_DIR

    p = plan(seed, options, LIMITS, "8th")
    rng = p.rng
    powers = [pw.name for pw in load_powers().powers if not pw.known_by_all_psykers]
    units = shipped_units(SCENARIO_DIR)
    casters = [profile(u, PSYCHIC) for u in units if u.get("psyker")]
    others = [profile(u, ()) for u in units if not u.get("psyker")]

    def psyker(mastery: int) -> dict[str, Any]:
        return {
            "psyker": True,
            "manifest": mastery,
            "deny": int(rng.integers(1, mastery + 1)),
            "powers": sample(rng, powers, mastery),
        }

    taken: set[str] = set()
    sides = []
    for side in range(2):
        psykers = [{**pick(rng, casters), **psyker(m)} for m in p.masteries(side)]
        squads = [dict(pick(rng, others)) for _ in range(p.squads[side])]
        sides.append({"name": SIDES[side], "units": army(p, side, psykers, squads, taken)})
    return {
        "edition": "8th",
        "name": short_name(seed, options),
        "description": describe(
            "8th", seed, options, "PSYKERs that know Smite and powers drawn from the data."
        ),
        "game": {"battle_rounds": p.rounds, "first_player": p.first_player},
        "sides": sides,
    }


__all__ = ["LIMITS", "random_scenario"]
