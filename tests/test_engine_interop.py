"""The AEC env and the OpenSpiel adapter on the compiled core against the same on the reference.

Both step the game in the core where the scenario has a twin (:mod:`psygym.engine.position`).
Seeded games of random legal play run side by side, one env or game on each engine, and every
step must agree: observations, masks, rewards, terminations, events and texts for the AEC env;
whose move, legal actions, chance outcomes with their probabilities, tensors, strings and
returns for OpenSpiel.
"""

from __future__ import annotations

import numpy as np
import pytest

from psygym.edition import editions
from psygym.editions import load
from psygym.engine import compiled_game
from psygym.envs.aec import raw_env

SCENARIOS = [
    (e.id, name)
    for e in editions()
    if e.engine is not None
    for name in ("default", "single-phase")
    if name == "default" or name in e.scenario_names()
]


def _twin_ok(edition: str, scenario: str) -> None:
    compiled = compiled_game(load(edition, scenario))
    if compiled is None or not compiled.game.observation_size:
        pytest.skip("no compiled twin with an observation here")


@pytest.mark.parametrize(("edition", "scenario"), SCENARIOS)
def test_aec_env_on_the_core_is_the_reference(edition, scenario):
    _twin_ok(edition, scenario)
    core = raw_env(edition, scenario, render_mode="ansi")
    ref = raw_env(edition, scenario, render_mode="ansi", engine="python")
    assert (core.engine, ref.engine) == ("core", "python")
    rng = np.random.default_rng(7)
    steps = 0
    for game in range(60):
        core.reset(seed=game)
        ref.reset(seed=game)
        while True:
            assert core.agent_selection == ref.agent_selection
            assert core.rewards == ref.rewards and core.terminations == ref.terminations
            for agent in core.agents:
                a, b = core.observe(agent), ref.observe(agent)
                assert np.array_equal(a["observation"], b["observation"])
                assert np.array_equal(a["action_mask"], b["action_mask"])
                assert core.infos[agent]["events"] == ref.infos[agent]["events"]
            if steps % 7 == 0:
                assert core.render() == ref.render()
                assert core.state == ref.state
            if all(core.terminations.values()):
                break
            mask = core.observe(core.agent_selection)["action_mask"]
            action = int(rng.choice(np.flatnonzero(mask)))
            core.step(action)
            ref.step(action)
            steps += 1
    assert np.array_equal(core.np_random.random(4), ref.np_random.random(4))  # in step
    assert steps > 100


def test_aec_env_refuses_an_illegal_action_as_the_reference_does():
    from psygym.core import IllegalActionError

    core = raw_env("7th", "duel")
    core.reset(seed=1)
    mask = core.observe(core.agent_selection)["action_mask"]
    illegal = int(np.flatnonzero(mask == 0)[0])
    with pytest.raises(IllegalActionError, match="legal"):
        core.step(illegal)


def test_aec_env_setting_a_state_goes_on_from_it():
    _twin_ok("8th", "duel")
    core, ref = raw_env("8th", "duel"), raw_env("8th", "duel", engine="python")
    core.reset(seed=3)
    ref.reset(seed=3)
    mask = core.observe(core.agent_selection)["action_mask"]
    core.step(int(np.flatnonzero(mask)[0]))
    ref.step(int(np.flatnonzero(mask)[0]))
    core.state = ref.state  # a caller places a state: the core holds its bytes again
    assert core._pos is not None and core.state == ref.state
    agent = core.agent_selection
    assert np.array_equal(core.observe(agent)["observation"], ref.observe(agent)["observation"])


@pytest.mark.parametrize(("edition", "scenario"), SCENARIOS)
def test_openspiel_game_on_the_core_is_the_reference(edition, scenario):
    pytest.importorskip("pyspiel")
    from psygym.interop.openspiel import game_from_rules

    _twin_ok(edition, scenario)
    core = game_from_rules(load(edition, scenario))
    ref = game_from_rules(load(edition, scenario), engine="python")
    assert type(core.answers).__name__ == "CoreRules" and ref.answers is ref.rules
    obs = [g.make_py_observer() for g in (core, ref)]
    info = [g.make_py_observer(pyspiel_type(perfect_recall=True)) for g in (core, ref)]
    rng = np.random.default_rng(11)
    nodes = 0
    for _ in range(40):
        a, b = core.new_initial_state(), ref.new_initial_state()
        while True:
            nodes += 1
            assert a.current_player() == b.current_player()
            assert a.is_terminal() == b.is_terminal() and a.returns() == b.returns()
            if a.is_terminal():
                break
            if a.is_chance_node():
                assert a.chance_outcomes() == b.chance_outcomes()
                outcomes = a.chance_outcomes()
                i = rng.choice(len(outcomes), p=[p for _, p in outcomes])
                action = outcomes[int(i)][0]
            else:
                assert a.legal_actions() == b.legal_actions()
                for player in (0, 1):
                    for pair in (obs, info):
                        pair[0].set_from(a, player)
                        pair[1].set_from(b, player)
                        assert np.array_equal(pair[0].tensor, pair[1].tensor)
                        assert pair[0].string_from(a, player) == pair[1].string_from(b, player)
                action = int(rng.choice(a.legal_actions()))
                assert a.action_to_string(action) == b.action_to_string(action)
            a.apply_action(action)
            b.apply_action(action)
            clone = a.clone()
            assert clone.state == b.state and str(clone) == str(b)
    assert nodes > 200


def pyspiel_type(*, perfect_recall: bool):
    """pyspiel's observation type (imported only where pyspiel is)."""
    import pyspiel

    return pyspiel.IIGObservationType(perfect_recall=perfect_recall)
