"""The toy edition, registered only in-process, shows up in every command that lists editions.

Nothing outside ``tests/toy_edition/`` and the test modules knows it: the commands find it
through ``psygym.edition``, ``psygym.policies`` and ``psygym.envs.register_envs()``.
"""

from __future__ import annotations

import csv
import io
import json

from psygym_experiments.cli import app
from typer.testing import CliRunner

import psygym

runner = CliRunner()


def _ok(*args: str, input: str | None = None) -> str:
    res = runner.invoke(app, list(args), input=input)
    assert res.exit_code == 0, res.output + repr(res.exception)
    return res.output


def test_toy_is_registered_and_solvable(toy_edition):
    assert toy_edition.id in psygym.edition.ids()
    assert psygym.env_ids()[toy_edition.id] == toy_edition.env_id
    rules = psygym.load(toy_edition.id, toy_edition.solvable_scenarios[0])
    from psygym_agents.solvers.expectiminimax import Solver

    # quick: Blue moves first, one turn each of at most two rolls; banking 0 is never better.
    assert Solver(rules).value() < 0


def test_toy_is_gone_after_the_fixture():
    assert "toy-dice" not in psygym.edition.ids()


def test_odds(toy_edition):
    out = _ok("odds", "--edition", toy_edition.id, "--format", "csv")
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0] == ["rolls", "keep %", "expected pot"]
    assert rows[1][:2] == ["1", "83.33"] and rows[2][:2] == ["2", "69.44"]  # (5/6)^n


def test_simulate(toy_edition):
    out = _ok(
        "simulate", "--edition", toy_edition.id, "--agents", "cautious,greedy",
        "--episodes", "30", "--json",
    )  # fmt: skip
    doc = json.loads(out)
    assert doc["edition"] == toy_edition.id and doc["episodes"] == 30
    assert [r["agent"] for r in doc["results"]] == ["cautious", "greedy"]


def test_evaluate(toy_edition, tmp_path):
    out = _ok(
        "evaluate", "--edition", toy_edition.id, "--scenario", "quick",
        "--agents", "cautious,greedy", "--episodes", "5", "--runs-dir", str(tmp_path),
    )  # fmt: skip
    assert "cautious" in out and "greedy" in out
    assert any(tmp_path.iterdir())


def test_play_scripted(toy_edition, tmp_path):
    out = _ok(
        "play", "--edition", toy_edition.id, "--scenario", "quick", "--opponent", "cautious",
        "--seed", "3", "--runs-dir", str(tmp_path), input="2\n1\n" * 5,
    )  # fmt: skip
    assert "roll the die" in out and "Game over" in out
    assert len(list((tmp_path / "games").glob("*.jsonl"))) == 1


def test_bench_lists_the_toy_env(toy_edition):
    out = _ok("bench", "--steps", "200", "--rounds", "2", "--format", "csv")
    names = [row[0] for row in csv.reader(io.StringIO(out))]
    assert toy_edition.env_id in names
