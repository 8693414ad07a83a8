"""The batched env against the reference env, step by step, and the core's observations and draws.

For every compiled edition with a compiled observation and every shipped scenario, a
:class:`~psygym.engine.vector.CompiledVectorEnv` of four games and four reference
:class:`~psygym.envs.psychic.PsychicPhaseEnv` (``opponent="random"``, the same seats) whose
``np_random`` are the batch's spawned streams take the same learner actions for several hundred
steps across many episodes: observations (bit for bit), rewards, terminations, masks and the
last observation of every ended game must be equal (the EnvPool "align" test). The other tests
check the differential harness's observation and draw checks, the binding's validation, and
garbage actions (hypothesis: Python exceptions, never a crash; ``.ci/run``'s sanitizer build
runs this file too).
"""

from __future__ import annotations

import numpy as np
import pytest
from engine_cases import compiled_pair, needs_core, scenario_cases
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from psygym.engine.differential import EngineMismatch, check_games
from psygym.engine.vector import CompiledVectorEnv, sampler_generator, spawn_generators
from psygym.envs.psychic import PsychicPhaseEnv
from psygym.kernel import uniform_choice

N = 4
SEATS = [0, 1, 1, 0]
STEPS = 400


def _observed_cases() -> list[tuple[str, str]]:
    """The shipped scenarios whose compiled twin has an observation."""
    return [(e, s) for e, s in scenario_cases() if compiled_pair(e, s)[1].game.observation_size]


CASES = _observed_cases()


def _references(rules, seed: int) -> list[PsychicPhaseEnv]:
    envs = []
    for seat, generator in zip(SEATS, spawn_generators(seed, N), strict=True):
        env = PsychicPhaseEnv(rules=rules, opponent="random", seat=seat, engine="python")
        env.np_random = generator  # reset() without a seed keeps it
        envs.append(env)
    return envs


def _same_obs(ref: np.ndarray, got: np.ndarray) -> bool:
    return ref.dtype == got.dtype == np.float32 and ref.tobytes() == got.tobytes()


@needs_core
@pytest.mark.parametrize(("edition", "scenario"), CASES)
def test_batch_steps_as_the_reference_envs(edition, scenario):
    rules, _ = compiled_pair(edition, scenario)
    batch = CompiledVectorEnv(N, rules=rules, seat=SEATS)
    refs = _references(rules, seed=35)
    obs, info = batch.reset(seed=35)
    assert obs.shape == (N, rules.observation_size) and obs.dtype == np.float32
    for i, env in enumerate(refs):
        ref_obs, ref_info = env.reset()
        assert _same_obs(ref_obs, obs[i])
        assert np.array_equal(ref_info["action_mask"], info["action_mask"][i])
    picks = np.random.default_rng(0)
    episodes, total = np.zeros(N, dtype=int), np.zeros(N)
    for t in range(STEPS):
        actions = np.array([picks.choice(np.flatnonzero(m)) for m in info["action_mask"]])
        obs, rewards, terminated, truncated, info = batch.step(actions)
        assert rewards.dtype == np.float64 and not truncated.any()
        for i, env in enumerate(refs):
            ref_obs, reward, done, cut, ref_info = env.step(int(actions[i]))
            where = f"step {t}, game {i}"
            assert (reward, done, cut) == (rewards[i], terminated[i], truncated[i]), where
            total[i] += reward
            if done:
                assert info["_final_obs"][i] and _same_obs(ref_obs, info["final_obs"][i]), where
                assert total[i] == rules.returns(env.state)[SEATS[i]], where
                episodes[i] += 1
                total[i] = 0.0
                ref_obs, ref_info = env.reset()
            elif "_final_obs" in info:
                assert not info["_final_obs"][i] and info["final_obs"][i] is None
            assert _same_obs(ref_obs, obs[i]), where
            assert np.array_equal(ref_info["action_mask"], info["action_mask"][i]), where
        assert np.array_equal(batch.action_masks(), info["action_mask"])
    assert episodes.min() >= 3, f"episodes per game: {episodes}"


@needs_core
@pytest.mark.parametrize(("edition", "scenario"), CASES)
def test_sample_legal_is_the_reference_uniform_choice(edition, scenario):
    """sample_legal draws kernel.uniform_choice over each game's legal actions, games in order,
    from the sampler generator reset(seed=) seeds; the games' own streams stay as they were."""
    rules, _ = compiled_pair(edition, scenario)
    batch = CompiledVectorEnv(N, rules=rules, seat=SEATS)
    with pytest.raises(ValueError, match="reset"):
        batch.sample_legal()
    plain = CompiledVectorEnv(N, rules=rules, seat=SEATS)
    _, info = batch.reset(seed=12)
    _, plain_info = plain.reset(seed=12)
    sampler = sampler_generator(12, N)
    for _ in range(60):
        legal = [np.flatnonzero(m).tolist() for m in info["action_mask"]]
        actions = batch.sample_legal()
        assert actions.dtype == np.int64 and actions.shape == (N,)
        assert actions.tolist() == [uniform_choice(a, sampler) for a in legal]
        obs, rewards, _, _, info = batch.step(actions)
        plain_obs, plain_rewards, _, _, plain_info = plain.step(actions)
        assert np.array_equal(obs, plain_obs) and np.array_equal(rewards, plain_rewards)


@needs_core
@pytest.mark.parametrize(("edition", "scenario"), CASES[:1])
def test_a_seed_replays_and_spaces_are_batched(edition, scenario):
    rules, _ = compiled_pair(edition, scenario)
    batch = CompiledVectorEnv(N, rules=rules, seat=1)
    assert batch.observation_space.shape == (N, rules.observation_size)
    assert batch.action_space.shape == (N,) and batch.metadata["autoreset_mode"].name == "SAME_STEP"
    runs = []
    for _ in range(2):
        obs, info = batch.reset(seed=9)
        trace = [obs]
        for _ in range(50):
            actions = info["action_mask"].argmax(axis=1)
            obs, rewards, terminated, _, info = batch.step(actions)
            trace += [obs, rewards, terminated]
        runs.append(trace)
    assert all(np.array_equal(a, b) for a, b in zip(*runs, strict=True))
    assert batch.observation_space.contains(runs[0][0])


@needs_core
@pytest.mark.parametrize(("edition", "scenario"), CASES[:1])
def test_bad_actions_are_one_clear_line(edition, scenario):
    rules, _ = compiled_pair(edition, scenario)
    batch = CompiledVectorEnv(N, rules=rules)
    with pytest.raises(ValueError, match="call reset"):
        batch.step(np.zeros(N, dtype=np.int64))
    _, info = batch.reset(seed=1)
    good = info["action_mask"].argmax(axis=1)
    with pytest.raises(ValueError, match=rf"shape \({N},\), not of shape \({N - 1},\)"):
        batch.step(good[:-1])
    with pytest.raises(ValueError, match="not of dtype float64"):
        batch.step(good.astype(np.float64))
    bad = good.copy()
    bad[2] = np.flatnonzero(~info["action_mask"][2])[0]
    with pytest.raises(ValueError, match=rf"^game 2: action {bad[2]} is not legal \(legal: "):
        batch.step(bad)
    obs, *_ = batch.step(list(good))  # a refused step changed nothing; lists are accepted
    assert obs.shape == (N, rules.observation_size)


def test_arguments_and_missing_twins_are_one_clear_line(monkeypatch):
    from psygym.edition import default

    with pytest.raises(ValueError, match="num_envs must be a whole number of at least 1"):
        CompiledVectorEnv(0)
    with pytest.raises(ValueError, match="plays random only"):
        CompiledVectorEnv(2, opponent="optimal")
    with pytest.raises(ValueError, match="seat must be 0 or 1, or 2 of them"):
        CompiledVectorEnv(2, seat=[0, 1, 1])
    monkeypatch.setenv("PSYGYM_ENGINE", "python")
    with pytest.raises(ValueError, match="has no compiled twin here .*SyncVectorEnv"):
        CompiledVectorEnv(2, edition=default().id)


@needs_core
@pytest.mark.parametrize(("edition", "scenario"), CASES[:1])
def test_garbage_actions_never_crash(edition, scenario):
    rules, compiled = compiled_pair(edition, scenario)
    batch = CompiledVectorEnv(N, rules=rules)
    batch.reset(seed=2)
    dtypes = st.sampled_from([np.int8, np.int32, np.int64, np.uint16, np.uint64, np.float32,
                              np.bool_, object])  # fmt: skip

    @settings(max_examples=150, derandomize=True, deadline=None,
              suppress_health_check=[HealthCheck.too_slow])  # fmt: skip
    @given(st.lists(st.integers(-(2**63), 2**64 - 1), max_size=2 * N), dtypes)
    def run(values, dtype):
        try:
            actions = np.array(values, dtype=dtype)
        except OverflowError:
            return
        masks = batch.action_masks()
        legal = (
            actions.shape == (N,)
            and actions.dtype.kind in "iu"
            and all(
                0 <= int(a) < masks.shape[1] and masks[i, int(a)] for i, a in enumerate(actions)
            )
        )
        if legal:
            batch.step(actions)
        else:
            with pytest.raises(ValueError):
                batch.step(actions)

    run()
    with pytest.raises(ValueError, match="player must be 0 or 1"):
        compiled.game.observe(compiled.game.initial_state(), 2)


@needs_core
@pytest.mark.parametrize(("edition", "scenario"), CASES[:1])
def test_differential_compares_observations_and_draws(edition, scenario):
    rules, compiled = compiled_pair(edition, scenario)
    count = check_games(rules, compiled, 20, seed=1)
    assert count.observations == 2 * count.nodes > 0

    class Twisted:
        """The twin with one observation entry changed (the check must see it)."""

        def __init__(self, game):
            self._game = game

        def __getattr__(self, name):
            return getattr(self._game, name)

        def observe(self, state, player):
            out = self._game.observe(state, player)
            out[-1] = np.nextafter(out[-1], np.float32(2))
            return out

    class Redrawn(Twisted):
        """The twin drawing one number more after every chance draw (the same outcome)."""

        def observe(self, state, player):
            return self._game.observe(state, player)

        def sample_chance(self, state, rng):
            outcome = self._game.sample_chance(state, rng)
            rng.random()
            return outcome

    for twin, what in ((Twisted, "observations differ"), (Redrawn, "generator state after")):
        changed = type(compiled)(twin(compiled.game), compiled.codec, compiled.core)
        with pytest.raises(EngineMismatch, match=what):
            check_games(rules, changed, 5, seed=1)
