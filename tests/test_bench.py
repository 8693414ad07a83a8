"""``psygym bench`` on tiny budgets: env ratios with their range, and ``--solver``."""

from __future__ import annotations

import csv
import io

import gymnasium as gym
from psygym_experiments.bench import reference_solve
from psygym_experiments.cli import app
from typer.testing import CliRunner

import psygym

runner = CliRunner()


def _csv(*args: str) -> list[list[str]]:
    res = runner.invoke(app, ["bench", *args, "--format", "csv"])
    assert res.exit_code == 0, res.output + repr(res.exception)
    return list(csv.reader(io.StringIO(res.output)))


def test_env_bench_csv_rows_and_ranges():
    rows = _csv("--steps", "300", "--rounds", "3")
    assert rows[0] == ["env", "steps_per_s", "ratio_to_blackjack", "ratio_min", "ratio_max"]
    ids = [i for i in psygym.env_ids().values() if i in gym.registry]
    names = [r[0] for r in rows[1:]]
    assert names[: len(ids) + 1] == ["Blackjack-v1", *ids]
    assert all(n.endswith(" batched N=256") for n in names[len(ids) + 1 :])  # compiled twins
    assert rows[1][2:] == ["1.0000", "1.0000", "1.0000"]
    for _, sps, ratio, low, high in rows[1:]:
        assert int(sps) > 0
        assert 0 < float(low) <= float(ratio) <= float(high)


def test_solver_bench_on_a_state_budget():
    rows = _csv("--solver", "--max-states", "2000", "--rounds", "2")
    assert rows[0] == ["solver", "states_per_s", "ratio_to_reference", "ratio_min", "ratio_max"]
    assert rows[1][0] == "reference expectimax" and rows[1][2] == "1.0000"
    assert rows[2][0].startswith("expectiminimax (")
    assert float(rows[2][3]) <= float(rows[2][2]) <= float(rows[2][4])


def test_solver_bench_table_names_no_edition_id():
    res = runner.invoke(app, ["bench", "--solver", "--max-states", "1000", "--rounds", "1"])
    assert res.exit_code == 0, res.output
    assert "states/s" in res.output and "reference expectimax" in res.output


def test_reference_solve_stops_at_its_budget():
    assert reference_solve(500) == 500
    assert reference_solve(10**9, turns=2, max_rolls=1) < 100  # a whole tiny game


def test_bench_bad_format():
    res = runner.invoke(app, ["bench", "--steps", "100", "--format", "xml"])
    assert res.exit_code == 2 and "--format" in res.output
