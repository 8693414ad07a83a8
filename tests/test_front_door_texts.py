"""What a new user tripped over: texts in the terminal and browser, and small gaps of the CLI.

Counts read "1 card", never "1 cards" (one helper, :func:`psygym.text.plural`); a 7th-edition
cast rolled with 2 dice no longer shows "0 dice"; a one-option menu does not ask "Choose 1-1";
Psychic Focus says what it adds; ``advise --still`` shows the powers it assumed; a mistyped
path is a missing file, not a missing shipped name; ``psygym --version``; the README's
``advise --from-log`` line works as pasted.
"""

from __future__ import annotations

import importlib.metadata
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import act_ev, force, force_ev, psyker7, rules_from, unit7
from psygym_experiments.cli import app
from seventh_cases import base, cast, gen_rules, roll, start
from typer.testing import CliRunner

from psygym.core import EventKind
from psygym.editions import load
from psygym.editions.seventh.state import Stage
from psygym.kernel import evolve
from psygym.scenario import ScenarioError
from psygym.text import plural

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[1]


def ok(*args: object) -> str:
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, (result.stdout, result.stderr, result.exception)
    return result.stdout


# ----------------------------------------------------------------------------- counts
@pytest.mark.parametrize(
    "n,word,text",
    [(1, "card", "1 card"), (0, "card", "0 cards"), (3, "card", "3 cards"),
     (1, "die", "1 die"), (2, "die", "2 dice"), (1, "success", "1 success"),
     (2, "success", "2 successes"), (1, "attempt", "1 attempt"), ("2D6", "hit", "2D6 hits"),
     ("1", "hit", "1 hit"), (2.5, "wound", "2.5 wounds"), (1.0, "wound", "1 wound")],
)  # fmt: skip
def test_plural(n, word, text):
    assert plural(n, word) == text


def test_plural_with_an_irregular_word():
    assert plural(1, "ply", "plies") == "1 ply" and plural(4, "ply", "plies") == "4 plies"


def test_seventh_cast_after_the_roll_shows_its_successes_not_zero_dice():
    """The issue's "0 dice, 1 successes" after the AI rolled 2 dice: the state forgets the dice
    once rolled (casts with the same result merge), so the board showed the forgotten 0."""
    rules = rules_from(base())
    s = cast(rules, start(rules, 3), "Lib: Smite (WC 1) at Sorcerer", 2)
    board = rules.render(s, 1)
    assert "Casting: Lib -> Smite at Sorcerer, rolling 2 dice" in board
    s, events = force_ev(rules, s, roll(1))
    assert s.stage == Stage.DENY
    board = rules.render(s, 1)
    assert "Casting: Lib -> Smite at Sorcerer, 1 success" in board
    assert "0 dice" not in board and "successes" not in board
    attempt = [e.text for e in events if e.kind == EventKind.ATTEMPT]
    assert attempt == ["Lib casts Smite with 2 dice: 1 success"]


def test_second_edition_counts_one_card():
    rules = load("2nd", "smite-skirmish")
    s = rules.initial_state()
    kinds = len(s.hands[0])
    one = (1,) + (0,) * (kinds - 1)
    s = evolve(s, hands=(one, one), deck=one)
    board = rules.render(s, 0)
    assert "Hand of Eldar: 1 card\n" in board + "\n" and "Deck: 1 card;" in board
    assert "1 cards" not in board


def test_eighth_one_attempt_left_and_the_powers_still_to_come_in_advise():
    """``--still Doom`` changes the values; the answer's board says Doom is assumed to come."""
    args = ["advise", "--edition", "8th", "--scenario", "duel", "--caster", "Farseer",
            "--power", "Smite", "--test", "8", "--heuristics", "none"]  # fmt: skip
    still = ok(*args, "--still", "Doom")
    farseer = next(ln for ln in still.splitlines() if "Farseer:" in ln)
    assert farseer.endswith("casting, 1 attempt left, may still attempt Doom"), farseer
    warlock = next(ln for ln in still.splitlines() if "Warlock:" in ln)
    assert "may still attempt" not in warlock  # it knows no Doom: done this phase
    every = ok(*args)
    farseer = next(ln for ln in every.splitlines() if "Farseer:" in ln)
    assert farseer.endswith("1 attempt left, may still attempt Doom, Fortune"), farseer
    assert "may still attempt Smite, Jinx" in every


def test_psychic_focus_adds_its_power_with_a_log_line_7E_2_3():
    rules = gen_rules(unit7("Lib", wounds=2, psyker=psyker7(2, disciplines=["Biomancy"])))
    s = force(rules, rules.initial_state(), rules.power_index["Iron Arm"])
    s, _ = act_ev(rules, s, rules.SWAP)
    s, rolled = force_ev(rules, s, rules.power_index["Enfeeble"])
    s, kept = act_ev(rules, s, rules.SWAP)
    assert s.stage == Stage.PHASE_ROLL
    focus = [e for e in (*rolled, *kept) if "Psychic Focus" in e.text]
    assert [(e.kind, e.text, e.player) for e in focus] == [(
        EventKind.GENERATE,
        "Psychic Focus: Lib generated all its powers from Biomancy, so it also knows its "
        "Primaris power Smite (7E-2.3)",
        0,
    )]  # fmt: skip


def test_no_focus_line_when_the_primaris_is_already_known_7E_2_3():
    rules = gen_rules(unit7("Lib", wounds=2, psyker=psyker7(1, disciplines=["Biomancy"])))
    s = force(rules, rules.initial_state(), rules.power_index["Iron Arm"])
    s, events = act_ev(rules, s, rules.SWAP + 1)  # swap for the Primaris: nothing to add
    assert s.stage == Stage.PHASE_ROLL
    assert not [e for e in events if "Psychic Focus" in e.text]


# ----------------------------------------------------------------------------- play
def test_a_one_option_menu_does_not_ask_choose_1_to_1(tmp_path):
    """2nd smite-skirmish, seat 1, seed 7: the human's two menus have one option each."""
    result = runner.invoke(
        app,
        ["play", "--edition", "2nd", "--scenario", "smite-skirmish", "--seat", "1", "--seed", "7",
         "--opponent", "random", "--runs-dir", str(tmp_path)],
        input="1\n" * 200,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert result.output.count("Choose 1, the only choice (? list, h hint, q quit):") == 2
    assert "Choose 1-1 " not in result.output


# ----------------------------------------------------------------------------- the CLI
def test_version(monkeypatch):
    expected = f"psygym {importlib.metadata.version('psygym')} (engine: "
    assert ok("--version").strip().startswith(expected)
    done = subprocess.run(
        [sys.executable, "-m", "psygym_experiments.cli", "--version"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0 and done.stdout.strip().startswith(expected), done.stderr
    monkeypatch.setenv("PSYGYM_ENGINE", "python")
    assert ok("--version").strip() == expected + "Python reference (PSYGYM_ENGINE=python))"
    monkeypatch.setenv("PSYGYM_ENGINE", "fast")
    assert "PSYGYM_ENGINE='fast' is not an engine (allowed: core, python)" in ok("--version")


@pytest.mark.parametrize(
    "arg,words",
    [("../user/my.tmol", ["no such file (looked for ", "; a scenario file ends in .toml"]),
     ("../user/my.toml", ["no such file (looked for "]),
     ("my.tmol", ["no such file (looked for ", "ends in .toml, not .tmol"])],
)  # fmt: skip
def test_a_mistyped_path_is_a_missing_file_named_in_full(arg, words):
    with pytest.raises(ScenarioError) as err:
        load("7th", arg)
    text = str(err.value)
    assert text.startswith(f"{arg}: ") and "no shipped" not in text
    assert str(Path(arg).resolve()) in text
    for w in words:
        assert w in text, text


def test_a_shipped_name_mistyped_is_still_a_missing_shipped_name():
    with pytest.raises(ScenarioError, match="dule: no shipped 7th scenario of that name"):
        load("7th", "dule")


def test_the_readme_advise_from_log_line_works_as_pasted(tmp_path):
    """The README's line once read ``runs/games/<game>.jsonl``: the shell took ``<game>`` for a
    redirection. Pasted into bash in a folder where ``psygym play`` logged a game, it works."""
    readme = (ROOT / "README.md").read_text()
    line = next(ln for ln in readme.splitlines() if ln.startswith("psygym advise --from-log"))
    command = line.split("  #")[0]
    assert not re.search(r"<[a-z]+>", command), command
    played = runner.invoke(
        app,
        ["play", "--edition", "7th", "--scenario", "single-phase", "--seed", "8",
         "--opponent", "random", "--runs-dir", str(tmp_path / "runs")],
        input="1\n" * 200,
    )  # fmt: skip
    assert played.exit_code == 0, played.output
    cli = f"{shlex.quote(sys.executable)} -m psygym_experiments.cli"
    command = command.replace("--at 12", "--at 1").replace("psygym ", f"{cli} ", 1)
    done = subprocess.run(
        ["bash", "-c", command], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert "Decision 1 of " in done.stdout and "runs/games/" in done.stdout
