"""``psygym evaluate --until-clear``: adaptive head-to-head matches over both seats."""

from __future__ import annotations

import json

from psygym_experiments.cli import app
from psygym_experiments.harness.head_to_head import head_to_head, play_pairs
from typer.testing import CliRunner

import psygym


def test_a_clear_match_stops_early_and_an_even_one_plays_to_the_cap():
    rules = psygym.load("rt", "duel")
    clear = head_to_head(rules, "search", "random", max_games=200, min_games=10, batch=10)
    assert clear.decided and clear.margin > 0
    assert clear.games_per_seat < 200 and clear.games_per_seat % 10 == 0
    even = head_to_head(rules, "spend-freely", "spend-freely", max_games=30, min_games=10)
    assert not even.decided and even.games_per_seat == 30
    assert even.margin == 0.0  # the same agent in both seats on the same dice: exactly even


def test_both_seats_use_the_same_dice_and_the_margin_is_their_mean():
    rules = psygym.load("rt", "duel")
    pairs = play_pairs(rules, ("spend-freely", "conserve"), 0, range(5))
    again = head_to_head(rules, "spend-freely", "conserve", max_games=5, adaptive=False)
    assert again.margins == [(a + b) / 2 for a, b in pairs]
    assert again.seat_scores == ([a for a, _ in pairs], [b for _, b in pairs])


def test_the_command_writes_its_matches_and_checks_the_field(tmp_path):
    runner = CliRunner()
    result = runner.invoke(app, [
        "evaluate", "--edition", "rt", "--scenario", "duel", "--until-clear",
        "--agents", "search,random,spend-freely", "--episodes", "20", "--min-episodes", "10",
        "--runs-dir", str(tmp_path), "--format", "json",
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["matches"]
    assert [r["opponent"] for r in rows] == ["random", "spend-freely"]
    assert all(10 <= r["games_per_seat"] <= 20 for r in rows)
    run = next(tmp_path.glob("evaluate-*"))
    assert (run / "results.csv").read_text().startswith("agent,opponent,games_per_seat")
    bad = runner.invoke(app, [
        "evaluate", "--edition", "rt", "--until-clear", "--agents", "search,nobody",
        "--runs-dir", str(tmp_path),
    ])  # fmt: skip
    assert bad.exit_code != 0
    assert "nobody" in bad.output and "Traceback" not in bad.output
    alone = runner.invoke(app, ["evaluate", "--edition", "rt", "--until-clear", "--agents",
                                "search", "--runs-dir", str(tmp_path)])  # fmt: skip
    assert alone.exit_code != 0 and "at least two agents" in alone.output
