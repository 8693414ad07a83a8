"""Shared combat arithmetic: to-wound charts per edition, saves and exact wound distributions.

The charts are data (one function per edition's printed table); :func:`wound_distribution` turns
a number of hits into the exact distribution of wounds inflicted, which rules modules expose as a
single aggregated chance node.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from functools import lru_cache

from psygym.dice import Dist, binomial, convolve, distribution


def roll_chance(needed: int | None) -> Fraction:
    """Chance that one D6 meets ``needed`` (a natural 1 always fails; ``None``: impossible)."""
    if needed is None or needed > 6:
        return Fraction(0)
    return Fraction(7 - max(needed, 2), 6)


def to_wound_7th(strength: int, toughness: int) -> int | None:
    """7th-edition to-wound roll (7E-7.1): 2+ at S >= T+2 ... 6+ at T-2 or T-3, else impossible."""
    diff = strength - toughness
    if diff >= 2:
        return 2
    if diff <= -4:
        return None
    return {1: 3, 0: 4, -1: 5, -2: 6, -3: 6}[diff]


def to_wound_rt(strength: int, toughness: int) -> int | None:
    """Rogue Trader / 2nd-edition to-wound roll (RT-4.2, 2E-6): 2+ at S >= T+2, none at S <= T-3."""
    diff = strength - toughness
    if diff >= 2:
        return 2
    if diff <= -3:
        return None
    return {1: 3, 0: 4, -1: 5, -2: 6}[diff]


def to_wound_8th(strength: int, toughness: int) -> int:
    """8th-edition wound table (8E-7.3): 2+ S >= 2T, 3+ S > T, 4+ S = T, 5+ S < T, 6+ S <= T/2."""
    if strength >= 2 * toughness:
        return 2
    if strength > toughness:
        return 3
    if strength == toughness:
        return 4
    if 2 * strength <= toughness:
        return 6
    return 5


def save_chance(*needed: int | None) -> Fraction:
    """Chance of saving with the best of the given saves (``None`` or 7+ means no such save)."""
    usable = [n for n in needed if n is not None and n <= 6]
    return roll_chance(min(usable)) if usable else Fraction(0)


def unsaved_chance_7th(save: int, invulnerable: int | None, ap: int | None) -> Fraction:
    """7th edition (7E-7.1): no armour save if AP <= save value; invulnerable when better."""
    armour = None if (ap is not None and ap <= save) else save
    return 1 - save_chance(armour, invulnerable)


def unsaved_chance_8th(save: int, invulnerable: int | None, ap: int) -> Fraction:
    """8th edition (8E-7.3): armour save worsened by AP (0, -1, -2 ...); invulnerable kept."""
    return 1 - save_chance(save - ap if save < 7 else None, invulnerable)


def strength_save_modifier(strength: int) -> int:
    """2nd-edition armour save modifier from Strength (2E-6): S4 -1 ... S10 -7, none below S4."""
    return max(0, strength - 3)


@lru_cache(maxsize=4096)
def _wound_distribution(
    hits: tuple[tuple[int, Fraction], ...],
    p: Fraction,
    damage: tuple[tuple[int, Fraction], ...],
) -> tuple[tuple[int, Fraction], ...]:
    dmg = dict(damage)
    out: Dist = {}
    for h, ph in hits:
        successes = binomial(h, p)
        for k, pk in successes.items():
            total: Dist = {0: Fraction(1)}
            for _ in range(k):
                total = convolve(total, dmg)
            for w, pw in total.items():
                out[w] = out.get(w, Fraction(0)) + ph * pk * pw
    return tuple(sorted((w, q) for w, q in out.items() if q))


def wound_distribution(
    hits: Mapping[int, Fraction] | str | int,
    p_success: Fraction,
    damage: Mapping[int, Fraction] | str | int = 1,
    cap: int | None = None,
) -> Dist:
    """Exact distribution of wounds from an attack.

    Args:
        hits: number of hits, as a distribution or a dice expression.
        p_success: chance that one hit becomes an unsaved wound (to hit x to wound x unsaved).
        damage: wounds per unsaved wound, as a distribution or a dice expression.
        cap: wounds cannot exceed this (the target's remaining wounds); ``None`` for no cap.
    """
    hd = distribution(hits) if isinstance(hits, str | int) else dict(hits)
    dd = distribution(damage) if isinstance(damage, str | int) else dict(damage)
    dist = dict(
        _wound_distribution(
            tuple(sorted(hd.items())), Fraction(p_success), tuple(sorted(dd.items()))
        )
    )
    return capped(dist, cap) if cap is not None else dist


def capped(dist: Mapping[int, Fraction], cap: int) -> Dist:
    """Distribution of ``min(value, cap)`` (and never below 0)."""
    out: Dist = {}
    for v, p in dist.items():
        k = max(0, min(v, cap))
        out[k] = out.get(k, Fraction(0)) + p
    return out
