"""7th edition exact odds against the published numbers (7E-2.6, 7E-4.3, 7E-4.4, 7E-5, 7E-6).

The casting table "Chances of Success and Perils for Charges and Dice" of
``seeds/7th-edition-psychic-phase.txt`` is reproduced digit for digit, from
``psygym.editions.seventh.odds`` and from the rules engine's own CAST_ROLL chance node, and the
engine's sampler is checked against it with 200,000 draws per dice count.
"""

from __future__ import annotations

from collections import Counter
from decimal import Decimal
from fractions import Fraction
from itertools import product

import numpy as np
import pytest
from helpers import (
    SEEDS,
    act,
    exact_outcomes,
    force,
    parse_casting_table,
    psyker7,
    round_half_up,
    rules_from,
    scenario7,
    unit7,
    walk_exact,
)

from psygym.editions.seventh import odds
from psygym.editions.seventh.rules import cast_distribution, deny_chance, ld_pass
from psygym.editions.seventh.state import Stage
from psygym.odds import percent

F = Fraction

# The seed's table, as printed (leading zeros kept): dice -> WC1, WC1 no perils, WC2,
# WC2 no perils, WC3, WC3 no perils, Perils.
SEED_TABLE_TEXT = """
1  50.00 50.00 00.00 00.00 00.00 00.00 00.00
2  75.00 72.22 25.00 22.22 00.00 00.00 02.78
3  87.50 80.09 50.00 42.59 12.50 09.26 07.41
4  93.75 80.56 68.75 55.56 31.25 22.22 13.19
5  96.88 77.25 81.25 61.63 50.00 33.85 19.62
6  98.44 72.12 89.06 62.74 65.63 41.91 26.32
7  99.22 66.20 93.75 60.73 77.34 46.15 33.02
8  99.61 60.08 96.48 56.95 85.55 47.23 39.53
9  99.80 54.07 98.05 52.31 91.02 46.06 45.73
10 99.90 48.35 98.93 47.38 94.53 43.47 51.55
"""
SEED_TABLE = {
    int(cells[0]): [Decimal(c) for c in cells[1:]]
    for cells in (line.split() for line in SEED_TABLE_TEXT.strip().splitlines())
}
SEED_FILE = SEEDS / "7th-edition-psychic-phase.txt"


def seed_tables() -> list[dict[int, list[Decimal]]]:
    """The embedded table, and the one parsed from the seed file when it is there."""
    tables = [SEED_TABLE]
    if SEED_FILE.is_file():
        tables.append(parse_casting_table(SEED_FILE.read_text()))
    return tables


def row_from_outcomes(dist: dict[int, Fraction]) -> list[Fraction]:
    """Casting row from CAST_ROLL outcomes ``2*successes + perils`` (7E-4.3, 7E-4.4)."""
    row: list[Fraction] = []
    for wc in (1, 2, 3):
        row.append(sum((p for o, p in dist.items() if o // 2 >= wc), F(0)))
        row.append(sum((p for o, p in dist.items() if o // 2 >= wc and not o % 2), F(0)))
    row.append(sum((p for o, p in dist.items() if o % 2), F(0)))
    return row


def brute_row(n: int) -> list[Fraction]:
    """Casting row by enumerating all 6^n rolls (4+ succeeds, two 6s peril); n <= 5."""
    counts: Counter = Counter()
    for r in product(range(1, 7), repeat=n):
        counts[(sum(x >= 4 for x in r), sum(x == 6 for x in r) >= 2)] += 1
    total = 6**n
    row = []
    for wc in (1, 2, 3):
        row.append(F(sum(c for (k, _), c in counts.items() if k >= wc), total))
        row.append(F(sum(c for (k, p), c in counts.items() if k >= wc and not p), total))
    row.append(F(sum(c for (_, p), c in counts.items() if p), total))
    return row


# ----------------------------------------------------------------------------- a casting bench
def bench_rules():
    """An ML4 psyker (pool 6 + 4 = 10 on a roll of 6) with a WC1 power, against a squad."""
    return rules_from(
        scenario7(
            [unit7("Lib", psyker=psyker7(4, powers=["Smite"]), wounds=3, leadership=10)],
            [unit7("Squad", (0, 10), models=5)],
        )
    )


def cast_roll_state(rules, dice: int):
    """The CAST_ROLL chance node of ``dice`` dice, reached by playing: roll 6, Smite, dice."""
    s = force(rules, rules.initial_state(), 6)
    assert s.stage == Stage.SELECT and s.pools[0] == 10
    s = act(rules, s, rules.legal_actions(s)[1])
    s = act(rules, s, rules.DICE + dice - 1)
    assert s.stage == Stage.CAST_ROLL and s.cast.dice == dice
    return s


@pytest.fixture(scope="module")
def bench():
    rules = bench_rules()
    return rules, {n: cast_roll_state(rules, n) for n in range(1, 11)}


# ----------------------------------------------------------------------------- the seed table
def test_embedded_table_matches_the_seed_file():
    if not SEED_FILE.is_file():
        pytest.skip("shared/seeds not present; the embedded table is used")
    assert parse_casting_table(SEED_FILE.read_text()) == SEED_TABLE


def test_brute_force_reproduces_the_seed_for_small_pools():
    """Independent of psygym: enumerate every roll of 1-5 dice (7E-4.3, 7E-4.4)."""
    for n in range(1, 6):
        assert [round_half_up(p) for p in brute_row(n)] == SEED_TABLE[n]


@pytest.mark.parametrize(
    "table", seed_tables(), ids=["embedded", "seed-file"][: len(seed_tables())]
)
def test_odds_module_reproduces_the_seed_table_digit_for_digit(table):
    ct = odds.casting_table()
    assert ct.columns == [
        "dice",
        "wc1",
        "wc1_no_perils",
        "wc2",
        "wc2_no_perils",
        "wc3",
        "wc3_no_perils",
        "perils",
    ]
    assert [r[0] for r in ct.rows] == list(range(1, 11))
    for row in ct.rows:
        n, cells = row[0], row[1:]
        assert all(isinstance(c, Fraction) for c in cells)
        assert [round_half_up(c) for c in cells] == table[n], f"{n} dice"
        assert [Decimal(t) for t in ct.text_rows()[n - 1][1:]] == table[n]


def test_six_dice_wc3_is_rounded_half_up():
    """7th spec: 6 dice, WC3 = 21/32 = 65.625% prints as 65.63 (not banker's 65.62)."""
    assert odds.casting_row(6)[4] == F(21, 32)
    assert percent(odds.casting_row(6)[4]) == "65.63"


@pytest.mark.parametrize("n", range(1, 6))
def test_odds_rows_equal_brute_force_exactly(n):
    assert odds.casting_row(n) == brute_row(n)


@pytest.mark.parametrize("n", range(1, 11))
def test_rules_cast_roll_outcomes_equal_the_table_exactly(bench, n):
    """The engine's CAST_ROLL node (7E-4.3/7E-4.4): the same Fractions as the odds table, the
    floats their exact conversion, and the seed's digits after rounding."""
    rules, states = bench
    dist = exact_outcomes(rules, states[n])  # also checks floats == float(Fraction)
    assert sum(dist.values()) == 1
    assert all(o // 2 <= n for o in dist)
    row = row_from_outcomes(dist)
    assert row == odds.casting_row(n)
    assert [round_half_up(p) for p in row] == SEED_TABLE[n]


def test_sampled_casting_is_within_half_a_point_of_the_seed(bench):
    """200,000 draws of the CAST_ROLL node per dice count (seed 2024) via rules.sample_chance:
    every success / no-perils / perils rate within 0.5 percentage points of the seed (the
    largest standard error is 0.11 points; a 4+ -> 5+ slip moves WC1 with 1 die by 16.7)."""
    rules, states = bench
    rng = np.random.default_rng(2024)
    n_draws = 200_000
    worst = 0.0
    for n in range(1, 11):
        s = states[n]
        counts = Counter(rules.sample_chance(s, rng) for _ in range(n_draws))
        freq = {o: F(c, n_draws) for o, c in counts.items()}
        assert set(freq) <= set(exact_outcomes(rules, s))
        row = row_from_outcomes(freq)
        for got, printed in zip(row, SEED_TABLE[n]):
            gap = abs(float(got) * 100 - float(printed))
            worst = max(worst, gap)
            assert gap < 0.5, f"{n} dice: sampled {float(got):.4%} vs seed {printed}%"
    assert worst > 0  # the draws are random, not the table itself


def test_a_five_plus_slip_would_fail_the_comparison():
    """Guard on the guard: successes on 5+ instead of 4+ are far from the seed's numbers."""
    from psygym.dice import pool

    slipped = {}
    for (k, six), p in pool(3, 5).items():
        slipped[2 * k + int(six >= 2)] = slipped.get(2 * k + int(six >= 2), F(0)) + p
    row = row_from_outcomes(slipped)
    assert max(abs(float(a) * 100 - float(b)) for a, b in zip(row, SEED_TABLE[3])) > 5


# ----------------------------------------------------------------------------- daemonology
@pytest.mark.parametrize("n", range(1, 6))
def test_daemonology_perils_on_any_double(n):
    """7E-4.4: Daemonology cast by a non-daemon perils on any double; successes unchanged."""
    counts: Counter = Counter()
    for r in product(range(1, 7), repeat=n):
        counts[2 * sum(x >= 4 for x in r) + int(len(set(r)) < n)] += 1
    expect = {o: F(c, 6**n) for o, c in counts.items()}
    assert dict(cast_distribution(n, True)) == expect
    standard = dict(cast_distribution(n, False))
    assert row_from_outcomes(standard)[:6:2] == row_from_outcomes(expect)[:6:2]


def test_daemonology_flag_follows_the_caster():
    """Summoning (Malefic): any double perils for a non-daemon; a daemon uses the 6s rule."""

    def node(daemon: bool):
        rules = rules_from(
            scenario7(
                [unit7("Herald", psyker=psyker7(2, powers=["Summoning"], daemon=daemon), wounds=3)],
                [unit7("Squad", (0, 10), models=5)],
            )
        )
        s = force(rules, rules.initial_state(), 2)
        s = act(rules, s, rules.legal_actions(s)[1])
        return rules, act(rules, s, rules.DICE + 3)  # 4 dice

    rules, s = node(False)
    assert exact_outcomes(rules, s) == dict(cast_distribution(4, True))
    rules, s = node(True)
    assert exact_outcomes(rules, s) == dict(cast_distribution(4, False))
    assert row_from_outcomes(exact_outcomes(rules, s)) == odds.casting_row(4)


# ----------------------------------------------------------------------------- deny odds (7E-5)
def brute_deny(m: int, k: int, threshold: int) -> Fraction:
    hits = sum(1 for r in product(range(1, 7), repeat=m) if sum(x >= threshold for x in r) >= k)
    return F(hits, 6**m)


@pytest.mark.parametrize("threshold", [6, 5, 4, 3])
def test_deny_probability_matches_brute_force(threshold):
    """7E-5.2/7E-5.3: all k successes must be negated by m dice at threshold+."""
    for m in range(1, 5):
        for k in range(1, 5):
            expected = brute_deny(m, k, threshold)
            assert odds.deny_probability(m, k, threshold) == expected
            assert deny_chance(m, threshold, k) == expected


def test_deny_table_shape_and_values():
    t = odds.deny_table()
    assert t.columns == [
        "dice",
        "successes",
        "deny_6plus",
        "deny_5plus",
        "deny_4plus",
        "deny_3plus",
    ]
    assert t.rows[0] == [1, 1, F(1, 6), F(1, 3), F(1, 2), F(2, 3)]
    row = next(r for r in t.rows if r[:2] == [3, 3])
    assert row[2:] == [F(1, 216), F(1, 27), F(1, 8), F(8, 27)]
    assert all(r[1] <= r[0] for r in t.rows)  # never more successes than dice listed


# ----------------------------------------------------------------------------- generation (7E-2.6)
def test_generation_odds_module_publishes_33_33_and_30_56():
    """7E-2.6: ML2 rolling for one power 2/6 = 33.33%; two ML1 psykers 1 - (5/6)^2 = 30.56%."""
    assert odds.specific_power_chance(2) == F(1, 3)
    assert odds.specific_power_chance(1) == F(1, 6)
    assert odds.specific_power_chance(4) == F(2, 3)
    table = odds.generation_table()
    assert table.columns == ["mastery", "one_psyker", "ml1_psykers"]
    ml2 = next(r for r in table.rows if r[0] == 2)
    assert ml2[1:] == [F(1, 3), F(11, 36)]
    assert [percent(x) for x in ml2[1:]] == ["33.33", "30.56"]


def generation_scenario(psykers: list[dict]) -> dict:
    return scenario7(psykers, [unit7("Squad", (0, 30), models=5)], generate=True)


def chance_named_power_known(rules, name: str) -> Fraction:
    """Walk every GEN_ROLL outcome exactly (keeping every rolled power: SWAP + 0) and sum the
    probability that some psyker knows ``name`` when generation is over."""
    idx = rules.power_index[name]
    ends = walk_exact(
        rules,
        rules.initial_state(),
        stop=lambda s: s.stage not in (Stage.DISCIPLINE, Stage.GEN_ROLL, Stage.SWAP),
        decide=lambda s: rules.SWAP if s.stage == Stage.SWAP else rules.legal_actions(s)[0],
    )
    assert all(s.stage == Stage.PHASE_ROLL for s in ends)
    return sum((p for s, p in ends.items() if any(idx in u.powers for u in s.units)), F(0))


def test_engine_generation_ml2_one_power_is_one_third():
    """7E-2.1/7E-2.6 through the rules engine: one ML2 psyker, one discipline, 33.33%."""
    rules = rules_from(
        generation_scenario([unit7("Lib", psyker=psyker7(2, disciplines=["Biomancy"]), wounds=2)])
    )
    p = chance_named_power_known(rules, "Life Leech")
    assert p == F(1, 3)
    assert percent(p) == "33.33"


def test_engine_generation_two_ml1_psykers_is_30_56():
    """7E-2.6 through the rules engine: two ML1 psykers each rolling once, 30.56%."""
    rules = rules_from(
        generation_scenario(
            [
                unit7("Lib A", psyker=psyker7(1, disciplines=["Biomancy"]), wounds=2),
                unit7("Lib B", (2, 0), psyker=psyker7(1, disciplines=["Biomancy"]), wounds=2),
            ]
        )
    )
    p = chance_named_power_known(rules, "Life Leech")
    assert p == F(11, 36)
    assert percent(p) == "30.56"


def test_engine_generation_matches_the_odds_module_for_ml3_and_ml4():
    for ml in (3, 4):
        rules = rules_from(
            generation_scenario(
                [unit7("Lib", psyker=psyker7(ml, disciplines=["Telepathy"]), wounds=2)]
            )
        )
        assert chance_named_power_known(rules, "Terrify") == odds.specific_power_chance(ml)


# ----------------------------------------------------------------------------- perils table odds
def test_perils_and_leadership_chance_nodes():
    """7E-6: the table roll is a fair D6; a Leadership test passes on 2D6 <= Ld."""
    assert ld_pass(10) == F(33, 36)
    assert ld_pass(9) == F(30, 36)
    assert ld_pass(7) == F(21, 36)
    assert ld_pass(2) == F(1, 36)
    rules = bench_rules()
    s = cast_roll_state(rules, 4)
    s = force(rules, s, 2 * 2 + 1)
    assert s.stage == Stage.PERILS
    assert exact_outcomes(rules, s) == {r: F(1, 6) for r in range(1, 7)}
    s = force(rules, s, 5)
    assert s.stage == Stage.LD_TEST
    assert exact_outcomes(rules, s) == {1: F(33, 36), 0: F(3, 36)}


def test_declared_tables_and_options():
    """The edition declares one function per table; options it does not take are ignored."""
    from psygym.edition import get

    seventh = get("7th")
    assert list(seventh.odds) == ["casting", "deny", "generation"]
    assert [seventh.odds_table(n).name for n in seventh.odds] == list(seventh.odds)
    assert seventh.odds_table(None).name == "casting"
    assert len(seventh.odds_table("casting", max_dice=4, colour="red").rows) == 4
