"""Exact dice distributions, as ``{outcome: Fraction}`` dictionaries, and matching samplers.

Every distribution here is exact (``fractions.Fraction``) and cached, so odds tables, chance nodes
and solvers share one source of truth. Rules modules convert to floats only at the chance-node
boundary (``Rules.chance_outcomes``).

Dice expressions accepted by :func:`parse`: ``"3"``, ``"D3"``, ``"2D6"``, ``"D6+1"``, ``"3D6-2"``
(case-insensitive, spaces ignored). Pools (:func:`pool`) count, jointly, how many of *n* D6 roll
at least a threshold and how many roll a natural 6; :func:`pool_any_double` counts successes
jointly with "at least two dice show the same face".
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from itertools import product
from math import comb, factorial

import numpy as np

from psygym.kernel import ChanceTable

Dist = dict[int, Fraction]

_EXPR = re.compile(r"^(?:(?P<n>\d*)D(?P<sides>\d+))?(?P<mod>[+-]?\d+)?$", re.IGNORECASE)


class DiceError(ValueError):
    """A dice expression that cannot be parsed."""


@dataclass(frozen=True)
class DiceExpr:
    """A parsed dice expression ``count x D sides + modifier`` (``sides == 0`` for a constant)."""

    count: int
    sides: int
    modifier: int

    def __str__(self) -> str:
        if self.sides == 0:
            return str(self.modifier)
        dice = f"{self.count if self.count != 1 else ''}D{self.sides}"
        if self.modifier:
            return f"{dice}{self.modifier:+d}"
        return dice

    @property
    def min(self) -> int:
        """Smallest possible total."""
        return self.count + self.modifier if self.sides else self.modifier

    @property
    def max(self) -> int:
        """Largest possible total."""
        return self.count * self.sides + self.modifier if self.sides else self.modifier


@cache
def parse(expr: str | int) -> DiceExpr:
    """Parse a dice expression such as ``"2D6"``, ``"D3"``, ``"D6+1"`` or ``"3"``.

    Raises:
        DiceError: the text is not a dice expression; the message says what is allowed.
    """
    if isinstance(expr, int):
        return DiceExpr(0, 0, expr)
    text = str(expr).replace(" ", "")
    match = _EXPR.match(text)
    if not text or not match:
        raise DiceError(
            f"{expr!r} is not a dice expression; use forms like '3', 'D3', '2D6', 'D6+1', '3D6-2'"
        )
    sides = match.group("sides")
    modifier = int(match.group("mod") or 0)
    if sides is None:
        return DiceExpr(0, 0, modifier)
    count = int(match.group("n") or 1)
    if int(sides) < 1 or count < 1:
        raise DiceError(f"{expr!r}: dice need at least one die of at least one side")
    return DiceExpr(count, int(sides), modifier)


def convolve(a: Mapping[int, Fraction], b: Mapping[int, Fraction]) -> Dist:
    """Distribution of the sum of two independent variables."""
    out: Dist = {}
    for x, p in a.items():
        for y, q in b.items():
            out[x + y] = out.get(x + y, Fraction(0)) + p * q
    return out


@cache
def _dice_sum(count: int, sides: int) -> tuple[tuple[int, Fraction], ...]:
    single = {face: Fraction(1, sides) for face in range(1, sides + 1)}
    dist: Dist = {0: Fraction(1)}
    for _ in range(count):
        dist = convolve(dist, single)
    return tuple(sorted(dist.items()))


def distribution(expr: str | int | DiceExpr) -> Dist:
    """Exact distribution of the total of a dice expression."""
    e = expr if isinstance(expr, DiceExpr) else parse(expr)
    if e.sides == 0:
        return {e.modifier: Fraction(1)}
    return {total + e.modifier: p for total, p in _dice_sum(e.count, e.sides)}


def binomial(n: int, p: Fraction) -> Dist:
    """Exact distribution of the number of successes in ``n`` trials of probability ``p``."""
    return _binomial(n, Fraction(p))


@cache
def _binomial(n: int, p: Fraction) -> Dist:
    return {k: comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)}


def prob_at_least(threshold: int, sides: int = 6) -> Fraction:
    """Chance that one die rolls ``threshold`` or more (clipped to 0..1)."""
    hits = sides - max(threshold, 1) + 1
    return Fraction(min(max(hits, 0), sides), sides)


@cache
def pool(n: int, threshold: int = 4) -> dict[tuple[int, int], Fraction]:
    """Joint distribution of (rolls >= threshold, natural 6s) among ``n`` D6.

    The threshold is clipped to 2..6 as a D6 can roll; a 6 always counts as a success.
    """
    threshold = min(max(threshold, 2), 6)
    p_six = Fraction(1, 6)
    p_mid = Fraction(6 - threshold, 6)  # successes that are not sixes
    p_fail = 1 - p_six - p_mid
    out: dict[tuple[int, int], Fraction] = {}
    for sixes in range(n + 1):
        for mids in range(n - sixes + 1):
            fails = n - sixes - mids
            ways = factorial(n) // (factorial(sixes) * factorial(mids) * factorial(fails))
            p = ways * p_six**sixes * p_mid**mids * p_fail**fails
            if p:
                key = (sixes + mids, sixes)
                out[key] = out.get(key, Fraction(0)) + p
    return out


@cache
def pool_any_double(n: int, threshold: int = 4) -> dict[tuple[int, bool], Fraction]:
    """Joint distribution of (rolls >= threshold, some face shown twice or more) among ``n`` D6."""
    threshold = min(max(threshold, 2), 6)
    high = 7 - threshold  # faces counted as successes
    low = 6 - high
    total = Fraction(1, 6**n)
    out: dict[tuple[int, bool], Fraction] = {}
    by_successes = binomial(n, Fraction(high, 6))
    for k, p in by_successes.items():
        distinct = 0
        if n <= 6 and k <= high and n - k <= low:
            distinct = comb(high, k) * comb(low, n - k) * factorial(n)
        p_distinct = distinct * total
        if p_distinct:
            out[(k, False)] = p_distinct
        if p - p_distinct:
            out[(k, True)] = p - p_distinct
    return out


def at_least(dist: Mapping[int, Fraction], k: int) -> Fraction:
    """Chance that a distribution's value is at least ``k``."""
    return sum((p for v, p in dist.items() if v >= k), Fraction(0))


@cache
def two_d6_faces() -> tuple[tuple[tuple[int, int], Fraction], ...]:
    """The 36 ordered results of 2D6, each 1/36, as ((die1, die2), p)."""
    return tuple(((a, b), Fraction(1, 36)) for a, b in product(range(1, 7), repeat=2))


def mean(dist: Mapping[int, Fraction]) -> Fraction:
    """Expected value of a distribution."""
    return sum((v * p for v, p in dist.items()), Fraction(0))


def check_distribution(dist: Mapping[object, Fraction]) -> None:
    """Raise ``ValueError`` unless the probabilities are non-negative and sum to exactly 1."""
    total = sum(dist.values(), Fraction(0))
    if total != 1 or any(p < 0 for p in dist.values()):
        raise ValueError(f"not a distribution: probabilities sum to {total}")


class Sampler:
    """Draws from a fixed exact distribution with a numpy ``Generator`` (the kernel's table)."""

    __slots__ = ("table",)

    def __init__(self, dist: Mapping[object, Fraction | float]):
        self.table = ChanceTable(dist.items())

    def __call__(self, rng: np.random.Generator) -> object:
        """Draw one outcome."""
        return self.table.sample(rng)


def sample(dist: Mapping[object, Fraction | float], rng: np.random.Generator) -> object:
    """Draw one outcome of ``dist`` using ``rng`` (same law as the exact distribution)."""
    return Sampler(dist)(rng)


def roll(expr: str | int, rng: np.random.Generator) -> int:
    """Roll a dice expression by throwing the dice one by one (a check on :func:`distribution`)."""
    e = parse(expr)
    if e.sides == 0:
        return e.modifier
    return int(rng.integers(1, e.sides + 1, size=e.count).sum()) + e.modifier
