"""Exact odds of the 2nd-edition warp cards (2E-2, 2E-3, 2E-5.2), as :class:`~psygym.odds.Table`.

* ``flux-cards``: how many cards a warp flux of 1D6..4D6 deals (2E-3.1), and the split between
  the active player and the other (2E-3.3: alternate dealing, the active player first).
* ``flux-cap``: the dice actually rolled, and the mean cards dealt, when the warp flux is capped
  by the number of psykers on the table that can still use powers (2E-3.2).
* ``hand-force``: the chance that a hand of k cards from a fresh deck holds at least f Force cards,
  and at least one Nullify (hypergeometric, exact).
* ``hand-force-nullify``: the chance that it holds at least f Force cards *and* a Nullify.
* ``nullify``: the chance a Nullify succeeds by ML difference, with and without a psychic hood.
"""

from __future__ import annotations

from fractions import Fraction
from math import comb

from psygym.dice import distribution, mean
from psygym.editions.second.data import Card, load_deck
from psygym.editions.second.responses import nullify_chance, nullify_roll_needed
from psygym.editions.second.spec import RuleSettings
from psygym.odds import Table


def hand_chance(
    k: int, min_force: int, min_nullify: int = 0, deck: tuple[int, ...] | None = None
) -> Fraction:
    """Chance that ``k`` cards from a fresh deck hold enough Force and Nullify cards (2E-2.1).

    Multivariate hypergeometric, exact: at least ``min_force`` Force cards and at least
    ``min_nullify`` Nullify cards among ``k`` cards drawn from ``deck`` (default: the warp deck).
    """
    counts = deck if deck is not None else load_deck()
    n_force, n_null = counts[Card.FORCE], counts[Card.NULLIFY]
    total = sum(counts)
    n_other = total - n_force - n_null
    if k > total:
        return Fraction(0)
    ways = 0
    for a in range(min_force, min(k, n_force) + 1):
        for b in range(min_nullify, min(k - a, n_null) + 1):
            ways += comb(n_force, a) * comb(n_null, b) * comb(n_other, k - a - b)
    return Fraction(ways, comb(total, k))


def flux_cards(dice: int) -> dict[int, Fraction]:
    """Exact distribution of the cards dealt by a warp flux of ``dice`` D6 (2E-3.1)."""
    return distribution(f"{dice}D6")


def effective_dice(setting: int, psykers: int) -> int:
    """Warp flux dice rolled with ``psykers`` usable psykers on the table (2E-3.2 cap)."""
    return min(setting, psykers)


def flux_table(max_flux: int = 4) -> Table:
    """Warp flux (2E-3): the chance of each number of cards dealt, by warp flux dice."""
    dists = {d: flux_cards(d) for d in range(1, max_flux + 1)}
    flux = Table(
        "flux-cards",
        "Warp flux (2E-3): chance of each number of cards dealt",
        ["cards", "active / other", *[f"{d}D6" for d in dists]],
        note="Cards are dealt one at a time, alternately, the active player first (2E-3.3).",
    )
    for n in range(1, 6 * max_flux + 1):
        flux.rows.append(
            [n, f"{(n + 1) // 2} / {n // 2}", *[dists[d].get(n, Fraction(0)) for d in dists]]
        )
    flux.rows.append(["mean", "", *[float(mean(dists[d])) for d in dists]])
    return flux


def flux_cap_table(max_flux: int = 4, max_psykers: int = 6) -> Table:
    """Warp flux capped by the psykers that can still use powers (2E-3.2)."""
    settings = range(1, max_flux + 1)
    cap = Table(
        "flux-cap",
        "Warp flux capped by psykers that can still use powers (2E-3.2): dice rolled, mean cards",
        ["psykers", *[f"{d}D6 setting" for d in settings]],
        note="Both sides' living psykers with a power card count; with none the phase is skipped.",
    )
    for n in range(1, max_psykers + 1):
        row: list[object] = [n]
        for d in settings:
            e = effective_dice(d, n)
            row.append(f"{e}D6 (mean {float(mean(flux_cards(e))):g})")
        cap.rows.append(row)
    return cap


def hand_table(max_hand: int = 10, max_force: int = 5) -> Table:
    """A hand of k cards from a fresh deck: at least f Force cards; at least one Nullify."""
    forces = range(0, max_force + 1)
    hand = Table(
        "hand-force",
        "Hand of k cards from a fresh 36-card deck: at least f Force cards; at least one Nullify",
        ["k", *[f">= {f} Force" for f in forces], ">= 1 Nullify"],
    )
    for k in range(1, max_hand + 1):
        hand.rows.append([k, *[hand_chance(k, f) for f in forces], hand_chance(k, 0, 1)])
    return hand


def hand_nullify_table(max_hand: int = 10, max_force: int = 5) -> Table:
    """A hand of k cards from a fresh deck: at least f Force cards and at least one Nullify."""
    forces = range(0, max_force + 1)
    both = Table(
        "hand-force-nullify",
        "Hand of k cards from a fresh deck: at least f Force cards AND at least one Nullify",
        ["k", *[f">= {f} Force + Nullify" for f in forces]],
    )
    for k in range(1, max_hand + 1):
        both.rows.append([k, *[hand_chance(k, f, 1) for f in forces]])
    return both


def nullify_table() -> Table:
    """Nullify (2E-5.2): the chance of success by the ML difference, with and without a hood."""
    st = RuleSettings()
    nul = Table(
        "nullify",
        "Nullify (2E-5.2): chance of success by the nullifier's best ML minus the caster's ML",
        ["ML difference", "needs", "no hood", "psychic hood"],
        note="Defaults: 4+, one step per ML, limited to 2+..6+; a hood re-rolls a failure once.",
    )
    for diff in range(-3, 4):
        need = nullify_roll_needed(st, diff, 0)
        nul.rows.append(
            [f"{diff:+d}", f"{need}+", nullify_chance(need, False), nullify_chance(need, True)]
        )
    return nul
