"""The batched env as an SB3 VecEnv, and ``psygym train`` on it.

:class:`~psygym_agents.sb3_batched.BatchedVecEnv` must step as a ``DummyVecEnv`` of monitored
reference envs whose generators are the batch's spawned streams (observations bit for bit,
rewards, dones, terminal observations, episode statistics, masks), pass SB3's own VecEnv checks
(spaces, ``VecCheckNan``), train MaskablePPO reproducibly, and save models that play through the
normal agent path. ``psygym train`` picks it by default where it plays the run, records which
envs ran in ``config.yml``, resumes on it, and refuses it in one line elsewhere.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import yaml
from engine_cases import compiled_pair, needs_core, scenario_cases
from psygym_agents.sb3_batched import BatchedVecEnv, batched_refusal
from psygym_experiments.cli import app
from psygym_experiments.harness.train_config import (
    config_from_file,
    make_config,
    reference_opponent,
)
from psygym_experiments.harness.training_files import read_metrics, write_config
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env import DummyVecEnv, VecCheckNan
from typer.testing import CliRunner

from psygym.core import CHANCE, TERMINAL
from psygym.engine.vector import spawn_generators
from psygym.envs.psychic import PsychicPhaseEnv
from psygym.policies import resolve_policy

runner = CliRunner()
N = 4
SEATS = [0, 1, 1, 0]
CASES = [(e, s) for e, s in scenario_cases() if compiled_pair(e, s)[1].game.observation_size]
"""Shipped scenarios whose compiled twin has an observation (the batched env plays them)."""
FIRST = CASES[:1]


class _NoEvents(gym.Wrapper):
    """The reference env without ``info["events"]`` (the batch has none; DummyVecEnv copies
    every info deeply)."""

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        info.pop("events", None)
        return obs, info

    def step(self, action):
        *out, info = self.env.step(action)
        info.pop("events", None)
        return (*out, info)


def _references(rules, seed: int) -> DummyVecEnv:
    """A DummyVecEnv of monitored reference envs drawing from the batch's streams for ``seed``."""
    envs = []
    for seat, generator in zip(SEATS, spawn_generators(seed, N), strict=True):
        env = PsychicPhaseEnv(rules=rules, opponent="random", seat=seat)
        env.np_random = generator  # reset() without a seed keeps it
        envs.append(Monitor(_NoEvents(env)))
    return DummyVecEnv([lambda e=e: e for e in envs])


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@needs_core
@pytest.mark.parametrize(("edition", "scenario"), CASES)
def test_steps_as_a_dummy_vec_env_of_reference_envs(edition, scenario):
    rules, _ = compiled_pair(edition, scenario)
    batched = BatchedVecEnv.build(N, rules, SEATS)
    reference = _references(rules, seed=35)
    batched.seed(35)
    assert _same(batched.reset(), reference.reset())
    picks = np.random.default_rng(0)
    episodes = 0
    for t in range(300):
        masks = np.stack(batched.env_method("action_masks"))
        assert _same(masks, np.stack(reference.env_method("action_masks"))), t
        assert _same(masks, batched.action_masks())
        actions = np.array([picks.choice(np.flatnonzero(m)) for m in masks])
        obs, rewards, dones, infos = batched.step(actions)
        ref_obs, ref_rewards, ref_dones, ref_infos = reference.step(actions)
        assert _same(obs, ref_obs) and _same(rewards, ref_rewards), t
        assert _same(dones, ref_dones) and len(infos) == N, t
        for i, (info, ref) in enumerate(zip(infos, ref_infos, strict=True)):
            assert info["TimeLimit.truncated"] is ref["TimeLimit.truncated"] is False
            assert ("terminal_observation" in info) == ("terminal_observation" in ref) == dones[i]
            if dones[i]:
                assert _same(info["terminal_observation"], ref["terminal_observation"])
                assert info["episode"]["r"] == ref["episode"]["r"]
                assert info["episode"]["l"] == ref["episode"]["l"]
                episodes += 1
    assert episodes >= 3 * N


@needs_core
@pytest.mark.parametrize(("edition", "scenario"), FIRST)
def test_sb3_vec_env_checks_and_per_game_access(edition, scenario):
    from sb3_contrib.common.maskable.utils import is_masking_supported
    from stable_baselines3.common.utils import check_for_correct_spaces

    rules, _ = compiled_pair(edition, scenario)
    single = PsychicPhaseEnv(rules=rules, seat=0)
    venv = BatchedVecEnv.build(N, rules, SEATS)
    check_for_correct_spaces(venv, single.observation_space, single.action_space)
    assert venv.num_envs == N and is_masking_supported(venv) and venv.render_mode is None
    checked = VecCheckNan(venv, raise_exception=True)  # SB3's check of every array it passes
    checked.seed(3)
    obs = checked.reset()
    assert obs.shape == (N, rules.observation_size) and obs.dtype == np.float32
    assert all(venv.observation_space.contains(row) for row in obs)
    for _ in range(40):
        obs, rewards, dones, infos = checked.step(venv.action_masks().argmax(axis=1))
        assert rewards.dtype == np.float32 and rewards.shape == dones.shape == (N,)
        assert dones.dtype == np.bool_ and all(isinstance(i, dict) for i in infos)
        assert all(venv.observation_space.contains(row) for row in obs)
    assert venv.get_attr("seat") == SEATS and venv.get_attr("seat", indices=[2]) == [1]
    assert venv.get_attr("rules", indices=0) == [rules]
    assert venv.get_attr("observation_space")[0] == single.observation_space
    rows = venv.env_method("action_masks", indices=[1, 3])
    assert _same(np.stack(rows), venv.action_masks()[[1, 3]])
    venv.set_attr("label", "x", indices=[0, 1])
    assert venv.get_attr("label", indices=[1]) == ["x"]
    assert venv.env_is_wrapped(Monitor) == [False] * N
    with pytest.raises(AttributeError, match="game 2 of the batched env has no attribute 'label'"):
        venv.get_attr("label")
    with pytest.raises(AttributeError, match="'seat' of the batched env's games is fixed"):
        venv.set_attr("seat", 1)
    with pytest.raises(AttributeError, match="no method 'set_opponent'"):
        venv.env_method("set_opponent", None)
    with pytest.raises(IndexError, match=f"no game {N} in a batch of {N}"):
        venv.get_attr("seat", indices=[N])
    with pytest.raises(ValueError, match="take no reset options"):
        venv.set_options({"x": 1})
    venv.set_options({})
    with pytest.raises(RuntimeError, match="call step_async"):
        venv.step_wait()
    bad = venv.action_masks().argmax(axis=1)
    bad[2] = np.flatnonzero(~venv.action_masks()[2])[0]
    with pytest.raises(ValueError, match=rf"^game 2: action {bad[2]} is not legal"):
        venv.step(bad)
    with pytest.raises(TypeError, match="wraps a CompiledVectorEnv, not PsychicPhaseEnv"):
        BatchedVecEnv(single)


@needs_core
@pytest.mark.parametrize(("edition", "scenario"), FIRST)
def test_a_seed_replays_and_seeds_like_the_batch(edition, scenario):
    rules, _ = compiled_pair(edition, scenario)
    venv = BatchedVecEnv.build(N, rules, SEATS)
    runs = []
    for _ in range(2):
        assert venv.seed(11) == [11] * N
        trace = [venv.reset()]
        for _ in range(60):
            obs, rewards, dones, _ = venv.step(venv.action_masks().argmax(axis=1))
            trace += [obs, rewards, dones]
        runs.append(trace)
    assert all(_same(a, b) for a, b in zip(*runs, strict=True))
    direct, _ = type(venv.batch)(N, rules=rules, seat=SEATS).reset(seed=11)
    venv.seed(11)
    assert _same(venv.reset(), direct)
    assert len(set(venv.seed(None))) == 1  # one fresh seed, spawned per game


def _play_legally(rules, policy, games: int, seed: int) -> None:
    """Play ``policy`` in both seats against uniform play; each answer is over legal actions."""
    rng = np.random.default_rng(seed)
    for _ in range(games):
        s = rules.initial_state()
        while (p := rules.current_player(s)) != TERMINAL:
            if p == CHANCE:
                s = rules.apply(s, rules.sample_chance(s, rng))
                continue
            probs = policy.action_probabilities(rules, s, p)
            assert probs and set(probs) <= set(rules.legal_actions(s)), (probs, s)
            s = rules.apply(s, max(probs, key=probs.get))


@needs_core
@pytest.mark.parametrize(("edition", "scenario"), FIRST)
def test_maskable_ppo_learns_reproducibly_and_its_model_plays_as_an_agent(
    edition, scenario, tmp_path
):
    from psygym_agents.safe_model import save_safe
    from psygym_agents.sb3 import SB3Policy
    from sb3_contrib import MaskablePPO

    rules, _ = compiled_pair(edition, scenario)
    models = []
    for _ in range(2):
        venv = BatchedVecEnv.build(N, rules, 0)
        model = MaskablePPO("MlpPolicy", venv, n_steps=32, batch_size=64, n_epochs=2, seed=3,
                            device="cpu", policy_kwargs={"net_arch": [16, 16]})  # fmt: skip
        model.learn(total_timesteps=256)
        assert model.num_timesteps == 256 and len(model.ep_info_buffer) > 0
        models.append(model)
    first, second = (m.policy.state_dict() for m in models)
    assert all(np.array_equal(first[k].numpy(), second[k].numpy()) for k in first)
    weights = save_safe(
        models[0],
        tmp_path / "model",
        {"edition": rules.edition, "scenario": rules.scenario.name, "seat": 0},
    )
    policy = resolve_policy(str(weights), rules)
    assert isinstance(policy, SB3Policy)
    _play_legally(rules, policy, games=3, seed=0)


# ------------------------------------------------------------------------------- psygym train
@needs_core
@pytest.mark.parametrize(("edition", "scenario"), FIRST)
def test_auto_picks_the_batched_env_only_where_it_plays_the_run(edition, scenario, monkeypatch):
    def envs(**kw):
        return make_config(edition, scenario, steps=64, **kw).vec_env

    heuristic = reference_opponent(edition)
    rules, _ = compiled_pair(edition, scenario)
    assert envs() == envs(vec_env="batched") == envs(seat=1) == "batched"
    assert envs(vec_env="gym") == envs(algo="ppo") == envs(seat="both") == "gym"
    assert envs(subproc=True) == envs(ray=True) == "gym"
    if heuristic != "random":
        assert envs(opponent=heuristic) == envs(opponent="self") == "gym"
        with pytest.raises(ValueError, match=rf"^--vec-env batched: --opponent {heuristic}: "):
            envs(opponent=heuristic, vec_env="batched")
    with pytest.raises(ValueError, match="^--vec-env 'fast' is not one of: auto, batched, gym$"):
        envs(vec_env="fast")
    monkeypatch.setenv("PSYGYM_ENGINE", "python")
    assert envs() == "gym"
    assert batched_refusal(rules).startswith("PSYGYM_ENGINE=python plays ")
    with pytest.raises(ValueError, match="^--vec-env batched: PSYGYM_ENGINE=python plays "):
        envs(vec_env="batched")


@needs_core
@pytest.mark.parametrize(("edition", "scenario"), FIRST)
def test_a_run_from_before_vec_env_resumes_on_the_gym_envs(edition, scenario, tmp_path):
    cfg = make_config(edition, scenario, steps=64)
    write_config(tmp_path, cfg)
    path = tmp_path / "config.yml"
    doc = yaml.safe_load(path.read_text())
    assert doc["vec_env"] == "batched"
    del doc["vec_env"]
    path.write_text(yaml.safe_dump(doc))
    assert config_from_file(tmp_path).vec_env == "gym"


def _train(*args: str, env: dict[str, str] | None = None):
    return runner.invoke(app, ["train", *args, "--no-progress"], env=env)


@needs_core
@pytest.mark.parametrize(("edition", "scenario"), FIRST)
def test_train_runs_on_the_batched_env_by_default_and_resumes_on_it(edition, scenario, tmp_path):
    result = _train("--edition", edition, "--scenario", scenario, "--steps", "256",
                    "--eval-every", "128", "--eval-episodes", "4", "--n-envs", "2",
                    "--runs-dir", str(tmp_path))  # fmt: skip
    assert result.exit_code == 0, result.output
    run = tmp_path / edition / scenario / "maskable-ppo_1"
    lines = (run / "config.yml").read_text().splitlines()
    assert [line for line in lines if line.startswith("vec_env")] == ["vec_env: batched"]
    assert "--vec-env batched" in (run / "command.txt").read_text()
    assert [int(r["step"]) for r in read_metrics(run)] == [0, 128, 256]
    refused = _train("--resume", str(run), "--vec-env", "gym")
    assert refused.exit_code == 2 and "other settings (--vec-env)" in refused.output
    lost = _train("--resume", str(run), "--steps", "512", env={"PSYGYM_ENGINE": "python"})
    assert lost.exit_code == 2 and "Traceback" not in lost.output
    assert "trains on the batched env (vec_env: batched in its config.yml), which cannot run " \
           "here: PSYGYM_ENGINE=python" in " ".join(lost.output.split())  # fmt: skip
    resumed = _train("--resume", str(run), "--steps", "512", "--vec-env", "auto")
    assert resumed.exit_code == 0, resumed.output
    assert [int(r["step"]) for r in read_metrics(run)] == [0, 128, 256, 384, 512]
    assert yaml.safe_load((run / "model.json").read_text())["steps"] == 512
    assert config_from_file(run).vec_env == "batched"


@needs_core
@pytest.mark.parametrize(("edition", "scenario"), FIRST)
def test_train_elsewhere_runs_on_the_gym_envs_and_refuses_batched_in_one_line(
    edition, scenario, tmp_path
):
    base = ["--edition", edition, "--scenario", scenario, "--runs-dir", str(tmp_path)]
    result = _train(*base, "--steps", "64", "--eval-every", "64", "--eval-episodes", "2",
                    "--n-envs", "2", "--seat", "both")  # fmt: skip
    assert result.exit_code == 0, result.output
    run = tmp_path / edition / scenario / "maskable-ppo_1"
    assert config_from_file(run).vec_env == "gym"
    refused = _train(*base, "--steps", "64", "--vec-env", "batched", "--subproc")
    assert refused.exit_code == 2 and "Traceback" not in refused.output
    assert "--vec-env batched: --subproc asks for SubprocVecEnv" in refused.output
    assert not (tmp_path / edition / scenario / "maskable-ppo_2").exists()
