"""``psygym advise`` on the questions players ask, in player terms (issue 13, Build item 3)."""

from __future__ import annotations

import json
import re

import numpy as np
from cli_helpers import clean_error, ok, run
from psygym_experiments.harness.gamelog import GameLog

from psygym.core import CHANCE, TERMINAL
from psygym.editions import load


def as_json(*args: object) -> dict:
    return json.loads(ok(*args, "--json"))


def best_first(doc: dict) -> list[float]:
    values = [a["value"] for a in doc["actions"]]
    assert values == sorted(values, reverse=True)
    assert doc["actions"][0]["loss"] == 0
    assert all(a["loss"] >= 0 for a in doc["actions"])
    # Player terms only: no action numbers anywhere in the choices.
    assert all("action" not in a for a in doc["actions"])
    assert all("action" not in h for h in doc["heuristics"])
    return values


SEVENTH = ("advise", "--edition", "7th", "--scenario", "duel", "--dice", 7, "--enemy-dice", 4)


def test_seventh_which_power_first_and_how_many_dice():
    doc = as_json(*SEVENTH, "--cast", "Smite,Psychic Maelstrom")
    best_first(doc)
    assert "which power to cast next" in doc["question"]
    labels = [a["label"] for a in doc["actions"]]
    assert any("Psychic Maelstrom" in x for x in labels) and any("Smite" in x for x in labels)
    assert "End the Psychic phase" in labels
    for row in doc["actions"]:
        if row["label"].startswith("End"):
            assert row["then"] == []
            continue
        (dice,) = row["then"]  # after the power, its dice; then a roll (chance) ends the chain
        assert "how many dice" in dice["question"]
        assert dice["best"] == dice["choices"][0]["label"] and "dice" in dice["best"]
        assert dice["value"] == row["value"]  # the choice is worth its best follow-up
    # the rest of the phase fits: every cast and deny to its end is searched, V beyond
    assert doc["exact"] is False and "exact over the whole Psychic phase" in doc["note"]

    out = ok(*SEVENTH, "--cast", "Smite,Psychic Maelstrom", "--heuristics", "double-wc")
    flat = " ".join(out.split())  # the table titles wrap at the terminal's width
    assert "how many dice" in flat and "exact over the whole Psychic phase" in flat
    assert "Battle round 2" in out  # the first round with Psychic Maelstrom's 12" in range
    assert not re.search(r"\baction\b", out)


def test_seventh_deny_in_player_terms():
    doc = as_json(
        "advise", "--edition", "7th", "--scenario", "duel", "--dice", 4, "--enemy-dice", 4,
        "--power", "Psychic Maelstrom", "--successes", 3, "--heuristics", "none",
    )  # fmt: skip
    best_first(doc)
    assert doc["player"] == 1 and "deny Psychic Maelstrom" in doc["question"]
    labels = [a["label"] for a in doc["actions"]]
    assert "Do not deny" in labels and "Deny with 4 dice" in labels and len(labels) == 5


EIGHTH = ("advise", "--edition", "8th", "--scenario", "duel")


def test_eighth_deny_now_or_keep_it():
    doc = as_json(
        *EIGHTH, "--caster", "Farseer", "--power", "Smite", "--test", 8, "--still", "Doom"
    )
    best_first(doc)
    assert doc["side"] == "Imperium" and "deny Farseer's Smite (test 8)" in doc["question"]
    labels = [a["label"] for a in doc["actions"]]
    assert labels[-1].startswith("Do not deny")
    assert {x.split(" denies")[0] for x in labels[:-1]} == {"Librarian", "Primaris Psyker"}
    by_name = {h["name"]: h for h in doc["heuristics"]}
    assert by_name["deny-never"]["loss"] > 0 and by_name["deny-always"]["loss"] == 0
    assert "exact over the whole Psychic phase" in doc["note"]  # 8th: the phase fits


def test_eighth_which_psyker_next_and_which_power():
    doc = as_json(*EIGHTH, "--side", "Eldar", "--still", "Doom,Jinx")
    best_first(doc)
    assert "which psyker to select next" in doc["question"]
    labels = [a["label"] for a in doc["actions"]]
    assert "Select Farseer" in labels and "Select Warlock" in labels
    farseer = next(a for a in doc["actions"] if a["label"] == "Select Farseer")
    assert "which power Farseer attempts" in farseer["then"][0]["question"]
    doc = as_json(*EIGHTH, "--caster", "Librarian", "--round", 2)
    assert "which power Librarian attempts" in doc["question"]
    assert "Librarian stops manifesting" in [a["label"] for a in doc["actions"]]


def test_rogue_trader_turn_choice():
    doc = as_json("advise", "--edition", "rt", "--turn", 2, "--points", "Warlock:5")
    best_first(doc)
    assert doc["side"] == "Eldar" and "what Warlock does" in doc["question"]
    labels = [a["label"] for a in doc["actions"]]
    assert "Warlock rests" in labels and len(labels) == 4
    assert doc["note"].startswith("exact: the rest of the game")  # it fits: solved whole


def test_bad_values_are_one_clean_line():
    clean_error(
        run(*EIGHTH, "--caster", "Farseer", "--power", "Smite", "--test", 13), "test must be 5..11"
    )
    clean_error(run(*EIGHTH, "--caster", "Tactical Squad"), "not a PSYKER")
    clean_error(run(*EIGHTH, "--still", "Fireball"), "unknown power 'Fireball'", "Smite")
    clean_error(run("advise", "--edition", "rt", "--turn", 9), "turn must be 1..6")
    clean_error(
        run("advise", "--edition", "rt", "--points", "Warlock:40"), "points of Warlock", "0..12"
    )
    clean_error(run(*SEVENTH, "--test", 8), "--test is not a situation option of 7th", "8th")
    clean_error(
        run(*SEVENTH, "--cast", "Psychic Maelstrom", "--round", 1),
        "no living target in range",
        "battle round 1",
    )
    clean_error(run("advise", "--from-log", "nowhere.jsonl"), "--at")


def _tiny_log(tmp_path, edition: str, scenario: str):
    rules = load(edition, scenario)
    rng = np.random.default_rng(3)
    path = tmp_path / "game.jsonl"
    log = GameLog(path, {"edition": edition, "scenario": scenario, "seed": 3})
    state, decisions = rules.initial_state(), []
    while rules.current_player(state) != TERMINAL:
        player = rules.current_player(state)
        if player == CHANCE:
            action = rules.sample_chance(state, rng)
        else:
            legal = rules.legal_actions(state)
            # Skip the lowest action (ending the phase at SELECT) so the game has several.
            action = legal[int(rng.integers(1, len(legal)))] if len(legal) > 1 else legal[0]
            decisions.append(rules.action_label(state, action))
        log.step(player, action, rules.action_label(state, action))
        state = rules.apply(state, action)
    log.end(rules, state, "finished")
    return path, decisions


def test_from_log_says_which_decision(tmp_path):
    path, decisions = _tiny_log(tmp_path, "7th", "single-phase")
    assert len(decisions) >= 2
    doc = as_json("advise", "--from-log", path, "--at", 2, "--heuristics", "none")
    info = doc["from_log"]
    assert info["decision"] == 2 and info["decisions"] == len(decisions)
    assert info["played"] == decisions[1]
    assert info["played"] in [a["label"] for a in doc["actions"]]
    assert doc["exact"] is True and doc["note"].startswith("exact")  # single-phase: solved whole
    best_first(doc)
    out = ok("advise", "--from-log", path, "--at", 1, "--heuristics", "none")
    assert f"Decision 1 of {len(decisions)}" in out and decisions[0] in out
    clean_error(
        run("advise", "--from-log", path, "--at", len(decisions) + 1), f"1..{len(decisions)}"
    )
    broken = tmp_path / "broken.jsonl"
    lines = path.read_text().splitlines()
    broken.write_text("\n".join([lines[0], *lines[2:]]) + "\n")
    clean_error(run("advise", "--from-log", broken, "--at", 1), "hash")


def test_generation_values_disciplines_and_keep_or_swap():
    doc = as_json("advise", "--edition", "7th", "--scenario", "duel", "--generation")
    assert "which discipline Librarian rolls on" in doc["question"]
    labels = [c["label"] for c in doc["choices"]]
    assert sorted(labels) == ["Librarian rolls on Biomancy", "Librarian rolls on Telekinesis"]
    for choice in doc["choices"]:
        assert abs(sum(r["probability"] for r in choice["rolls"]) - 1) < 1e-9
        for roll in choice["rolls"]:
            kinds = sorted(c["label"].split()[0] for c in roll["choices"])
            assert kinds == ["Keep", "Swap"], roll
        best_roll = max(c["value"] for r in choice["rolls"] for c in r["choices"])
        assert choice["value"] <= best_roll + 1e-9
    doc = as_json(
        "advise", "--edition", "7th", "--scenario", "duel", "--generation", "--psyker", "Warlock"
    )
    assert doc["side"] == "Eldar" and "Warlock rolls on Pyromancy" in doc["question"]
    (only,) = doc["choices"]  # one discipline: nothing to choose before the roll
    assert len(only["rolls"]) == 6 and all(len(r["choices"]) == 2 for r in only["rolls"])
    out = ok("advise", "--edition", "7th", "--scenario", "duel", "--generation", "--pick", 2)
    assert "power 2" in out and "keep or swap" in out
    clean_error(
        run("advise", "--edition", "7th", "--scenario", "duel", "--generation", "--pick", 3),
        "1..2",
    )
    clean_error(run("advise", "--edition", "8th", "--generation"), "for 7th edition")
