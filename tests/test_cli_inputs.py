"""Command-line inputs that used to be misread or crash, each now one clear line or a right answer.

Situations whose phase belongs to the other side (7E-3.1: the phases alternate, the first
player's first), cheat-sheet and scenario file names, state budgets, files and logs that say
otherwise than the options, TOML text beyond the Basic Multilingual Plane, the numbers of a
``random:`` scenario, the temporary file of a write, a closed standard output, and file names
holding terminal escape codes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from cli_helpers import clean_error, ok, run
from psygym_experiments.harness.output import UnsafeOutputError, atomic_write, write_bytes
from test_advise_questions import _tiny_log

from psygym.editions import load

# ----------------------------------------------------------------------------- 7th situations
DUEL = ("advise", "--edition", "7th", "--scenario", "duel", "--heuristics", "none")


def test_a_phase_must_be_the_casting_sides():
    from psygym_agents.seventh.situations import seventh_situation

    # duel: the Ultramarines (side 0) go first, so the odd phases are the Eldar's.
    for phase, round_ in ((1, 1), (9, 5)):
        clean_error(
            run(*DUEL, "--situation", f"dice=7,power=Smite,phase={phase}"),
            f"phase {phase} is Eldar's Psychic phase (battle round {round_})",
            "Ultramarines (side 0) has phases 0, 2, 4, 6, 8",
            "side=1",
        )
    rules = load("7th", "duel")
    with pytest.raises(ValueError, match="phase 2 is Ultramarines's .* Eldar \\(side 1\\) has "
                       "phases 1, 3, 5, 7, 9"):  # fmt: skip
        seventh_situation(rules, dice=7, power="Force", phase=2, side=1)
    # A phase of the casting side is that phase, with that side active.
    s = seventh_situation(rules, dice=7, power="Force", phase=1, side=1)
    assert (s.phase, s.active, rules.current_player(s)) == (1, 1, 1)
    out = ok(*DUEL, "--situation", "dice=7,power=Smite,phase=8")
    assert "Battle round 5, Ultramarines's Psychic phase" in out


def test_round_and_phase_together_are_refused():
    clean_error(
        run(*DUEL, "--situation", "dice=7,power=Smite,round=2,phase=0"),
        "give round or phase, not both",
    )


# ----------------------------------------------------------------------------- cheatsheet
def _fake_tables(monkeypatch):
    """A tiny answer table in place of the solved ones: the file names are under test."""
    import psygym_experiments.report_answers as answers

    table = {"title": "t", "assumes": "a", "header": ["x", "y"], "rows": [["1", "2"]],
             "note": "n", "kind": "commit"}  # fmt: skip
    monkeypatch.setattr(answers, "compute_tables", lambda edition, size: [table])


def test_cheatsheet_appends_png_and_pdf_to_the_whole_name(tmp_path, monkeypatch):
    _fake_tables(monkeypatch)
    monkeypatch.chdir(tmp_path)
    ok("cheatsheet", "--edition", "7th", "--quick", "--out", "cs2/army.v2")
    ok("cheatsheet", "--edition", "7th", "--quick", "--out", "sheet.7th")
    ok("cheatsheet", "--edition", "8th", "--quick", "--out", "sheet.8th")
    ok("cheatsheet", "--edition", "7th", "--quick", "--out", "given.png")
    names = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    assert names == [
        "cs2/army.v2.pdf", "cs2/army.v2.png", "given.pdf", "given.png", "sheet.7th.pdf",
        "sheet.7th.png", "sheet.8th.pdf", "sheet.8th.png",
    ]  # fmt: skip
    assert (tmp_path / "sheet.8th.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("out", ["adir", "adir/", ".", "..", "missing/"])
def test_cheatsheet_refuses_a_folder_for_out(tmp_path, monkeypatch, out):
    _fake_tables(monkeypatch)
    work = tmp_path / "work"
    (work / "adir").mkdir(parents=True)
    monkeypatch.chdir(work)
    line = clean_error(
        run("cheatsheet", "--edition", "7th", "--quick", "--out", out),
        f"--out '{out}' is a folder",
        "not a file stem",
        "<stem>.png and <stem>.pdf",
    )
    assert "PosixPath" not in line
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["adir", "work"]


# ----------------------------------------------------------------------------- --max-states
def test_solve_max_states_is_bounded_by_what_any_memory_budget_holds(capsys):
    from psygym_experiments.cli import run as psygym

    solve = ["solve", "--edition", "7th", "--scenario", "single-phase", "--max-states"]
    for n in (2**63, 2**63 - 1, 6_826_666_667):
        assert psygym([*solve, str(n)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("error: Invalid value for '--max-states': ")
        assert "allowed 1 to 6,826,666,666" in err and "largest --max-memory" in err
        assert "internal error" not in err and "Traceback" not in err
    # The bound itself is a budget (1024 GB at 150 bytes a state).
    assert psygym([*solve, "6826666666"]) == 0
    out = capsys.readouterr().out
    assert "budget: 6,826,666,666 states" in out and "under optimal play" in out


# ----------------------------------------------------------------------------- advise: files
def test_advise_refuses_an_edition_the_state_file_contradicts(tmp_path):
    path = tmp_path / "state.json"
    path.write_text(json.dumps({"edition": "8th", "scenario": "single-phase", "actions": []}))
    clean_error(
        run("advise", "--state", path, "--edition", "7th"),
        "--edition 7th does not match the state file",
        "edition 8th",
    )
    # The same edition by an alias agrees.
    doc = json.loads(ok("advise", "--state", path, "--edition", "eighth", "--heuristics", "none",
                        "--json"))  # fmt: skip
    assert doc["edition"] == "8th"


def test_advise_refuses_a_scenario_the_state_file_contradicts(tmp_path):
    path = tmp_path / "state.json"
    doc = {"edition": "7th", "scenario": "single-phase", "situation": {"dice": 7, "power": "Smite"}}
    path.write_text(json.dumps(doc))
    clean_error(
        run("advise", "--state", path, "--scenario", "duel"),
        "--scenario duel does not match the state file",
        "scenario single-phase",
    )
    # Another name of the same scenario (its TOML file) agrees.
    from psygym.edition import get

    toml = Path(get("7th").scenario_dir) / "single-phase.toml"
    got = json.loads(ok("advise", "--state", path, "--scenario", toml, "--heuristics", "none",
                        "--json"))  # fmt: skip
    assert got["scenario"] == "single-phase"


def test_advise_refuses_options_the_game_log_contradicts(tmp_path):
    path, _ = _tiny_log(tmp_path, "7th", "single-phase")
    clean_error(
        run("advise", "--from-log", path, "--at", 1, "--edition", "8th", "--scenario", "duel"),
        "--edition 8th does not match the game log",
        "edition 7th",
    )
    clean_error(
        run("advise", "--from-log", path, "--at", 1, "--scenario", "duel"),
        "--scenario duel does not match the game log",
        "scenario single-phase",
    )
    out = ok("advise", "--from-log", path, "--at", 1, "--edition", "seventh", "--scenario",
             "single-phase", "--heuristics", "none")  # fmt: skip
    assert "Decision 1 of" in out


# ----------------------------------------------------------------------------- TOML text
@pytest.mark.parametrize(
    "data",
    [
        {"name": "Wizard \U0001f9d9"},
        {"name": "caf\u00e9 \U0001d538", "sides": [{"name": "\U0001f600 side"}]},
        {"k \U0001f9d9": "x", "name": 'tab\tquote" back\\ del\x7f bell\x07'},
    ],
)
def test_toml_text_round_trips_characters_beyond_the_bmp(data):
    from psygym.scenario import toml_text

    text = toml_text(data)
    assert tomllib.loads(text) == data
    assert text.isascii() and "\\ud83e" not in text  # escaped whole, never as a surrogate pair


def test_toml_text_refuses_a_lone_surrogate_in_one_line():
    from psygym.scenario import toml_text

    with pytest.raises(ValueError, match="lone surrogate U\\+D800"):
        toml_text({"name": "bad \ud800"})


# ----------------------------------------------------------------------------- random: numbers
@pytest.mark.parametrize(
    "scenario, words",
    [
        ("random:1,rounds=99999", ("99999 battle rounds", "allowed: 1 to 20")),
        ("random:1,psykers=12345", ("12345 psykers a side", "allowed: 1 to 4")),
        ("random:1,mastery=1-9999", ("1-9999 is not a range of the 8th edition's mastery",)),
        ("random:1,rounds=" + "9" * 5000, ("is far too large", "5000 characters")),
    ],
)
def test_large_random_options_get_the_range_message(scenario, words):
    line = clean_error(run("solve", "--edition", "8th", "--scenario", scenario), *words)
    assert len(line) < 300


def test_parse_reads_whole_numbers_of_any_length():
    from psygym.generator import parse

    seed, options = parse("random:7,rounds=0021,psykers=12345,mastery=2-9999")
    assert seed == 7
    assert (options.rounds, options.psykers, options.mastery) == (21, 12345, (2, 9999))


# ----------------------------------------------------------------------------- write_bytes
def test_a_write_keeps_a_users_file_named_like_a_temporary_one(tmp_path):
    mine = tmp_path / "army.toml.tmp"
    mine.write_text("my notes")
    ok("scenario", "random", "--seed", 1, "--out", tmp_path / "army.toml")
    assert mine.read_text() == "my notes"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["army.toml", "army.toml.tmp"]
    assert tomllib.loads((tmp_path / "army.toml").read_text())["name"]


def test_a_failed_write_removes_only_its_own_temporary_file(tmp_path, monkeypatch):
    mine = tmp_path / "a.txt.tmp"
    mine.write_text("mine")
    (tmp_path / "a.txt").write_text("old")

    def fail(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="disk full"):
        write_bytes(tmp_path / "a.txt", b"new")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "a.txt.tmp"]
    assert (tmp_path / "a.txt").read_text() == "old" and mine.read_text() == "mine"


def test_a_missing_folder_is_named_not_the_temporary_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    line = clean_error(
        run("scenario", "random", "--seed", 1, "--out", "missing/sub/x.toml"),
        "cannot write missing/sub/x.toml: its folder missing/sub does not exist",
    )
    assert ".tmp" not in line
    Path("afile").write_text("")
    line = clean_error(
        run("scenario", "random", "--seed", 1, "--out", "afile/x.toml"),
        "afile is a file, not a folder",
    )
    assert ".tmp" not in line


def test_a_folder_without_permission_is_named_not_the_temporary_file(tmp_path, monkeypatch):
    real_open = os.open

    def denied(file, *args, **kwargs):
        if str(file).endswith(".tmp"):
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(os, "open", denied)
    with pytest.raises(PermissionError) as err:
        write_bytes(tmp_path / "a.txt", b"x")
    assert str(err.value) == (
        f"cannot write {tmp_path / 'a.txt'}: no permission to make a file in its folder {tmp_path}"
    )


def test_a_name_ending_with_a_slash_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    clean_error(run("scenario", "random", "--seed", 1, "--out", "x.toml/"), "ending with a slash")
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(ValueError, match="ending with a slash"):
        atomic_write(f"{tmp_path}/y.txt/", "x")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(not os.path.exists("/dev/null"), reason="needs /dev/null")
def test_a_device_is_refused_as_what_it_is():
    with pytest.raises(UnsafeOutputError) as err:
        write_bytes("/dev/null", b"x")
    assert "it is a character device, not a regular file" in str(err.value)
    assert "link" not in str(err.value)


# ----------------------------------------------------------------------------- closed stdout
def _closed_stdout(*args: str) -> subprocess.CompletedProcess:
    """``psygym ARGS`` started with its standard output closed (``>&-``)."""
    code = "import sys; from psygym_experiments.cli import main; sys.argv[0] = 'psygym'; main()"
    return subprocess.run(
        [sys.executable, "-c", code, *args], stdin=subprocess.DEVNULL, stderr=subprocess.PIPE,
        text=True, timeout=60, preexec_fn=lambda: os.close(1), check=False,
    )  # fmt: skip


def test_a_closed_stdout_does_not_crash_at_import(tmp_path):
    done = _closed_stdout("scenario", "random", "--seed", "1", "--out", str(tmp_path / "a.toml"))
    assert done.returncode == 0, done.stderr
    assert tomllib.loads((tmp_path / "a.toml").read_text())["name"]
    done = _closed_stdout("scenario", "random", "--seed", "1")
    assert done.returncode == 2, done.stderr
    want = "error: standard output is closed: give --out FILE to write the TOML"
    assert done.stderr.strip() == want


# ----------------------------------------------------------------------------- printable names
def test_a_written_name_with_an_escape_code_is_shown_escaped(tmp_path):
    name = tmp_path / "bad\x1b[31mname[red].toml"
    out = ok("scenario", "random", "--seed", 1, "--out", name)
    assert "\x1b" not in out
    assert f"wrote {tmp_path}/bad\\x1b[31mname[red].toml:" in out
    assert name.is_file()


def test_advise_refuses_true_as_an_action_of_a_state_file(tmp_path):
    path = tmp_path / "state.json"
    path.write_text(json.dumps({"edition": "8th", "scenario": "single-phase", "actions": [True]}))
    clean_error(run("advise", "--state", path), "'actions' must be a list of whole numbers")


def test_a_shipped_name_is_the_shipped_scenario_whatever_the_working_folder_holds(
    tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    ok("scenario", "random", "--edition", "7th", "--seed", 9, "--out", "duel")  # a file "duel"
    (tmp_path / "single-phase").mkdir()
    assert load("7th", "duel").scenario.name == "duel"
    assert load("7th", "single-phase").scenario.name == "single-phase"
    assert load("7th", str(tmp_path / "duel")).scenario.name != "duel"  # a path is the file


def test_advise_from_a_log_without_decisions_says_so(tmp_path):
    from psygym_experiments.harness.gamelog import GameLog

    rules, path = load("7th", "single-phase"), tmp_path / "quit.jsonl"
    GameLog(path, {"edition": "7th", "scenario": "single-phase", "seed": 3}).end(
        rules, rules.initial_state(), "quit"
    )
    clean_error(run("advise", "--from-log", path, "--at", 1), "holds no decision")
