"""psygym.dice: exact distributions, pools, parsing errors and samplers."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from itertools import product
from math import comb

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from psygym import dice
from psygym.dice import (
    DiceError,
    Sampler,
    at_least,
    binomial,
    check_distribution,
    convolve,
    distribution,
    mean,
    parse,
    pool,
    pool_any_double,
    prob_at_least,
    roll,
    sample,
    two_d6_faces,
)

F = Fraction


def brute(n_dice: int, sides: int = 6) -> Counter:
    """Counter of totals over every ordered roll of ``n_dice`` dice."""
    return Counter(sum(r) for r in product(range(1, sides + 1), repeat=n_dice))


# ----------------------------------------------------------------------------- distributions
def test_constant_expression_is_certain():
    assert distribution("3") == {3: F(1)}
    assert distribution(3) == {3: F(1)}
    assert distribution("-2") == {-2: F(1)}


def test_d3_is_uniform_over_one_to_three():
    assert distribution("D3") == {1: F(1, 3), 2: F(1, 3), 3: F(1, 3)}


def test_2d6_exact():
    d = distribution("2D6")
    assert d[7] == F(6, 36)
    assert d[2] == d[12] == F(1, 36)
    assert d[6] == d[8] == F(5, 36)
    assert set(d) == set(range(2, 13))
    assert d == {t: F(c, 36) for t, c in brute(2).items()}


def test_d6_plus_1_shifts_every_face():
    assert distribution("D6+1") == {v: F(1, 6) for v in range(2, 8)}


def test_3d6_exact():
    d = distribution("3D6")
    assert d[3] == d[18] == F(1, 216)
    assert d[10] == d[11] == F(27, 216)
    assert d == {t: F(c, 216) for t, c in brute(3).items()}
    assert sum(d.values()) == 1


def test_modifier_and_case_and_spaces():
    assert distribution("3d6-2") == {t - 2: F(c, 216) for t, c in brute(3).items()}
    assert distribution(" 2 d 6 ") == distribution("2D6")
    assert parse("d6+1") == parse("D6+1")


def test_dice_expr_fields_and_text():
    e = parse("3D6-2")
    assert (e.count, e.sides, e.modifier) == (3, 6, -2)
    assert (e.min, e.max) == (1, 16)
    assert str(e) == "3D6-2"
    assert str(parse("D3")) == "D3"
    assert str(parse("2D6+1")) == "2D6+1"
    assert str(parse("4")) == "4"
    assert (parse("4").min, parse("4").max) == (4, 4)
    # The distribution's support matches min/max.
    d = distribution(e)
    assert (min(d), max(d)) == (e.min, e.max)


@pytest.mark.parametrize("bad", ["", "D", "2D", "abc", "D6+", "1.5", "2D6*2", "D-6", "6+D6"])
def test_parse_errors_are_clear(bad):
    with pytest.raises(DiceError) as err:
        parse(bad)
    msg = str(err.value)
    assert repr(bad) in msg
    assert "2D6" in msg and "D3" in msg  # lists the accepted forms


@pytest.mark.parametrize("bad", ["D0", "0D6"])
def test_parse_rejects_zero_dice_or_sides(bad):
    with pytest.raises(DiceError, match="at least one"):
        parse(bad)


def test_dice_error_is_a_value_error():
    assert issubclass(DiceError, ValueError)


def test_binomial_and_at_least():
    b = binomial(4, F(1, 2))
    assert b == {0: F(1, 16), 1: F(4, 16), 2: F(6, 16), 3: F(4, 16), 4: F(1, 16)}
    assert at_least(b, 3) == F(5, 16)
    assert at_least(b, 0) == 1
    assert at_least(b, 5) == 0


def test_prob_at_least_clips():
    assert prob_at_least(4) == F(1, 2)
    assert prob_at_least(6) == F(1, 6)
    assert prob_at_least(1) == 1
    assert prob_at_least(0) == 1
    assert prob_at_least(7) == 0
    assert prob_at_least(3, sides=3) == F(1, 3)


def test_mean_and_check_distribution():
    assert mean(distribution("2D6")) == 7
    assert mean(distribution("D3")) == 2
    check_distribution(distribution("3D6"))
    with pytest.raises(ValueError, match="sum to"):
        check_distribution({1: F(1, 2), 2: F(1, 3)})
    with pytest.raises(ValueError):
        check_distribution({1: F(3, 2), 2: F(-1, 2)})


def test_two_d6_faces_are_the_36_ordered_results():
    faces = two_d6_faces()
    assert len(faces) == 36
    assert {f for f, _ in faces} == set(product(range(1, 7), repeat=2))
    assert all(p == F(1, 36) for _, p in faces)


# ----------------------------------------------------------------------------- pools
def brute_pool(n: int, threshold: int) -> dict[tuple[int, int], Fraction]:
    out: dict[tuple[int, int], Fraction] = {}
    for r in product(range(1, 7), repeat=n):
        key = (sum(x >= threshold for x in r), sum(x == 6 for x in r))
        out[key] = out.get(key, F(0)) + F(1, 6**n)
    return out


@pytest.mark.parametrize("n", range(0, 11))
@pytest.mark.parametrize("threshold", [2, 3, 4, 5, 6])
def test_pool_joint_sums_to_one_and_marginals_are_binomial(n, threshold):
    joint = pool(n, threshold)
    assert sum(joint.values()) == 1
    successes: dict[int, Fraction] = {}
    sixes: dict[int, Fraction] = {}
    for (k, s), p in joint.items():
        assert 0 <= s <= k <= n
        successes[k] = successes.get(k, F(0)) + p
        sixes[s] = sixes.get(s, F(0)) + p
    expect_k = {k: p for k, p in binomial(n, F(7 - threshold, 6)).items() if p}
    expect_s = {k: p for k, p in binomial(n, F(1, 6)).items() if p}
    assert successes == expect_k
    assert sixes == expect_s


@pytest.mark.parametrize("n", range(0, 5))
@pytest.mark.parametrize("threshold", [2, 4, 5, 6])
def test_pool_matches_brute_force(n, threshold):
    assert pool(n, threshold) == brute_pool(n, threshold)


def test_pool_threshold_is_clipped():
    assert pool(3, 1) == pool(3, 2)
    assert pool(3, 9) == pool(3, 6)


def brute_any_double(n: int, threshold: int) -> dict[tuple[int, bool], Fraction]:
    out: dict[tuple[int, bool], Fraction] = {}
    for r in product(range(1, 7), repeat=n):
        key = (sum(x >= threshold for x in r), len(set(r)) < n)
        out[key] = out.get(key, F(0)) + F(1, 6**n)
    return out


@pytest.mark.parametrize("n", range(0, 6))
@pytest.mark.parametrize("threshold", [2, 3, 4, 5, 6])
def test_pool_any_double_matches_brute_force(n, threshold):
    assert pool_any_double(n, threshold) == brute_any_double(n, threshold)


def test_pool_any_double_beyond_six_dice_always_doubles():
    joint = pool_any_double(7, 4)
    assert all(dbl for (_, dbl) in joint)
    assert sum(joint.values()) == 1


# ----------------------------------------------------------------------------- samplers
CHI2_99_9 = {5: 20.52, 10: 29.59, 15: 37.70}
"""Chi-square critical values at p = 0.001 for some degrees of freedom."""


def chi_square(counts: Counter, dist: dict, n: int) -> float:
    return sum((counts.get(k, 0) - n * float(p)) ** 2 / (n * float(p)) for k, p in dist.items())


def test_sampler_draws_match_2d6_exactly_enough():
    """60,000 draws of 2D6 (seed 7): chi-square below the 0.1% critical value for 10 d.f.,
    while the same counts against 2D6+1 (an off-by-one) are far beyond it."""
    d = distribution("2D6")
    rng = np.random.default_rng(7)
    draw = Sampler(d)
    n = 60_000
    counts = Counter(draw(rng) for _ in range(n))
    assert set(counts) <= set(d)
    assert chi_square(counts, d, n) < CHI2_99_9[10]
    # The bound has power: the same counts are far off an off-by-one law (2D6+1).
    assert chi_square(counts, distribution("2D6+1"), n) > 100 * CHI2_99_9[10]


def test_sample_function_and_roll_match_distribution():
    rng = np.random.default_rng(11)
    n = 30_000
    d = distribution("D6+1")
    counts = Counter(sample(d, rng) for _ in range(n))
    assert chi_square(counts, d, n) < CHI2_99_9[5]
    rolled = Counter(roll("D6+1", rng) for _ in range(n))
    assert chi_square(rolled, d, n) < CHI2_99_9[5]
    d3 = distribution("3D6")
    rolled3 = Counter(roll("3D6", rng) for _ in range(n))
    # merge the thin tails so every expected count is large
    merged = {
        "lo": sum(p for k, p in d3.items() if k <= 6),
        "hi": sum(p for k, p in d3.items() if k >= 15),
    }
    merged.update({k: p for k, p in d3.items() if 6 < k < 15})
    mc = Counter()
    for k, c in rolled3.items():
        mc["lo" if k <= 6 else "hi" if k >= 15 else k] += c
    assert chi_square(mc, merged, n) < CHI2_99_9[10]
    assert roll("4", rng) == 4


def test_sampler_works_with_float_probabilities_and_tuple_outcomes():
    rng = np.random.default_rng(3)
    draw = Sampler({(0, 1): 0.25, (1, 0): 0.75})
    counts = Counter(draw(rng) for _ in range(20_000))
    assert set(counts) == {(0, 1), (1, 0)}
    assert abs(counts[(0, 1)] / 20_000 - 0.25) < 0.015


# ----------------------------------------------------------------------------- properties
small_dist = st.dictionaries(st.integers(-5, 10), st.integers(1, 20), min_size=1, max_size=5).map(
    lambda w: {k: F(v, sum(w.values())) for k, v in w.items()}
)


@settings(max_examples=60, deadline=None)
@given(small_dist, small_dist)
def test_convolve_is_a_distribution_with_additive_mean(a, b):
    c = convolve(a, b)
    assert sum(c.values()) == 1
    assert mean(c) == mean(a) + mean(b)
    assert min(c) == min(a) + min(b) and max(c) == max(a) + max(b)
    assert c == convolve(b, a)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 4), st.sampled_from([3, 6]), st.integers(-3, 3))
def test_distribution_of_ndsm_properties(n, sides, m):
    expr = f"{n}D{sides}{m:+d}"
    d = distribution(expr)
    e = parse(expr)
    assert sum(d.values()) == 1
    assert (min(d), max(d)) == (n + m, n * sides + m) == (e.min, e.max)
    assert mean(d) == F(n * (sides + 1), 2) + m
    # symmetric around the mean
    lo, hi = min(d), max(d)
    assert all(d[lo + i] == d[hi - i] for i in range(hi - lo + 1))
    # the count of ways for the smallest total is one
    assert d[lo] == F(1, sides**n)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 8), st.fractions(min_value=0, max_value=1, max_denominator=12))
def test_binomial_properties(n, p):
    b = binomial(n, p)
    assert sum(b.values()) == 1
    assert mean(b) == n * p
    assert all(b[k] == comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1))


def test_module_exports_exact_fractions():
    assert all(isinstance(p, Fraction) for p in dice.distribution("2D6").values())
    assert all(isinstance(p, Fraction) for p in dice.pool(3).values())
