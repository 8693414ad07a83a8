"""The basic CLI commands through typer's CliRunner: odds, simulate, bench, and clean errors."""

from __future__ import annotations

import copy
import csv
import io
import json
from decimal import Decimal

import pytest
from helpers import psyker7, scenario7, unit7, write_toml
from psygym_experiments.cli import app
from test_seventh_odds import SEED_TABLE
from typer.testing import CliRunner

import psygym

runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, list(args))


def ok(*args: str) -> str:
    result = run(*args)
    assert result.exit_code == 0, (result.stdout, result.stderr, result.exception)
    return result.stdout


def assert_clean_error(result, *words: str, one_line: bool = True) -> str:
    """Exit code 2, an error on stderr starting with 'error:' (on one line unless told), no
    traceback; ``words`` must appear in it."""
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert isinstance(result.exception, SystemExit)
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    if one_line:
        assert len(lines) == 1, result.stderr
    text = "".join(lines)  # (rich wraps at spaces and keeps them: joining restores the text)
    assert text.startswith("error: ")
    assert "Traceback" not in result.output and result.stdout == ""
    for w in words:
        assert w in text, text
    return text


# ----------------------------------------------------------------------------- odds
CASTING_HEADER = "dice,wc1,wc1_no_perils,wc2,wc2_no_perils,wc3,wc3_no_perils,perils"


def test_odds_csv_header_and_rows():
    out = ok("odds", "--edition", "7th", "--format", "csv")
    lines = out.splitlines()
    assert lines[0] == CASTING_HEADER
    assert "6,98.44,72.12,89.06,62.74,65.63,41.91,26.32" in lines
    rows = list(csv.reader(io.StringIO(out)))[1:]
    assert len(rows) == 10
    for row in rows:
        assert [Decimal(c) for c in row[1:]] == SEED_TABLE[int(row[0])]


def test_odds_default_edition_and_alias_and_max_dice():
    assert ok("odds", "--format", "csv") == ok("odds", "--edition", "seventh", "--format", "csv")
    lines = ok("odds", "--format", "csv", "--max-dice", "3").splitlines()
    assert len(lines) == 4 and lines[-1].startswith("3,87.50,")


def test_odds_deny_table():
    lines = ok("odds", "--deny", "--format", "csv").splitlines()
    assert lines[0] == "dice,successes,deny_6plus,deny_5plus,deny_4plus,deny_3plus"
    assert lines[1] == "1,1,16.67,33.33,50.00,66.67"
    assert "3,3,0.46,3.70,12.50,29.63" in lines


def test_odds_generation_table():
    lines = ok("odds", "--generation", "--format", "csv").splitlines()
    assert lines[0] == "mastery,one_psyker,ml1_psykers"
    assert "2,33.33,30.56" in lines


def test_odds_json():
    doc = json.loads(ok("odds", "--format", "json"))
    assert doc["name"] == "casting"
    assert doc["columns"] == CASTING_HEADER.split(",")
    assert doc["rows"][5] == ["6", "98.44", "72.12", "89.06", "62.74", "65.63", "41.91", "26.32"]
    gen = json.loads(ok("odds", "--generation", "--format", "json"))
    assert gen["rows"][1] == ["2", "33.33", "30.56"]


def test_odds_markdown():
    out = ok("odds", "--format", "markdown")
    assert (
        "| dice | wc1 | wc1_no_perils | wc2 | wc2_no_perils | wc3 | wc3_no_perils | perils |" in out
    )
    assert "| 6 | 98.44 | 72.12 | 89.06 | 62.74 | 65.63 | 41.91 | 26.32 |" in out
    assert out.lstrip().startswith("### ")
    deny = ok("odds", "--deny", "--format", "markdown")
    assert "| 1 | 1 | 16.67 | 33.33 | 50.00 | 66.67 |" in deny


def test_odds_table_format():
    out = ok("odds")
    assert "65.63" in out and "26.32" in out


def test_odds_bad_format_and_edition():
    assert_clean_error(run("odds", "--format", "xml"), "--format", "'xml'", "csv")
    assert_clean_error(run("odds", "--edition", "9th"), "unknown edition '9th'", "7th")


# ----------------------------------------------------------------------------- simulate
SIM = [
    "simulate",
    "--edition",
    "7th",
    "--scenario",
    "single-phase",
    "--agents",
    "double-wc,deny-always",
    "--episodes",
    "50",
    "--json",
]


def test_simulate_json_parses_and_is_deterministic():
    first = ok(*SIM, "--seed", "1")
    doc = json.loads(first)
    assert (doc["edition"], doc["scenario"], doc["seed"]) == ("7th", "single-phase", 1)
    a, b = doc["results"]
    assert (a["agent"], b["agent"]) == ("double-wc", "deny-always")
    assert a["games"] == b["games"] == 50
    assert a["mean_score"] == pytest.approx(-b["mean_score"])
    assert a["attempts_per_game"] > 0 and b["attempts_per_game"] == 0  # one phase: 0 casts
    assert 0 <= a["perils_rate"] <= 1 and 0 < a["manifest_rate"] <= 1
    assert ok(*SIM, "--seed", "1") == first
    assert ok(*SIM, "--seed", "2") != first


def test_simulate_json_is_strict_json():
    def reject(token):
        raise ValueError(f"non-JSON constant {token}")

    json.loads(ok(*SIM, "--seed", "1"), parse_constant=reject)


def test_simulate_text_output():
    out = ok(
        "simulate",
        "--scenario",
        "single-phase",
        "--episodes",
        "20",
        "--seed",
        "0",
        "--agents",
        "minimum,deny-never",
    )
    assert "minimum" in out and "deny-never" in out and "20 games" in out


def test_simulate_bad_inputs(tmp_path):
    """Exit code 2 and a clear error (one line: see test_long_errors_stay_on_one_line)."""
    assert_clean_error(run("simulate", "--edition", "9th"), "unknown edition")
    assert_clean_error(
        run("simulate", "--scenario", "nope"), "nope", "duel", "single-phase", one_line=False
    )
    assert_clean_error(
        run("simulate", "--scenario", "single-phase", "--agents", "double-wc"),
        "--agents",
        one_line=False,
    )
    assert_clean_error(
        run("simulate", "--scenario", "single-phase", "--agents", "double-wc,no-such-bot"),
        "no-such-bot",
        "known agents",
        one_line=False,
    )


def short_bad_scenario(tmp_path):
    data = scenario7([unit7("Lib", psyker=psyker7(7, powers=["Smite"]))], [unit7("Squad", (0, 10))])
    return write_toml(tmp_path / "bad.toml", data)


def test_simulate_bad_scenario_file(tmp_path):
    path = short_bad_scenario(tmp_path)
    assert_clean_error(
        run("simulate", "--scenario", str(path), "--episodes", "1"),
        str(path),
        "sides.0.units.0.psyker.mastery",
        "at most 4",
        one_line=False,
    )


def long_bad_scenario(tmp_path, power: str):
    data = scenario7([unit7("Lib", psyker=psyker7(1, powers=[power]))], [unit7("Squad", (0, 10))])
    return write_toml(tmp_path / "bad-power.toml", data)


def test_long_errors_stay_on_one_line(tmp_path):
    assert_clean_error(run("simulate", "--scenario", "nope"), "nope", "single-phase")
    path = short_bad_scenario(tmp_path)
    assert_clean_error(
        run("simulate", "--scenario", str(path), "--episodes", "1"),
        str(path),
        "sides.0.units.0.psyker.mastery",
    )
    path = long_bad_scenario(tmp_path, "Smiet")
    assert_clean_error(
        run("simulate", "--scenario", str(path), "--episodes", "1"),
        "unknown power 'Smiet'",
        "Psychic Shriek",
    )


def test_error_text_is_not_taken_as_markup(tmp_path):
    path = long_bad_scenario(tmp_path, "[red]Smiet")
    text = assert_clean_error(
        run("simulate", "--scenario", str(path), "--episodes", "1"), one_line=False
    )
    assert "'[red]Smiet'" in text


def test_cli_help_lists_the_basic_commands():
    out = ok("--help")
    for command in ("odds", "simulate", "bench"):
        assert command in out


def test_errors_keep_no_state_between_runs(tmp_path):
    """A failing command does not break the next one (nothing cached from the bad file)."""
    path = short_bad_scenario(tmp_path)
    run("simulate", "--scenario", str(path))
    fixed = copy.deepcopy(
        scenario7([unit7("Lib", psyker=psyker7(2, powers=["Smite"]))], [unit7("Squad", (0, 10))])
    )
    write_toml(path, fixed)
    doc = json.loads(
        ok(
            "simulate",
            "--scenario",
            str(path),
            "--episodes",
            "5",
            "--json",
            "--agents",
            "double-wc,random",
        )
    )
    assert doc["scenario"] == "test"


def test_agents_lists_every_agent_with_its_description():
    from psygym.policies import bots_for

    doc = json.loads(ok("agents", "--json"))
    for edition in psygym.edition.ids():
        rows = [r for r in doc if r["edition"] == edition]
        names = [r["agent"] for r in rows]
        assert set(bots_for(edition).heuristics) <= set(names)
        assert {"random", "optimal", "best-heuristic", "auto"} <= set(names)
        assert all(r["description"] for r in rows), rows
    text = ok("agents", "--edition", "8th")
    assert "save-deny-for-best" in text and max(len(line) for line in text.splitlines()) <= 80
    assert_clean_error(run("agents", "--edition", "9th"), "unknown edition '9th'")


def test_simulate_table_fits_80_columns_with_both_names_in_full(monkeypatch):
    from psygym_experiments.common import console

    monkeypatch.setattr(console, "width", 80)
    out = ok("simulate", "--edition", "8th", "--scenario", "single-phase", "--episodes", "20",
             "--agents", "save-deny-for-best,best-power-first")  # fmt: skip
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 80
    words = [w for line in lines for w in line.split()]
    assert "save-deny-for-best" in words and "best-power-first" in words
