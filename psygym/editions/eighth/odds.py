"""Exact 8th-edition odds tables: the psychic test by warp charge, Deny the Witch, Smite's damage.

Every probability is an exact ``Fraction`` (printed as a percentage rounded half-up).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from psygym.dice import distribution
from psygym.editions.eighth.effects import deny_chance, is_perils, pass_chance, two_d6
from psygym.editions.eighth.spec import load_powers
from psygym.odds import Table

PERILS_CHANCE = sum((p for t, p in two_d6() if is_perils(t)), Fraction(0))
"""Chance of a double 1 or a double 6 on any psychic test: 2/36 (8E-4.3)."""


def manifest_vs_deny(warp_charge: int) -> Fraction:
    """Chance to pass the test and beat one deny attempt (deny succeeds iff 2D6 > total, 8E-5.2).

    Perils does not kill here: the pass chance times the chance that the deny fails.
    """
    return sum((p * (1 - deny_chance(t)) for t, p in two_d6() if t >= warp_charge), Fraction(0))


def smite_damage(warp_charge: int = 5) -> dict[int, Fraction]:
    """Mortal wounds from one undenied Smite attempt at ``warp_charge`` (8E-7.1), 0 if it fails.

    The effect comes from the shipped data file (D3, or D6 on a test of 11+).
    """
    smite = next(p for p in load_powers().powers if p.name == "Smite").effect
    out: dict[int, Fraction] = {}
    for total, p in two_d6():
        if total < warp_charge:
            dealt = {0: Fraction(1)}
        elif smite.boosted_at is not None and total >= smite.boosted_at:
            dealt = distribution(smite.boosted)  # type: ignore[arg-type]
        else:
            dealt = distribution(smite.mortal_wounds)  # type: ignore[arg-type]
        for w, q in dealt.items():
            out[w] = out.get(w, Fraction(0)) + p * q
    return dict(sorted(out.items()))


def casting_table() -> Table:
    """Pass, Perils and manifest-against-one-deny chances for warp charge 2..12 (8E-4, 8E-5)."""
    rows: list[list[Any]] = [
        [wc, pass_chance(wc), PERILS_CHANCE, manifest_vs_deny(wc)] for wc in range(2, 13)
    ]
    return Table(
        name="casting",
        title="8th edition: psychic test (2D6 >= warp charge)",
        columns=["wc", "pass", "perils", "manifest_vs_deny"],
        rows=rows,
        note="perils: a double 1 or double 6 on any test. manifest_vs_deny: passed and not "
        "denied by one Deny the Witch 2D6 that must beat the test total (Perils not counted).",
    )


def deny_table() -> Table:
    """Chance that one Deny the Witch test beats each psychic test total (8E-5.2)."""
    return Table(
        name="deny",
        title="8th edition: Deny the Witch (2D6 > test total)",
        columns=["test_total", "deny"],
        rows=[[t, deny_chance(t)] for t in range(2, 13)],
    )


def smite_damage_table(warp_charge: int = 5) -> Table:
    """Smite's mortal wounds when attempted at ``warp_charge`` and not denied (8E-7.1)."""
    dist = smite_damage(warp_charge)
    mean = sum((w * p for w, p in dist.items()), Fraction(0))
    return Table(
        name="smite-damage",
        title=f"8th edition: Smite's mortal wounds at WC {warp_charge}, undenied",
        columns=["mortal_wounds", "probability"],
        rows=[[w, dist.get(w, Fraction(0))] for w in range(0, 7)],
        note=f"0 = the test failed; D3 on totals {warp_charge}-10, D6 on 11+. "
        f"Mean {float(mean):.4g} mortal wounds.",
    )
