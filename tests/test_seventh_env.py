"""The generic Gymnasium env on 7th edition (and on every other edition that is ready).

Covers: gymnasium's env checker, same seed -> same trajectory, masks (``action_masks()`` ==
``info["action_mask"]`` == ``rules.legal_mask``), rewards summing to the final score (7E-8.2),
opponents by name and by Policy object, seat 1, illegal actions through ``step``.
"""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils import env_checker, passive_env_checker
from helpers import ready_env_ids
from psygym_agents.seventh.heuristics import HEURISTICS

import psygym
from psygym.core import IllegalActionError
from psygym.editions.seventh.state import Stage
from psygym.envs.psychic import PsychicPhaseEnv
from psygym.policies import UnknownAgentError

SEVENTH = "psygym/Seventh-v0"
SCENARIOS = ["single-phase", "duel"]
READY = ready_env_ids()


def make(env_id: str = SEVENTH, **kwargs) -> PsychicPhaseEnv:
    return gym.make(env_id, **kwargs).unwrapped


def legal_choice(env, rng: np.random.Generator) -> int:
    legal = np.flatnonzero(env.action_masks())
    return int(legal[rng.integers(len(legal))])


def play_episode(env, seed: int, rng: np.random.Generator, check_masks: bool = False):
    """One episode with random legal actions; returns (trace, rewards, last info)."""
    obs, info = env.reset(seed=seed)
    assert obs in env.observation_space
    trace = [(obs.tolist(), None, [e.text for e in info["events"]])]
    rewards = []
    done = False
    while not done:
        if check_masks:
            assert_masks_agree(env, info)
        obs, reward, terminated, truncated, info = env.step(legal_choice(env, rng))
        assert not truncated and obs in env.observation_space
        done = terminated
        rewards.append(reward)
        trace.append((obs.tolist(), reward, [e.text for e in info["events"]]))
    return trace, rewards, info


def assert_masks_agree(env, info) -> None:
    mask = env.action_masks()
    assert mask.dtype == bool and mask.shape == (env.action_space.n,)
    assert np.array_equal(mask, info["action_mask"])
    assert np.array_equal(mask, env.rules.legal_mask(env.state))
    assert np.flatnonzero(mask).tolist() == env.rules.legal_actions(env.state)
    assert env.rules.current_player(env.state) == env.seat


# ----------------------------------------------------------------------------- registration
def test_seventh_env_is_registered():
    assert psygym.env_ids()["7th"] == SEVENTH
    assert SEVENTH in gym.registry and SEVENTH in READY
    env = make(scenario="duel")
    assert isinstance(env, PsychicPhaseEnv) and env.rules.edition == "7th"
    assert env.rules.scenario.name == "duel"
    assert make().rules.scenario.name == "duel"  # the edition's default scenario


# ----------------------------------------------------------------------------- env checker
@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize("seat", [0, 1])
def test_gymnasium_check_env(scenario, seat):
    """gymnasium's own checker on the unwrapped env, with no warning left unexplained."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env_checker.check_env(make(scenario=scenario, seat=seat))
    assert [str(w.message) for w in caught] == []


@pytest.mark.parametrize("env_id", [i for i in READY if i != SEVENTH])
def test_gymnasium_check_env_on_every_other_ready_env(env_id):
    """The generic env over the other editions' default scenarios, both seats."""
    for seat in (0, 1):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            env_checker.check_env(make(env_id, seat=seat))
        assert [str(w.message) for w in caught] == []


def test_unmasked_action_space_samples_are_legal():
    """``action_space.sample()`` draws legal actions (so random agents and check_env work),
    while an illegal action chosen by the caller still raises."""
    env = make(scenario="duel")
    env.reset(seed=0)
    for _ in range(200):
        a = int(env.action_space.sample())
        assert env.action_masks()[a]
        _, _, done, _, _ = env.step(a)
        if done:
            env.reset()
    env.reset(seed=0)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    with pytest.raises(IllegalActionError):
        env.step(illegal)


def test_a_sample_drawn_before_reset_steps_deterministically():
    """What check_step_determinism does: seed the space, sample, reset(seed), step, twice."""
    env = make(scenario="single-phase")
    env.reset(seed=9)
    env.step(int(env.action_space.sample()))  # leave the first decision
    results = []
    for _ in range(2):
        env.action_space.seed(123)
        a = env.action_space.sample()
        env.reset(seed=123)
        obs, reward, *_ = env.step(a)
        results.append((obs.tolist(), reward))
    assert results[0] == results[1]


@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize("seat", [0, 1])
def test_gymnasium_checkers_with_legal_actions(scenario, seat):
    """Every part of check_env that does not need an illegal action to be accepted."""
    env = make(scenario=scenario, seat=seat, render_mode="ansi")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", message=".*Box observation space m")
        env_checker.check_action_space(env.action_space)
        env_checker.check_observation_space(env.observation_space)
        env_checker.check_seed_deprecation(env)
        env_checker.check_reset_return_info_deprecation(env)
        env_checker.check_reset_return_type(env)
        env_checker.check_reset_seed_determinism(env)
        env_checker.check_reset_options(env)
        passive_env_checker.env_reset_passive_checker(env)
        rng = np.random.default_rng(0)
        obs, reward, terminated, truncated, info = passive_env_checker.env_step_passive_checker(
            env, legal_choice(env, rng)
        )
        assert obs in env.observation_space
        passive_env_checker.env_render_passive_checker(env)
    # the step-determinism check, with a legal action
    env.reset(seed=123)
    action = legal_choice(env, np.random.default_rng(123))
    first = env.step(action)
    env.reset(seed=123)
    again = env.step(action)
    assert np.array_equal(first[0], again[0]) and first[1:4] == again[1:4]
    assert [e.text for e in first[4]["events"]] == [e.text for e in again[4]["events"]]


# ----------------------------------------------------------------------------- determinism
def env_cases() -> list[tuple[str, dict]]:
    cases = [(SEVENTH, {"scenario": s}) for s in SCENARIOS]
    cases += [(i, {}) for i in READY if i != SEVENTH]
    return cases


@pytest.mark.parametrize(
    "env_id,kwargs",
    env_cases(),
    ids=[f"{i}-{k.get('scenario', 'default')}" for i, k in env_cases()],
)
def test_same_seed_same_trajectory(env_id, kwargs):
    """Two envs, same seed, same random legal actions -> same observations, rewards, events."""
    a, b = make(env_id, **kwargs), make(env_id, **kwargs)
    for seed in range(4):
        ta, _, _ = play_episode(a, seed, np.random.default_rng(seed))
        tb, _, _ = play_episode(b, seed, np.random.default_rng(seed))
        assert ta == tb
    # and a different seed gives a different game somewhere
    traces = {str(play_episode(a, s, np.random.default_rng(0))[0]) for s in range(4)}
    assert len(traces) > 1


@pytest.mark.parametrize(
    "env_id,kwargs",
    env_cases(),
    ids=[f"{i}-{k.get('scenario', 'default')}" for i, k in env_cases()],
)
def test_masks_agree_at_every_step(env_id, kwargs):
    env = make(env_id, **kwargs)
    rng = np.random.default_rng(1)
    for seed in range(5):
        _, _, info = play_episode(env, seed, rng, check_masks=True)
        assert env.rules.is_terminal(env.state)
        assert env.action_masks().all() and info["action_mask"].all()  # all true once over


# ----------------------------------------------------------------------------- rewards
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_rewards_sum_to_the_final_score_seat_0(scenario):
    """7E-8.2: the episode return is the agent's zero-sum score."""
    env = make(scenario=scenario, opponent="double-wc")
    rng = np.random.default_rng(2)
    nonzero = 0
    for seed in range(30 if scenario == "single-phase" else 6):
        _, rewards, info = play_episode(env, seed, rng)
        final = env.rules.returns(env.state)[0]
        assert sum(rewards) == pytest.approx(final)
        assert info["score"] == pytest.approx(final)
        nonzero += final != 0
    assert nonzero > 0


def test_rewards_sum_to_the_final_score_seat_1():
    env = make(scenario="single-phase", opponent="all-in", seat=1)
    rng = np.random.default_rng(3)
    for seed in range(60):
        _, rewards, _ = play_episode(env, seed, rng)
        assert sum(rewards) == pytest.approx(env.rules.returns(env.state)[1]), f"seed {seed}"


def test_reward_is_the_change_in_score():
    env = make(scenario="single-phase")
    env.reset(seed=5)
    rng = np.random.default_rng(5)
    before = env.rules.returns(env.state)[0]
    done = False
    while not done:
        _, reward, done, _, info = env.step(legal_choice(env, rng))
        after = env.rules.returns(env.state)[0]
        assert reward == pytest.approx(after - before) and info["score"] == after
        before = after


# ----------------------------------------------------------------------------- opponents, seats
def deny_attempts_by_opponent(env, episodes: int) -> int:
    rng = np.random.default_rng(4)
    count = 0
    for seed in range(episodes):
        env.reset(seed=seed)
        done = False
        while not done:
            _, _, done, _, info = env.step(legal_choice(env, rng))
            count += sum(1 for e in info["events"] if e.kind == "deny_attempt" and e.player == 1)
    return count


def test_opponent_by_name():
    env = make(scenario="single-phase", opponent="deny-always")
    assert env.opponent.name == "deny-always"
    assert deny_attempts_by_opponent(env, 20) > 0


def test_opponent_by_policy_object():
    rules = psygym.load("7th", "single-phase")
    never = HEURISTICS["deny-never"](rules)
    env = make(rules=rules, opponent=never)
    assert env.opponent is never and env.rules is rules
    assert deny_attempts_by_opponent(env, 20) == 0


def test_combined_opponent_spec():
    env = make(scenario="single-phase", opponent="double-wc+deny-never")
    assert env.opponent.name == "double-wc+deny-never"
    assert deny_attempts_by_opponent(env, 20) == 0


def test_bad_opponent_name_lists_known_agents():
    with pytest.raises(UnknownAgentError) as err:
        make(scenario="single-phase", opponent="no-such-agent")
    msg = str(err.value)
    assert "no-such-agent" in msg and "known agents:" in msg
    for name in ("random", "double-wc", "deny-never"):
        assert name in msg


def test_seat_one_plays_the_denier():
    env = make(scenario="single-phase", opponent="double-wc", seat=1)
    rng = np.random.default_rng(6)
    decisions = 0
    for seed in range(10):
        obs, info = env.reset(seed=seed)
        done = False
        while not done:
            assert env.rules.current_player(env.state) == 1
            assert env.state.stage == Stage.DENY and env.rules.is_response(env.state)
            assert obs[4] == 1 and obs[7] == 0  # a deny decision, not its own phase
            assert np.array_equal(obs, env.rules.observe(env.state, 1))
            obs, _, done, _, info = env.step(legal_choice(env, rng))
            decisions += 1
    assert decisions >= 10


def test_seat_one_in_the_duel_gets_both_roles():
    env = make(scenario="duel", seat=1)
    rng = np.random.default_rng(7)
    stages = set()
    env.reset(seed=0)
    done = False
    while not done:
        stages.add(env.state.stage)
        _, _, done, _, _ = env.step(legal_choice(env, rng))
    assert {Stage.SELECT, Stage.DICE, Stage.DENY} <= stages


def test_bad_seat_and_render_mode():
    with pytest.raises(ValueError, match="seat must be 0 or 1"):
        make(seat=2)
    with pytest.raises(ValueError, match="render_mode"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # gym.make warns about the mode first
        make(render_mode="human")


# ----------------------------------------------------------------------------- errors, render
def test_illegal_action_through_step_lists_legal_actions():
    env = make(scenario="single-phase")
    env.reset(seed=0)
    legal = env.rules.legal_actions(env.state)
    illegal = next(a for a in range(env.action_space.n) if a not in legal)
    with pytest.raises(IllegalActionError) as err:
        env.step(illegal)
    msg = str(err.value)
    assert f"action {illegal} is not legal" in msg
    assert "0 (End the Psychic phase)" in msg and "(Librarian: Smite (WC 1) at Sorcerer)" in msg
    assert err.value.legal == legal
    env.step(legal[0])  # the env is still usable


def test_step_before_reset():
    with pytest.raises(RuntimeError, match="reset"):
        make().step(0)


def test_render_ansi_and_none():
    env = make(scenario="single-phase", render_mode="ansi")
    env.reset(seed=0)
    text = env.render()
    assert "Librarian" in text and "Sorcerer" in text and "Dice" in text
    quiet = make(scenario="single-phase")
    quiet.reset(seed=0)
    assert quiet.render() is None


def test_info_events_are_events_of_the_last_step():
    env = make(scenario="single-phase")
    _, info = env.reset(seed=1)
    assert [e.kind for e in info["events"]][0] == "pools"  # the warp charge roll
    _, _, _, _, info = env.step(env.rules.legal_actions(env.state)[1])  # choose a cast
    assert info["events"] == [] and env.state.stage == Stage.DICE
    _, _, _, _, info = env.step(env.rules.DICE + 1)  # two dice
    assert [e.kind for e in info["events"]][0] == "attempt"
    assert info["events"][0].get("dice") == 2
