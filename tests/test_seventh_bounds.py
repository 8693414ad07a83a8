"""7th edition: the score bounds ``game_info`` declares (``psygym.editions.seventh.bounds``).

The bounds must be sound (no game ever ends outside them, heals and blessings cast again in
later phases included) and finite. They are checked three ways: their value on the shipped
scenarios, worked out by hand; every score reachable through outcomes of nonzero chance, found
by walking the whole game of the small scenarios; and seeded playouts of the shipped scenarios
and of variants made to stress each way the score moves (heals, blessings cast again, Warp
Surge, pool bonuses, generated powers).
"""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest
from helpers import psyker7, rules_from, scenario7, unit7
from psygym_agents.base import RandomPolicy
from psygym_agents.seventh.heuristics import HEURISTICS

from psygym.core import CHANCE, TERMINAL, EventKind, play_game
from psygym.editions import load
from psygym.editions.seventh.bounds import attempts_most, held_powers_most


def lib(powers, **flags):
    """A 2-wound ML1 Librarian (value 2 a wound) with fixed ``powers`` and psyker ``flags``."""
    return unit7("Lib", (0, 0), wounds=2, toughness=4, save=3, leadership=10,
                 value_per_wound=2, psyker=psyker7(1, powers=powers, **flags))  # fmt: skip


def sorcerer(powers):
    """A 2-wound ML1 Sorcerer (value 2 a wound) with fixed ``powers``, 12" away."""
    return unit7("Sorc", (0, 12), wounds=2, toughness=4, save=3, leadership=10,
                 value_per_wound=2, psyker=psyker7(1, powers=powers))  # fmt: skip


def cultists(position=(3, 10), name="Cultists"):
    """Ten 1-wound Cultists worth half a point a wound (10" away unless told)."""
    return unit7(name, position, models=10, toughness=3, save=6,
                 value_per_wound=0.5)  # fmt: skip


def recast_blessing():
    """One Librarian with only a self blessing (Warp Speed, 1) over three battle rounds, and
    a Warp Surge worth 5: each phase may bless and surge again (7E-7.2, 7E-6.6)."""
    return rules_from(scenario7([lib(["Warp Speed"])], [cultists()], phases=None, rounds=3,
                                warp_surge_value=5))  # fmt: skip


VARIANTS = {
    # Life Leech heals its caster (scored back) beside two blessings; both sides cast.
    "leech": lambda: rules_from(
        scenario7(
            [lib(["Life Leech", "Iron Arm", "Warp Speed"]), cultists((2, 1), "Scouts")],
            [sorcerer(["Smite", "Terrify"]), cultists()],
            phases=None,
            rounds=4,
            warp_surge_value=2,
        )
    ),
    "recast-blessing": recast_blessing,
    # Pool bonuses (7E-3.1) and the second player first.
    "bonus": lambda: rules_from(
        with_pool_bonus(
            scenario7(
                [lib(["Smite", "Endurance"], force_weapon=True)],
                [sorcerer(["Smite", "Dominate"])],
                phases=None,
                rounds=2,
                first_player=1,
            ),
            4,
            2,
        )
    ),
    # The shipped duel, two battle rounds, the Eldar first (powers generated, 7E-2).
    "duel-eldar-first": lambda: _duel_with(battle_rounds=2, first_player=1),
}


def with_pool_bonus(data: dict, *bonus: int) -> dict:
    """``data`` with each side's ``pool_bonus`` set."""
    for side, b in zip(data["sides"], bonus):
        side["pool_bonus"] = b
    return data


EXPECTED_KINDS = {
    "leech": {EventKind.HEAL, EventKind.SURGE, EventKind.MANIFEST},
    "recast-blessing": {EventKind.SURGE, EventKind.MANIFEST},
    "duel": {EventKind.HEAL, EventKind.SURGE, EventKind.MANIFEST},
}
"""What the playouts must have shown, beside a manifested power, for the check to mean much."""


def _duel_with(**game):
    """The shipped duel with some ``[game]`` settings changed."""
    from psygym.edition import get
    from psygym.scenario import read_toml

    data = read_toml(str(get("7th").scenario_dir / "duel.toml"))
    data["game"] = {**data["game"], **game}
    return rules_from(data)


def reachable_scores(rules) -> tuple[float, float]:
    """The lowest and highest seat-0 score of any game, over every decision and every chance
    outcome of nonzero probability (a walk of the whole game; small scenarios only)."""
    memo: dict = {}
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 20_000))

    def walk(s):
        got = memo.get(s)
        if got is None:
            player = rules.current_player(s)
            if player == TERMINAL:
                v = rules.returns(s)[0]
                got = (v, v)
            else:
                if player == CHANCE:
                    acts = [a for a, p in rules.chance_outcomes(s) if p > 0]
                else:
                    acts = rules.legal_actions(s)
                kids = [walk(rules.apply(s, a, check=False)) for a in acts]
                got = (min(k[0] for k in kids), max(k[1] for k in kids))
            memo[s] = got
        return got

    try:
        return walk(rules.initial_state())
    finally:
        sys.setrecursionlimit(old)


# ----------------------------------------------------------------------------- the numbers
def test_the_shipped_scenarios_bounds_by_hand():
    # single-phase: the Librarian (2 powers, pool at most 6 + 1) has one phase, the Sorcerer
    # none. Seat 0 at best kills the Sorcerer (2 x 2) and surges on both attempts (2 x 1); at
    # worst loses its Librarian (2 x 2).
    single = load("7th", "single-phase")
    assert attempts_most(single) == (2, 0)
    info = single.game_info()
    assert (info.min_utility, info.max_utility) == (pytest.approx(-4), pytest.approx(6))
    # duel: 5 phases a side; the Librarian holds at most Force + ML 2 + a Primaris = 4 powers,
    # the Codicier 1 + 1 = 2 (the Eldar likewise 4 and 2), below the pool of 6 + 3. The best
    # value is Invisibility's 3, a surge 1. Seat 0: Eldar wounds 3x2 + 1x2 + 10x1 = 18, plus
    # 30 attempts x 4; seat 1: 2x2 + 2x1.5 + 10x1 = 17, plus 120.
    duel = load("7th", "duel")
    assert [held_powers_most(duel, u) for u in range(6)] == [4, 2, 0, 4, 2, 0]
    assert attempts_most(duel) == (30, 30)
    info = duel.game_info()
    assert (info.min_utility, info.max_utility) == (pytest.approx(-137), pytest.approx(138))
    assert info.min_utility < -137 and info.max_utility > 138  # the float margin lies outside


def test_a_tampered_hundred_lies_outside_single_phase():
    info = load("7th", "single-phase").game_info()
    assert math.isfinite(info.min_utility) and math.isfinite(info.max_utility)
    assert not info.min_utility <= 100 <= info.max_utility
    assert not info.min_utility <= -100 <= info.max_utility


# ----------------------------------------------------------------------------- soundness
def test_every_reachable_single_phase_score_lies_within_and_the_bound_is_reached():
    rules = load("7th", "single-phase")
    info = rules.game_info()
    lo, hi = reachable_scores(rules)
    # Sound, and here tight: a dead Sorcerer and two Warp Surges, or a dead Librarian.
    assert (lo, hi) == (-4.0, 6.0)
    assert info.min_utility <= lo and hi <= info.max_utility
    from psygym_agents.solvers.expectiminimax import Solver

    solver = Solver(rules)
    value = solver.value(rules.initial_state())
    assert solver.exact and info.min_utility < value < info.max_utility
    assert value == pytest.approx(1.0497, abs=1e-4)


def test_a_blessing_cast_again_each_phase_stays_within():
    # Three phases; each may bless (1) and surge (5) again; no enemy wound is possible.
    rules = recast_blessing()
    info = rules.game_info()
    lo, hi = reachable_scores(rules)
    assert hi == pytest.approx(3 * (1 + 5))  # the same blessing scored in each of 3 phases
    assert lo == pytest.approx(-4.0)  # the Librarian lost to Perils
    assert info.min_utility <= lo and hi <= info.max_utility
    assert info.max_utility == pytest.approx(10 * 0.5 + 3 * (1 + 5))


@pytest.mark.parametrize("name", ["single-phase", "duel", *VARIANTS])
def test_seeded_playouts_stay_within_the_bounds(name):
    rules = VARIANTS[name]() if name in VARIANTS else load("7th", name)
    info = rules.game_info()
    assert math.isfinite(info.min_utility) and math.isfinite(info.max_utility)
    lineups = [
        [RandomPolicy(), RandomPolicy()],
        [HEURISTICS["all-in"](rules), HEURISTICS["deny-never"](rules)],
        [HEURISTICS["minimum"](rules), HEURISTICS["all-in"](rules)],
    ]
    seen, kinds = [], set()

    def check(s, a, events):
        assert info.min_utility <= rules.returns(s)[0] <= info.max_utility
        kinds.update(e.kind for e in events)

    for k, policies in enumerate(lineups):
        for seed in range(60):
            end = play_game(rules, policies, np.random.default_rng(1000 * k + seed), on_step=check)
            seen.append(rules.returns(end)[0])
    assert all(info.min_utility <= v <= info.max_utility for v in seen)
    assert len(set(seen)) > 3  # the games differ: the check ran over real play
    assert EXPECTED_KINDS.get(name, {EventKind.MANIFEST}) <= kinds
