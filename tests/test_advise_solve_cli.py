"""``psygym solve`` and ``psygym advise`` through typer's CliRunner, on tiny budgets."""

from __future__ import annotations

import json

import pytest
from cli_helpers import clean_error, ok, run


def test_solve_prints_value_states_exact_and_time(small_rt):
    out = ok("solve", "--edition", "rt", "--scenario", small_rt)
    assert "value" in out and "states" in out and "exact yes" in out and " s" in out
    doc = json.loads(ok("solve", "--edition", "rt", "--scenario", small_rt, "--json"))
    assert doc["exact"] is True and doc["states"] > 100 and doc["max_depth"] is None
    # Bids have no cap (RT-3.4; the old house cap of 3 gave -0.0920138888888889).
    assert doc["value"] == pytest.approx(5 / 72, abs=1e-9)


def test_solve_depth_limited_says_not_exact(small_rt):
    out = ok("solve", "--edition", "rt", "--scenario", small_rt, "--max-depth", "1")
    assert "exact NO" in out and "not exact" in out


def test_solve_ply_limit_on_the_seventh_duel():
    doc = json.loads(
        ok("solve", "--edition", "7th", "--scenario", "duel", "--max-plies", "4", "--json")
    )
    assert doc["exact"] is False and doc["max_plies"] == 4 and doc["value"] == 0.0


def test_solve_out_of_reach_is_a_clean_error():
    result = run("solve", "--edition", "7th", "--scenario", "single-phase", "--max-states", "50")
    clean_error(result, "more than 50 states", "out of reach")


def test_solve_hidden_information_is_a_clean_error():
    clean_error(run("solve", "--edition", "2nd"), "hidden information")


def test_advise_seventh_situation_lists_actions_best_first():
    out = ok(
        "advise",
        "--edition",
        "7th",
        "--scenario",
        "single-phase",
        "--situation",
        "dice=7,enemy_dice=4,power=Smite,wc=1",
    )
    assert "Cast Smite with 7 dice" in out and "double-wc" in out and "gives up" in out
    doc = json.loads(
        ok(
            "advise",
            "--edition",
            "7th",
            "--scenario",
            "single-phase",
            "--dice",
            "7",
            "--enemy-dice",
            "4",
            "--power",
            "Smite",
            "--json",
        )
    )
    values = [a["value"] for a in doc["actions"]]
    assert values == sorted(values, reverse=True) and len(values) == 7
    assert doc["actions"][0]["loss"] == 0 and doc["exact"] is True
    by_name = {h["name"]: h for h in doc["heuristics"]}
    assert by_name["double-wc"]["label"] == "Cast Smite with 2 dice"
    assert by_name["double-wc"]["loss"] > 0.5
    assert by_name["all-in"]["loss"] == pytest.approx(0.0, abs=1e-12)


def test_advise_deny_decision():
    doc = json.loads(
        ok(
            "advise",
            "--edition",
            "7th",
            "--scenario",
            "single-phase",
            "--situation",
            "dice=5,enemy_dice=4,power=Psychic Maelstrom,successes=2",
            "--heuristics",
            "deny-never,deny-always",
            "--json",
        )
    )
    assert doc["player"] == 1
    labels = [a["label"] for a in doc["actions"]]
    assert "Do not deny" in labels and labels[0] == "Deny with 4 dice"
    assert {h["name"] for h in doc["heuristics"]} == {"deny-never", "deny-always"}


def test_advise_state_files(tmp_path, small_rt):
    f = tmp_path / "state.json"
    f.write_text(json.dumps({"edition": "rt", "scenario": str(small_rt), "actions": []}))
    doc = json.loads(ok("advise", "--state", f, "--json"))
    # A scenario file is not one the edition declares solvable whole, but this small one's
    # rest of the game fits the search's budget: it is solved whole, found by counting.
    assert doc["edition"] == "rt" and doc["actions"] and doc["exact"] is True
    assert doc["note"].startswith("exact: the rest of the game")
    g = tmp_path / "situation.json"
    g.write_text(
        json.dumps({"scenario": "single-phase", "situation": "dice=3,enemy_dice=2,power=Smite"})
    )
    doc = json.loads(ok("advise", "--state", g, "--heuristics", "none", "--json"))
    assert [a["label"] for a in doc["actions"]][0].startswith("Cast Smite with")
    assert len(doc["actions"]) == 3 and doc["heuristics"] == []


def test_advise_bad_input_is_one_clean_line(tmp_path):
    clean_error(
        run(
            "advise",
            "--edition",
            "7th",
            "--scenario",
            "single-phase",
            "--situation",
            "dice=7,colour=red",
        ),
        "unknown key 'colour'",
        "dice",
    )
    clean_error(
        run("advise", "--edition", "7th", "--scenario", "single-phase", "--power", "Fireball"),
        "unknown power 'Fireball'",
        "Smite",
    )
    clean_error(
        run(
            "advise",
            "--edition",
            "7th",
            "--scenario",
            "single-phase",
            "--situation",
            "power=Smite:3",
        ),
        "warp charge 1",
    )
    clean_error(run("advise", "--edition", "8th", "--dice", "3"), "--dice", "for 7th edition")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    clean_error(run("advise", "--state", bad), "not valid JSON")


def test_advise_second_edition_gives_search_estimates():
    out = ok("advise", "--edition", "2nd", "--iterations", "40", "--heuristics", "none")
    assert "NOT exact" in out and "information-set search" in out
    doc = json.loads(ok("advise", "--edition", "2nd", "--iterations", "40", "--json"))
    assert doc["exact"] is False and doc["actions"] and doc["heuristics"]


def test_advise_on_a_generated_second_edition_list_searches_deals():
    """Where the general value asks for deals, ``advise`` is ``search``: the phase searched in
    deals of the unseen cards, and it says it is not exact."""
    out = ok("advise", "--edition", "2nd", "--scenario", "random:3", "--heuristics", "none")
    assert "NOT exact" in out and "16 deals" in out and "information-set" not in out


def test_advise_dice_table_small(tmp_path):
    out = ok(
        "advise", "--table", "--max-pool", "3", "--max-enemy-dice", "1", "--runs-dir", tmp_path
    )
    assert "WC 1" in out and "6+" in out
    (run_dir,) = list(tmp_path.iterdir())
    assert (run_dir / "dice_table.png").stat().st_size > 1000
    assert (run_dir / "command.txt").exists() and (run_dir / "config.json").exists()
    rows = json.loads((run_dir / "dice_table.json").read_text())
    assert len(rows) == 3 * 3 * 2
    one = next(r for r in rows if r["warp_charge"] == 3 and r["pool"] == 2)
    assert one["best_dice"] == 0 and one["double_wc_dice"] == 0  # WC 3 cannot be cast with 2
