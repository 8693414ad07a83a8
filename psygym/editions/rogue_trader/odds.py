"""Exact odds of Rogue Trader psionics (rules/rogue-trader.md RT-2.3, RT-3, RT-4).

``tables()`` returns, computed exactly with fractions:

* ``works``: the chance that an ability works with 1..20 psi-points remaining (RT-2.3: no test
  from 12 points up, otherwise 2D6 <= points);
* ``psychic-save``: the chance of a psychic save for will power 2..12 against a net modifier of
  -10..+10 (augmented-save bid minus enhanced-attack bid, RT-3.1 to RT-3.3). Bids have no cap
  in the books, and beyond a net of 10 either way every save of will power 2..12 is impossible
  or certain, so the default range shows the whole table; ``max_bid`` narrows it;
* ``attacks``: for each mental attack and telekinesis missile, the chance that a hit wounds and
  the mean wounds of a wounding hit, against toughness 2..7 (RT-4.1, RT-4.2, RT-4.4; before any
  psychic, armour or aura save).
"""

from __future__ import annotations

from psygym.combat import roll_chance, to_wound_rt
from psygym.dice import distribution, mean
from psygym.editions.rogue_trader.abilities import load_data
from psygym.editions.rogue_trader.chances import psychic_save_chance, works_chance
from psygym.odds import Table


def works_table(max_points: int = 20, no_test_at: int = 12) -> Table:
    """Chance that an ability works for each number of remaining psi-points (RT-2.3)."""
    rows: list[list[object]] = [[r, works_chance(r, no_test_at)] for r in range(1, max_points + 1)]
    return Table(
        name="works",
        title="Chance that an ability works, by psi-points remaining",
        columns=["points", "works"],
        rows=rows,
        note=f"No test with {no_test_at}+ points; otherwise it works if 2D6 <= points (RT-2.3).",
    )


FULL_NET = 10
"""Net bid beyond which every psychic save of will power 2..12 is impossible or certain."""


def psychic_save_table(max_bid: int | None = None) -> Table:
    """Chance of a psychic save by will power and net bid modifier (RT-3).

    Args:
        max_bid: show nets ``-max_bid..+max_bid``; ``None`` (default): ``-10..+10``, every net
            at which the chance still depends on it (bids have no cap, RT-3.2, RT-3.3).
    """
    span = FULL_NET if max_bid is None else max_bid
    nets = list(range(-span, span + 1))
    rows: list[list[object]] = []
    for wp in range(2, 13):
        rows.append([wp, *(psychic_save_chance(wp, max(0, -n), max(0, n)) for n in nets)])
    return Table(
        name="psychic-save",
        title="Chance of a psychic save (2D6 <= WP), by will power and net bid",
        columns=["will_power", *(f"net {n:+d}" for n in nets)],
        rows=rows,
        note="Net bid = augmented-save points minus enhanced-attack points (RT-3.2, RT-3.3).",
    )


def attacks_table() -> Table:
    """Chance to wound and mean wounds of each mental attack and telekinesis missile (RT-4)."""
    data = load_data()
    toughness = list(range(2, 8))
    rows: list[list[object]] = []
    for ab in data.abilities:
        if ab.effect not in ("mental", "missile"):
            continue
        dmg = mean(distribution(ab.damage))
        row: list[object] = [ab.name, ab.strength, ab.damage]
        row += [roll_chance(to_wound_rt(ab.strength, t)) for t in toughness]
        row.append(float(dmg))
        rows.append(row)
    return Table(
        name="attacks",
        title="Mental attacks and telekinesis missiles: chance to wound by toughness",
        columns=["ability", "strength", "damage", *(f"T{t}" for t in toughness), "mean damage"],
        rows=rows,
        note="Before psychic saves (mental) or armour and aura saves (telekinesis); RT-4.2 chart.",
    )


__all__ = ["works_table", "psychic_save_table", "attacks_table"]
