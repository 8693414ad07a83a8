"""The env's generic fast paths behave exactly as the slow ones they stand in for.

- ``uniform_choice`` draws what ``weighted_choice`` draws with ``n`` equal weights ``1.0 / n``:
  the same item from the same one random number (none for one item).
- ``sample_action`` with a policy that declares ``uniform = True`` draws the same actions as the
  same policy without the declaration (which builds its probability dictionary), leaving the
  random generator in the same state.
- ``RulesBase.decision_walk`` is what ``apply_with_chance(check=False)`` runs: the same state,
  events and draws; it falls back to the generic walk while a hook is replaced on the instance.
- An env whose random opponent declares ``uniform`` plays the same episodes (observations,
  rewards, masks, events) as one whose opponent does not; its masks stay read-only with their
  own memory at every step (Gymnasium's checker warns otherwise), and an illegal action still
  raises ``IllegalActionError``.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.passive_env_checker import data_shares_objects
from psygym_agents.base import RandomPolicy

import psygym  # noqa: F401 - registers the envs
from psygym.core import CHANCE, TERMINAL, IllegalActionError, sample_action
from psygym.edition import editions
from psygym.editions import load
from psygym.envs.psychic import PsychicPhaseEnv
from psygym.kernel import uniform_choice, weighted_choice

EDITIONS = [e.id for e in editions()]


class FlaggedRandom(RandomPolicy):
    """The random policy, declaring that its distribution is uniform over the legal actions."""

    uniform = True


class PlainRandom(RandomPolicy):
    """The random policy without the declaration: it goes through the probability dictionary."""

    uniform = False


def _events(events):
    return [(e.kind, e.text, e.player, e.data) for e in events]


@pytest.mark.parametrize("n", [1, 2, 3, 5, 6, 7, 10, 13, 40])
def test_uniform_choice_draws_what_weighted_choice_draws(n):
    items = list(range(100, 100 + n))
    fast, slow = np.random.default_rng(n), np.random.default_rng(n)
    for _ in range(2000):
        assert uniform_choice(items, fast) == weighted_choice(items, [1.0 / n] * n, slow)
    assert fast.random() == slow.random()  # the same numbers were drawn, in the same order


@pytest.mark.parametrize("edition", EDITIONS)
def test_a_uniform_policy_samples_the_same_actions_and_draws(edition):
    rules = load(edition)
    play = np.random.default_rng(3)
    flagged, plain = FlaggedRandom(), PlainRandom()
    decisions = 0
    for _ in range(6):
        s = rules.initial_state()
        while (p := rules.current_player(s)) != TERMINAL:
            if p == CHANCE:
                s = rules.apply(s, rules.sample_chance(s, play))
                continue
            seed = int(play.integers(2**32))
            fast, slow = np.random.default_rng(seed), np.random.default_rng(seed)
            a = sample_action(flagged, rules, s, p, fast)
            assert a == sample_action(plain, rules, s, p, slow)
            assert type(a) is int and fast.random() == slow.random()
            s = rules.apply(s, a)
            decisions += 1
    assert decisions > 20


@pytest.mark.parametrize("edition", EDITIONS)
def test_decision_walk_is_apply_with_chance(edition):
    rules = load(edition)
    play = np.random.default_rng(5)
    for _ in range(4):
        s = rules.initial_state()
        while (p := rules.current_player(s)) != TERMINAL:
            if p == CHANCE:
                s = rules.sample_chance_run(s, play, [])
                continue
            legal = rules.legal_actions(s)
            a = legal[int(play.integers(len(legal)))]
            seed = int(play.integers(2**32))
            fast, slow = np.random.default_rng(seed), np.random.default_rng(seed)
            fast_events, slow_events = [], []
            walked = rules.decision_walk()(s, a, fast, fast_events)
            applied = rules.apply_with_chance(s, a, slow, slow_events, check=False)
            assert walked == applied and repr(walked) == repr(applied)
            assert _events(fast_events) == _events(slow_events)
            assert fast.random() == slow.random()
            s = walked


def test_decision_walk_takes_apply_with_chance_while_a_hook_is_replaced():
    rules = next(load(e.id) for e in editions() if load(e.id).fast_walk_hooks)
    fast = rules.decision_walk()
    assert fast == rules._decide_and_walk
    rules.sample_chance = rules.sample_chance  # replaced on the instance, as tests do
    assert rules.decision_walk() == rules._unchecked_apply_with_chance
    del rules.sample_chance
    assert rules.decision_walk() == fast


@pytest.mark.parametrize("edition", EDITIONS)
def test_an_env_step_goes_through_a_replaced_apply_with_chance(edition):
    """A spy set on the rules' ``apply_with_chance`` sees every decision of an env step."""
    env = gym.make(next(e.env_id for e in editions() if e.id == edition), opponent="random")
    rules = env.unwrapped.rules
    seen, plain = [], rules.apply_with_chance

    def spy(state, action, rng, events, *, check=True):
        seen.append(action)
        return plain(state, action, rng, events, check=check)

    rules.apply_with_chance = spy
    _, info = env.reset(seed=1)
    seen.clear()
    action = int(np.flatnonzero(info["action_mask"])[0])
    env.step(action)
    assert seen and seen[0] == action


def _episode_trace(env, seed, steps):
    """Observations, rewards, flags, masks and events of ``steps`` random legal steps."""
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    trace = [(obs.tobytes(), info["action_mask"].tobytes(), _events(info["events"]))]
    for _ in range(steps):
        legal = np.flatnonzero(info["action_mask"])
        obs, reward, terminated, truncated, info = env.step(int(legal[rng.integers(len(legal))]))
        trace.append(
            (obs.tobytes(), reward, terminated, truncated, info["action_mask"].tobytes(),
             _events(info["events"]), info["score"])
        )  # fmt: skip
        if terminated:
            obs, info = env.reset()
            trace.append((obs.tobytes(), info["action_mask"].tobytes(), _events(info["events"])))
    return trace


@pytest.mark.parametrize("edition", EDITIONS)
def test_an_env_with_a_uniform_opponent_plays_the_same_games(edition):
    env_id = next(e.env_id for e in editions() if e.id == edition)
    for seat in (0, 1):
        flagged = gym.make(env_id, opponent=FlaggedRandom(), seat=seat)
        plain = gym.make(env_id, opponent=PlainRandom(), seat=seat)
        assert _episode_trace(flagged, 7 + seat, 300) == _episode_trace(plain, 7 + seat, 300)


@pytest.mark.parametrize("edition", EDITIONS)
def test_masks_are_read_only_and_new_at_every_step(edition):
    env = PsychicPhaseEnv(edition, opponent="random")
    rng = np.random.default_rng(2)
    _, info = env.reset(seed=2)
    previous = info
    for _ in range(200):
        mask = info["action_mask"]
        assert not mask.flags.writeable and mask is env.action_masks()
        legal = np.flatnonzero(mask)
        _, _, terminated, _, info = env.step(int(legal[rng.integers(len(legal))]))
        assert not data_shares_objects(previous, info)
        previous = info
        if terminated:
            _, info = env.reset()
            assert not data_shares_objects(previous, info)
            previous = info


@pytest.mark.parametrize("edition", EDITIONS)
def test_an_illegal_action_still_raises_naming_the_legal_ones(edition):
    env = gym.make(next(e.env_id for e in editions() if e.id == edition), opponent="random")
    _, info = env.reset(seed=0)
    illegal = np.flatnonzero(~info["action_mask"])
    if len(illegal):
        with pytest.raises(IllegalActionError, match="legal actions:"):
            env.step(int(illegal[0]))
    with pytest.raises(IllegalActionError):
        env.step(env.action_space.n)  # outside the action space
