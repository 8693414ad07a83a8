"""Random 2nd-edition scenarios (``psygym scenario random --edition 2nd``; :mod:`psygym.generator`).

Drawn from the edition's own data: the power cards and disciplines of ``data/powers.toml`` and
the unit profiles of the shipped scenarios (``scenarios/*.toml``; a psyker's profile without its
psychic part, which is drawn). Each psyker either draws its power cards at set-up from one or
both disciplines (2E-1.1) or holds fixed cards, as many as its mastery level, drawn from one
discipline's cards. Every scenario plays with the shipped warp deck (``data/deck.toml``, 2E-2.1),
so every card of it is in every game, and with the default rule settings of ``rules/second.md``.

psygym defaults (no source gives them): a psyker draws its cards at set-up in half the cases,
and has a psychic hood with chance :data:`PSYCHIC_HOOD`; the numbers of units, the distance
between the armies and the battle rounds are :mod:`psygym.generator`'s defaults.
"""

from __future__ import annotations

from typing import Any

from psygym.editions.second.data import load_powers
from psygym.editions.second.spec import MAX_POWER_CARDS
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

LIMITS = Limits(mastery=(1, MAX_POWER_CARDS))
"""Mastery levels 1-4 (2E-1.1)."""

PSYCHIC_HOOD = 0.25
"""Chance a generated psyker has a psychic hood (psygym default)."""


def random_scenario(seed: int, options: RandomOptions) -> dict[str, Any]:
    """A random 2nd-edition scenario as TOML data (validated by the edition's loader).

    Raises:
        ScenarioError: a seed or option out of range (one line).
    """
    from psygym.editions.second import SCENARIO_DIR

    p = plan(seed, options, LIMITS, "2nd")
    rng = p.rng
    powers = load_powers()
    disciplines = sorted({d for pw in powers for d in pw.disciplines})
    units = shipped_units(SCENARIO_DIR)
    casters = [profile(u, ("psyker",)) for u in units if "psyker" in u]
    others = [profile(u, ()) for u in units if "psyker" not in u]

    def psyker(mastery: int) -> dict[str, Any]:
        out: dict[str, Any] = {"mastery": mastery}
        if rng.random() < 0.5:
            out["disciplines"] = sample(rng, disciplines, int(rng.integers(1, 3)))
        else:
            discipline = pick(rng, disciplines)
            cards = [pw.name for pw in powers if discipline in pw.disciplines]
            out["powers"] = sample(rng, cards, mastery)
        if rng.random() < PSYCHIC_HOOD:
            out["psychic_hood"] = True
        return out

    taken: set[str] = set()
    sides = []
    for side in range(2):
        psykers = [{**pick(rng, casters), "psyker": psyker(m)} for m in p.masteries(side)]
        squads = [dict(pick(rng, others)) for _ in range(p.squads[side])]
        sides.append({"name": SIDES[side], "units": army(p, side, psykers, squads, taken)})
    return {
        "edition": "2nd",
        "name": short_name(seed, options),
        "description": describe(
            "2nd", seed, options, "Psykers with power cards of the shipped disciplines."
        ),
        "game": {"battle_rounds": p.rounds, "first_player": p.first_player},
        "sides": sides,
    }


__all__ = ["LIMITS", "random_scenario"]
