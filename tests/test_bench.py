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
    # Each env, followed by its reference line where the compiled core steps it
    # (psygym.engine.episode); then one batched line per edition whose twin observes.
    singles = [n for n in names[1:] if not n.endswith(" batched N=256")]
    assert names[0] == "Blackjack-v1" and [n for n in singles if n in ids] == ids
    for k, name in enumerate(singles):
        if name.endswith(" reference"):
            assert singles[k - 1] == name.removesuffix(" reference")
    assert names[len(singles) + 1 :] and all(
        n.endswith(" batched N=256") for n in names[len(singles) + 1 :]
    )
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


def test_bench_all_refuses_a_second_choice():
    for args, words in ((["--all", "--solver"], "--solver"), (["--all", "--format", "csv"], "csv")):
        res = runner.invoke(app, ["bench", *args])
        assert res.exit_code == 2 and "--all" in res.output and words in res.output
