"""The compiled engine's shared parts: the engine switch, exact ratios, the checked boundary and
the compiled solver against the Python solver on every solvable shipped scenario."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest
from engine_cases import compiled_editions, compiled_pair, needs_core, scenario_cases
from psygym_agents.solvers import NotSolvable
from psygym_agents.solvers.expectiminimax import Solver

from psygym.edition import get
from psygym.engine import compiled_game, core_module, engine_name, requested_engine


def test_unknown_engine_is_one_clear_line(monkeypatch):
    monkeypatch.setenv("PSYGYM_ENGINE", "fast")
    allowed = r"PSYGYM_ENGINE='fast' is not an engine \(allowed: core, python\)"
    with pytest.raises(ValueError, match=allowed):
        requested_engine()


def test_python_engine_runs_the_reference(monkeypatch):
    from psygym.editions import load

    monkeypatch.setenv("PSYGYM_ENGINE", "python")
    assert core_module() is None and engine_name() == "python"
    rules = load("7th", "single-phase")
    assert compiled_game(rules) is None
    assert Solver(rules).engine == "python"


def test_missing_core_dir_is_one_clear_line(monkeypatch, tmp_path):
    monkeypatch.setenv("PSYGYM_ENGINE", "core")
    monkeypatch.setenv("PSYGYM_CORE_DIR", str(tmp_path))
    with pytest.raises(ValueError, match="no _core build in that folder"):
        core_module()


@needs_core
def test_exact_ratio_is_pythons_float_of_fraction():
    core = core_module()
    rng = random.Random(7)
    dens = [6**k for k in range(1, 25)] + [3**k * 2**j for k in range(1, 30) for j in (0, 5, 11)]
    for den in dens:
        for num in {0, 1, den - 1, den, den // 2, den // 3, rng.randrange(den + 1)}:
            assert core.exact_ratio(num, den) == float(Fraction(num, den)), (num, den)
    for _ in range(20_000):
        den = rng.randrange(1, 2**64)
        num = rng.randrange(den + 1)
        assert core.exact_ratio(num, den) == float(Fraction(num, den)), (num, den)
    with pytest.raises(ValueError, match="num <= den"):
        core.exact_ratio(3, 2)


@needs_core
def test_unknown_game_is_refused():
    with pytest.raises(ValueError, match="no compiled game 'nope'"):
        core_module().Game("nope", [], [])


@needs_core
@pytest.mark.parametrize("edition", compiled_editions())
def test_the_boundary_is_checked(edition):
    scenario = get(edition).default_scenario
    rules, compiled = compiled_pair(edition, scenario)
    game = compiled.game
    start = game.initial_state()
    with pytest.raises(ValueError, match=f"has {game.state_size} bytes, not 3"):
        game.legal_actions(b"abc")
    with pytest.raises(ValueError, match="is not legal in this state"):
        game.apply(start, 10**9)
    with pytest.raises(ValueError, match="is not legal in this state"):
        game.apply(start, -5)
    assert compiled.decode(start) == rules.initial_state()


def _solvable() -> list[tuple[str, str]]:
    return [(e, s) for e, s in scenario_cases() if s in get(e).solvable_scenarios]


@needs_core
@pytest.mark.parametrize(("edition", "scenario"), _solvable())
def test_compiled_solver_equals_the_python_solver(edition, scenario, monkeypatch):
    rules, compiled = compiled_pair(edition, scenario)
    fast = Solver(rules)
    assert fast.engine == "core"
    value = fast.value()
    monkeypatch.setenv("PSYGYM_ENGINE", "python")
    from psygym.editions import load

    reference = Solver(load(edition, scenario))
    assert reference.engine == "python"
    assert value == reference.value()  # the same sums in the same order: the same bits
    assert fast.states == reference.states
    # Action values along a game's first decisions, from the player's own view.
    state = rules.initial_state()
    for _ in range(40):
        player = rules.current_player(state)
        if player < 0 and not rules.chance_outcomes(state):
            break
        if player >= 0:
            assert fast.action_values(state) == reference.action_values(state)
            state = rules.apply(state, fast.best_action(state)[0])
        else:
            state = rules.apply(state, max(rules.chance_outcomes(state), key=lambda o: o[1])[0])


@needs_core
@pytest.mark.parametrize(("edition", "scenario"), _solvable()[:1])
def test_compiled_state_limit_is_not_solvable(edition, scenario):
    rules, _ = compiled_pair(edition, scenario)
    solver = Solver(rules, max_states=50)
    assert solver.engine == "core"
    with pytest.raises(NotSolvable, match="more than 50 states: the game is too large"):
        solver.value()


@needs_core
@pytest.mark.parametrize("seed", [0, 1, 12345, [3, 7], 2**63])
def test_core_draws_are_numpys(seed):
    import numpy as np

    rng = np.random.default_rng(seed)
    for _ in range(3):  # also from a generator that has drawn already
        rng.random(int(rng.integers(1, 50)))
        bits = rng.bit_generator.state["state"]
        state, inc, low = bits["state"], bits["inc"], (1 << 64) - 1
        drawn = core_module().pcg64_doubles(state >> 64, state & low, inc >> 64, inc & low, 2000)
        assert drawn == [rng.random() for _ in range(2000)]
