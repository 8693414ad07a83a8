"""psygym train --algo value: a tiny run, its files, resuming, the fit, the backup, bad input."""

from __future__ import annotations

import csv
import json
import signal

import numpy as np
import pytest
from psygym_agents.solvers.expectiminimax import Solver
from psygym_agents.value import BoardValue
from psygym_agents.value.fit import fit_value
from psygym_experiments.cli import app
from psygym_experiments.harness import value_training
from psygym_experiments.harness.value_boards import (
    Boards,
    backup,
    next_phase_board,
    phase_index,
    play_boards,
    replay_states,
)
from psygym_experiments.harness.value_config import make_value_config
from typer.testing import CliRunner

import psygym

runner = CliRunner()
TINY = """\
sweeps: 1
sweep_games: 3
relabel: 15
eval_boards: 4
max_epochs: 20
refit_epochs: 6
patience: 4
"""


def _train(*args: str):
    return runner.invoke(app, ["train", "--algo", "value", "--no-progress", *args])


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """One tiny 8th-edition duel run (20 Monte-Carlo games, one sweep)."""
    base = tmp_path_factory.mktemp("value")
    (base / "tiny.yml").write_text(TINY)
    result = _train(
        "--edition", "8th", "--scenario", "duel", "--steps", "20", "--seed", "3",
        "--config", str(base / "tiny.yml"), "--runs-dir", str(base / "runs"),
        "--export", str(base / "exported" / "v"),
    )  # fmt: skip
    assert result.exit_code == 0, (result.output, result.exception)
    return base, base / "runs" / "8th" / "duel" / "value_1", result.output


def test_tiny_run_writes_model_metrics_and_curve(tiny):
    base, run, output = tiny
    names = ("value.safetensors", "value.json", "metrics.csv", "metrics.json",
             "learning_curve.png", "fits.csv", "config.yml", "command.txt", "seed.txt")  # fmt: skip
    for name in names:
        assert (run / name).is_file(), name
    assert (run / "learning_curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    model = BoardValue.load(run / "value.safetensors")
    rules = psygym.load("8th", "duel")
    model.check_rules(rules)
    assert isinstance(model.meta["rmse"], float) and model.meta["rmse"] >= 0
    rounds = [r["round"] for r in model.meta["rounds"]]
    assert rounds == sorted(rounds) and set(rounds) <= {1, 2, 3, 4, 5} and 5 in rounds
    rows = list(csv.DictReader((run / "metrics.csv").open()))
    final = [r for r in rows if r["model"] == "final"]
    assert final[-1]["round"] == "all" and float(final[-1]["bellman_rmse"]) == pytest.approx(
        model.meta["rmse"]
    )
    doc = json.loads((run / "metrics.json").read_text())
    assert doc["rmse"] == pytest.approx(model.meta["rmse"])
    assert doc["timings"]["backup"]["count"] > 0
    assert "Bellman RMSE" in output
    exported = BoardValue.load(base / "exported" / "v.safetensors")
    x = np.random.default_rng(0).normal(size=(5, rules.observation_size))
    assert np.array_equal(exported.predict(x), model.predict(x))
    assert not list(run.glob("**/*.pkl")) and not list(run.glob("**/*.pt"))


def test_an_interrupted_run_resumes_to_the_same_model(tiny, monkeypatch):
    """Stop a copy of the tiny run mid-way (as SIGTERM would), resume it, get the same model."""
    base, done_run, _ = tiny
    calls = {"n": 0}

    def stop_after_a_while(self):
        calls["n"] += 1
        if calls["n"] == 45:  # inside the sweep (20 games + the first fit's epochs before)
            self.stop.signum = signal.SIGTERM
        return self.stop.signum != 0

    monkeypatch.setattr(value_training._Run, "check_stop", stop_after_a_while)
    result = _train(
        "--edition", "8th", "--scenario", "duel", "--steps", "20", "--seed", "3",
        "--config", str(base / "tiny.yml"), "--runs-dir", str(base / "again"),
    )  # fmt: skip
    assert result.exit_code == 128 + signal.SIGTERM, result.output
    run = base / "again" / "8th" / "duel" / "value_1"
    assert "--resume" in result.output and not (run / "value.safetensors").exists()
    finished = json.loads((run / "progress.json").read_text())["done"]
    assert "games-0" in finished and "eval-final" not in finished
    monkeypatch.undo()

    result = runner.invoke(app, ["train", "--resume", str(run), "--no-progress"])
    assert result.exit_code == 0, (result.output, result.exception)
    resumed, straight = BoardValue.load(run / "value"), BoardValue.load(done_run / "value")
    x = np.random.default_rng(1).normal(size=(20, resumed.input_size))
    assert np.array_equal(resumed.predict(x), straight.predict(x))
    assert resumed.meta["rmse"] == straight.meta["rmse"]
    assert (run / "command.txt").read_text().count("\n") == 2


FIT = dict(hidden=(16, 16), lr=1e-2, batch=16, max_epochs=60, seed=1)


def test_the_saved_model_reproduces_the_fitted_net(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(300, 6)) * [1, 2, 3, 0.5, 1, 0]  # one constant column
    y = np.tanh(x[:, 0]) * 3 + x[:, 1] + rng.normal(scale=0.1, size=300)
    res = fit_value(x[:250], y[:250], x[250:], y[250:], **FIT)
    assert res.history and 0 <= res.best_epoch <= len(res.history)
    assert np.allclose(res.net.predict(x), res.value.predict(x), atol=1e-4)
    res.value.save(tmp_path / "v")
    loaded = BoardValue.load(tmp_path / "v.json")
    assert np.array_equal(loaded.predict(x), res.value.predict(x))
    # it learned something: far better than predicting the mean
    assert np.mean((res.value.predict(x[250:]) - y[250:]) ** 2) < 0.5 * np.var(y[250:])
    again = fit_value(x[:250], y[:250], x[250:], y[250:], **FIT)
    assert np.array_equal(again.value.predict(x), res.value.predict(x))  # reproducible


def test_a_monotone_direction_undoes_a_confounded_slope():
    """Column 0 is a resource the weak hold (as heuristics' psykers keep points they have no
    use for), column 1 a noisy reading of strength: fitted to outcomes alone the value falls
    with the resource, with the direction it does not."""
    rng = np.random.default_rng(0)
    strength = rng.uniform(size=400)
    resource = np.round(5 * (1 - strength) + rng.normal(scale=0.5, size=400))
    x = np.column_stack([resource, strength + rng.normal(scale=0.3, size=400)])
    y = 4 * strength + 0.05 * resource
    up = np.array([1.0, 0.0])
    args = (x[:320], y[:320], x[320:], y[320:])
    plain = fit_value(*args, **FIT)
    mono = fit_value(*args, monotone=[up], **FIT)
    plain_gap = plain.value.predict(x + up) - plain.value.predict(x)
    gap = mono.value.predict(x + up) - mono.value.predict(x)
    assert np.mean(plain_gap) < -0.3  # the confounded slope
    assert gap.min() > -0.02 and np.mean(gap < -0.005) < 0.25
    assert min(v for _, _, v in mono.history) < 0.6 * np.var(y[320:])  # still fits outcomes


def test_a_board_in_the_last_step_backs_up_exactly():
    """Where the step's search reaches no edge, the backup is the exact solver's value minus
    the score so far, whatever V says (a V of about +50 would show in any leaf)."""
    rules = psygym.load("8th", "duel")
    boards, states = play_boards(rules, 8, seed=1, stage=0)
    n = rules.observation_size
    rng = np.random.default_rng(0)
    big = BoardValue([(rng.normal(size=(n, 1)), np.array([50.0]))], np.zeros(n), np.ones(n))
    checked = 0
    for g in range(8):
        last = states[np.flatnonzero(boards.game == g)[-1]]
        step = Solver(rules, within=rules.horizon(last),
                      leaf=lambda s: rules.returns(s)[0] + big(rules, s))  # fmt: skip
        step.value(last)
        if not step.exact:  # another choice in this step would reach a further step
            continue
        exact = Solver(rules, max_states=500_000).value(last) - rules.returns(last)[0]
        assert backup(rules, big, last) == pytest.approx(exact, abs=1e-9)
        checked += 1
    assert checked >= 3
    # and a board with steps after it does use V: the backup moves with V's output
    first = states[0]
    small = BoardValue([(np.zeros((n, 1)), np.array([0.0]))], np.zeros(n), np.ones(n))
    assert backup(rules, big, first) != pytest.approx(backup(rules, small, first))


def test_boards_are_where_the_horizon_changes_and_replay_exactly(tmp_path):
    rules = psygym.load("rt", "duel")
    boards, states = play_boards(rules, 5, seed=2, stage=0, random_move=0.5)
    assert len(boards) > 0 and len(states) == len(boards)
    boards.save(tmp_path / "b.npz")
    again = Boards.load(tmp_path / "b.npz")
    assert replay_states(rules, again) == states
    for b, x, r, so_far in zip(states, again.x, again.round, again.score):
        assert np.array_equal(rules.observe(b, 0).astype(np.float32), x)
        assert rules.horizon(b)[0] == r and rules.returns(b)[0] == so_far
    # a board is reached from a state of another horizon, so no two in a row share one
    for g in range(5):
        rows = np.flatnonzero(again.game == g)
        hs = [rules.horizon(states[i]) for i in rows]
        assert hs == sorted(hs) and len(set(hs)) == len(hs)
    # every game's final score minus a board's score is its target
    same = play_boards(rules, 5, seed=2, stage=0, random_move=0.5)[0]
    assert np.array_equal(same.target, again.target)  # reproducible


def test_phase_index_counts_phase_events_and_next_board_starts_the_next_phase():
    """Each board's phase is the PHASE events so far; its next board is the next phase's first."""
    rules = psygym.load("7th", "duel")
    boards, states = play_boards(rules, 4, seed=5, stage=0, random_move=0.2)
    phase = phase_index(rules, boards)
    # 7th keeps the index of its Psychic phase in the state (two per battle round); the first
    # phase begins without a PHASE event, right after power generation (7E-2)
    assert phase.tolist() == [s.phase for s in states] and phase.max() >= 6
    nxt = next_phase_board(boards, phase)
    for i, j in enumerate(nxt.tolist()):
        same_game = np.flatnonzero(boards.game == boards.game[i])
        later = [k for k in same_game if phase[k] > phase[i]]
        if not later:
            assert j == -1
            continue
        first = min(later, key=lambda k: (phase[k], boards.ply[k]))
        assert j == first and boards.game[j] == boards.game[i]


def test_phase_td_labels_are_the_gain_to_the_next_phase_plus_its_value(tmp_path):
    """A run with phase_td: 1 labels each board by score gained to the next phase plus V there."""
    (tmp_path / "td.yml").write_text(
        "phase_td: 1\nsweeps: 0\neval_boards: 2\nmax_epochs: 5\nrefit_epochs: 3\npatience: 2\n"
    )
    result = _train(
        "--edition", "8th", "--scenario", "duel", "--steps", "12", "--seed", "1",
        "--config", str(tmp_path / "td.yml"), "--runs-dir", str(tmp_path / "runs"),
    )  # fmt: skip
    assert result.exit_code == 0, (result.output, result.exception)
    run = tmp_path / "runs" / "8th" / "duel" / "value_1"
    boards = Boards.load(run / "data" / "games-0.npz")
    with np.load(run / "labels" / "td-1.npz", allow_pickle=False) as data:
        label = data["target"]
    mc = BoardValue.load(run / "checkpoints" / "fit-0.safetensors")
    nxt = next_phase_board(boards, phase_index(psygym.load("8th", "duel"), boards))
    has = nxt >= 0
    assert 0 < has.sum() < len(boards)  # last-phase boards keep their Monte-Carlo target
    want = boards.score[nxt[has]] - boards.score[has] + mc.predict(boards.x[nxt[has]])
    assert np.allclose(label[has], want) and np.array_equal(label[~has], boards.target[~has])
    meta = BoardValue.load(run / "value").meta
    assert "phase-TD" in meta["method"] and meta["config"]["phase_td"] == 1


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--edition", "8th", "--scenario", "no-such-scenario"], ["no-such-scenario"]),
        (["--edition", "8th", "--scenario", "duel", "--steps", "-5"], ["--steps", "-5"]),
        (["--edition", "8th", "--scenario", "duel", "--steps", "2"], ["--steps", "3"]),
        (["--edition", "8th", "--scenario", "duel", "--opponent", "deny-always"], ["--opponent"]),
        (["--edition", "2nd", "--scenario", "duel"], ["hidden"]),
    ],
)
def test_bad_input_is_one_clear_line(tmp_path, args, words):
    result = _train(*args, "--runs-dir", str(tmp_path / "runs"))
    assert result.exit_code == 2, (result.output, result.exception)
    assert isinstance(result.exception, SystemExit)
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for w in words:
        assert w in lines[0]
    assert "Traceback" not in result.output
    assert not (tmp_path / "runs").exists()  # nothing written


def test_a_bad_setting_in_the_config_is_named():
    with pytest.raises(ValueError, match="unknown setting sweeeps"):
        make_value_config("8th", "duel", 10, overrides={"sweeeps": 1})
    with pytest.raises(ValueError, match="search_share"):
        make_value_config("8th", "duel", 10, overrides={"search_share": 2})
