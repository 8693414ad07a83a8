"""Exact 7th-edition odds: casting (7E-4), Deny the Witch (7E-5) and power generation (7E-2.6).

The casting table reproduces "Chances of Success and Perils for Charges and Dice" in
``seeds/7th-edition-psychic-phase.txt`` digit for digit (percentages rounded half-up).
"""

from __future__ import annotations

from fractions import Fraction
from functools import cache

from psygym.dice import at_least, binomial, pool, prob_at_least
from psygym.odds import Table

DENY_THRESHOLDS = (6, 5, 4, 3)
"""Deny rolls needed with 0..3 modifiers (7E-5.2)."""


def casting_row(dice: int) -> list[Fraction]:
    """Success and success-without-perils for WC 1-3, then perils, for ``dice`` dice."""
    joint = pool(dice, 4)
    row: list[Fraction] = []
    for wc in (1, 2, 3):
        success = sum((p for (k, _), p in joint.items() if k >= wc), Fraction(0))
        clean = sum((p for (k, six), p in joint.items() if k >= wc and six < 2), Fraction(0))
        row += [success, clean]
    row.append(sum((p for (_, six), p in joint.items() if six >= 2), Fraction(0)))
    return row


def casting_table(max_dice: int = 10) -> Table:
    """The casting table for 1..``max_dice`` dice."""
    cols = [
        "dice",
        "wc1",
        "wc1_no_perils",
        "wc2",
        "wc2_no_perils",
        "wc3",
        "wc3_no_perils",
        "perils",
    ]
    rows = [[n, *casting_row(n)] for n in range(1, max_dice + 1)]
    return Table(
        "casting",
        "Chance to cast (WC 1-3) and to suffer Perils, by dice",
        cols,
        rows,
        "4+ to harness, two or more 6s cause Perils (7E-4.3, 7E-4.4).",
    )


def deny_probability(dice: int, successes: int, threshold: int) -> Fraction:
    """Chance that ``dice`` deny dice at ``threshold``+ negate all ``successes`` (7E-5.3)."""
    return at_least(binomial(dice, prob_at_least(threshold)), successes)


def deny_table(max_dice: int = 10, max_successes: int = 5) -> Table:
    """Chance to negate k successes with m dice at 6+, 5+, 4+ and 3+."""
    cols = ["dice", "successes", *(f"deny_{t}plus" for t in DENY_THRESHOLDS)]
    rows = [
        [m, k, *(deny_probability(m, k, t) for t in DENY_THRESHOLDS)]
        for m in range(1, max_dice + 1)
        for k in range(1, min(m, max_successes) + 1)
    ]
    return Table(
        "deny",
        "Chance to deny: negate all k successes with m dice",
        cols,
        rows,
        "6+ base; +1 psyker, +1 higher ML, +1 Adamantium Will (7E-5.2).",
    )


@cache
def specific_power_chance(picks: int, known: frozenset[int] = frozenset()) -> Fraction:
    """Chance that ``picks`` rolls on one discipline yield one named power (say number 1).

    Follows 7E-2.1 exactly: each roll is uniform over the numbered powers not yet known
    (duplicates are re-rolled).
    """
    if picks == 0:
        return Fraction(0)
    left = [n for n in range(1, 7) if n not in known]
    total = Fraction(0)
    for n in left:
        if n == 1:
            total += Fraction(1, len(left))
        else:
            total += Fraction(1, len(left)) * specific_power_chance(picks - 1, known | {n})
    return total


def generation_table() -> Table:
    """One ML-n psyker rolling every power on one discipline vs n ML1 psykers rolling once each."""
    rows = [
        [ml, specific_power_chance(ml), 1 - (1 - specific_power_chance(1)) ** ml]
        for ml in range(1, 5)
    ]
    return Table(
        "generation",
        "Chance to generate one named power (7E-2.6)",
        ["mastery", "one_psyker", "ml1_psykers"],
        rows,
        "one_psyker: one psyker of that ML; ml1_psykers: that many ML1 psykers.",
    )
