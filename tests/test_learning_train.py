"""psygym train: tiny-budget smoke runs, resume after SIGTERM, masks, wrappers, SB3 adapter."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from psygym_agents.sb3 import SB3Policy, load_policy, make_sb3, pretrained_path, read_metadata
from psygym_experiments.cli import app
from psygym_experiments.harness.train_config import make_config
from psygym_experiments.harness.training import make_vec_env, train_agent
from psygym_experiments.harness.training_files import read_metrics
from typer.testing import CliRunner

import psygym  # noqa: F401 - registers the env ids
from psygym.core import CHANCE, TERMINAL, play_game
from psygym.editions import available, load
from psygym.envs.wrappers import AlternateSeats, LegalActionWrapper, OpponentControl
from psygym.policies import resolve_policy

runner = CliRunner()
TINY = dict(eval_every=256, eval_episodes=10, n_envs=2)


@pytest.fixture(scope="module")
def rules():
    return load("7th", "single-phase")


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """One tiny MaskablePPO run shared by the tests that only read its outputs."""
    runs = tmp_path_factory.mktemp("runs")
    result = runner.invoke(app, [
        "train", "--edition", "7th", "--scenario", "single-phase", "--steps", "512",
        "--eval-every", "256", "--eval-episodes", "10", "--n-envs", "2", "--opponent",
        "double-wc", "--runs-dir", str(runs), "--no-progress",
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    return runs / "7th" / "single-phase" / "maskable-ppo_1"


def assert_legal_play(rules, policy, games=20, seed=0):
    """Play games with ``policy`` in both seats, checking each answer is over legal actions."""
    rng = np.random.default_rng(seed)
    for _ in range(games):
        s = rules.initial_state()
        while (p := rules.current_player(s)) != TERMINAL:
            if p == CHANCE:
                s = rules.apply(s, rules.sample_chance(s, rng))
                continue
            probs = policy.action_probabilities(rules, s, p)
            legal = set(rules.legal_actions(s))
            assert set(probs) <= legal and probs, (probs, legal)
            assert abs(sum(probs.values()) - 1.0) < 1e-9
            s = rules.apply(s, max(probs, key=probs.get))


def test_train_writes_the_run_folder(tiny_run):
    for name in (
        "config.yml",
        "command.txt",
        "metrics.csv",
        "learning_curve.png",
        "model.safetensors",
        "model.json",
        "best_model.safetensors",
        "seed.txt",
        "checkpoints/last.json",
    ):
        assert (tiny_run / name).is_file(), name
    assert any((tiny_run / "tb").rglob("events.out.tfevents.*"))
    assert "train --edition 7th" in (tiny_run / "command.txt").read_text()
    meta = json.loads((tiny_run / "model.json").read_text())
    assert meta["edition"] == "7th" and meta["scenario"] == "single-phase"
    assert meta["algo"] == "maskable-ppo" and meta["seat"] == 0
    assert meta["steps"] == 512 and meta["opponent"] == "double-wc"
    rows = read_metrics(tiny_run)
    assert [int(r["step"]) for r in rows] == [0, 256, 512]
    assert all(r["mean_score"] for r in rows)


def test_trained_model_loads_as_an_agent_by_path_and_plays_legal_moves(tiny_run, rules):
    path = str(tiny_run / "model.safetensors")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # our files load without SB3's pickle fallback
        policy = resolve_policy(path, rules)
    assert isinstance(policy, SB3Policy)
    assert_legal_play(rules, policy)
    sampled = make_sb3(rules, path, deterministic=False)
    assert_legal_play(rules, sampled, games=5)
    stats = play_game(rules, [policy, resolve_policy("double-wc", rules)],
                      np.random.default_rng(0))  # fmt: skip
    assert rules.is_terminal(stats)


def test_model_for_another_scenario_is_refused(tiny_run):
    duel = load("7th", "duel")
    with pytest.raises(ValueError, match="observations of size"):
        make_sb3(duel, str(tiny_run / "model.safetensors"))


def test_sampled_probabilities_cover_only_legal_actions(tiny_run, rules):
    net = load_policy(tiny_run / "model.safetensors", rules)
    policy = SB3Policy(net, rules, deterministic=False)
    rng = np.random.default_rng(1)
    s = rules.initial_state()
    while rules.current_player(s) == CHANCE:
        s = rules.apply(s, rules.sample_chance(s, rng))
    probs = policy.action_probabilities(rules, s, rules.current_player(s))
    assert set(probs) <= set(rules.legal_actions(s))
    assert len(probs) > 1 and abs(sum(probs.values()) - 1) < 1e-9


@pytest.mark.parametrize("algo", ["ppo", "dqn"])
def test_unmasked_algorithms_train_and_play_legally(tmp_path, rules, algo):
    run = train_agent("7th", "single-phase", algo=algo, steps=300, seed=1, opponent="random",
                      runs_dir=tmp_path, **TINY)  # fmt: skip
    meta = read_metadata(run / "model.safetensors")
    assert meta["algo"] == algo
    assert_legal_play(rules, resolve_policy(str(run / "model.safetensors"), rules), games=10)


def test_self_play_trains_against_frozen_copies(tmp_path):
    run = train_agent("7th", "duel", steps=256, opponent="self", runs_dir=tmp_path,
                      eval_every=128, eval_episodes=2, n_envs=2,
                      overrides={"n_steps": 64, "batch_size": 64,
                                 "self_play_refresh": 128})  # fmt: skip
    meta = json.loads((run / "model.json").read_text())
    assert meta["opponent"] == "self" and meta["seat"] == "both"
    assert meta["eval_opponent"] == "double-wc"


def test_frozen_opponent_reaches_every_env_and_seats_alternate(tmp_path, rules):
    cfg = make_config("7th", "single-phase", steps=100, opponent="self", n_envs=2)
    venv = make_vec_env(cfg)
    try:
        venv.reset()
        assert sorted(venv.get_attr("seat")) == [0, 1]
        from sb3_contrib import MaskablePPO

        model = MaskablePPO("MlpPolicy", venv, n_steps=8, batch_size=8, device="cpu")
        venv.env_method("set_opponent", SB3Policy(model, rules, deterministic=False, name="x"))
        assert [o.name for o in venv.get_attr("opponent")] == ["x", "x"]
    finally:
        venv.close()


def test_masks_survive_subproc_vec_env(rules):
    """check_env-style: masks fetched through SubprocVecEnv match the rules' legal actions."""
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks

    cfg = make_config("7th", "single-phase", steps=64, opponent="double-wc", n_envs=2,
                      subproc=True)  # fmt: skip
    venv = make_vec_env(cfg)
    try:
        assert type(venv).__name__ == "SubprocVecEnv"
        venv.seed(3)
        venv.reset()
        for _ in range(12):
            masks = np.stack(venv.env_method("action_masks"))
            assert np.array_equal(masks, get_action_masks(venv))
            for mask, state, seat in zip(masks, venv.get_attr("state"), venv.get_attr("seat")):
                if rules.current_player(state) == seat:
                    assert np.array_equal(mask, rules.legal_mask(state))
            actions = [int(np.flatnonzero(m)[-1]) for m in masks]
            venv.step(np.array(actions))
        model = MaskablePPO("MlpPolicy", venv, n_steps=16, batch_size=16, n_epochs=1,
                            device="cpu", seed=0)  # fmt: skip
        model.learn(64)
        assert model.num_timesteps >= 64
    finally:
        venv.close()


def test_legal_action_wrapper_maps_illegal_actions_with_a_penalty():
    env = LegalActionWrapper(gym.make("psygym/Seventh-v0", scenario="single-phase",
                                      opponent="double-wc").unwrapped,
                             fallback="lowest", penalty=0.5)  # fmt: skip
    env.reset(seed=0)
    mask = env.unwrapped.action_masks()
    illegal = int(np.flatnonzero(~mask)[0])
    assert env.legal_action(illegal) == (int(np.flatnonzero(mask)[0]), True)
    legal = int(np.flatnonzero(mask)[-1])
    assert env.legal_action(legal) == (legal, False)
    env.reset(seed=0)
    score_before = env.unwrapped.rules.returns(env.unwrapped.state)[0]
    _, reward, *_, info = env.step(illegal)
    assert info["illegal_action"] is True
    # lowest legal action in single-phase is "end the phase": score unchanged, so reward = -0.5
    assert env.unwrapped.rules.returns(env.unwrapped.state)[0] == score_before
    assert reward == -0.5
    rnd = LegalActionWrapper(gym.make("psygym/Seventh-v0", scenario="single-phase").unwrapped,
                             fallback="random")  # fmt: skip
    rnd.reset(seed=1)
    picks = {rnd.legal_action(illegal)[0] for _ in range(50)}
    assert len(picks) > 1 and picks <= set(np.flatnonzero(rnd.unwrapped.action_masks()))
    with pytest.raises(ValueError, match="lowest, random"):
        LegalActionWrapper(rnd.unwrapped, fallback="first")


def test_alternate_seats_and_opponent_control():
    base = gym.make("psygym/Seventh-v0", scenario="duel", opponent="random").unwrapped
    env = AlternateSeats(OpponentControl(base), first=1)
    seats = []
    for i in range(4):
        env.reset(seed=i)
        seats.append(base.seat)
        assert base.rules.current_player(base.state) == base.seat
    assert seats == [1, 0, 1, 0]
    env.get_wrapper_attr("set_opponent")(resolve_policy("double-wc", base.rules))
    assert base.opponent.name == "double-wc"
    with pytest.raises(TypeError):
        env.get_wrapper_attr("set_opponent")(object())


def test_init_starts_from_a_saved_policy_and_takes_its_network(tiny_run, tmp_path, rules):
    from psygym_experiments.harness.games import seat_split_score

    saved = SB3Policy(load_policy(tiny_run / "model.safetensors", rules), rules, deterministic=True)
    double_wc = resolve_policy("double-wc", rules)
    own, _ = seat_split_score(rules, saved, double_wc, (0,), 10, 1_000_003)
    fresh, *_, last = list(csv.DictReader((tiny_run / "metrics.csv").open()))
    # The last evaluation is of the saved weights (after the last update, not before it).
    assert last["step"] == "512" and float(last["mean_score"]) == pytest.approx(own, abs=1e-6)
    args = ["train", "--edition", "7th", "--scenario", "single-phase", "--steps", "256",
            "--eval-every", "256", "--eval-episodes", "10", "--n-envs", "2", "--opponent",
            "double-wc", "--runs-dir", str(tmp_path), "--no-progress",
            "--init", str(tiny_run / "model.safetensors")]  # fmt: skip
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    run = tmp_path / "7th" / "single-phase" / "maskable-ppo_1"
    first = next(csv.DictReader((run / "metrics.csv").open()))
    # Step 0 is the saved policy itself: the same games score what its own last evaluation did.
    assert first["step"] == "0" and float(first["mean_score"]) == pytest.approx(own, abs=1e-6)
    assert first["mean_score"] != fresh["mean_score"]  # not a fresh network's score
    assert "--init" in (run / "command.txt").read_text()
    # Another network shape is rebuilt from the saved model's description, not the config's.
    small = train_agent("7th", "single-phase", steps=128, runs_dir=tmp_path / "small",
                        overrides={"policy_kwargs": {"net_arch": [16]}}, **TINY)  # fmt: skip
    tuned = train_agent("7th", "single-phase", steps=128, runs_dir=tmp_path / "tuned",
                        init=str(small / "model.safetensors"), **TINY)  # fmt: skip
    assert read_metadata(tuned / "model.safetensors")["policy"]["net_arch"] == [16]


class _FirstRolls:
    """The rules of ``rules``, logging the first chance outcome of every game played."""

    def __init__(self, rules):
        self._rules, self.first, self._new = rules, [], False

    def __getattr__(self, name):
        return getattr(self._rules, name)

    def initial_state(self):
        self._new = True
        return self._rules.initial_state()

    def sample_chance(self, state, rng):
        outcome = self._rules.sample_chance(state, rng)
        if self._new:
            self.first.append(outcome)
            self._new = False
        return outcome


def test_evaluations_give_every_policy_the_same_games(rules):
    from psygym_experiments.harness.games import seat_split_scores

    opponent = resolve_policy("deny-always", rules)
    logged = {}
    scores = {}
    for name in ("double-wc", "all-in"):
        logged[name] = _FirstRolls(rules)
        policy = resolve_policy(name, rules)
        scores[name] = seat_split_scores(logged[name], policy, opponent, (0, 1), 40, 11)
    # Two policies that spend their dice differently still start game i with the same roll
    # (a single dice stream would shift every game after the first one that differs).
    assert scores["double-wc"].tolist() != scores["all-in"].tolist()
    assert logged["double-wc"].first == logged["all-in"].first
    assert len(set(logged["all-in"].first)) > 1


def test_each_evaluation_reports_its_gain_game_by_game(tiny_run):
    rows = read_metrics(tiny_run)
    first = json.loads((tiny_run / "first_eval.json").read_text())
    base = np.asarray(first["scores"])
    assert first["step"] == 0 and len(base) == 10
    assert float(rows[0]["mean_score"]) == pytest.approx(base.mean(), abs=1e-6)
    assert (float(rows[0]["gain"]), float(rows[0]["gain_ci95"])) == (0.0, 0.0)
    for row in rows[1:]:
        gain = float(row["mean_score"]) - float(rows[0]["mean_score"])
        assert float(row["gain"]) == pytest.approx(gain, abs=1e-5)
    last = rows[-1]
    assert last["gain_ci95"] not in ("", "nan")


def test_init_refuses_a_model_of_another_algorithm_or_scenario(tiny_run, tmp_path):
    base = ["train", "--steps", "64", "--runs-dir", str(tmp_path), "--no-progress",
            "--init", str(tiny_run / "model.safetensors")]  # fmt: skip
    result = runner.invoke(app, [*base, "--edition", "7th", "--scenario", "single-phase",
                                 "--algo", "ppo"])  # fmt: skip
    assert result.exit_code == 2 and "not a --algo ppo policy" in result.output
    result = runner.invoke(app, [*base, "--edition", "8th", "--scenario", "duel"])
    assert result.exit_code == 2 and "use a model trained for this edition" in result.output
    assert "Traceback" not in result.output and not (tmp_path / "8th").exists()


def test_bad_input_gives_one_clear_line(tmp_path):
    result = runner.invoke(app, ["train", "--algo", "a2c", "--runs-dir", str(tmp_path)])
    assert result.exit_code == 2
    assert "maskable-ppo, ppo, dqn" in result.output
    cfg = tmp_path / "bad.yml"
    cfg.write_text("learning_rte: 0.1\n")
    result = runner.invoke(app, ["train", "--config", str(cfg), "--runs-dir", str(tmp_path)])
    assert result.exit_code == 2
    assert "learning_rte" in result.output and "learning_rate" in result.output
    result = runner.invoke(app, ["train", "--resume", str(tmp_path / "nope")])
    assert result.exit_code == 2 and "config.yml" in result.output


def test_config_layering_and_flat_overrides(tmp_path):
    cfg = make_config("7th", "single-phase", steps=10)
    assert cfg.hyperparams["n_envs"] == 16  # psygym/Seventh-v0:single-phase entry
    assert cfg.hyperparams["vf_coef"] == 0.5  # default entry
    duel = make_config("7th", "duel", steps=10).hyperparams
    assert duel["n_envs"] == 8 and duel["gamma"] == 1.0  # default, then psygym/Seventh-v0
    flat = tmp_path / "flat.yml"
    flat.write_text("ent_coef: 0.02\npolicy_kwargs: {net_arch: [32]}\n")
    cfg = make_config("7th", "single-phase", steps=10, config=flat)
    assert cfg.hyperparams["ent_coef"] == 0.02
    assert cfg.hyperparams["policy_kwargs"] == {"net_arch": [32]}
    layered = tmp_path / "layered.yml"
    layered.write_text("default: {n_epochs: 3}\npsygym/Seventh-v0: {n_epochs: 4}\n")
    assert make_config("7th", "duel", steps=10, config=layered).hyperparams["n_epochs"] == 4


def _wait_for(path: Path, proc: subprocess.Popen, timeout: float = 240) -> None:
    end = time.monotonic() + timeout
    while not path.is_file():
        if proc.poll() is not None:
            out = proc.stdout.read() if proc.stdout else ""
            pytest.fail(f"train exited early ({proc.returncode}): {out}")
        if time.monotonic() > end:
            proc.kill()
            pytest.fail("no checkpoint appeared")
        time.sleep(0.2)


@pytest.mark.slow
def test_sigterm_saves_a_checkpoint_and_resume_continues_from_its_step_count(tmp_path):
    cmd = [sys.executable, "-m", "psygym_experiments.cli", "train", "--edition", "7th",
           "--scenario", "single-phase", "--steps", "1000000", "--eval-every", "256",
           "--eval-episodes", "10",
           "--n-envs", "2", "--opponent", "double-wc", "--runs-dir", str(tmp_path),
           "--no-progress"]  # fmt: skip
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=env)  # fmt: skip
    run = tmp_path / "7th" / "single-phase" / "maskable-ppo_1"
    _wait_for(run / "checkpoints" / "last.json", proc)
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM, out
    assert "Resume with" in out
    stopped = json.loads((run / "checkpoints" / "last.json").read_text())["steps"]
    assert stopped >= 256
    assert not (run / "model.safetensors").exists()
    target = stopped + 512
    # A setting given with another value is refused, naming it, before anything is written.
    refused = subprocess.run(
        [sys.executable, "-m", "psygym_experiments.cli", "train", "--resume", str(run), "--seed",
         "5", "--opponent", "double-wc"], capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "other settings (--seed)" in refused.stderr and "Traceback" not in refused.stderr
    # Settings equal to the run's are accepted.
    result = subprocess.run(
        [sys.executable, "-m", "psygym_experiments.cli", "train", "--resume", str(run), "--steps",
         str(target), "--no-progress", "--opponent", "double-wc", "--scenario", "single-phase",
         "--n-envs", "2"], capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    steps = [int(r["step"]) for r in read_metrics(run)]
    assert steps == sorted(set(steps)), steps  # never restarted from zero
    after = [s for s in steps if s > stopped]
    assert after and after[0] <= stopped + 256 and steps[-1] >= target
    meta = json.loads((run / "model.json").read_text())
    assert meta["steps"] >= target and meta["steps"] - stopped < 1024
    assert json.loads((run / "checkpoints" / "last.json").read_text())["steps"] == meta["steps"]
    assert "--resume" in (run / "command.txt").read_text().splitlines()[-1]


def test_pretrained_models_are_small_documented_and_playable():
    folder = Path(__file__).parents[1] / "agents" / "pretrained"
    shipped = sorted(folder.glob("*-seat*.safetensors"))  # the value-* files are board values
    if not shipped:
        pytest.skip("no pretrained models shipped yet")
    for path in shipped:
        assert path.stat().st_size < 1_000_000, path
        meta = json.loads(path.with_suffix(".json").read_text())
        for key in ("edition", "scenario", "algo", "steps", "opponent", "seat",
                    "mean_eval_score"):  # fmt: skip
            assert key in meta, (path, key)
        if meta["edition"] not in available():
            continue
        rules = load(meta["edition"], meta["scenario"])
        assert pretrained_path(meta["edition"], meta["scenario"], meta["seat"]) == path
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            policy = make_sb3(rules, seat=meta["seat"])
        assert policy.name == f"sb3:{path}"
        assert_legal_play(rules, policy, games=3)


def test_metrics_csv_has_the_documented_columns(tiny_run):
    with (tiny_run / "metrics.csv").open() as f:
        header = next(csv.reader(f))
    assert header[:3] == ["step", "mean_score", "ci95"]


def test_learning_curve_script_trains_loads_the_safe_model_and_reports(tmp_path, capsys):
    from psygym_experiments.learning_curve import main

    args = ["--steps", "256", "--eval-every", "256", "--eval-episodes", "10",
            "--runs-dir", str(tmp_path)]  # fmt: skip
    report = main(args)
    run = tmp_path / "7th" / "single-phase" / "maskable-ppo_1"
    assert not (run / "model.zip").exists()  # the agent is read back from model.safetensors
    assert report["method"] == "exact" and report["opponent"] == "double-wc"
    # Exact: the best response to double-wc bounds every seat-0 policy from above.
    assert 0 < report["agent_vs_opponent"] <= report["optimum_vs_opponent"] + 1e-9
    assert json.loads((run / "learning_curve.json").read_text())["fraction"] == report["fraction"]
    assert "fraction" in capsys.readouterr().out
    simulated = main([*args, "--no-exact", "--sim-episodes", "10"])
    assert simulated["method"] == "simulation"
    assert simulated["reference"].startswith("best heuristic (")
