"""The single env on the compiled core against the same env on the reference, step by step.

:class:`~psygym.envs.psychic.PsychicPhaseEnv` against the random opponent steps its game in the
core (:mod:`psygym.engine.episode`) wherever the scenario's twin has an observation. For every
such shipped scenario and both seats, a core env and a reference env (``engine="python"``)
seeded alike take the same random legal actions over many episodes: observations (bit for bit),
rewards, terminations, masks, the events with their texts (replayed on the reference from the
core's path), the states and the generators' states must be equal. The other tests cover what
moves a step off the core (a state set from outside, a spy on the rules, another opponent, a
draw from ``np_random``), the errors, and ``PSYGYM_ENGINE=python``.
"""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
from engine_cases import compiled_pair, needs_core, scenario_cases

from psygym.core import IllegalActionError
from psygym.engine.compiled import generator_words
from psygym.engine.episode import ReplayedEvents
from psygym.envs.psychic import PsychicPhaseEnv

STEPS = 600


def _observed_cases() -> list[tuple[str, str]]:
    return [(e, s) for e, s in scenario_cases() if compiled_pair(e, s)[1].game.observation_size]


CASES = _observed_cases()


def _pair(rules, seat: int) -> tuple[PsychicPhaseEnv, PsychicPhaseEnv]:
    core = PsychicPhaseEnv(rules=rules, seat=seat)
    reference = PsychicPhaseEnv(rules=rules, seat=seat, engine="python")
    assert core._core is not None and reference._core is None
    return core, reference


def _events(events) -> list[tuple]:
    return [(e.kind, e.text, e.player, e.data) for e in events]


def _same(core_out: tuple, ref_out: tuple) -> None:
    """Equal reset or step outputs (obs bit for bit, the info's mask, events and score)."""
    *head, info, ref_info = (*core_out[:-1], core_out[-1], ref_out[-1])
    assert core_out[0].dtype == ref_out[0].dtype == np.float32
    assert core_out[0].tobytes() == ref_out[0].tobytes()
    assert tuple(head[1:]) == tuple(ref_out[1:-1])
    assert np.array_equal(info["action_mask"], ref_info["action_mask"])
    assert _events(info["events"]) == _events(ref_info["events"])
    assert info["score"] == ref_info["score"]


@needs_core
@pytest.mark.parametrize("seat", [0, 1])
@pytest.mark.parametrize(("edition", "scenario"), CASES)
def test_core_env_steps_as_the_reference_env(edition, scenario, seat):
    rules, _ = compiled_pair(edition, scenario)
    core, ref = _pair(rules, seat)
    rng = np.random.default_rng(seat)
    a, b = core.reset(seed=11), ref.reset(seed=11)
    _same(a, b)
    games = 0
    for _ in range(STEPS):
        legal = np.flatnonzero(a[-1]["action_mask"])
        action = int(legal[rng.integers(len(legal))])
        a, b = core.step(action), ref.step(action)
        _same(a, b)
        assert core.state == ref.state
        if a[2]:
            games += 1
            assert generator_words(core.np_random) == generator_words(ref.np_random)
            a, b = core.reset(), ref.reset()
            _same(a, b)
    assert games >= 3


@needs_core
@pytest.mark.skipif(not CASES, reason="no compiled twin with an observation")
def test_leaving_the_core_and_coming_back_keeps_the_game():
    """A drawn generator, a set state, a spy and another opponent each move a step to Python."""
    edition, scenario = CASES[0]
    rules, _ = compiled_pair(edition, scenario)
    core, ref = _pair(rules, 0)
    rng = np.random.default_rng(3)
    a, b = core.reset(seed=4), ref.reset(seed=4)
    for step in range(400):
        if step % 7 == 3:  # the user draws from the env's generator between steps
            assert core.np_random.random() == ref.np_random.random()
        if step % 11 == 5:  # the state set from outside (a copy of the same state)
            core.state = ref.state
        if step % 13 == 6:  # a spy on the instance: the step runs on the reference
            spy = type(core.rules).legal_actions.__get__(core.rules)
            core.rules.__dict__["legal_actions"] = spy
        legal = np.flatnonzero(a[-1]["action_mask"])
        action = int(legal[rng.integers(len(legal))])
        a, b = core.step(action), ref.step(action)
        core.rules.__dict__.pop("legal_actions", None)
        _same(a, b)
        if a[2]:
            a, b = core.reset(), ref.reset()
            _same(a, b)
    assert generator_words(core.np_random) == generator_words(ref.np_random)


class _FirstLegal:
    """An opponent that always takes its lowest legal action (not one the core plays)."""

    def action_probabilities(self, rules, state, player):
        return {rules.legal_actions(state)[0]: 1.0}


@needs_core
@pytest.mark.skipif(not CASES, reason="no compiled twin with an observation")
def test_the_core_plays_only_a_uniform_opponent():
    edition, scenario = CASES[0]
    rules, _ = compiled_pair(edition, scenario)
    assert PsychicPhaseEnv(rules=rules, opponent="random")._core is not None
    env = PsychicPhaseEnv(rules=rules, opponent=_FirstLegal())
    assert env._core is None
    core = PsychicPhaseEnv(rules=rules)
    ref = PsychicPhaseEnv(rules=rules, engine="python")
    a, b = core.reset(seed=9), ref.reset(seed=9)
    assert core.engine == "core" and ref.engine == env.engine == "python"
    core.opponent = ref.opponent = env.opponent  # swapped after creation: Python plays it
    assert core.engine == "python"
    rng = np.random.default_rng(9)
    for _ in range(200):
        legal = np.flatnonzero(a[-1]["action_mask"])
        action = int(legal[rng.integers(len(legal))])
        a, b = core.step(action), ref.step(action)
        _same(a, b)
        if a[2]:
            a, b = core.reset(), ref.reset()


@needs_core
@pytest.mark.skipif(not CASES, reason="no compiled twin with an observation")
def test_errors_are_the_reference_errors():
    edition, scenario = CASES[0]
    rules, _ = compiled_pair(edition, scenario)
    env = PsychicPhaseEnv(rules=rules)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    _, info = env.reset(seed=0)
    illegal = np.flatnonzero(~info["action_mask"])
    if len(illegal):
        with pytest.raises(IllegalActionError, match="legal actions:"):
            env.step(int(illegal[0]))
    with pytest.raises(IllegalActionError):
        env.step(rules.num_actions)
    with pytest.raises(ValueError, match="engine must be"):
        PsychicPhaseEnv(rules=rules, engine="fast")


@needs_core
@pytest.mark.skipif(not CASES, reason="no compiled twin with an observation")
def test_events_of_a_step_are_kept_after_later_steps():
    edition, scenario = CASES[0]
    rules, _ = compiled_pair(edition, scenario)
    core, ref = _pair(rules, 1)
    kept = []
    a, b = core.reset(seed=1), ref.reset(seed=1)
    for _ in range(30):
        action = int(np.flatnonzero(a[-1]["action_mask"])[0])
        a, b = core.step(action), ref.step(action)
        assert isinstance(a[-1]["events"], ReplayedEvents)
        kept.append((a[-1]["events"], list(b[-1]["events"])))
        if a[2]:
            a, b = core.reset(), ref.reset()
    for lazy, listed in kept:  # read only now, after every later step
        assert lazy == listed and len(lazy) == len(listed) and list(lazy) == listed
        assert (lazy[0] if listed else None) == (listed[0] if listed else None)
    assert ReplayedEvents.__hash__ is None and kept[0][0] != "text"
    # SB3's DummyVecEnv deep-copies infos (the copy stays lazy); SubprocVecEnv and Ray pickle
    # them (a plain list crosses).
    a, b = core.reset(seed=2), ref.reset(seed=2)
    unread, listed = a[-1]["events"], list(b[-1]["events"])
    twin = copy.deepcopy(unread)
    assert twin._events is None and unread._events is None and twin == listed
    crossed = pickle.loads(pickle.dumps(unread))
    assert type(crossed) is list and crossed == listed and copy.copy(unread) == listed


@needs_core
@pytest.mark.skipif(not CASES, reason="no compiled twin with an observation")
def test_python_engine_variable_keeps_the_env_on_the_reference(monkeypatch):
    edition, scenario = CASES[0]
    from psygym.editions import load

    monkeypatch.setenv("PSYGYM_ENGINE", "python")
    assert PsychicPhaseEnv(rules=load(edition, scenario))._core is None
