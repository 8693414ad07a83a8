"""The envs' API at its edges, as a new bot trainer meets it.

Copies and pickles of a running env (on the core and on the reference), the action space's
copies, SB3's ``make_vec_env`` (it asks for ``render_mode="rgb_array"`` and falls back on a
``TypeError``), the opponent's ``restart()`` and its illegal moves, PettingZoo's ``state()``,
the types accepted for a seat and an action, the wrapper's penalty, and the events a refused
step leaves for ``render()``.
"""

from __future__ import annotations

import copy
import pickle
import warnings

import gymnasium as gym
import numpy as np
import pytest

import psygym  # noqa: F401  (registers the envs)
from psygym.core import IllegalActionError
from psygym.edition import editions
from psygym.engine import core_module
from psygym.envs import aec
from psygym.envs.psychic import LegalDiscrete, PsychicPhaseEnv, RenderModeError
from psygym.envs.wrappers import LegalActionWrapper

EDITIONS = list(editions())
ENV_IDS = [e.env_id for e in EDITIONS]
ENGINES = [None, "python"]


def _make(env_id: str, **kwargs) -> gym.Env:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Gymnasium's checker on stale samples and the like
        return gym.make(env_id, **kwargs)


def _first_legal(info: dict) -> int:
    return int(np.flatnonzero(info["action_mask"])[0])


def _run(env: gym.Env, info: dict, rng: np.random.Generator, steps: int) -> list[tuple]:
    """``steps`` random legal steps (resetting without a seed at each end), as comparable rows."""
    rows = []
    for _ in range(steps):
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        obs, reward, terminated, truncated, info = env.step(action)
        rows.append((action, obs.tobytes(), reward, terminated, info["action_mask"].tobytes(),
                     [(e.kind, e.text) for e in info["events"]], info["score"]))  # fmt: skip
        if terminated or truncated:
            obs, info = env.reset()
            rows.append((obs.tobytes(), info["action_mask"].tobytes()))
    return rows


# ----------------------------------------------------------------------------- 1, 2: copies
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_a_copy_goes_on_from_the_same_state_on_its_own(env_id, engine):
    env = _make(env_id, engine=engine)
    _, info = env.reset(seed=5)
    played = []
    for _ in range(3):
        played.append(_first_legal(info))
        _, _, terminated, _, info = env.step(played[-1])
        assert not terminated
    twins = [copy.deepcopy(env), pickle.loads(pickle.dumps(env))]
    # What the original would do from here: a fresh env replaying the same actions.
    fresh = _make(env_id, engine=engine)
    fresh.reset(seed=5)
    for action in played:
        _, _, _, _, fresh_info = fresh.step(action)
    expected = _run(fresh, fresh_info, np.random.default_rng(1), 60)
    for twin in twins:  # each runs to the end first: the original must not move
        assert type(twin.unwrapped.action_space) is LegalDiscrete
        assert twin.unwrapped.action_space._env is twin.unwrapped
        assert twin.unwrapped.engine == env.unwrapped.engine
        assert _run(twin, info, np.random.default_rng(1), 60) == expected
    assert _run(env, info, np.random.default_rng(1), 60) == expected
    if engine is None and core_module() is not None:
        assert twins[0].unwrapped._core is not None and env.unwrapped.engine == "core"


def test_the_action_space_copied_alone_stays_a_legal_discrete_without_the_env():
    env = _make(ENV_IDS[0], engine="python")
    env.reset(seed=0)
    space = env.unwrapped.action_space
    action = space.sample()
    for twin in (copy.deepcopy(space), pickle.loads(pickle.dumps(space))):
        assert type(twin) is LegalDiscrete and twin._env is None
        assert twin.last_sample == space.last_sample == (int(action), env.unwrapped.episode)
        assert twin == space == gym.spaces.Discrete(space.n)
        assert twin.contains(twin.sample())  # a plain draw: it has no env to ask
    assert space._env is env.unwrapped  # the original keeps its env


# ----------------------------------------------------------------------------- 3: SB3
def test_render_mode_refusal_is_a_value_and_a_type_error():
    for make in (lambda: _make(ENV_IDS[0], render_mode="rgb_array"),
                 lambda: aec.env(EDITIONS[0].id, render_mode="human")):  # fmt: skip
        with pytest.raises(RenderModeError, match=r"^render_mode must be 'ansi' or None, not "):
            make()
    assert issubclass(RenderModeError, ValueError) and issubclass(RenderModeError, TypeError)


def test_make_vec_env_and_maskable_ppo_learn():
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.env_util import make_vec_env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Gymnasium warns of "rgb_array" before psygym refuses it
        venv = make_vec_env(ENV_IDS[0], n_envs=2, seed=0)
    assert venv.reset().shape == (2, venv.observation_space.shape[0])
    assert venv.get_attr("render_mode") == [None, None]
    model = MaskablePPO("MlpPolicy", venv, n_steps=64, batch_size=64, n_epochs=1, seed=0)
    model.learn(256)
    assert model.num_timesteps >= 256


# ----------------------------------------------------------------------------- 4, 5: opponent
class _Counting:
    """An opponent that remembers games: counts ``restart()`` (and a stray ``reset()``)."""

    name = "counting"

    def __init__(self, uniform: bool = False):
        self.uniform = uniform
        self.restarts = self.resets = 0

    def restart(self) -> None:
        self.restarts += 1

    def reset(self) -> None:
        self.resets += 1

    def action_probabilities(self, rules, state, player):
        legal = rules.legal_actions(state)
        return {a: 1.0 / len(legal) for a in legal}


@pytest.mark.parametrize("uniform", [False, True])
def test_reset_restarts_the_opponent(uniform):
    opponent = _Counting(uniform)
    env = PsychicPhaseEnv(edition=EDITIONS[0].id, opponent=opponent)
    for seed in range(3):
        env.reset(seed=seed)
    assert (opponent.restarts, opponent.resets) == (3, 0)


class _Bad:
    """An opponent whose every move is wrong in one way."""

    def __init__(self, kind: str):
        self.kind = kind
        self.name = f"bad-{kind}"

    def action_probabilities(self, rules, state, player):
        legal = rules.legal_actions(state)
        if self.kind == "empty":
            return {}
        if self.kind == "out-of-range":
            return {rules.num_actions + 5: 1.0}
        illegal = [a for a in range(rules.num_actions) if a not in legal]
        return {(illegal[0] if illegal else -1): 1.0}


@pytest.mark.parametrize("kind", ["illegal", "out-of-range", "empty"])
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_an_opponent_move_that_is_not_legal_is_refused_naming_it(env_id, kind):
    env = _make(env_id, opponent=_Bad(kind), seat=1)
    with pytest.raises(IllegalActionError, match=f"opponent 'bad-{kind}'.*legal actions: "):
        for seed in range(3):
            _, info = env.reset(seed=seed)
            for _ in range(500):
                _, _, terminated, _, info = env.step(_first_legal(info))
                if terminated:
                    break


# ----------------------------------------------------------------------------- 6: state()
@pytest.mark.parametrize("engine", ENGINES)
def test_aec_state_is_the_global_state(engine):
    from pettingzoo.test.state_test import test_state_space

    e = aec.env(EDITIONS[0].id, engine=engine)
    e.reset(seed=0)
    raw = e.unwrapped
    s = e.state()
    assert s.dtype == np.float32 and e.state_space.contains(s)
    both = [e.observe(a)["observation"] for a in e.possible_agents]
    assert np.array_equal(s, np.concatenate(both))
    assert raw.game_state == raw.state and raw.rules.current_player(raw.game_state) >= 0
    test_state_space(e)
    for _ in range(20):  # PettingZoo's test_state steps unmasked samples: illegal here
        if not e.agents or e.terminations[e.agent_selection]:
            break
        e.step(int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[-1]))
        assert e.state_space.contains(e.state())
    e.reset(seed=0)
    other = aec.raw_env(EDITIONS[0].id, engine=engine)
    other.reset(seed=0)
    assert np.array_equal(other.global_state(), s)


def test_aec_copies_go_on_alike():
    e = aec.raw_env(EDITIONS[0].id)
    e.reset(seed=2)
    twin = pickle.loads(pickle.dumps(e))
    assert twin.engine == e.engine and twin.game_state == e.game_state
    for _ in range(20):
        if not e.agents or e.terminations[e.agent_selection]:
            break
        action = int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[0])
        e.step(action)
        twin.step(action)
        assert twin.game_state == e.game_state and twin.rewards == e.rewards


# ----------------------------------------------------------------------------- 7, 8: types
@pytest.mark.parametrize("seat", [1.0, 0.0, True, False, np.float64(1)])
def test_seat_must_be_the_int_0_or_1(seat):
    with pytest.raises(ValueError, match=r"^seat must be 0 or 1 \(an int\), not .*\)$"):
        PsychicPhaseEnv(edition=EDITIONS[0].id, seat=seat)
    env = PsychicPhaseEnv(edition=EDITIONS[0].id, seat=np.int64(1))
    assert type(env.seat) is int and env.seat == 1
    with pytest.raises(ValueError, match="seat must be"):
        env.seat = True


@pytest.mark.parametrize("engine", ENGINES)
def test_step_takes_integer_actions_only(engine):
    env = _make(ENV_IDS[0], engine=engine)
    _, info = env.reset(seed=0)
    a = _first_legal(info)
    wrapped = LegalActionWrapper(env)
    for bad in (a + 0.9, float(a), str(a), bool(a), np.float64(a), np.array(float(a)),
                np.array([a]), None):  # fmt: skip
        for stepper in (env, wrapped):
            with pytest.raises(TypeError, match=r"^an integer action is expected, not "):
                stepper.step(bad)
    outputs = []
    for good in (a, np.int64(a), np.int32(a), np.uint8(a), np.array(a)):
        env.reset(seed=0)
        obs, reward, *_ = env.step(good)
        outputs.append((obs.tobytes(), reward))
    assert all(out == outputs[0] for out in outputs)
    e = aec.env(EDITIONS[0].id, engine=engine)
    e.reset(seed=0)
    a = int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[0])
    for bad in (float(a), str(a), np.float32(a)):
        with pytest.raises(TypeError, match="an integer action is expected"):
            e.step(bad)
    e.step(np.int64(a))


# ----------------------------------------------------------------------------- 10: penalty
@pytest.mark.parametrize("penalty", [float("nan"), float("inf"), -float("inf")])
def test_the_penalty_must_be_a_finite_number(penalty):
    env = _make(ENV_IDS[0])
    with pytest.raises(ValueError, match="penalty must be a finite number >= 0"):
        LegalActionWrapper(env, penalty=penalty)
    assert LegalActionWrapper(env, penalty=np.float32(0.5)).penalty == 0.5


# ----------------------------------------------------------------------------- 11: render
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_a_refused_step_keeps_the_last_events(env_id, engine):
    env = _make(env_id, engine=engine, render_mode="ansi")
    _, info = env.reset(seed=0)
    for _ in range(300):
        _, _, terminated, _, info = env.step(_first_legal(info))
        if terminated:
            _, info = env.reset()
        elif len(info["events"]) and not info["action_mask"].all():
            break
    else:
        pytest.fail("no step with events before a decision with an illegal action")
    shown, events = env.render(), list(info["events"])
    assert "  * " in shown
    with pytest.raises(IllegalActionError):
        env.step(int(np.flatnonzero(~info["action_mask"])[0]))
    assert env.render() == shown and list(env.unwrapped._events) == events


@pytest.mark.parametrize("engine", ENGINES)
def test_a_refused_aec_step_keeps_the_events_and_the_pending_reward(engine):
    e = aec.raw_env(EDITIONS[0].id, render_mode="ansi", engine=engine)
    e.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(500):
        agent = e.agent_selection
        mask = e.observe(agent)["action_mask"]
        if e._cumulative_rewards[agent] and len(e._events) and not mask.all():
            break
        e.step(int(rng.choice(np.flatnonzero(mask))))
        if not e.agents or e.terminations[e.agent_selection]:
            e.reset()
    else:
        pytest.fail("no decision with a pending reward, events and an illegal action")
    shown, pending = e.render(), e.last()[1]
    with pytest.raises(IllegalActionError):
        e.step(int(np.flatnonzero(mask == 0)[0]))
    assert e.render() == shown and e.last()[1] == pending != 0


@pytest.mark.parametrize(
    "env_id,opponent",
    [("psygym/Seventh-v0", "double-wc"), ("psygym/Seventh-v0", "deny-big"),
     ("psygym/Seventh-v0", "all-in"), ("psygym/Eighth-v0", "deny-high-roll")],
)  # fmt: skip
def test_an_env_pickles_with_a_heuristic_built_from_parameters(env_id, opponent):
    # Their dice and deny rules were closures: "Can't pickle local object 'commit.<locals>.rule'".
    env = gym.make(env_id, opponent=opponent)
    env.reset(seed=3)
    twin = pickle.loads(pickle.dumps(env))
    for _ in range(6):
        legal = np.flatnonzero(env.unwrapped.action_masks())
        if not len(legal):
            break
        a = int(legal[-1])
        mine, theirs = env.step(a), twin.step(a)
        assert np.array_equal(mine[0], theirs[0]) and mine[1:4] == theirs[1:4]
        if mine[2] or mine[3]:
            break
