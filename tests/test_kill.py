"""Killed commands leave no orphan worker and resume with continuous bookkeeping (loose timing)."""

from __future__ import annotations

import csv
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

CLI = [sys.executable, "-m", "psygym_experiments.cli"]


def _children(pid: int) -> set[int]:
    """Pids whose parent is ``pid`` (from /proc)."""
    out = set()
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.add(int(d.name))
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


COMMANDS = {
    "evaluate": ["evaluate", "--edition", "7th", "--scenario", "duel", "--episodes", "200000",
                 "--workers", "2", "--no-exact"],
    "compare": ["compare", "--edition", "7th", "--episodes", "100000", "--workers", "2"],
}  # fmt: skip
"""Long runs whose worker processes (games, exact values, answer tables) a kill must take down."""


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_killed_command_leaves_no_worker_behind(sig, command, tmp_path):
    proc = subprocess.Popen([*CLI, *COMMANDS[command], "--runs-dir", str(tmp_path)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    workers: set[int] = set()
    deadline = time.monotonic() + 60
    while len(workers) < 2 and time.monotonic() < deadline and proc.poll() is None:
        workers = _children(proc.pid)
        time.sleep(0.2)
    assert len(workers) >= 2, "the workers never started"
    proc.send_signal(sig)
    proc.wait(timeout=30)
    deadline = time.monotonic() + 5
    while any(_alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [w for w in workers if _alive(w)]
    for w in left:
        os.kill(w, signal.SIGKILL)
    assert not left, f"orphans after {sig.name}: {left}"


# ----------------------------------------------------------------------------- train and tune
SMALL = (
    "n_envs: 1\nn_steps: 64\nbatch_size: 64\nn_epochs: 1\npolicy_kwargs:\n  net_arch: [16, 16]\n"
)
"""A tiny MaskablePPO config: an evaluation + checkpoint every few hundred steps, quickly."""


def _train_argv(tmp_path: Path, *extra: str) -> list[str]:
    cfg = tmp_path / "small.yml"
    cfg.write_text(SMALL)
    return [*CLI, "train", "--edition", "7th", "--scenario", "single-phase", "--config", str(cfg),
            "--eval-episodes", "10", "--no-progress", "--runs-dir", str(tmp_path / "runs"),
            *extra]  # fmt: skip


def _wait_for(what, proc: subprocess.Popen, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while not what():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"the command ended or timed out first (exit {proc.poll()})")
        time.sleep(0.05)


def _metrics(run: Path) -> list[tuple[int, float]]:
    with (run / "metrics.csv").open(newline="") as f:
        return [(int(r["step"]), float(r["wall_time"])) for r in csv.DictReader(f)]


def _assert_continuous(rows: list[tuple[int, float]]) -> None:
    steps, walls = [s for s, _ in rows], [w for _, w in rows]
    assert steps == sorted(set(steps)), f"a step is repeated or out of order: {steps}"
    assert walls == sorted(walls), f"wall time runs backwards: {walls}"


TOTAL = 7680
"""Steps of the random-kill run (40 evaluations)."""


@pytest.mark.slow
def test_train_sigkill_at_a_random_moment_then_resume_is_continuous(tmp_path):
    run = tmp_path / "runs" / "7th" / "single-phase" / "maskable-ppo_1"
    # Enough steps that no machine finishes them within the random delay below.
    proc = subprocess.Popen(_train_argv(tmp_path, "--steps", str(TOTAL), "--eval-every", "192"),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    _wait_for(lambda: (run / "checkpoints" / "last.json").is_file(), proc)
    delay = random.uniform(0.0, 1.5)  # anywhere in the next few evaluations and checkpoints
    time.sleep(delay)
    proc.kill()
    proc.wait(timeout=30)
    killed_at = json.loads((run / "checkpoints" / "last.json").read_text())["steps"]
    assert killed_at < TOTAL, f"finished before the kill (delay {delay:.2f} s)"
    done = subprocess.run([*CLI, "train", "--resume", str(run), "--no-progress"],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = _metrics(run)
    _assert_continuous(rows)
    final = json.loads((run / "checkpoints" / "last.json").read_text())["steps"]
    assert final >= TOTAL and rows[-1][0] == final, (delay, rows)
    assert [s for s, _ in rows] == list(range(0, final + 1, 192)), (delay, killed_at)


@pytest.mark.slow
def test_train_killed_before_its_first_checkpoint_resumes_from_step_0(tmp_path):
    run = tmp_path / "runs" / "7th" / "single-phase" / "maskable-ppo_1"
    proc = subprocess.Popen(_train_argv(tmp_path, "--steps", "100000", "--eval-every", "100000"),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    _wait_for(lambda: (run / "metrics.csv").is_file(), proc)  # the step-0 evaluation
    proc.kill()
    proc.wait(timeout=30)
    assert not (run / "checkpoints" / "last.json").exists()
    done = subprocess.run([*CLI, "train", "--resume", str(run), "--steps", "256", "--no-progress"],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "from step 0" in done.stderr
    rows = _metrics(run)
    _assert_continuous(rows)
    assert [s for s, _ in rows] == [0, 256]
    assert json.loads((run / "checkpoints" / "last.json").read_text())["steps"] == 256


@pytest.mark.slow
def test_tune_sigkill_leaves_no_running_trial_and_failed_ones_are_not_counted(tmp_path):
    import optuna

    runs = tmp_path / "runs"
    argv = [*CLI, "tune", "--edition", "7th", "--scenario", "single-phase", "--scoring",
            "simulation", "--episodes", "3000", "--seed", "0", "--runs-dir", str(runs),
            "--no-progress"]  # fmt: skip
    storage = f"sqlite:///{runs.resolve() / 'optuna.db'}"
    name = "7th-single-phase-parametric"

    def states() -> list[str]:
        try:
            study = optuna.load_study(study_name=name, storage=storage)
        except Exception:  # noqa: BLE001 - not created yet (or the tables are being made)
            return []
        return [t.state.name for t in study.get_trials(deepcopy=False)]

    proc = subprocess.Popen([*argv, "--trials", "500"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    _wait_for(lambda: "COMPLETE" in (s := states()) and s[-1] == "RUNNING", proc)
    time.sleep(random.uniform(0.0, 0.3))  # a random point of a trial (about a second each)
    _wait_for(lambda: states()[-1:] == ["RUNNING"], proc)  # a fast one may have ended: the next
    proc.kill()
    proc.wait(timeout=30)
    assert "RUNNING" in states(), "no trial was in progress at the kill"
    done = subprocess.run([*argv, "--trials", "1"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    after = states()
    assert "RUNNING" not in after, after
    failed, finished = after.count("FAIL"), after.count("COMPLETE") + after.count("PRUNED")
    assert failed >= 1
    best = json.loads(next(runs.rglob("best.json")).read_text())
    assert (best["trials"], best["failed"]) == (finished, failed)
    assert best["trials"] < len(after)
    assert f"{finished} finished trials ({failed} failed" in " ".join(done.stdout.split())


def test_a_trial_killed_before_it_names_its_worker_fails_once_its_tuners_are_gone(tmp_path):
    """Optuna creates a trial before the objective names the worker: a kill in between."""
    import socket

    import optuna
    from psygym_experiments.harness.tuning import _open_study
    from psygym_experiments.harness.tuning_workers import fail_orphaned_trials

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    tuner = f"psygym-tuner:{socket.gethostname()}:"

    def study_with_an_unnamed_trial(name: str, tuners: list[str]) -> optuna.Study:
        study = optuna.create_study(study_name=name, storage=storage, direction="maximize")
        for pid in tuners:
            study._storage.set_study_system_attr(study._study_id, tuner + pid, True)
        study.ask()  # RUNNING, and no worker named: its tuner was killed right here
        return study

    storage = f"sqlite:///{(tmp_path / 'optuna.db').resolve()}"
    both = study_with_an_unnamed_trial("both", [dead, str(os.getpid())])
    assert fail_orphaned_trials(both) == [], "a live tuner of the study may have made it"
    assert [t.state.name for t in both.trials] == ["RUNNING"]
    nobody = study_with_an_unnamed_trial("nobody", [])
    assert fail_orphaned_trials(nobody) == [], "not made by a psygym tuner: left alone"

    study_with_an_unnamed_trial("killed", [dead])
    reopened = _open_study(storage, "killed", seed=0)
    (trial,) = reopened.trials
    assert (trial.state.name, trial.user_attrs["orphaned"]) == ("FAIL", "its tuners are all gone")
    attrs = reopened._storage.get_study_system_attrs(reopened._study_id)
    assert tuner + str(os.getpid()) in attrs, "the reopening tuner registers itself"
