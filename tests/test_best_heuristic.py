"""The best heuristic of a list: the round robin of the held-out tables, and its ties."""

from __future__ import annotations

import dataclasses
import json

import pytest
from psygym_experiments.harness.best_heuristic import best_heuristic
from psygym_experiments.harness.general_value import summary_lines

from psygym.editions import load


@pytest.mark.parametrize("edition,seed,best", [
    ("7th", 0, "deny-always"),  # docs/strength.md, the held-out tables
    ("7th", 3, "double-wc"),
    ("8th", 1, "save-deny-for-best"),
    ("rt", 0, "bid-all"),
    # Six heuristics share the first row: the reference heuristic is among them.
    ("rt", 1, "spend-freely"),
])  # fmt: skip
def test_the_round_robin_picks_the_held_out_tables_heuristic(edition, seed, best):
    assert best_heuristic(load(edition, f"random:{seed}")) == best


def test_a_tie_without_the_reference_goes_to_the_first_in_the_editions_order(monkeypatch):
    # On rt random:1 six heuristics tie; make the reference one that does not (bid-none) and
    # list conserve first.
    import psygym.policies

    bots = psygym.policies.bots_for("rt")
    order = ["conserve", *[n for n in bots.heuristics if n != "conserve"]]
    fake = dataclasses.replace(bots, reference="bid-none",
                               heuristics={n: bots.heuristics[n] for n in order})  # fmt: skip
    monkeypatch.setattr(psygym.policies, "bots_for", lambda edition: fake)
    assert best_heuristic(load("rt", "random:1")) == "conserve"


def test_a_run_of_before_the_best_heuristic_still_reads(tmp_path):
    row = {"iteration": 0, "heldout_rmse": 1.5, "heldout_boards": 9, "vs_previous": 0.1,
           "vs_previous_ci": 0.2, "vs_reference": 0.3, "vs_reference_ci": 0.4}  # fmt: skip
    (tmp_path / "metrics.json").write_text(json.dumps([row]))
    assert summary_lines(tmp_path)[0].endswith("vs reference +0.30 ± 0.40")


def test_simulate_plays_the_best_heuristic_by_its_name():
    from psygym_experiments.cli import app
    from typer.testing import CliRunner

    result = CliRunner().invoke(app, ["simulate", "--edition", "rt", "--scenario", "random:0",
                                      "--agents", "search,best-heuristic", "--episodes", "2",
                                      "--json"])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert [r["agent"] for r in json.loads(result.stdout)["results"]] == ["search", "bid-all"]
