"""The Rogue Trader env's memoised move graph and shared units change nothing (RT-1 to RT-6).

``apply_with_chance`` and ``sample_chance_run`` walk a graph of memoised transitions
(``psygym/editions/rogue_trader/graph.py``), ``observe`` and ``legal_mask`` answer from the node
of the state last returned, and changed units are shared objects. These tests play seeded env
episodes with the fast walk and with the generic node-by-node walk (the fast walk is turned off
by a hook set on the rules instance, as ``RulesBase._own_chance_walk`` asks) and require the
same observations, rewards, masks, events and states, also when the graph is dropped and rebuilt
many times during the games. The envs run on the reference (``engine="python"``): the compiled
core steps its own twin and never walks the graph.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import psygym  # noqa: F401  (registers the env ids)
from psygym.editions import load
from psygym.editions.rogue_trader.graph import MoveGraph
from psygym.editions.rogue_trader.rules import RogueTraderRules
from psygym.editions.rogue_trader.units import evolve_unit as _unit
from psygym.kernel import evolve


def _generic(rules: RogueTraderRules) -> RogueTraderRules:
    """``rules`` with its fast walk turned off (a walk hook set on the instance)."""
    rules._step = rules._step  # an instance attribute named like a hook: generic walk
    return rules


def _episodes(rules: RogueTraderRules, seat: int, seed: int, episodes: int) -> list:
    """Everything the env gives out over ``episodes`` seeded episodes of random actions."""
    env = gym.make(
        "psygym/RogueTrader-v0", rules=rules, opponent="random", seat=seat, engine="python"
    )
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    out = [(obs.tobytes(), info["action_mask"].tobytes(), info["score"])]
    done = 0
    while done < episodes:
        legal = np.flatnonzero(info["action_mask"])
        obs, reward, terminated, _, info = env.step(int(legal[rng.integers(len(legal))]))
        events = [(e.kind, e.text, e.player, e.data) for e in info["events"]]
        state = env.unwrapped.state
        out.append((obs.tobytes(), reward, terminated, info["action_mask"].tobytes(), events))
        out.append((state, hash(state), repr(state)))
        if terminated:
            done += 1
            obs, info = env.reset()
            out.append((obs.tobytes(), info["action_mask"].tobytes(), info["score"]))
    return out


@pytest.mark.parametrize("scenario", ["duel", "psyker-vs-squad"])
@pytest.mark.parametrize("seat", [0, 1])
def test_fast_walk_env_episodes_equal_the_generic_walk(scenario, seat):
    fast = load("rt", scenario)
    slow = _generic(load("rt", scenario))
    assert _episodes(fast, seat, 3, 40) == _episodes(slow, seat, 3, 40)
    assert len(fast._graph) > 0 and len(slow._graph) <= 1  # the fast one used its graph


def test_a_small_graph_dropped_and_rebuilt_gives_the_same_episodes():
    small = load("rt", "duel")
    small._graph = MoveGraph(small, max_nodes=25)
    want = _episodes(_generic(load("rt", "duel")), 0, 5, 60)
    assert _episodes(small, 0, 5, 60) == want
    assert len(small._graph) <= 25


def test_observations_and_masks_are_fresh_copies():
    rules = load("rt", "duel")
    env = gym.make(
        "psygym/RogueTrader-v0", rules=rules, opponent="random", engine="python"
    ).unwrapped
    obs, info = env.reset(seed=1)
    state = env.state
    assert rules._graph.last_state is state  # answered from the graph's node
    again = rules.observe(state, 0)
    assert again is not obs and again.flags.writeable
    obs[:] = -1.0  # a caller's change reaches neither the node nor the next observation
    np.testing.assert_array_equal(rules.observe(state, 0), again)
    np.testing.assert_array_equal(again, rules.views.observe(state, 0))
    mask = rules.legal_mask(state)
    mask[:] = False
    assert rules.legal_mask(state).any()
    assert list(np.flatnonzero(rules.legal_mask(state))) == rules.legal_actions(state)


def test_shared_units_equal_fresh_copies():
    rules = load("rt", "psyker-vs-squad")
    unit = rules.initial_state().units[0]
    changed = _unit(unit, {"points": unit.points - 1, "resting": True})
    assert changed == evolve(unit, points=unit.points - 1, resting=True)
    assert hash(changed) == hash(evolve(unit, points=unit.points - 1, resting=True))
    assert _unit(unit, {"points": unit.points - 1, "resting": True}) is changed
    assert _unit(changed, {"points": unit.points, "resting": False}) is unit  # the same value


def test_a_replaced_walk_hook_or_subclass_goes_the_generic_way():
    class Counting(RogueTraderRules):
        def _step(self, s, a, ev):
            self.steps += 1
            return super()._step(s, a, ev)

    base = load("rt", "duel")
    sub = Counting(base.scenario, base.source)
    sub.steps = 0
    s = sub.initial_state()
    sub.apply_with_chance(s, sub.legal_actions(s)[-1], np.random.default_rng(0), [], check=False)
    assert sub.steps > 0 and len(sub._graph) <= 1  # its own _step ran, not the graph
