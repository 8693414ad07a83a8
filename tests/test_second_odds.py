"""2nd edition: exact odds tables and effect distributions (2E-2, 2E-3, 2E-5.2, 2E-6, 2E-7)."""

from __future__ import annotations

from fractions import Fraction
from math import comb

from psygym import load
from psygym.combat import to_wound_rt
from psygym.edition import get
from psygym.editions.second.odds import flux_cards, hand_chance
from psygym.odds import Table

F = Fraction


def _by_name() -> dict[str, Table]:
    second = get("2nd")
    return {name: second.odds_table(name, max_dice=10, unknown_option=True) for name in second.odds}


def test_tables_and_their_shapes():
    got = _by_name()
    assert list(got) == ["flux-cards", "flux-cap", "hand-force", "hand-force-nullify", "nullify"]
    assert got["flux-cards"].columns[2:] == ["1D6", "2D6", "3D6", "4D6"]  # max_dice is 7th's
    assert [row[0] for row in got["hand-force"].rows] == list(range(1, 11))
    assert got["hand-force"].columns[1:7] == [f">= {f} Force" for f in range(6)]


def test_warp_flux_2d6_seven_cards_is_6_in_36():
    rows = {row[0]: row for row in _by_name()["flux-cards"].rows}
    assert rows[7][3] == F(6, 36) and rows[7][1] == "4 / 3"
    assert rows[12][3] == F(1, 36) and rows[1][3] == 0
    assert flux_cards(1) == {k: F(1, 6) for k in range(1, 7)}
    for dice in range(1, 5):
        assert sum(flux_cards(dice).values()) == 1


def test_flux_cap_table_shows_1d6_for_a_single_psyker():
    cap = {row[0]: row for row in _by_name()["flux-cap"].rows}
    assert cap[1][2].startswith("1D6")  # 2D6 setting, one psyker: 1D6 (2E-3.2)
    assert (
        cap[2][2].startswith("2D6")
        and cap[3][4].startswith("3D6")
        and cap[6][4] == ("4D6 (mean 14)")
    )


def test_hand_hypergeometric_exact():
    # No Force card in 5 cards: C(14,5)/C(36,5) (rules/second.md, numbers to test against).
    assert 1 - hand_chance(5, 1) == F(comb(14, 5), comb(36, 5))
    assert hand_chance(1, 1) == F(22, 36) and hand_chance(1, 0, 1) == F(8, 36)
    assert hand_chance(2, 2) == F(comb(22, 2), comb(36, 2))
    # At least one Nullify in k cards: 1 - C(28,k)/C(36,k).
    for k in range(1, 11):
        assert hand_chance(k, 0) == 1
        assert hand_chance(k, 0, 1) == 1 - F(comb(28, k), comb(36, k))
        # Exactly-f Force cards sum to 1 (hypergeometric).
        exact = [hand_chance(k, f) - hand_chance(k, f + 1) for f in range(k + 1)]
        assert sum(exact) == 1
        assert exact == [F(comb(22, f) * comb(14, k - f), comb(36, k)) for f in range(k + 1)]
    both = _by_name()["hand-force-nullify"]
    hand = _by_name()["hand-force"]
    for row_both, row in zip(both.rows, hand.rows):
        k = row[0]
        for f in range(6):
            assert row_both[1 + f] == hand_chance(k, f, 1) <= min(row[1 + f], row[-1])
    # 2 cards, a Force and a Nullify: 22 * 8 / C(36, 2).
    assert hand_chance(2, 1, 1) == F(22 * 8, comb(36, 2))


def test_nullify_table():
    rows = {row[0]: row for row in _by_name()["nullify"].rows}
    assert rows["+0"][1:] == ["4+", F(1, 2), F(3, 4)]
    assert rows["+1"][1:] == ["3+", F(2, 3), F(8, 9)]
    assert rows["-2"][1] == "6+" and rows["-3"][1] == "6+"  # limited to 6+
    assert rows["+3"][1] == "2+"  # limited to 2+


def test_attack_distribution_uses_the_2nd_edition_chart_and_strength_save_modifiers():
    duel = load("2nd", "duel")
    smite = duel.power_index["Smite"]
    epistolary, tactical = 0, 2
    # S4 v T4 wounds on 4+; the 3+ save is worsened by 1 (S4) to 4+: 1/4 of hits go through.
    assert to_wound_rt(4, 4) == 4
    dist = duel.effect_distribution(smite, 1, epistolary, tactical, 5)
    assert dist[0] == sum(F(1, 6) * F(3, 4) ** h for h in range(1, 7))
    assert sum(dist.values()) == 1 and max(dist) == 5
    lvf = load("2nd", "librarian-vs-farseer")
    blast = lvf.power_index["Warp Blast"]
    # Force 3: S8 v T4 wounds on 2+; the 3+ save is worsened by 5 (S8): no save; D6 damage
    # capped at the Librarian's 3 wounds.
    dist = lvf.effect_distribution(blast, 3, 1, 0, 3)
    assert dist == {0: F(1, 6), 1: F(5, 36), 2: F(5, 36), 3: F(5, 6) * F(4, 6)}
    # Storm of Lightning S5 v T3: 2+; the Farseer's 4+ invulnerable save is not modified.
    storm = lvf.power_index["Storm of Lightning"]
    dist = lvf.effect_distribution(storm, 2, 1, 1, 3)
    per_hit = F(5, 6) * F(1, 2)
    assert dist[0] == sum(F(1, 6) * (1 - per_hit) ** h for h in range(1, 7))
    # Force 0: S4 v T3 wounds on 3+; 4+ invulnerable: 1/3.
    assert lvf.effect_distribution(blast, 0, 0, 1, 3) == {0: F(2, 3), 1: F(1, 3)}


def test_mind_war_d6_plus_ml_each():
    lvf = load("2nd", "librarian-vs-farseer")
    mind_war = lvf.power_index["Mind War"]
    dist = lvf.effect_distribution(mind_war, 2, 1, 0, 3)
    # Equal ML: the caster must roll higher; the loss is the difference, capped at 3 wounds.
    assert dist == {0: F(21, 36), 1: F(5, 36), 2: F(4, 36), 3: F(6, 36)}


def test_psychic_duel_law():
    lvf = load("2nd", "librarian-vs-farseer")
    s = lvf.initial_state()
    dist = lvf.duel_distribution(s, 0, 1)
    assert sum(dist.values()) == 1 and dist[0] == F(146, 1296)
    assert dist[3] == dist[-3]  # equal ML: symmetric
