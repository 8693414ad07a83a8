"""Phase backups of a general value (``backups`` in ``psygym train --algo value --scenario
random``): exact labels at the game's end, the stage's files, and its resume."""

from __future__ import annotations

import json

import numpy as np
import pytest
from psygym_agents.solvers.expectiminimax import Solver
from psygym_agents.solvers.search import phase_solver
from psygym_agents.value import BoardValue
from psygym_agents.value.general import general_value_path
from psygym_experiments.cli import app
from psygym_experiments.harness.general_value import GeneralConfig
from psygym_experiments.harness.phase_backups import _replay, board_table, label_level
from typer.testing import CliRunner

runner = CliRunner()

TINY = """\
iterations: 0
backups: 6
eval_lists: 1
eval_games: 1
max_epochs: 3
patience: 2
workers: 1
"""


def test_a_board_of_the_last_phase_is_labelled_with_the_exact_rest_of_its_game():
    cfg = GeneralConfig(edition="8th", scenario="random,rounds=1")
    value = str(general_value_path("8th"))  # the workers read the value from its file
    table = board_table(cfg, range(4))
    assert set(table["left"].tolist()) == {0, 1}  # one battle round: two Psychic phases
    checked = 0
    for g in range(4):
        rules, _, states, left = _replay(cfg, g)
        for game, i, label in label_level(cfg, [g], 0, value):
            assert game == g and left[i] == 0
            if phase_solver(rules, states[i], None) is None:
                continue  # the phase is past the budget: the search's fallback labels it
            exact = Solver(rules).value(states[i]) - rules.returns(states[i])[0]
            assert label == pytest.approx(exact, abs=1e-9)
            checked += 1
    assert checked >= 8


def test_train_with_phase_backups_writes_the_stage_and_resumes_a_level(tmp_path):
    config = tmp_path / "tiny.yml"
    config.write_text(TINY)
    args = ["train", "--algo", "value", "--edition", "8th", "--scenario", "random,rounds=1",
            "--steps", "20", "--runs-dir", str(tmp_path / "runs"),
            "--config", str(config)]  # fmt: skip
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    run = tmp_path / "runs" / "8th" / "random" / "value_1"
    metrics = json.loads((run / "metrics.json").read_text())
    assert [(m["iteration"], m.get("kind")) for m in metrics] == [(0, None), (1, "phase backups")]
    assert "iteration 1 (phase backups): held-out error" in result.output
    with np.load(run / "data" / "backups.npz") as data:
        labels, levels = data["label"], int(data["levels_done"])
    assert levels == 2 and np.isfinite(labels).all()
    final = BoardValue.load(run / "value.safetensors")
    assert final.meta["training"]["phase_backups"] == {"games": 6, "boards": len(labels),
                                                       "level": 1}  # fmt: skip
    # Forget the last level and the stage: a resume labels and fits that level alone again.
    before = (run / "checkpoints" / "backups_1.safetensors").read_bytes()
    with np.load(run / "data" / "backups.npz") as data:
        table = {k: data[k] for k in data.files}
    with np.load(run / "data" / "stage_0.npz") as data:
        assert len(data["phi"]) >= len(labels)  # the backups' games are the start's first ones
    left = table["left"]
    table["label"][left == 1] = np.nan
    table["levels_done"] = np.asarray(1)
    np.savez(run / "data" / "backups.npz", **table)
    (run / "checkpoints" / "backups_1.safetensors").unlink()
    progress = json.loads((run / "progress.json").read_text())
    progress["stages"], progress["metrics"] = [0], progress["metrics"][:1]
    (run / "progress.json").write_text(json.dumps(progress))
    result = runner.invoke(app, ["train", "--resume", str(run)])
    assert result.exit_code == 0, result.output
    assert (run / "checkpoints" / "backups_1.safetensors").read_bytes() == before
    with np.load(run / "data" / "backups.npz") as data:
        assert np.array_equal(data["label"], labels)
    assert json.loads((run / "metrics.json").read_text()) == metrics


def test_phase_backups_are_refused_for_hidden_hands_beyond_the_start_and_unchecked(tmp_path):
    cases = (
        ("backups: 3\n", "2nd", "hidden hands"),
        ("backups: 40\n", "8th", "backups must be at most steps"),
        ("seed: 1\nbackups: 5\n", "8th", "hold none of its validation games"),
    )
    for text, edition, message in cases:
        config = tmp_path / "bad.yml"
        config.write_text(text)
        result = runner.invoke(app, ["train", "--algo", "value", "--edition", edition,
                                     "--scenario", "random", "--steps", "30", "--config",
                                     str(config), "--runs-dir", str(tmp_path)])  # fmt: skip
        assert result.exit_code != 0 and message in result.output, result.output
        assert "Traceback" not in result.output
