"""Exact solvers on the real editions: 7th from a single-phase situation small enough for a test,
8th, Rogue Trader's simultaneous bids, 2nd's search, and the situations solver.

The toy games with hand-computed values are in ``test_solvers.py``.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from psygym_agents.base import RandomPolicy
from psygym_agents.solvers import NotSolvable, has_hidden_information
from psygym_agents.solvers.evaluate import best_response_value, policy_value
from psygym_agents.solvers.expectiminimax import Solver
from psygym_agents.solvers.matrix import solve_matrix_game
from psygym_agents.solvers.policy import OptimalPolicy, make_optimal

from psygym.core import CHANCE, play_game
from psygym.editions import load


# ----------------------------------------------------------------------------- 7th edition
@pytest.fixture(scope="module")
def seventh():
    return load("7th", "single-phase")


@pytest.fixture(scope="module")
def seventh_start(seventh):
    """The start of the whole single-phase game (about 71,000 states under optimal play)."""
    return seventh.initial_state()


def seventh_heuristics(rules):
    from psygym_agents.seventh.heuristics import HEURISTICS

    return {name: factory(rules) for name, factory in HEURISTICS.items()}


def test_seventh_game_value_bounds_every_heuristic(seventh, seventh_start):
    rules, start = seventh, seventh_start
    optimal = OptimalPolicy(rules)
    game = optimal.solver.value(start)
    for name, h in seventh_heuristics(rules).items():
        # h casts (player 0) against a best-responding denier: at most the game value.
        assert best_response_value(rules, h, 0, state=start) <= game + 1e-9, name
        # ... and against the optimal denier (the equilibrium's deny choices): also at most.
        assert policy_value(rules, [h, optimal], state=start) <= game + 1e-9, name
    for name in ("double-wc", "deny-never", "deny-big"):  # every distinct deny rule
        # h denies (player 1) against a best-responding caster: at least the game value.
        h = seventh_heuristics(rules)[name]
        assert best_response_value(rules, h, 1, state=start) >= game - 1e-9, name
    assert policy_value(rules, [optimal, optimal], state=start) == pytest.approx(game)
    # 'minimum' (WC dice) gives up a lot against the optimal denier.
    minimum = seventh_heuristics(rules)["minimum"]
    assert policy_value(rules, [minimum, optimal], state=start) < game - 0.5


def test_best_response_to_double_wc_beats_every_heuristic(seventh, seventh_start):
    rules, start = seventh, seventh_start
    heuristics = seventh_heuristics(rules)
    dwc = heuristics["double-wc"]
    br = best_response_value(rules, dwc, 1, state=start)
    for name, h in heuristics.items():
        assert br >= policy_value(rules, [h, dwc], state=start) - 1e-9, name
    # ... and it is strictly better than double-wc itself here.
    assert br > policy_value(rules, [dwc, dwc], state=start) + 0.1


def test_policy_value_agrees_with_20000_sampled_games(seventh):
    from psygym_experiments.simulate import mean_ci, run_games

    rules = seventh
    h = seventh_heuristics(rules)
    policies = [h["all-in"], h["deny-big"]]
    exact = policy_value(rules, policies)
    stats = run_games(rules, policies, 20_000, seed=7, show_progress=False)
    mean, half = mean_ci(np.array(stats.scores), z=2.5758)  # 99% interval
    assert abs(mean - exact) <= half, (mean, half, exact)
    # A wrong rule would show: e.g. the value of 'minimum' casting is far outside the interval.
    other = policy_value(rules, [h["minimum"], h["deny-big"]])
    assert abs(mean - other) > half


def test_seventh_depth_limit_from_a_duel_state():
    """A depth limit of one Psychic phase stops at the next phase and values it by the score.

    From battle round 5's first phase (phase 8 of 10) with one Smite left: searching one phase
    is exact when the enemy cannot cast in the last phase (its only psyker with a power is
    dead), and otherwise equals the exact value of the same game stopped after phase 8.
    """
    from psygym_agents.seventh.situations import seventh_situation

    rules = load("7th", "duel")
    common = {"dice": 3, "enemy_dice": 1, "power": "Smite", "caster": "Librarian", "phase": 8}
    quiet = seventh_situation(rules, **common, wounds="Farseer:0")
    limited = Solver(rules, max_depth=1)
    assert limited.value(quiet) == pytest.approx(Solver(rules).value(quiet))
    assert limited.exact
    live = seventh_situation(rules, **common)
    value = limited.value(live)
    assert not limited.exact
    stopped = load("7th", "duel", phase_limit=9)
    assert value == pytest.approx(Solver(stopped).value(live))


# ----------------------------------------------------------------------------- 8th edition
HOLD_DENY = {
    "edition": "8th",
    "name": "hold-the-deny",
    "description": "Two enemy psykers: a weak power first, a strong one second; one deny.",
    "game": {"battle_rounds": 1, "first_player": 0, "phase_limit": 1},
    "sides": [
        {
            "name": "Casters",
            "units": [
                {
                    "name": "Weak",
                    "wounds": 4,
                    "toughness": 4,
                    "save": 3,
                    "leadership": 9,
                    "position": [0, 0],
                    "value_per_wound": 0,
                    "psyker": True,
                    "character": True,
                    "manifest": 1,
                    "powers": ["Psychic Fortress"],
                },
                {
                    "name": "Strong",
                    "wounds": 4,
                    "toughness": 4,
                    "save": 3,
                    "leadership": 9,
                    "position": [2, 0],
                    "value_per_wound": 0,
                    "psyker": True,
                    "character": True,
                    "manifest": 1,
                    "powers": ["Might of Heroes"],
                },
            ],
        },
        {
            "name": "Denier",
            "units": [
                {
                    "name": "Warlock",
                    "wounds": 2,
                    "toughness": 3,
                    "save": 6,
                    "leadership": 8,
                    "position": [0, 14],
                    "value_per_wound": 0,
                    "psyker": True,
                    "character": True,
                    "deny": 1,
                },
            ],
        },
    ],
}


def test_eighth_hold_the_deny_for_the_bigger_power():
    """The denier lets a weak power through to keep its one deny for the strong one.

    Hand calculation (8E-4, 8E-5; a deny needs 2D6 greater than the test total, a total of 12
    cannot be denied): Weak casts Psychic Fortress (WC 5, worth 1) first, then Strong casts
    Might of Heroes (WC 6, worth 6 via ``game.power_values``) on itself. Every unit's wounds
    are worth 0, so only the two powers score. Denying the weak power (test total t >= 5)
    saves at most 1 * P(2D6 > t) <= P(2D6 > 5) = 26/36 = 0.72. Keeping the deny saves
    6 * sum_{T=6..11} P(2D6 = T) * P(2D6 > T)
      = 6 * (5*21 + 6*15 + 5*10 + 4*6 + 3*3 + 2*1) / 1296 = 6 * 280/1296 = 1.30.
    So at every deny decision on the weak power the best action is "do not deny"; on the strong
    power (nothing left to save for) it is to deny.
    """
    from psygym.editions.eighth import rules_from_data

    data = {**HOLD_DENY, "game": {**HOLD_DENY["game"], "power_values": {"Might of Heroes": 6.0}}}
    rules = rules_from_data(data, "<hold-the-deny>")
    solver = Solver(rules)
    weak = rules.power_index["Psychic Fortress"]
    strong = rules.power_index["Might of Heroes"]
    six_or_more = sum(1 for a in range(1, 7) for b in range(1, 7) if a + b >= 6) / 36
    held = 1.0 + 6.0 * (six_or_more - 280 / 1296)
    checked = {"weak": set(), "strong": set()}
    for total in range(5, 12):
        # Script: select Weak, cast the weak power, force the test total.
        s = rules.initial_state()
        s = rules.apply(s, rules.names.index("Weak"))
        (cast,) = [
            a
            for a in rules.legal_actions(s)
            if rules.CAST <= a < rules.STOP and rules.decode_cast(a)[0] == weak
        ]
        s = rules.apply(s, cast)
        s = rules.apply(s, total)
        assert rules.is_response(s), rules.render(s)
        values = solver.action_values(s)
        assert solver.best_action(s)[0] == rules.NO_DENY, values
        # The denier's value of holding: -(1 + 6 * (P(pass) - P(pass and denied))).
        assert values[rules.NO_DENY] == pytest.approx(-held)
        checked["weak"].add(total)
        # Let it through; Strong casts; the deny is now used whenever it can succeed.
        s = rules.apply(s, rules.NO_DENY)
        while rules.current_player(s) == CHANCE:
            s = rules.apply(s, rules.chance_outcomes(s)[0][0])
        s = rules.apply(s, rules.names.index("Strong"))
        (cast,) = [
            a
            for a in rules.legal_actions(s)
            if rules.CAST <= a < rules.STOP and rules.decode_cast(a)[0] == strong
        ]
        s = rules.apply(s, cast)
        s = rules.apply(s, min(total + 1, 11))
        assert solver.best_action(s)[0] != rules.NO_DENY
        checked["strong"].add(total)
    assert checked["weak"] == set(range(5, 12))


def test_eighth_single_phase_solves_and_heuristics_are_bounded():
    rules = load("8th", "single-phase")
    solver = Solver(rules)
    game = solver.value()
    assert solver.exact and solver.states > 100
    from psygym_agents.eighth.heuristics import HEURISTICS

    for name, factory in HEURISTICS.items():
        assert best_response_value(rules, factory(rules), 0) <= game + 1e-9, name


# ----------------------------------------------------------------------------- Rogue Trader
def test_rogue_trader_bids_are_matrix_games():
    rules = load("rt", "duel", turns=2)
    solver = Solver(rules, engine="python")  # keeps every pair's strategies in its cache
    value = solver.value()
    assert math.isfinite(value) and solver.exact
    assert value == pytest.approx(Solver(rules).value(), abs=1e-9)  # the core's matrix games
    assert solver.cache.strategies, "the duel has simultaneous bids (RT-3.4)"
    checked = 0
    for key, (_rows, x, _cols, y) in solver.cache.strategies.items():
        assert x.sum() == pytest.approx(1.0) and y.sum() == pytest.approx(1.0)
        assert (x >= -1e-12).all() and (y >= -1e-12).all()
        # The node's value is the LP value of its matrix of child values.
        info = rules.simultaneous_info(key)
        matrix = [[solver.value(info.fn(a, b)) for b in info.col_actions] for a in info.row_actions]
        sign = 1 if info.row_player == 0 else -1
        lp_value, _, _ = solve_matrix_game([[sign * v for v in row] for row in matrix])
        assert solver.value(key) == pytest.approx(sign * lp_value, abs=1e-9)
        # The target's strategy is the same whatever secret bid the state holds.
        policy = OptimalPolicy(rules)
        mids = [rules.apply(key, a) for a in info.row_actions]
        seen = {
            tuple(sorted(policy.action_probabilities(rules, m, info.col_player).items()))
            for m in mids
        }
        assert len(seen) == 1
        checked += 1
        if checked == 20:
            break
    assert checked > 0


def test_rogue_trader_column_player_found_from_the_initial_state():
    """A fresh optimal policy asked first at the target's bid finds its matrix game."""
    rules = load("rt", "duel", turns=2)
    rng = np.random.default_rng(1)
    for _ in range(200):
        s = rules.initial_state()
        while not rules.is_terminal(s) and rules.simultaneous_info(s) is None:
            if rules.current_player(s) == CHANCE:
                s = rules.apply(s, rules.sample_chance(s, rng))
            else:
                legal = rules.legal_actions(s)
                s = rules.apply(s, legal[int(rng.integers(len(legal)))])
        if not rules.is_terminal(s):
            break
    info = rules.simultaneous_info(s)
    mid = rules.apply(s, info.row_actions[-1])
    fresh = Solver(rules)
    probs = fresh.strategy(mid)
    _, _, cols, y = fresh.cache.strategies[s]
    assert probs == {a: pytest.approx(p) for a, p in zip(cols, y) if p > 0}


# ----------------------------------------------------------------------------- 2nd edition
def test_second_edition_is_not_solvable_but_searchable():
    rules = load("2nd", "default")
    assert has_hidden_information(rules)
    with pytest.raises(NotSolvable, match="hidden information"):
        Solver(rules)
    with pytest.raises(NotSolvable):
        policy_value(rules, [RandomPolicy(), RandomPolicy()])
    policy = make_optimal(rules, "iterations=30,seed=1")
    assert policy.name == "search" and policy.exact is False
    end = play_game(rules, [policy, RandomPolicy()], np.random.default_rng(0))
    assert rules.is_terminal(end)


def test_determinize_keeps_own_hand_and_card_counts():
    from psygym_agents.solvers.ismcts import determinize

    rules = load("2nd", "default")
    rng = np.random.default_rng(3)
    s = rules.initial_state()
    while not (rules.current_player(s) >= 0 and sum(s.hands[1]) > 0 and sum(s.hands[0]) > 0):
        if rules.current_player(s) == CHANCE:
            s = rules.apply(s, rules.sample_chance(s, rng))
        else:
            s = rules.apply(s, rules.legal_actions(s)[0])
    seen = set()
    for _ in range(50):
        d = determinize(rules, s, 0, rng)
        assert d.hands[0] == s.hands[0]
        assert sum(d.hands[1]) == sum(s.hands[1])
        assert tuple(a + b for a, b in zip(d.deck, d.hands[1])) == tuple(
            a + b for a, b in zip(s.deck, s.hands[1])
        )
        assert replace(d, hands=s.hands, deck=s.deck) == s
        seen.add(d.hands[1])
    assert len(seen) > 1  # the other hand really is resampled


# ----------------------------------------------------------------------------- situations
def test_parse_situation_and_build_a_seventh_state(seventh):
    from psygym_agents.seventh.situations import parse_situation, seventh_situation

    from psygym.editions.seventh.state import Stage

    opts = parse_situation("dice=7, enemy_dice=4,powers=Psychic Maelstrom:2,wounds=Librarian:1")
    assert opts == {
        "dice": 7,
        "enemy_dice": 4,
        "powers": "Psychic Maelstrom:2",
        "wounds": "Librarian:1",
    }
    s = seventh_situation(seventh, **opts, decision="select")
    names = seventh.names
    lib = names.index("Librarian")
    assert s.stage == Stage.SELECT and s.pools == (7, 4) and s.active == 0
    assert s.units[lib].wounds == 1
    # Smite is not listed, so it counts as attempted this phase.
    assert s.attempted == frozenset({(lib, seventh.power_index["Smite"])})
    labels = [seventh.action_label(s, a) for a in seventh.legal_actions(s)]
    assert not any("Smite" in lbl for lbl in labels)
    assert any("Psychic Maelstrom" in lbl for lbl in labels)
    # Separate options: one power -> its dice decision; with successes -> the deny decision.
    d = seventh_situation(
        seventh, dice=5, enemy_dice=3, power="Psychic Maelstrom", target="Sorcerer"
    )
    assert d.stage == Stage.DICE and seventh.names[d.cast.target] == "Sorcerer"
    assert seventh.legal_actions(d) == [seventh.DICE + k for k in range(5)]
    deny = seventh_situation(seventh, dice=5, enemy_dice=3, power="Smite", successes=2)
    assert deny.stage == Stage.DENY and deny.cast.successes == 2
    assert seventh.current_player(deny) == 1 and seventh.is_response(deny)
    # A power from the scenario's data the only caster does not know is taught to it.
    taught = seventh_situation(seventh, power="Psychic Shriek", dice=3, enemy_dice=1)
    assert seventh.power_index["Psychic Shriek"] in taught.units[lib].powers


def test_situation_errors_name_the_problem(seventh):
    from psygym_agents.seventh.situations import parse_situation, seventh_situation

    with pytest.raises(ValueError, match="unknown key 'dicee'"):
        parse_situation("dicee=3")
    with pytest.raises(ValueError, match="not key=value"):
        parse_situation("dice")
    with pytest.raises(ValueError, match="whole number"):
        parse_situation("dice=many")
    with pytest.raises(ValueError, match="unknown power 'Bolt'.*Smite"):
        seventh_situation(seventh, power="Bolt")
    with pytest.raises(ValueError, match="not a unit.*Librarian"):
        seventh_situation(seventh, wounds="Nobody:1")
    with pytest.raises(ValueError, match="not a legal target"):
        seventh_situation(seventh, power="Smite", target="Librarian")
    with pytest.raises(ValueError, match="warp charge 1 in the power data"):
        seventh_situation(seventh, powers="Smite:2")
    duel = load("7th", "duel")
    # Flame Breath is Pyromancy, a discipline no Ultramarines psyker may generate from (7E-2.1).
    with pytest.raises(ValueError, match="no psyker of the casting side knows Flame Breath"):
        seventh_situation(duel, power="Flame Breath")
    # Psychic Shriek is Telepathy: the Codicier's discipline, so the Codicier is taught it.
    taught = seventh_situation(duel, power="Psychic Shriek")
    assert taught.units[1].powers == (duel.power_index["Psychic Shriek"],)


def test_first_decision_takes_the_middle_of_tied_outcomes(seventh):
    from psygym_agents.solvers.situations import first_decision, replay

    s = first_decision(seventh)
    # D6 roll 4 (the middle of six equally likely faces) + ML 1 = 5 dice; Chaos 4 + ML 1.
    assert s.pools == (5, 5)
    assert replay(seventh, [4]) == s
    with pytest.raises(ValueError, match="step 0"):
        replay(seventh, [99])


def test_dice_table_small_values_by_hand():
    from psygym_agents.seventh.dice_table import optimal_dice_table

    rows = optimal_dice_table(max_pool=2, max_enemy_dice=1)
    assert len(rows) == 3 * 2 * 2
    cell = {(r["warp_charge"], r["pool"], r["enemy_dice"]): r for r in rows}
    # One die at WC 1: cast on 4+ (1/2), no Perils possible with one die (7E-4.4); the power is
    # worth 2. No deny dice: 1/2 * 2 = 1. One deny die at 6+ (the denier uses it, nothing else
    # to keep it for): 1/2 * 2 * 5/6 = 5/6.
    assert cell[(1, 1, 0)]["best_value"] == pytest.approx(1.0)
    assert cell[(1, 1, 1)]["best_value"] == pytest.approx(5 / 6)
    assert cell[(1, 1, 0)]["best_dice"] == 1 == cell[(1, 1, 0)]["double_wc_dice"]
    # WC 2 needs two successes: one die cannot cast it; two dice: 1/4 * 2 (Perils on two 6s
    # only costs wounds, so the value is below 1/2).
    assert cell[(2, 1, 0)]["best_dice"] == 0 and cell[(2, 1, 0)]["best_value"] == 0
    assert 0.4 < cell[(2, 2, 0)]["best_value"] < 0.5
    assert all(r["deny_threshold"] == 6 for r in rows)
