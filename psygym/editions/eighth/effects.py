"""Exact distributions of the 8th-edition dice: psychic tests, denies, Perils and power effects.

Everything is an exact ``Fraction`` distribution, cached; the rules turn them into chance-node
outcome lists. Wounds lost are always capped at what the unit has left, so outcomes that remove
the same number of wounds are merged (one chance outcome per number of wounds lost).
"""

from __future__ import annotations

from fractions import Fraction
from functools import cache

from psygym.combat import capped, to_wound_8th, unsaved_chance_8th
from psygym.dice import Dist, binomial, distribution, parse

PERILS_TOTALS = (2, 12)
"""Test totals that can only be a double 1 (2) or a double 6 (12): Perils (8E-4.3).

A double 1 is the only way to total 2 and a double 6 the only way to total 12, so the test total
alone says whether Perils happens: the aggregated test outcome is the total (11 outcomes).
"""


@cache
def two_d6() -> tuple[tuple[int, Fraction], ...]:
    """The psychic test (8E-4.1): 2D6 totals 2..12 with their exact chances."""
    return tuple(sorted(distribution("2D6").items()))


def is_perils(total: int) -> bool:
    """Whether a test total means a double 1 or a double 6 (8E-4.3)."""
    return total in PERILS_TOTALS


@cache
def pass_chance(warp_charge: int) -> Fraction:
    """Chance that a 2D6 psychic test reaches ``warp_charge`` (8E-4.1)."""
    return sum((p for t, p in two_d6() if t >= warp_charge), Fraction(0))


@cache
def deny_chance(total: int) -> Fraction:
    """Chance that a Deny the Witch 2D6 is strictly greater than the test ``total`` (8E-5.2)."""
    return sum((p for t, p in two_d6() if t > total), Fraction(0))


@cache
def mortal_distribution(expr: str, remaining: int) -> tuple[tuple[int, Fraction], ...]:
    """Wounds lost to ``expr`` mortal wounds by a unit with ``remaining`` wounds (8E-7.2).

    Mortal wounds spill over from model to model, so only the unit's total is a cap.
    """
    return tuple(sorted(capped(distribution(expr), remaining).items()))


@cache
def _damage_step(
    remaining: int, per_model: int, damage: tuple[tuple[int, Fraction], ...]
) -> tuple[tuple[int, Fraction], ...]:
    """Distribution of wounds left after one unsaved wound (damage does not spill over)."""
    if remaining <= 0:
        return ((0, Fraction(1)),)
    current = (remaining - 1) % per_model + 1  # wounds of the model being damaged
    out: Dist = {}
    for d, p in damage:
        left = remaining - min(max(d, 0), current)
        out[left] = out.get(left, Fraction(0)) + p
    return tuple(sorted(out.items()))


@cache
def attack_distribution(
    hits: str,
    strength: int,
    ap: int,
    damage: str,
    toughness: int,
    save: int,
    invulnerable: int | None,
    remaining: int,
    per_model: int,
) -> tuple[tuple[int, Fraction], ...]:
    """Wounds lost by a unit to an ``attack`` effect (8E-7.3), exactly.

    Every hit wounds on the 8th-edition table and is saved with the armour save worsened by AP or
    the invulnerable save if better. Each unsaved wound deals its damage to the model already
    wounded (the pool's top model has ``(remaining - 1) % per_model + 1`` wounds); excess damage
    is lost, unlike mortal wounds.
    """
    p = Fraction(7 - max(to_wound_8th(strength, toughness), 2), 6)
    p *= unsaved_chance_8th(save, invulnerable, ap)
    dmg = tuple(sorted(distribution(damage).items()))
    # Distribution of wounds left, by number of unsaved wounds applied so far.
    by_unsaved: dict[int, Dist] = {0: {remaining: Fraction(1)}}
    out: Dist = {}
    for h, ph in distribution(hits).items():
        for k, pk in binomial(max(h, 0), p).items():
            for i in range(1, k + 1):
                if i not in by_unsaved:
                    nxt: Dist = {}
                    for left, q in by_unsaved[i - 1].items():
                        for left2, r in _damage_step(left, per_model, dmg):
                            nxt[left2] = nxt.get(left2, Fraction(0)) + q * r
                    by_unsaved[i] = nxt
            for left, q in by_unsaved[k].items():
                lost = remaining - left
                out[lost] = out.get(lost, Fraction(0)) + ph * pk * q
    return tuple(sorted((w, q) for w, q in out.items() if q))


@cache
def rolloff_distribution(
    dice: str, win: str, tie: str, caster_ld: int, target_ld: int, remaining: int
) -> tuple[tuple[int, Fraction], ...]:
    """Wounds lost to a Leadership roll-off effect (Psychic Scourge, Mind War), capped."""
    caster = {t + caster_ld: p for t, p in distribution(dice).items()}
    target = {t + target_ld: p for t, p in distribution(dice).items()}
    out: Dist = {}
    for a, pa in caster.items():
        for b, pb in target.items():
            if a > b:
                dealt = {a - b: Fraction(1)} if win == "difference" else distribution(win)
            elif a == b:
                dealt = distribution(tie)
            else:
                dealt = {0: Fraction(1)}
            for w, q in dealt.items():
                out[w] = out.get(w, Fraction(0)) + pa * pb * q
    return tuple(sorted(capped(out, remaining).items()))


def dice_mean(expr: str) -> Fraction:
    """Mean of a dice expression."""
    e = parse(expr)
    if e.sides == 0:
        return Fraction(e.modifier)
    return Fraction(e.count * (e.sides + 1), 2) + e.modifier
