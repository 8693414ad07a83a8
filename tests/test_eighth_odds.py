"""8th-edition odds tables (psygym odds --edition 8th): exact values, spec numbers."""

from __future__ import annotations

from fractions import Fraction

from psygym.edition import get
from psygym.editions.eighth.odds import manifest_vs_deny, smite_damage


def tables(**options):
    """The casting and Smite-damage tables, as ``psygym odds --table`` prints them one by one."""
    return [get("8th").odds_table(name, **options) for name in ("casting", "smite-damage")]


def test_tables_names_and_columns():
    casting, smite = tables()
    assert casting.name == "casting" and casting.columns == [
        "wc",
        "pass",
        "perils",
        "manifest_vs_deny",
    ]
    assert [row[0] for row in casting.rows] == list(range(2, 13))
    assert smite.name == "smite-damage" and smite.columns == ["mortal_wounds", "probability"]
    assert list(get("8th").odds) == ["casting", "smite-damage", "deny"]
    assert get("8th").odds_table("deny", max_dice=10, generation=False).name == "deny"


def test_casting_row_wc5():  # 8E-4.1, 8E-4.3 published numbers
    casting = tables()[0]
    row = next(r for r in casting.rows if r[0] == 5)
    assert row[1] == Fraction(30, 36) and row[2] == Fraction(2, 36)
    assert all(isinstance(v, Fraction) for v in row[1:])
    text = dict(zip(casting.columns, casting.text_rows()[3]))
    assert text == {"wc": "5", "pass": "83.33", "perils": "5.56", "manifest_vs_deny": "53.70"}


def test_manifest_against_one_deny():  # 8E-5.2: deny succeeds iff 2D6 > test total
    dist = {t: Fraction(6 - abs(t - 7), 36) for t in range(2, 13)}
    below = {t: sum((p for u, p in dist.items() if u <= t), Fraction(0)) for t in dist}
    for wc in range(2, 13):
        expected = sum((p * below[t] for t, p in dist.items() if t >= wc), Fraction(0))
        assert manifest_vs_deny(wc) == expected
    assert manifest_vs_deny(12) == Fraction(1, 36)  # a 12 cannot be denied


def test_smite_damage_distribution():  # 8E-7.1
    dist = smite_damage(5)
    assert sum(dist.values()) == 1
    assert dist[0] == Fraction(6, 36)  # failed tests
    assert dist[4] == dist[5] == dist[6] == Fraction(3, 36) / 6
    assert dist[1] == Fraction(27, 36) / 3 + Fraction(3, 36) / 6
    assert sum(p for w, p in dist.items() if w > 3) == Fraction(3, 36) / 2
    rows = tables()[1].rows
    assert [r[0] for r in rows] == list(range(7))
    assert tables()[1].text_rows()[4] == ["4", "1.39"]
