"""``psygym bench --agents`` on a tiny budget: one row per agent and scenario, no state limit."""

from __future__ import annotations

import csv
import io

from psygym_experiments.bench import AGENT_COLUMNS, agent_subjects
from psygym_experiments.cli import app
from typer.testing import CliRunner

from psygym.edition import editions

runner = CliRunner()


def test_subjects_come_from_the_edition_registry():
    subjects = [(agent, ed.id, scenario) for agent, ed, scenario in agent_subjects()]
    open_editions = [ed for ed in editions() if not ed.hidden_information]
    assert [s for s in subjects if s[0] == "search"] == [
        ("search", ed.id, ed.default_scenario) for ed in open_editions
    ]
    assert [s for s in subjects if s[0] == "optimal"] == [
        ("optimal", ed.id, name) for ed in open_editions for name in ed.solvable_scenarios
    ]
    assert not any(ed.hidden_information for ed in editions() if ed.id in {s[1] for s in subjects})


def test_bench_agents_csv_on_one_game_each():
    res = runner.invoke(app, ["bench", "--agents", "--games", "1", "--format", "csv"])
    assert res.exit_code == 0, res.output + repr(res.exception)
    rows = list(csv.DictReader(io.StringIO(res.stdout)))
    assert list(rows[0]) == list(AGENT_COLUMNS)
    assert [(r["agent"], r["edition"]) for r in rows] == [
        (agent, ed.id) for agent, ed, _ in agent_subjects()
    ]
    for r in rows:
        assert r["games"] == "1" and int(r["decisions"]) > 0
        median, p90, top = float(r["median_s"]), float(r["p90_s"]), float(r["max_s"])
        assert 0 <= median <= p90 <= top
        assert r["state_limit_hit"] == "no"  # never a state-limit fallback
        assert float(r["median_ratio_to_reference"]) >= 0


def test_bench_agents_table_names_the_reference():
    res = runner.invoke(app, ["bench", "--agents", "--games", "1"])
    assert res.exit_code == 0, res.output + repr(res.exception)
    assert "reference: the expectimax" in res.stdout and "median/ref" in res.stdout
    flat = " ".join(res.stdout.split())
    assert "exact over the whole Psychic phase" in flat or "exact within each cast" in flat


def test_solver_and_agents_together_is_one_clear_line():
    res = runner.invoke(app, ["bench", "--agents", "--solver"])
    assert res.exit_code == 2
    assert "--solver and --agents" in res.output and "Traceback" not in res.output


def test_the_timed_agent_is_restarted_each_game_as_it_would_be_unwrapped(monkeypatch):
    # The wrapper had no restart(), so the game loop's restart never reached search: the bench
    # timed games that skipped exact solves an earlier game had found too large.
    from types import SimpleNamespace

    from helpers import RestartCounter
    from psygym_experiments import bench

    counter = RestartCounter()
    monkeypatch.setattr("psygym.policies.resolve_policy", lambda agent, rules: counter)
    times = bench.time_agent("counting", SimpleNamespace(id="8th"), "single-phase", 3, 0)
    assert times.games == 3 and counter.restarts == 3
