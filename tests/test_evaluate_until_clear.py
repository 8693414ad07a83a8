"""``psygym evaluate --until-clear``: adaptive head-to-head matches over both seats."""

from __future__ import annotations

import json

import numpy as np
import pytest
from psygym_experiments.cli import app
from psygym_experiments.harness.head_to_head import (
    Z95,
    HeadToHead,
    head_to_head,
    looks_of,
    play_pairs,
    sequential_z,
)
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


def test_a_killed_run_resumes_from_its_record_with_the_same_result(tmp_path):
    runner = CliRunner()
    command = [
        "evaluate", "--edition", "rt", "--scenario", "duel", "--until-clear",
        "--agents", "spend-freely,conserve,spend-freely", "--episodes", "30",
        "--min-episodes", "30", "--format", "json",
    ]  # fmt: skip
    whole = runner.invoke(app, [*command, "--runs-dir", str(tmp_path / "whole")])
    assert whole.exit_code == 0, whole.output
    run = next((tmp_path / "whole").glob("evaluate-*"))
    record = (run / "games.jsonl").read_text().splitlines()
    assert len(record) == 6  # two matches of three batches of 10 games per seat
    # Killed after the first batch of the second match, halfway through writing the next line.
    (run / "games.jsonl").write_text("\n".join(record[:4]) + "\n" + record[4][:25])
    (run / "results.json").unlink()
    again = runner.invoke(app, [*command, "--resume", str(run)])
    assert again.exit_code == 0, again.output
    assert "resuming spend-freely vs conserve: 30 games per seat" in again.stderr
    assert "resuming spend-freely vs spend-freely: 10 games per seat" in again.stderr
    assert json.loads(again.stdout) == json.loads(whole.stdout)
    lines = (run / "games.jsonl").read_text().splitlines()
    assert len(lines) == 6 and all(json.loads(x)["pairs"] for x in lines)
    assert [json.loads(x)["start"] for x in lines[3:]] == [0, 10, 20]


def test_resume_refuses_other_settings_and_folders_it_did_not_write(tmp_path):
    runner = CliRunner()
    base = ["evaluate", "--edition", "rt", "--scenario", "duel", "--until-clear",
            "--agents", "spend-freely,conserve", "--episodes", "10",
            "--min-episodes", "10"]  # fmt: skip
    first = runner.invoke(app, [*base, "--runs-dir", str(tmp_path)])
    assert first.exit_code == 0, first.output
    run = next(tmp_path.glob("evaluate-*"))
    other = runner.invoke(app, [*base, "--seed", "5", "--resume", str(run)])
    assert other.exit_code != 0 and "Traceback" not in other.output
    assert "other settings (seed)" in other.output
    empty = tmp_path / "empty"
    empty.mkdir()
    stray = runner.invoke(app, [*base, "--resume", str(empty)])
    assert stray.exit_code != 0 and "not a run folder" in stray.output
    # --resume alone goes on with the folder's own run: an --until-clear one here.
    alone = runner.invoke(app, ["evaluate", "--edition", "rt", "--resume", str(run)])
    assert alone.exit_code == 0, alone.output
    assert "resuming spend-freely vs conserve: 10 games per seat recorded" in alone.stderr


def test_the_sequential_boundary_holds_an_even_match_to_five_percent_over_all_its_looks():
    looks = looks_of(400, 20, 10)
    assert looks[0] == 20 and looks[-1] == 400 and len(looks) == 39
    z = sequential_z(looks)
    assert sequential_z((400,)) == pytest.approx(Z95, abs=1e-6)
    assert 2.7 < z < 3.0  # about 1.5 times the plain interval's
    rng = np.random.default_rng(3)
    calls = {Z95: 0, z: 0}
    for _ in range(1500):
        margins = rng.choice([-3.0, -1.0, 0.0, 0.0, 0.0, 1.0, 3.0], 400)  # a true margin of 0
        for boundary in calls:
            match = HeadToHead("a", "b", z=boundary)
            for n in looks:
                match.margins = list(margins[:n])
                if match.decided:
                    calls[boundary] += 1
                    break
    assert calls[z] / 1500 < 0.075  # 5% over the whole match (three standard errors above)
    assert calls[Z95] / 1500 > 0.2  # the plain interval at every look: about 28%


def test_an_adaptive_match_reports_its_repeated_interval_and_a_fixed_one_the_plain_one():
    rules = psygym.load("rt", "duel")
    fixed = head_to_head(rules, "spend-freely", "conserve", max_games=20, adaptive=False)
    adaptive = head_to_head(rules, "spend-freely", "conserve", max_games=20, min_games=10)
    assert fixed.z == Z95 and adaptive.z == sequential_z((10, 20))
    assert adaptive.as_dict()["z"] > Z95


def test_best_heuristic_names_the_lists_best_before_play(tmp_path):
    # rt random:1: six heuristics share the round robin's first row, the reference among them.
    runner = CliRunner()
    base = ["evaluate", "--edition", "rt", "--scenario", "random:1", "--episodes", "2",
            "--runs-dir", str(tmp_path), "--format", "json"]  # fmt: skip
    clear = runner.invoke(app, [*base, "--until-clear", "--min-episodes", "2",
                                "--agents", "search,best-heuristic"])  # fmt: skip
    assert clear.exit_code == 0, clear.output
    assert "best-heuristic: spend-freely (first of a round robin" in clear.stderr
    assert [r["opponent"] for r in json.loads(clear.stdout)["matches"]] == ["spend-freely"]
    field = runner.invoke(app, [*base, "--agents", "best-heuristic,random", "--no-exact"])
    assert field.exit_code == 0, field.output
    assert json.loads(field.stdout)["agents"] == ["spend-freely", "random"]


def test_a_match_decided_early_kills_the_batches_still_running_and_keeps_its_result(
    monkeypatch,
):
    # The pool used to wait for the batches already running when the margin became clear: on
    # the 7th duel, search against double-wc took twice as long as its decision.
    from psygym_experiments.harness import lifecycle

    rules = psygym.load("rt", "duel")
    killed = []
    real = lifecycle.kill_workers
    monkeypatch.setattr(lifecycle, "kill_workers", lambda *p: (killed.append(p), real(*p)))
    local = head_to_head(rules, "search", "random", max_games=200, min_games=10, batch=10)
    pooled = head_to_head(
        rules, "search", "random", max_games=200, min_games=10, batch=10, workers=2
    )
    assert local.decided and pooled.as_dict() == local.as_dict()
    assert len(killed) == 1  # the second batch was still out when the first decided
