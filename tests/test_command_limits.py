"""Limits of the commands' inputs: one clear line before anything is built, nothing lost.

``--max-states`` of evaluate, compare and mistakes within the compiled solver's range; an
``evaluate`` field that plays no match or the same match twice; ``--n-envs`` of train and tune
capped per CPU core; a ``sqlite:`` storage in a missing folder; ``tune``'s queued defaults and
its scoring method settled without a simulation; a safe model never written through a link
or over a user's file named like a temporary one.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import optuna
import pytest
from cli_helpers import clean_error
from psygym_experiments import cli
from psygym_experiments.harness import tuning
from psygym_experiments.harness.solving import MOST_STATES
from psygym_experiments.harness.training import check_n_envs, max_envs


@dataclass
class Result:
    """What a command line left: its exit code, stdout and stderr."""

    exit_code: int
    stdout: str
    stderr: str


@pytest.fixture
def run(capsys):
    """Run a ``psygym`` command line in-process as the console script does (:func:`cli.run`).

    Not typer's CliRunner on ``cli.app``: an option's callback refusing a value ends in
    ``cli.run``'s one line, which the runner would show as click's boxed usage error.
    """

    def invoke(*args: object) -> Result:
        capsys.readouterr()
        code = cli.run([str(a) for a in args])
        out, err = capsys.readouterr()
        return Result(code, out, err)

    return invoke


# ----------------------------------------------------------------------------- --max-states
TOO_MANY_STATES = str(2**63)  # one past the compiled solver's 64-bit integer


@pytest.mark.parametrize("argv", [
    # an unknown agent too: the old code, which took the number, stops there quickly instead
    ["evaluate", "--scenario", "single-phase", "--agents", "nobody,random", "--episodes", "1"],
    ["compare", "--edition", "7th", "--quick", "--agents", "nobody"],
    ["mistakes", "--scenario", "single-phase", "--agent", "nobody"],
], ids=lambda a: a[0])  # fmt: skip
def test_max_states_beyond_the_solvers_range_is_refused_in_one_line(run, argv, tmp_path):
    for value in (TOO_MANY_STATES, MOST_STATES + 1):
        line = clean_error(run(*argv, "--max-states", value, "--runs-dir", tmp_path)
                           if argv[0] != "mistakes" else run(*argv, "--max-states", value),
                           "--max-states", f"{MOST_STATES:,}")  # fmt: skip
        assert str(value) in line
    assert list(tmp_path.iterdir()) == []


def test_evaluate_takes_the_largest_max_states(run, tmp_path):
    refused = run(
        "evaluate",
        "--scenario",
        "single-phase",
        "--agents",
        "all-in,double-wc",
        "--episodes",
        "1",
        "--max-states",
        TOO_MANY_STATES,
        "--runs-dir",
        tmp_path,
    )
    clean_error(refused, "--max-states")
    ok = run("evaluate", "--scenario", "single-phase", "--agents", "all-in,double-wc",
             "--episodes", "1", "--max-states", MOST_STATES, "--runs-dir", tmp_path,
             "--format", "json")  # fmt: skip
    assert ok.exit_code == 0, ok.stderr
    assert json.loads(ok.stdout)["game_value"] is not None  # solved exactly within the limit


# ----------------------------------------------------------------------------- evaluate's field
def test_until_clear_refuses_a_repeated_agent_before_any_game(run, tmp_path):
    base = ["evaluate", "--scenario", "single-phase", "--until-clear", "--episodes", "2",
            "--min-episodes", "2", "--runs-dir", tmp_path]  # fmt: skip
    clean_error(
        run(*base, "--agents", "double-wc,all-in,all-in"),
        "all-in",
        "listed more than once",
        "--until-clear",
    )
    clean_error(run(*base, "--agents", "all-in,double-wc,random,double-wc"), "double-wc")
    assert list(tmp_path.iterdir()) == []  # no run folder, no games.jsonl
    ok = run(*base, "--agents", "double-wc,all-in", "--format", "csv")
    assert ok.exit_code == 0, ok.stderr
    assert len(ok.stdout.strip().splitlines()) == 2  # the header and one match


def test_a_round_robin_of_one_agent_needs_self_play(run, tmp_path):
    base = ["evaluate", "--scenario", "single-phase", "--episodes", "2", "--no-exact",
            "--runs-dir", tmp_path]  # fmt: skip
    clean_error(
        run(*base, "--agents", "double-wc"), "at least two agents", "--self-play", "double-wc"
    )
    assert list(tmp_path.iterdir()) == []
    ok = run(*base, "--agents", "double-wc", "--self-play", "--format", "json")
    assert ok.exit_code == 0, ok.stderr
    pairs = json.loads(ok.stdout)["pairs"]
    assert [(p["agent0"], p["agent1"]) for p in pairs] == [("double-wc", "double-wc")]


# ----------------------------------------------------------------------------- --n-envs
def test_n_envs_cap_follows_the_cores():
    cores = os.cpu_count() or 1
    assert max_envs() == 64 * cores and max_envs(subproc=True) == 4 * cores
    assert check_n_envs(max_envs()) == max_envs()
    with pytest.raises(ValueError, match=f"--n-envs 100000 is too many: at most {max_envs()} "):
        check_n_envs(100_000)


@pytest.mark.parametrize("argv", [
    ["train", "--scenario", "single-phase", "--steps", "1"],
    ["tune", "--scenario", "single-phase", "--target", "maskable-ppo", "--trials", "1",
     "--trial-steps", "1"],
], ids=lambda a: a[0])  # fmt: skip
def test_n_envs_beyond_the_cap_is_refused_before_anything_is_built(run, argv, tmp_path):
    # one past the cap: the old code trained (a rollout of them) and exited 0
    line = clean_error(run(*argv, "--n-envs", max_envs() + 1, "--runs-dir", tmp_path),
                       "--n-envs", f"at most {max_envs()}", "per CPU core")  # fmt: skip
    assert str(max_envs() + 1) in line
    assert list(tmp_path.iterdir()) == []


def test_train_n_envs_with_subproc_and_in_a_config_are_capped(run, tmp_path):
    runs = tmp_path / "runs"
    clean_error(run("train", "--scenario", "single-phase", "--steps", "1", "--subproc",
                    "--n-envs", max_envs(subproc=True) + 1, "--runs-dir", runs),
                f"at most {max_envs(subproc=True)}", "process")  # fmt: skip
    config = tmp_path / "big.yml"
    config.write_text(f"n_envs: {max_envs() + 1}\n")
    clean_error(run("train", "--scenario", "single-phase", "--steps", "1", "--config", config,
                    "--runs-dir", runs), "n_envs", f"at most {max_envs()}")  # fmt: skip
    assert not runs.exists()


# ----------------------------------------------------------------------------- tune's storage
TUNE = ["tune", "--scenario", "single-phase", "--trials", "1", "--episodes", "2",
        "--scoring", "simulation", "--no-progress"]  # fmt: skip


def test_a_sqlite_storage_in_a_missing_folder_is_made_like_a_journal(run, tmp_path):
    db = tmp_path / "no" / "dir" / "x.db"
    ok = run(*TUNE, "--storage", f"sqlite:///{db}", "--runs-dir", tmp_path / "runs")
    assert ok.exit_code == 0, ok.stderr
    assert db.is_file()


def test_a_sqlite_storage_behind_a_file_or_naming_a_folder_is_one_line(run, tmp_path):
    (tmp_path / "afile").write_text("mine")
    clean_error(
        run(
            *TUNE, "--storage", f"sqlite:///{tmp_path}/afile/x.db", "--runs-dir", tmp_path / "runs"
        ),
        f"{tmp_path / 'afile'} is a file, not a folder",
    )
    clean_error(run(*TUNE, "--storage", f"sqlite:///{tmp_path}", "--runs-dir", tmp_path / "runs"),
                "--storage", "is a folder")  # fmt: skip
    assert (tmp_path / "afile").read_text() == "mine"


# ----------------------------------------------------------------------------- tune's defaults
def _defaults_study(tmp_path: Path) -> tuple[str, str, dict]:
    """A study whose first trial, the queued defaults, failed (as Ctrl-C leaves it)."""
    from psygym_agents.parametric import family_for

    from psygym.editions import load

    rules = load("7th", "single-phase")
    defaults = family_for(rules.edition).defaults(rules)
    storage = f"sqlite:///{tmp_path / 'optuna.db'}"
    name = "7th-single-phase-parametric"
    study = optuna.create_study(study_name=name, storage=storage, direction="maximize")
    study.enqueue_trial(defaults)
    trial = study.ask()
    assert trial.number == 0
    study.tell(trial, state=optuna.trial.TrialState.FAIL)
    return storage, name, defaults


def test_defaults_cut_short_are_queued_again(run, tmp_path):
    storage, name, defaults = _defaults_study(tmp_path)
    ok = run(*TUNE, "--storage", storage, "--runs-dir", tmp_path)
    assert ok.exit_code == 0, ok.stderr
    study = optuna.load_study(study_name=name, storage=storage)
    done = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    assert len(done) == 1 and tuning._same_params(done[0].params, defaults)
    # complete now: a further run samples instead of queueing them a third time
    assert not tuning.enqueue_defaults(study, defaults)
    assert tuning.enqueue_defaults(study, {**defaults, "stop_pool": 99}) is True


def test_simulated_scoring_is_not_run_before_the_trials(run, tmp_path, monkeypatch):
    calls = []
    real = tuning.Scorer._simulate
    monkeypatch.setattr(
        tuning.Scorer, "_simulate", lambda self, policy: calls.append(1) or real(self, policy)
    )
    ok = run(*TUNE, "--runs-dir", tmp_path)
    assert ok.exit_code == 0, ok.stderr
    assert len(calls) == 1  # the one trial; nothing simulated to settle the method


def test_auto_scoring_settles_without_simulating(run, tmp_path, monkeypatch):
    def unsolvable(self, policy):
        raise ValueError("more than 300,000 states: the game is too large to solve exactly")

    simulated, solved = [], []
    real = tuning.Scorer._simulate
    monkeypatch.setattr(tuning.Scorer, "_exact", unsolvable)
    monkeypatch.setattr(
        tuning.Scorer, "_simulate", lambda self, policy: simulated.append(1) or real(self, policy)
    )
    args = [a for a in TUNE if a not in ("--scoring", "simulation")]
    ok = run(*args, "--runs-dir", tmp_path / "a")
    assert ok.exit_code == 0, ok.stderr
    assert len(simulated) == 1
    best = json.loads(next((tmp_path / "a").rglob("best.json")).read_text())
    assert "simulation" in best["scored_by"] and "too large" in best["note"]
    # exact: the defaults' value found while settling scores trial 0 (solved once, not twice)
    monkeypatch.undo()
    real_exact = tuning.Scorer._exact
    monkeypatch.setattr(
        tuning.Scorer, "_exact", lambda self, policy: solved.append(1) or real_exact(self, policy)
    )
    ok = run(*args, "--runs-dir", tmp_path / "b")
    assert ok.exit_code == 0, ok.stderr
    assert len(solved) == 1


def test_an_interrupt_while_settling_the_scoring_is_one_message(run, tmp_path, monkeypatch):
    def interrupted(self, policy):
        raise KeyboardInterrupt

    monkeypatch.setattr(tuning.Scorer, "_exact", interrupted)
    args = [a for a in TUNE if a not in ("--scoring", "simulation", "--no-progress")]
    result = run(*args, "--runs-dir", tmp_path)
    assert result.exit_code == 130, (result.exit_code, result.stderr)
    text = " ".join(result.stderr.split())
    assert "scoring: trying the exact solver" in text
    assert "interrupted: study '7th-single-phase-parametric'" in text
    assert "Re-run the same command to continue" in text and "Traceback" not in text


# ----------------------------------------------------------------------------- safe models
@pytest.fixture(scope="module")
def sb3_zip(tmp_path_factory):
    """A small MaskablePPO ``.zip`` (untrained) of the 7th-edition one-phase scenario."""
    import gymnasium as gym
    from sb3_contrib import MaskablePPO

    import psygym  # noqa: F401 - registers the env ids

    env = gym.make("psygym/Seventh-v0", scenario="single-phase")
    model = MaskablePPO("MlpPolicy", env, n_steps=16, batch_size=16, seed=0,
                        policy_kwargs={"net_arch": [8]}, device="cpu")  # fmt: skip
    path = tmp_path_factory.mktemp("zip") / "model7.zip"
    model.save(path)
    return path


def test_export_refuses_a_planted_link_in_one_line(run, tmp_path, sb3_zip):
    out = tmp_path / "exout"
    out.mkdir()
    outside = tmp_path / "outside.json"
    outside.write_text("outside")
    (out / "model7.json").symlink_to(outside)
    line = clean_error(run("export", sb3_zip, "--trust-pickle", "--out", out),
                       f"refusing to write {out / 'model7.json'}", "symbolic link",
                       str(outside))  # fmt: skip
    assert "link" in line
    assert (out / "model7.json").is_symlink() and outside.read_text() == "outside"
    assert sorted(p.name for p in out.iterdir()) == ["model7.json"]  # nothing else written


def test_export_keeps_a_users_files_named_like_temporary_ones(run, tmp_path, sb3_zip):
    out = tmp_path / "exout"
    out.mkdir()
    mine = {out / "model7.json.tmp": "my notes", out / "model7.safetensors.tmp": "mine too"}
    for path, text in mine.items():
        path.write_text(text)
    ok = run("export", sb3_zip, "--trust-pickle", "--out", out)
    assert ok.exit_code == 0, ok.stderr
    assert all(path.read_text() == text for path, text in mine.items())
    names = sorted(p.name for p in out.iterdir())
    assert names == ["model7.json", "model7.json.tmp", "model7.safetensors",
                     "model7.safetensors.tmp"]  # fmt: skip


def test_a_failed_safe_write_removes_only_its_own_temporary_file(tmp_path, monkeypatch):
    import numpy as np
    from psygym_agents.safe_model import write_safetensors
    from safetensors.numpy import save

    target = tmp_path / "w.safetensors"
    target.write_bytes(b"old")
    mine = tmp_path / "w.safetensors.tmp"
    mine.write_text("mine")

    def full(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    with pytest.raises(OSError, match="No space"):
        write_safetensors(target, save({"x": np.zeros(2, np.float32)}))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w.safetensors", "w.safetensors.tmp"]
    assert target.read_bytes() == b"old" and mine.read_text() == "mine"


def test_tune_jobs_are_bounded_like_workers(run, tmp_path):
    line = clean_error(run("tune", "--scenario", "single-phase", "--jobs", 1000, "--runs-dir",
                           tmp_path), "--jobs", "per CPU core")  # fmt: skip
    assert "1000 is too many" in line and not any(tmp_path.iterdir())
