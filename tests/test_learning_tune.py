"""psygym tune: parametric and MaskablePPO searches, resumable studies, shared storages."""

from __future__ import annotations

import glob
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import optuna
import pytest
from psygym_agents.parametric import build, families, family_for, make_tuned
from psygym_agents.seventh.parametric import SeventhParametric
from psygym_experiments.cli import app
from psygym_experiments.harness.study_signals import StudyGuard
from psygym_experiments.harness.study_storage import open_storage
from psygym_experiments.harness.tuning import _optimize, tune_parametric, tune_rl
from typer.testing import CliRunner

from psygym.core import CHANCE, TERMINAL
from psygym.editions import available, load
from psygym.policies import resolve_policy

runner = CliRunner()
STUDY_KW = dict(episodes=20, method="simulation")


def _study(storage, name):
    return optuna.load_study(study_name=name, storage=storage)


def _plays_legally(rules, policy, games=10, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(games):
        s = rules.initial_state()
        while (p := rules.current_player(s)) != TERMINAL:
            if p == CHANCE:
                s = rules.apply(s, rules.sample_chance(s, rng))
                continue
            probs = policy.action_probabilities(rules, s, p)
            assert set(probs) <= set(rules.legal_actions(s))
            s = rules.apply(s, next(iter(probs)))


def test_tune_parametric_rerun_adds_trials_to_the_same_study(tmp_path):
    path = tune_parametric("7th", "single-phase", 3, seed=0, runs_dir=tmp_path, **STUDY_KW)
    storage = f"sqlite:///{(tmp_path / 'optuna.db').resolve()}"
    assert (tmp_path / "optuna.db").is_file()
    name = "7th-single-phase-parametric"
    assert len(_study(storage, name).trials) == 3
    path2 = tune_parametric("7th", "single-phase", 2, seed=0, runs_dir=tmp_path, **STUDY_KW)
    assert path2 == path
    trials = _study(storage, name).trials
    assert len(trials) == 5 and [t.number for t in trials] == [0, 1, 2, 3, 4]
    # the re-run samples new points instead of repeating the first run's
    firsts = {tuple(sorted(t.params.items())) for t in trials[:3]}
    assert not {tuple(sorted(t.params.items())) for t in trials[3:]} & firsts
    doc = json.loads(path.read_text())
    assert doc["edition"] == "7th" and doc["scenario"] == "single-phase"
    assert doc["family"] == "seventh-threshold" and doc["trials"] == 5
    assert set(doc["params"]) == set(SeventhParametric.KEYS)
    assert doc["value"] == max(t.value for t in trials)
    assert "common random numbers" in doc["scored_by"]
    for extra in ("trials.csv", "history.png", "config.yml", "command.txt"):
        assert (path.parent / extra).is_file()


def test_tuned_parameters_load_as_an_agent(tmp_path):
    path = tune_parametric("7th", "single-phase", 2, seed=1, runs_dir=tmp_path, **STUDY_KW)
    rules = load("7th", "single-phase")
    policy = resolve_policy(f"tuned:{path}", rules)
    assert policy.name == f"tuned:{path}"
    _plays_legally(rules, policy)
    assert resolve_policy(str(path), rules).name == policy.name  # bare .json path
    with pytest.raises(ValueError, match="edition 7th, not 8th"):
        make_tuned(load("8th", "default"), str(path))


def test_cli_tune_parametric(tmp_path):
    result = runner.invoke(app, [
        "tune", "--edition", "7th", "--scenario", "single-phase", "--target", "parametric",
        "--trials", "2", "--episodes", "10", "--scoring", "simulation", "--runs-dir",
        str(tmp_path), "--study", "cli", "--no-progress",
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "tuned:" in result.output
    assert (tmp_path / "7th" / "single-phase" / "tune_cli" / "best.json").is_file()
    bad = runner.invoke(app, ["tune", "--target", "sgd", "--runs-dir", str(tmp_path)])
    assert bad.exit_code == 2 and "parametric, maskable-ppo" in bad.output
    bad = runner.invoke(app, ["tune", "--storage", "nonsense", "--runs-dir", str(tmp_path)])
    assert bad.exit_code == 2 and "storage URL" in bad.output


def test_tune_maskable_ppo_prunes_and_loads_the_best_model(tmp_path):
    path = tune_rl("7th", "single-phase", 2, seed=0, runs_dir=tmp_path, trial_steps=128,
                   eval_every=64, eval_episodes=4, n_envs=2)  # fmt: skip
    doc = json.loads(path.read_text())
    assert doc["family"] == "maskable-ppo"
    assert {"learning_rate", "n_steps", "ent_coef", "gamma", "net"} <= set(doc["params"])
    assert (path.parent / doc["model"]).is_file()
    rules = load("7th", "single-phase")
    policy = resolve_policy(f"tuned:{path}", rules)
    _plays_legally(rules, policy, games=3)
    storage = f"sqlite:///{(tmp_path / 'optuna.db').resolve()}"
    trials = _study(storage, "7th-single-phase-maskable-ppo").trials
    assert len(trials) == 2
    assert all(t.intermediate_values for t in trials)  # every evaluation was reported


def test_journal_storage_spec(tmp_path):
    spec = f"journal:{tmp_path / 'shared' / 'journal.log'}"
    tune_parametric("7th", "single-phase", 2, seed=0, runs_dir=tmp_path, storage=spec,
                    **STUDY_KW)  # fmt: skip
    tune_parametric("7th", "single-phase", 1, seed=5, runs_dir=tmp_path, storage=spec,
                    **STUDY_KW)  # fmt: skip
    storage = open_storage(spec, tmp_path)
    assert len(_study(storage, "7th-single-phase-parametric").trials) == 3
    assert not (tmp_path / "optuna.db").exists()


@pytest.mark.parametrize("edition", sorted(families()))
def test_each_family_samples_builds_and_plays_legally(edition):
    if edition not in available():
        pytest.skip(f"edition {edition} not installed")
    rules = load(edition, "default")
    fam = family_for(edition)
    params = fam.defaults(rules)
    sampled = fam.sample(optuna.trial.FixedTrial(params), rules)
    assert sampled == params
    _plays_legally(rules, build(rules, params), games=5)
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    for _ in range(3):
        trial = study.ask()
        _plays_legally(rules, build(rules, fam.sample(trial, rules)), games=3, seed=trial.number)
        study.tell(trial, 0.0)


def test_seventh_family_dice_rule():
    p = SeventhParametric({"dice_a": 1.5, "dice_b": 1.0, "stop_pool": 3, "deny_ratio": 1.0,
                           "deny_confidence": 0.5, "deny_min_value": 0.0})  # fmt: skip
    assert p.dice(2, 10) == 4  # round(1.5 * 2 + 1)
    assert p.dice(1, 10) == 3  # round(2.5) -> 3 (half up)
    assert p.dice(2, 3) == 3  # clipped to the pool
    assert p.dice(1, 2) == 0  # fewer dice than the stop threshold
    assert p.dice(3, 3) == 3  # at least the warp charge


def test_no_family_names_the_editions_that_have_one():
    with pytest.raises(ValueError, match="families exist for: 2nd, 7th, 8th, rt"):
        family_for("nonexistent")


# ----------------------------------------------------------------------------- PostgreSQL
def _pg_bin(name: str) -> str | None:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return found[-1] if found else shutil.which(name)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def postgres_url():
    """A throwaway PostgreSQL server on a free localhost port (skipped when unavailable)."""
    initdb, pg_ctl = _pg_bin("initdb"), _pg_bin("pg_ctl")
    if not initdb or not pg_ctl:
        pytest.skip("PostgreSQL server binaries (initdb, pg_ctl) not found: apt-get install "
                    "postgresql")  # fmt: skip
    try:
        import psycopg2
    except ImportError:
        pytest.skip("psycopg2 is not installed (pip install psycopg2-binary)")
    prefix: list[str] = []
    workdir = Path(tempfile.mkdtemp(prefix="psygym-pg-"))
    if os.geteuid() == 0:  # PostgreSQL refuses to run as root: use the postgres account
        import pwd

        try:
            pw = pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root and there is no 'postgres' user to run the server")
        os.chown(workdir, pw.pw_uid, pw.pw_gid)
        prefix = ["runuser", "-u", "postgres", "--"]
    data, port = workdir / "data", _free_port()

    def run(*cmd: str) -> None:
        subprocess.run([*prefix, *cmd], check=True, capture_output=True, text=True, timeout=120)

    try:
        run(initdb, "-D", str(data), "-A", "trust", "-U", "postgres", "--no-sync")
        run(
            pg_ctl,
            "-D",
            str(data),
            "-l",
            str(workdir / "log"),
            "-w",
            "-t",
            "60",
            "-o",
            f"-p {port} -k {workdir} -c listen_addresses=127.0.0.1 -c fsync=off",
            "start",
        )
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        shutil.rmtree(workdir, ignore_errors=True)
        pytest.skip(f"could not start PostgreSQL: {getattr(exc, 'stderr', exc)}")
    try:
        conn = psycopg2.connect(host="127.0.0.1", port=port, user="postgres", dbname="postgres")
        conn.autocommit = True
        conn.cursor().execute("CREATE DATABASE optuna")
        conn.close()
        yield f"postgresql://postgres@127.0.0.1:{port}/optuna"
    finally:
        subprocess.run([*prefix, pg_ctl, "-D", str(data), "-m", "fast", "-w", "stop"],
                       capture_output=True, timeout=120)  # fmt: skip
        shutil.rmtree(workdir, ignore_errors=True)


@pytest.mark.slow
def test_two_workers_share_one_study_in_postgresql(tmp_path, postgres_url):
    base = [sys.executable, "-m", "psygym_experiments.cli", "tune", "--edition", "7th",
            "--scenario", "single-phase", "--target", "parametric", "--trials", "4",
            "--episodes", "20",
            "--scoring", "simulation", "--storage", postgres_url, "--study", "shared",
            "--no-progress"]  # fmt: skip
    workers = [
        subprocess.Popen([*base, "--seed", str(seed), "--runs-dir", str(tmp_path / f"w{seed}")],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for seed in (1, 2)
    ]  # fmt: skip
    outputs = [w.communicate(timeout=300)[0] for w in workers]
    for w, out in zip(workers, outputs):
        assert w.returncode == 0, out
    study = optuna.load_study(study_name="shared", storage=open_storage(postgres_url, tmp_path))
    done = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    by_worker = {t.user_attrs["worker"] for t in done}
    assert len(by_worker) == 2, by_worker  # trials from both processes are in the one study
    assert len(done) >= 8
    # each worker's best.json reports the best of the shared study so far
    best = json.loads((tmp_path / "w2" / "7th" / "single-phase" / "tune_shared" /
                       "best.json").read_text())  # fmt: skip
    assert best["study"] == "shared" and best["trials"] >= 4


@pytest.mark.slow
def test_sigterm_stops_a_study_cleanly_and_a_rerun_continues_it(tmp_path):
    cmd = [sys.executable, "-m", "psygym_experiments.cli", "tune", "--edition", "7th", "--scenario",
           "single-phase", "--trials", "100000", "--episodes", "30", "--scoring", "simulation",
           "--runs-dir", str(tmp_path), "--study", "stop", "--no-progress"]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    storage = f"sqlite:///{(tmp_path / 'optuna.db').resolve()}"
    deadline = time.monotonic() + 240
    while True:
        try:
            if len(optuna.load_study(study_name="stop", storage=storage).trials) >= 3:
                break
        except KeyError:
            pass
        assert proc.poll() is None, proc.stdout.read()
        assert time.monotonic() < deadline, "no trials appeared"
        time.sleep(0.3)
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 130, out
    assert "Re-run the same command to continue" in out and "Traceback" not in out
    done = [t for t in optuna.load_study(study_name="stop", storage=storage).trials
            if t.value is not None]  # fmt: skip
    best = json.loads((tmp_path / "7th" / "single-phase" / "tune_stop" / "best.json").read_text())
    assert best["value"] == max(t.value for t in done)
    path = tune_parametric("7th", "single-phase", 2, seed=3, runs_dir=tmp_path, study="stop",
                           **STUDY_KW)  # fmt: skip
    after = optuna.load_study(study_name="stop", storage=storage).trials
    assert len([t for t in after if t.value is not None]) == len(done) + 2
    assert path.is_file()


def test_a_signal_during_a_storage_call_lets_it_finish_then_ends_the_trial(tmp_path, monkeypatch):
    # Interrupting a storage call half way (a SQLite commit) left Optuna unable to mark the
    # trial failed ("Should not reach."): the signal now waits for the call to return.
    study = optuna.create_study(study_name="s", storage=f"sqlite:///{tmp_path / 'o.db'}",
                                direction="maximize")  # fmt: skip
    real = study._storage.set_trial_user_attr

    def signalled(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGTERM)  # its handler runs here, before the real call
        return real(*args, **kwargs)

    monkeypatch.setattr(study._storage, "set_trial_user_attr", signalled)
    computed = []

    def objective(trial):
        trial.set_user_attr("worker", "w")
        computed.append(trial.number)
        return 1.0

    assert _optimize(study, objective, trials=5, jobs=1, show=False, timeout=None) is True
    [trial] = study.trials
    assert trial.state == optuna.trial.TrialState.FAIL and trial.user_attrs == {"worker": "w"}
    assert computed == []
    monkeypatch.undo()
    study.optimize(lambda t: 2.0, n_trials=1)
    assert [t.state.name for t in study.trials] == ["FAIL", "COMPLETE"]


def test_a_signal_with_two_jobs_lets_the_trials_under_way_finish(tmp_path, monkeypatch):
    # The trials run in Optuna's threads; the handler on the main thread may not call
    # study.stop() there (Optuna refuses: "supposed to be invoked inside an objective").
    study = optuna.create_study(study_name="s", storage=f"sqlite:///{tmp_path / 'o.db'}",
                                direction="maximize")  # fmt: skip
    real, sent = study._storage.set_trial_user_attr, []

    def signalled(*args, **kwargs):
        if not sent:
            sent.append(os.kill(os.getpid(), signal.SIGTERM))
            time.sleep(0.3)  # this trial is inside its storage call when the handler runs
        return real(*args, **kwargs)

    monkeypatch.setattr(study._storage, "set_trial_user_attr", signalled)

    def objective(trial):
        trial.set_user_attr("worker", "w")
        return 1.0

    assert _optimize(study, objective, trials=1000, jobs=2, show=False, timeout=None) is True
    states = {t.state.name for t in study.trials}
    assert states == {"COMPLETE"} and len(study.trials) < 1000
    # Between trials too: the handler stops the main thread's wait, it never asks Optuna.
    guard = StudyGuard(study, jobs=2)
    with guard.installed(), pytest.raises(KeyboardInterrupt):
        guard.on_signal(signal.SIGTERM, None)


def test_two_jobs_on_sqlite_never_take_the_same_queued_trial(tmp_path, monkeypatch):
    """Both jobs read the queued trial before either marks it running; only one may take it."""
    import threading

    from optuna.storages._rdb import models
    from psygym_experiments.harness.tuning import _open_study

    study = _open_study(open_storage(None, tmp_path), "queued", seed=0)
    study.enqueue_trial({"x": 1.0})
    read = threading.Barrier(2, timeout=1.0)
    find = models.TrialModel.find_or_raise_by_id

    def find_then_wait(trial_id, session, for_update=False):
        trial = find(trial_id, session, for_update=for_update)
        if for_update:  # the read before the write: wait here for the other job's read
            try:
                read.wait()
            except threading.BrokenBarrierError:  # the other job waits for this one's lock
                pass
        return trial

    monkeypatch.setattr(models.TrialModel, "find_or_raise_by_id", find_then_wait)
    taken = []
    jobs = [threading.Thread(target=lambda: taken.append(study._pop_waiting_trial_id()))
            for _ in range(2)]  # fmt: skip
    for job in jobs:
        job.start()
    for job in jobs:
        job.join()
    assert len(taken) == 2 and taken.count(None) == 1, taken  # one job found the queue empty
    assert study.trials[0]._trial_id in taken
