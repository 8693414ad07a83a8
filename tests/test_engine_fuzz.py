"""Bad input cannot crash the process: the compiled engine's bindings driven with garbage.

For every compiled edition (its default and every other shipped scenario), hypothesis sends
random bytes, real states with bytes changed, actions that are not legal and scenario numbers
that are malformed. Every call either answers or raises a Python exception (``ValueError``,
``ScenarioError`` or ``TypeError`` for a number that is no int64); a state the core accepts is
played on for a few moves. A segfault or a sanitizer report ends the run, so ``.ci/run`` runs a
sample of this file under AddressSanitizer and UBSan too.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from engine_cases import (
    compiled_editions,
    compiled_pair,
    default_scenario,
    needs_core,
    scenario_cases,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from psygym.core import CHANCE, TERMINAL
from psygym.engine import core_module

FUZZ = settings(
    max_examples=150, derandomize=True, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)  # fmt: skip
REFUSED = (ValueError, TypeError)


def _play_on(game, state: bytes, moves: int = 60) -> None:
    """Play up to ``moves`` moves from a state the core accepted (first legal or outcome)."""
    for _ in range(moves):
        player = game.current_player(state)
        game.returns(state)
        low, high = game.rest_bounds(state)
        assert low <= high
        if player == TERMINAL:
            return
        if player == CHANCE:
            outcomes = game.chance_outcomes(state)
            assert outcomes, "a chance node without outcomes"
            assert all(0 <= p <= 1 and not math.isnan(p) for _, p in outcomes)
            action = outcomes[len(outcomes) // 2][0]
        else:
            legal = game.legal_actions(state)
            assert legal, "a decision node without legal actions"
            action = legal[-1]
        state = game.apply(state, action)


def _probe(game, state: bytes) -> None:
    """Every method on ``state``: answers, or one Python exception."""
    try:
        accepted = game.check_state(state) == ""
    except REFUSED:
        accepted = False
    methods = (game.current_player, game.legal_actions, game.chance_outcomes, game.returns,
               game.rest_bounds)  # fmt: skip
    for method in methods:
        try:
            method(state)
        except REFUSED:
            assert not accepted, f"{method.__name__} refused a state check_state accepts"
    if accepted:
        _play_on(game, state)


def _real_states(edition: str, scenario: str, games: int = 3) -> list[bytes]:
    rules, compiled = compiled_pair(edition, scenario)
    game = compiled.game
    out = []
    for k in range(games):
        rng = np.random.default_rng(k)
        state = game.initial_state()
        while game.current_player(state) != TERMINAL and len(out) < 200 * (k + 1):
            out.append(state)
            options = [a for a, _ in game.chance_outcomes(state)] or game.legal_actions(state)
            state = game.apply(state, options[int(rng.integers(len(options)))])
        out.append(state)
    return out


CASES = scenario_cases()


@needs_core
@pytest.mark.parametrize(("edition", "scenario"), CASES)
def test_random_bytes_never_crash(edition, scenario):
    _, compiled = compiled_pair(edition, scenario)
    game = compiled.game
    size = game.state_size

    @FUZZ
    @given(st.one_of(st.binary(min_size=size, max_size=size), st.binary(max_size=2 * size)))
    def run(data):
        _probe(game, data)

    run()


@needs_core
@pytest.mark.parametrize(("edition", "scenario"), CASES)
def test_changed_states_never_crash(edition, scenario):
    _, compiled = compiled_pair(edition, scenario)
    game = compiled.game
    states = _real_states(edition, scenario)

    @FUZZ
    @given(st.sampled_from(states), st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)),
                                             min_size=1, max_size=4))  # fmt: skip
    def run(state, changes):
        data = bytearray(state)
        for where, value in changes:
            data[where % len(data)] = value
        _probe(game, bytes(data))

    run()


@needs_core
@pytest.mark.parametrize("edition", compiled_editions())
def test_changed_states_are_refused_or_played_safely(edition):
    """Real states with 1-3 bytes changed: refused with one ValueError, or played on to states
    the core accepts, with sorted legal actions and chance outcomes that are probabilities. A
    good share is accepted, so the check is no blanket refusal."""
    _, compiled = compiled_pair(edition, default_scenario(edition))
    game = compiled.game
    rng = np.random.default_rng(5)
    states = _real_states(edition, default_scenario(edition), games=5)
    accepted = 0
    for _ in range(3000):
        data = bytearray(states[int(rng.integers(len(states)))])
        for _ in range(int(rng.integers(1, 4))):
            data[int(rng.integers(len(data)))] = int(rng.integers(256))
        data = bytes(data)
        if game.check_state(data):
            with pytest.raises(ValueError, match="not a state of this game"):
                game.current_player(data)
            continue
        accepted += 1
        for _ in range(30):
            player = game.current_player(data)
            if player == TERMINAL:
                break
            if player == CHANCE:
                outcomes = game.chance_outcomes(data)
                assert outcomes and all(0 < p <= 1 for _, p in outcomes)
                action = outcomes[len(outcomes) // 2][0]
            else:
                legal = game.legal_actions(data)
                assert legal and legal == sorted(legal)
                action = legal[len(legal) // 2]
            data = game.apply(data, action)
            assert game.check_state(data) == ""
    assert accepted > 50
    random_bytes = bytes(rng.integers(0, 256, game.state_size, dtype=np.uint8))
    assert game.check_state(random_bytes)


@needs_core
@pytest.mark.parametrize(("edition", "scenario"), CASES)
def test_actions_that_are_not_legal_are_refused(edition, scenario):
    _, compiled = compiled_pair(edition, scenario)
    game = compiled.game
    states = _real_states(edition, scenario, games=1)

    @FUZZ
    @given(st.sampled_from(states), st.integers(-(2**70), 2**70))
    def run(state, action):
        legal = set(game.legal_actions(state)) | {a for a, _ in game.chance_outcomes(state)}
        if action in legal:
            game.apply(state, action)
            return
        with pytest.raises(REFUSED):
            game.apply(state, action)

    run()


@needs_core
@pytest.mark.parametrize(("edition", "scenario"), CASES)
def test_malformed_scenario_numbers_never_crash(edition, scenario):
    from psygym.scenario import ScenarioError

    rules, compiled = compiled_pair(edition, scenario)
    ints, reals = compiled.codec.encode_scenario(rules)
    core = core_module()
    big = st.sampled_from([-(2**63), -(2**31), -1, 0, 1, 2, 7, 255, 2**31 - 1, 2**40, 2**63 - 1])
    odd_reals = st.sampled_from([math.nan, math.inf, -math.inf, -1.0, 0.0, 1e308, -1e308, 5e-324])

    @FUZZ
    @given(
        st.lists(st.tuples(st.integers(0, 10**6), st.one_of(big, st.integers(-50, 50))),
                 max_size=6),
        st.lists(st.tuples(st.integers(0, 10**6), odd_reals), max_size=3),
        st.integers(-3, 3),
    )  # fmt: skip
    def run(int_changes, real_changes, resize):
        new_ints, new_reals = list(ints), list(reals)
        for where, value in int_changes:
            if new_ints:
                new_ints[where % len(new_ints)] = value
        for where, value in real_changes:
            if new_reals:
                new_reals[where % len(new_reals)] = value
        if resize < 0:
            new_ints = new_ints[:resize]
        elif resize > 0:
            new_ints += [resize] * resize
        try:
            game = core.Game(compiled.codec.game_id, new_ints, new_reals)
        except (ScenarioError, *REFUSED):
            return
        _play_on(game, game.initial_state(), moves=300)

    run()
