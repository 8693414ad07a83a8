"""The OpenSpiel adapter (psygym.interop.openspiel): consistency, information states, CFR.

Editions are found through the registry by what they declare (hidden hands, simultaneous bids),
never by id.
"""

from __future__ import annotations

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from psygym_agents.solvers.expectiminimax import Solver  # noqa: E402
from psygym_agents.solvers.matrix import solve_matrix_game  # noqa: E402

from psygym import edition as registry  # noqa: E402
from psygym.core import Information  # noqa: E402
from psygym.editions import load  # noqa: E402
from psygym.interop import openspiel as ospiel  # noqa: E402

SCENARIOS = [(e.id, name) for e in registry.editions() for name in e.scenario_names()]
SMALL = "smite-skirmish"
TINY_DECK_FORCE_NULLIFY = (1, 1)
"""The shortened deck of the CFR tests: one Force and one Nullify card (2E-2.1 counts)."""


def _edition(information: Information) -> registry.Edition:
    return next(e for e in registry.editions() if e.information == information)


def _tiny_rules():
    """The small 2nd-edition scenario, whose [deck] setting holds one Force and one Nullify."""
    ed = _edition(Information.HIDDEN)
    rules = load(ed.id, SMALL)
    assert rules.deck_counts == TINY_DECK_FORCE_NULLIFY + (0,) * (len(rules.deck_counts) - 2)
    return rules


def test_registered_under_its_name():
    assert ospiel.GAME_NAME in pyspiel.registered_names()
    ed = registry.default()
    game = pyspiel.load_game(ospiel.GAME_NAME, {"edition": ed.id, "scenario": "default"})
    assert game.get_type().chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    assert game.num_distinct_actions() == game.rules.num_actions


@pytest.mark.parametrize(("edition", "scenario"), SCENARIOS)
def test_openspiel_consistency_checks(edition, scenario):
    """OpenSpiel's own C++ API checks (basic_tests.cc) on a few random games of every scenario."""
    game = ospiel.load_game(edition, scenario)
    pyspiel.random_sim_test(game, num_sims=2, serialize=False, verbose=False)
    info = game.get_type().information
    hidden = registry.get(edition).information != Information.PERFECT
    expected = pyspiel.GameType.Information
    assert info == (expected.IMPERFECT_INFORMATION if hidden else expected.PERFECT_INFORMATION)
    # Zero-sum bounds hold for both players.
    assert game.min_utility() == -game.max_utility()


def _random_prefix(game, rng, steps):
    state = game.new_initial_state()
    for _ in range(steps):
        if state.is_terminal():
            break
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(outcomes, p=probs)))
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
    return state


def _hidden_deals(game, rng, tries=200):
    """A chance node with two outcomes a player cannot tell apart while the other can."""
    for _ in range(tries):
        state = _random_prefix(game, rng, int(rng.integers(0, 60)))
        if not state.is_chance_node():
            continue
        kids = [state.child(a) for a, _ in state.chance_outcomes()]
        for p in (0, 1):
            by_view = {}
            for kid in kids:
                by_view.setdefault(kid.information_state_string(p), []).append(kid)
            for group in by_view.values():
                # Two outcomes that player p cannot tell apart and the other player can.
                if len(group) >= 2:
                    x, y = group[0], group[1]
                    if x.information_state_string(1 - p) != y.information_state_string(1 - p):
                        return p, x, y
    raise AssertionError("no hidden deal found")


def test_information_state_ignores_the_other_hand():
    """Two deals to the other hand: same string for the player who did not see it (2E-1, 2E-3.3),
    different for the one who did, and they stay equal while play goes on identically."""
    ed = _edition(Information.HIDDEN)
    # The full warp deck: in SMALL's two-card deck the other hand follows from one's own.
    game = ospiel.load_game(ed.id, ed.default_scenario)
    rng = np.random.default_rng(3)
    p, a, b = _hidden_deals(game, rng)
    assert ospiel.psygym_state(a) != ospiel.psygym_state(b)
    assert a.information_state_string(p) == b.information_state_string(p)
    assert a.information_state_string(1 - p) != b.information_state_string(1 - p)
    steps = 0
    while not a.is_terminal() and not b.is_terminal() and steps < 40:
        if a.current_player() != b.current_player():
            break
        if a.is_chance_node():
            shared = sorted(
                {o for o, _ in a.chance_outcomes()} & {o for o, _ in b.chance_outcomes()}
            )
            act = int(rng.choice(shared))
        else:
            if a.current_player() == p:
                assert a.legal_actions() == b.legal_actions()
            shared = sorted(set(a.legal_actions()) & set(b.legal_actions()))
            act = int(rng.choice(shared))
        a.apply_action(act)
        b.apply_action(act)
        if np.array_equal(game.rules.observe(a.state, p), game.rules.observe(b.state, p)):
            assert a.information_state_string(p) == b.information_state_string(p)
        steps += 1


def test_information_state_matches_sample_hidden():
    """Re-dealing what a player has not seen (the edition's ``sample_hidden``) keeps its view."""
    ed = _edition(Information.HIDDEN)
    game = ospiel.load_game(ed.id, "duel")
    rules = game.rules
    rng = np.random.default_rng(11)
    checked = 0
    for _ in range(30):
        state = _random_prefix(game, rng, int(rng.integers(5, 80)))
        if state.is_terminal() or state.is_chance_node():
            continue
        p = state.current_player()
        other = rules.sample_hidden(state.state, p, rng)
        assert np.array_equal(rules.observe(other, p), rules.observe(state.state, p))
        assert rules.legal_actions(other) == rules.legal_actions(state.state)
        checked += 1
    assert checked >= 5


def test_second_bid_does_not_see_the_first():
    """Rogue Trader's secret bids (RT-3.4): the second bidder's information state is the same
    whatever the first bid was, and differs again once both bids are down."""
    ed = _edition(Information.SIMULTANEOUS)
    game = ospiel.load_game(ed.id, "duel")
    rules = game.rules
    rng = np.random.default_rng(5)
    for _ in range(300):
        state = _random_prefix(game, rng, int(rng.integers(0, 40)))
        if state.is_terminal() or state.is_chance_node():
            continue
        sim = rules.simultaneous_info(state.state)
        if sim is not None:
            break
    else:
        raise AssertionError("no secret-bid node found")
    kids = [state.child(a) for a in sim.row_actions]
    assert all(k.current_player() == sim.col_player for k in kids)
    assert len({k.information_state_string(sim.col_player) for k in kids}) == 1
    assert len({k.information_state_string(sim.row_player) for k in kids}) == len(kids)
    col = sim.col_actions[0]
    after = {k.child(col).information_state_string(sim.col_player) for k in kids}
    assert all(ospiel.HIDDEN_MOVE in s for s in after)


def test_rogue_trader_matrix_values_agree_with_openspiel_lp():
    """OpenSpiel's LP (lp_solver) on each secret-bid matrix equals our LP value to 1e-9."""
    lp_solver = pytest.importorskip("open_spiel.python.algorithms.lp_solver")
    ed = _edition(Information.SIMULTANEOUS)
    rules = load(ed.id, "duel")
    solver = Solver(rules, max_depth=1)
    rng = np.random.default_rng(7)
    game = ospiel.game_from_rules(rules)
    diffs = []
    for _ in range(300):
        if len(diffs) >= 4:
            break
        state = _random_prefix(game, rng, int(rng.integers(0, 40)))
        if state.is_terminal() or state.is_chance_node():
            continue
        sim = rules.simultaneous_info(state.state)
        if sim is None:
            continue
        sign = 1.0 if sim.row_player == 0 else -1.0
        payoff = np.array(
            [[sign * solver.value(sim.fn(r, c)) for c in sim.col_actions] for r in sim.row_actions]
        )
        ours = solve_matrix_game(payoff)[0]
        matrix = pyspiel.create_matrix_game(payoff.tolist(), (-payoff).tolist())
        theirs = lp_solver.solve_zero_sum_matrix_game(matrix)[2]
        diffs.append(abs(ours - float(theirs)))
    assert len(diffs) >= 2
    print(f"secret-bid matrices: {len(diffs)}, largest |LP - OpenSpiel LP| = {max(diffs):.3g}")
    assert max(diffs) < 1e-9


def test_cfr_beats_uniform_and_policy_wrapper():
    """On the tiny game CFR+ lowers NashConv well below the uniform policy's, and a wrapped
    psygym policy is a proper OpenSpiel policy (its NashConv is finite and positive)."""
    from open_spiel.python import policy as os_policy
    from open_spiel.python.algorithms import cfr, exploitability

    from psygym.policies import reference_policy

    game = ospiel.game_from_rules(_tiny_rules())
    uniform = exploitability.nash_conv(game, os_policy.UniformRandomPolicy(game))
    solver = cfr.CFRPlusSolver(game)
    for _ in range(20):
        solver.evaluate_and_update_policy()
    solved = exploitability.nash_conv(game, solver.average_policy())
    assert uniform > 0
    assert solved < 0.5 * uniform
    ref = ospiel.OpenSpielPolicy(game, reference_policy(game.rules))
    assert 0 < exploitability.nash_conv(game, ref) < 10 * game.max_utility()


def test_cfr_command_writes_run_folder(tmp_path):
    from psygym_experiments.cfr import run

    result = run(_tiny_rules(), tmp_path, iterations=3, every=1, agents=["pass"])
    assert (tmp_path / "cfr-convergence.png").stat().st_size > 0
    assert [i for i, _ in result["curves"]["CFR"]] == [1, 2, 3]
    assert "pass" in result["agents"]
    assert (tmp_path / "report.md").read_text().startswith("# CFR")
