"""Exact chances of Rogue Trader psionics (rules/rogue-trader.md RT-2.3, RT-3, RT-4.3).

Pure functions of the numbers on the table, shared by the rules (chance nodes), the views (the
"works 58%" label of an ability) and the odds tables. Everything is an exact ``Fraction``.
"""

from __future__ import annotations

from fractions import Fraction
from functools import cache

from psygym.combat import capped
from psygym.dice import distribution


@cache
def two_d6_at_most(n: int) -> Fraction:
    """Chance that 2D6 totals ``n`` or less (psychic test RT-2.3, psychic save RT-3.1)."""
    return sum((p for total, p in distribution("2D6").items() if total <= n), Fraction(0))


@cache
def works_chance(points: int, no_test_at: int = 12) -> Fraction:
    """Chance that an ability works with ``points`` psi-points remaining (RT-2.3)."""
    return Fraction(1) if points >= no_test_at else two_d6_at_most(points)


@cache
def psychic_save_chance(will_power: int, enhanced: int = 0, augmented: int = 0) -> Fraction:
    """Chance of a psychic save: 2D6 <= WP - enhanced + augmented (RT-3.1 to RT-3.3)."""
    return two_d6_at_most(will_power - enhanced + augmented)


def armour_needed(save: int, aura: int) -> int | None:
    """Save roll needed against physical attacks with an aura of ``aura`` levels (RT-4.3)."""
    if aura <= 0:
        return save if save <= 6 else None
    return min(save, 7) - aura


@cache
def attack_outcomes(
    p_save: Fraction, p_damage: Fraction, damage: str, cap: int
) -> tuple[tuple[int, Fraction], ...]:
    """Outcomes of an attack: 0 saved, 1 no wound, ``1 + w`` for ``w`` wounds (capped at ``cap``).

    Args:
        p_save: chance of a psychic save (0 when none is allowed).
        p_damage: chance that the hit becomes an unsaved wound once the psychic save failed.
        damage: wounds of a damaging hit, a dice expression.
        cap: wounds the current model has left (wounds do not spill over).
    """
    out: dict[int, Fraction] = {0: p_save, 1: (1 - p_save) * (1 - p_damage)}
    for w, p in capped(distribution(damage), cap).items():
        out[1 + w] = out.get(1 + w, Fraction(0)) + (1 - p_save) * p_damage * p
    return tuple((o, p) for o, p in sorted(out.items()) if p > 0)


def binary(p: Fraction) -> tuple[tuple[int, Fraction], ...]:
    """Outcomes ``0`` (fails, ``1 - p``) and ``1`` (succeeds, ``p``), without impossible ones."""
    return tuple((o, q) for o, q in ((0, 1 - p), (1, p)) if q > 0)


__all__ = [
    "armour_needed",
    "attack_outcomes",
    "binary",
    "psychic_save_chance",
    "two_d6_at_most",
    "works_chance",
]
