"""The ``search`` agent's lookahead on the compiled core against the same search in Python.

Seeded games where, at every decision, the core's horizon-limited search (``Solver(within=,
steps=, leaf_value=)``) and the Python one (``engine="python"``) give the same action values to
1e-9, the same best action, the same count of states and the same ``exact``; one solver per
unit of lookahead, reused within the unit, as :class:`LookaheadPolicy` keeps them. Also the
agent itself under ``PSYGYM_ENGINE=python``, the twins' horizon in the differential check,
what keeps a search in Python, and the bindings refusing bad arguments in one line.
"""

from __future__ import annotations

import numpy as np
import pytest

from psygym.core import TERMINAL
from psygym.engine import core_module

core = core_module()
if core is None or "8th" not in core.registered_games():
    pytest.skip("the compiled 8th edition is not built", allow_module_level=True)

from psygym_agents.solvers.expectiminimax import Solver  # noqa: E402
from psygym_agents.solvers.search import LookaheadPolicy  # noqa: E402
from psygym_agents.value import BoardValue, shipped_value  # noqa: E402

from psygym.editions import load  # noqa: E402
from psygym.engine import compiled_game  # noqa: E402
from psygym.engine.differential import EngineMismatch, check_games  # noqa: E402


def _compiled_seventh():
    """The 7th duel's twin, or a skip naming what is missing."""
    if "7th" not in core.registered_games():
        pytest.skip("the compiled 7th edition is not built")
    return compiled_game(load("7th", "duel"))


def play_both(edition: str, scenario: str, value, steps: int, seed: int,
              decisions: int | None = None) -> int:  # fmt: skip
    """Play a seeded game with the core's search, checking the Python search at every decision.

    Both players move by the core's best action; chance is drawn from ``seed``.

    Returns:
        The number of decisions checked.
    """
    rules = load(edition, scenario)
    rng = np.random.default_rng(seed)
    solvers: dict = {}
    state, checked = rules.initial_state(), 0
    while rules.current_player(state) != TERMINAL and (decisions is None or checked < decisions):
        if rules.current_player(state) < 0:
            state = rules.apply(state, rules.sample_chance(state, rng))
            continue
        within = rules.horizon(state)
        if within not in solvers:
            solvers[within] = tuple(
                Solver(rules, within=within, leaf_value=value, steps=steps, engine=engine)
                for engine in (None, "python")
            )
        fast, slow = solvers[within]
        assert (fast.engine, slow.engine) == ("core", "python")
        got, want = fast.action_values(state), slow.action_values(state)
        assert list(got) == list(want)
        assert max(abs(got[a] - want[a]) for a in got) <= 1e-9, (got, want)
        assert (fast.states, fast.exact) == (slow.states, slow.exact)
        action = fast.best_action(state)[0]
        assert action == slow.best_action(state)[0]
        state = rules.apply(state, action)
        checked += 1
    return checked


def test_eighth_duel_shipped_value_one_cast():
    """Whole games with the shipped board value, one cast of lookahead."""
    value = shipped_value(load("8th", "duel"))
    assert sum(play_both("8th", "duel", value, 1, seed) for seed in range(3)) > 60


def test_eighth_duel_shipped_value_two_casts():
    """The shipped setting (two casts of lookahead, ``search_steps``) for a game's first casts."""
    value = shipped_value(load("8th", "duel"))
    assert value.meta.get("search_steps") == 2
    assert play_both("8th", "duel", value, 2, 9, decisions=10) == 10


def test_eighth_score_only():
    """Without a board value a leaf is the score so far: one and two casts."""
    assert play_both("8th", "duel", None, 1, 2) > 20
    assert play_both("8th", "duel", None, 2, 8, decisions=8) == 8
    assert play_both("8th", "smite-spam", None, 2, 7) > 5


def test_eighth_other_board_value():
    """Any BoardValue runs on the core: random weights with an input that is far from zero."""
    rules = load("8th", "single-phase")
    rng = np.random.default_rng(3)
    n = rules.observation_size
    sizes = [n, 16, 8, 1]
    weights = [(rng.normal(size=(a, b)), rng.normal(size=b)) for a, b in zip(sizes, sizes[1:])]
    value = BoardValue(weights, rng.normal(size=n), rng.uniform(0.5, 2.0, size=n))
    assert play_both("8th", "single-phase", value, 2, 7) > 3


def test_seventh_score_only():
    """The 7th's horizon (one step per generated power, then one per cast) on the core."""
    _compiled_seventh()
    assert play_both("7th", "duel", None, 1, 6, decisions=12) == 12
    assert play_both("7th", "single-phase", None, 1, 5) > 0


def test_seventh_shipped_value():
    """The 7th duel with its shipped board value, once its twin has the observation."""
    compiled = _compiled_seventh()
    if compiled.game.observation_size == 0:
        pytest.skip("the compiled 7th edition has no observation yet, so its board value "
                    "is evaluated in Python")  # fmt: skip
    value = shipped_value(load("7th", "duel"))
    assert play_both("7th", "duel", value, 1, 4, decisions=12) == 12


def test_search_agent_same_moves_either_engine(monkeypatch):
    """The ``search`` agent itself chooses the same moves on the core and on the reference."""
    fast_rules, slow_rules = load("8th", "duel"), load("8th", "duel")
    # the casts' lookahead (a whole phase on the reference takes seconds: test_search_phase.py
    # compares the phase searches)
    fast = LookaheadPolicy(fast_rules, phase=False)
    with monkeypatch.context() as m:
        m.setenv("PSYGYM_ENGINE", "python")
        slow = LookaheadPolicy(slow_rules, phase=False)
    rng = np.random.default_rng(11)
    state, moves = fast_rules.initial_state(), 0
    while moves < 6:
        player = fast_rules.current_player(state)
        if player < 0:
            state = fast_rules.apply(state, fast_rules.sample_chance(state, rng))
            continue
        action = fast.choose(fast_rules, state, player)
        assert fast.solver(fast_rules, state).engine == "core"
        with monkeypatch.context() as m:
            m.setenv("PSYGYM_ENGINE", "python")
            assert slow.choose(slow_rules, state, player) == action
            assert slow.solver(slow_rules, state).engine == "python"
        state = fast_rules.apply(state, action)
        moves += 1


@pytest.mark.parametrize("edition", ["8th", "7th"])
def test_horizon_in_the_differential_check(edition, monkeypatch):
    """check_games compares the twin's horizon with rules.horizon at every node."""
    if edition not in core.registered_games():
        pytest.skip(f"the compiled {edition} edition is not built")
    rules = load(edition, "duel")
    compiled = compiled_game(rules)
    assert compiled.game.has_horizon
    assert check_games(rules, compiled, 5, seed=3).nodes > 100
    true_horizon = rules.horizon
    monkeypatch.setattr(rules, "horizon", lambda s: (true_horizon(s)[0], true_horizon(s)[1] + 1))
    with pytest.raises(EngineMismatch, match="horizon differ"):
        check_games(rules, compiled, 1)


def test_what_stays_in_python(monkeypatch):
    """A leaf function, a BoardValue subclass, a ply or depth limit and the variable."""
    rules = load("8th", "duel")
    state = rules.initial_state()
    within = rules.horizon(state)
    value = shipped_value(rules)

    class Doubled(BoardValue):
        def __call__(self, rules, state):
            return 2 * super().__call__(rules, state)

    doubled = Doubled(value.weights, value.mean, value.scale, value.meta)
    assert Solver(rules, within=within, leaf_value=value).engine == "core"
    assert Solver(rules, within=within).engine == "core"
    assert Solver(rules, within=within, leaf=lambda s: 0.0).engine == "python"
    assert Solver(rules, within=within, leaf_value=doubled).engine == "python"
    assert Solver(rules, within=within, max_plies=3).engine == "python"
    assert Solver(rules, max_depth=1).engine == "python"
    monkeypatch.setenv("PSYGYM_ENGINE", "python")
    assert Solver(rules, within=within, leaf_value=value).engine == "python"
    with pytest.raises(ValueError, match="not both"):
        Solver(rules, within=within, leaf=lambda s: 0.0, leaf_value=value)


def test_a_state_the_twin_refuses_goes_on_in_python():
    """A what-if state no game reaches is searched by the reference, and ``exact`` holds."""
    import dataclasses

    rules = load("8th", "duel")
    state = rules.initial_state()
    solver = Solver(rules, within=rules.horizon(state), leaf_value=shipped_value(rules))
    values = solver.action_values(state)
    assert solver.engine == "core" and not solver.exact
    odd = dataclasses.replace(state, wounds=(70000,) + state.wounds[1:])  # past uint16
    assert rules.current_player(odd) == rules.current_player(state)
    solver.action_values(odd)
    assert solver.engine == "python" and not solver.exact
    assert solver.action_values(state) == pytest.approx(values, abs=1e-9)


def test_threads_sharing_a_solver_take_turns():
    """Threads asking one core solver at once (the server's) get what one thread gets."""
    from concurrent.futures import ThreadPoolExecutor

    rules = load("8th", "duel")
    value = shipped_value(rules)
    state = rules.initial_state()
    within = rules.horizon(state)
    want = Solver(rules, within=within, leaf_value=value, steps=2).action_values(state)
    shared = Solver(rules, within=within, leaf_value=value, steps=2)
    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(lambda _: shared.action_values(state), range(8)))
    assert all(a == want for a in answers)
    assert shared.states == 44825


def _net_arrays(n: int = 4):
    rng = np.random.default_rng(0)
    return rng.normal(size=n), np.ones(n), [rng.normal(size=(n, 3)), rng.normal(size=(3, 1))], [
        rng.normal(size=3), rng.normal(size=1)]  # fmt: skip


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda a: a[2].__setitem__(0, a[2][0][:, :2]), "layer 0's bias has 3 entries, not 2"),
        (lambda a: a[2].__setitem__(1, np.ones((3, 2))), "layer 1's bias has 1 entries"),
        (lambda a: a[3].__setitem__(1, np.ones(2)), "layer 1's bias has 2 entries"),
        (lambda a: a[1].__setitem__(2, 0.0), "scale holds 0"),
        (lambda a: a[0].__setitem__(1, np.nan), "mean holds NaN"),
        (lambda a: a[2][1].__setitem__((0, 0), np.inf), "layer 1's weights hold"),
        (lambda a: a[2].pop(), "one bias per weight matrix"),
        (lambda a: a[2].__setitem__(0, "w"), "layer 0's weights must be a numpy array"),
        (lambda a: a[2].__setitem__(0, np.ones(4)), "2 dimensions"),
    ],
)
def test_value_net_refuses_bad_arrays(change, message):
    """Every array is checked: shapes that chain to one output, finite numbers, no zero scale."""
    args = list(_net_arrays())
    change(args)
    with pytest.raises(ValueError, match=message.replace("(", r"\(")) as err:
        core.ValueNet(*args)
    assert "\n" not in str(err.value)


def test_value_net_matches_numpy():
    """The core's MLP gives BoardValue.predict's value to 1e-12."""
    mean, scale, weights, biases = _net_arrays(6)
    net = core.ValueNet(mean, scale, weights, biases)
    model = BoardValue(list(zip(weights, biases)), mean, scale)
    for obs in (np.zeros(6, np.float32), np.arange(6, dtype=np.float32) - 2.5):
        assert net(obs) == pytest.approx(float(model.predict(obs)[0]), abs=1e-12)


def test_solver_refuses_bad_arguments():
    """within, steps and the value's input size are checked in one line each."""
    game = compiled_game(load("8th", "duel")).game
    mean, scale, weights, biases = _net_arrays(4)
    small = core.ValueNet(mean, scale, weights, biases)
    cases = [
        ({"within": (1, 0), "steps": 0}, "steps must be a whole number from 1"),
        ({"within": (1,)}, "within must be a \\(round, step\\) pair"),
        ({"within": (1, 2**40)}, "each from -2\\*\\*31"),
        ({"within": (1, True)}, "pair of integers"),
        ({"within": (1, 0), "value": small}, "the board value reads 4 observation entries"),
        ({"steps": 2}, "steps, value and phases need within="),
        ({"phases": True}, "steps, value and phases need within="),
    ]
    for kwargs, message in cases:
        with pytest.raises(ValueError, match=message) as err:
            core.Solver(game, -1, **kwargs)
        assert "\n" not in str(err.value)
