"""What the human types in ``psygym play``: odd answers are re-prompted, never end the game.

A non-ASCII digit ("²", "٣") or a number of thousands of digits is not a valid choice (Python's
``str.isdigit`` accepts the first and ``int`` refuses both), and the echo of a piped line shows
its control characters escaped, as the "Not a valid choice" line does.
"""

from __future__ import annotations

import json
from pathlib import Path

from psygym_experiments.cli import app
from typer.testing import CliRunner

runner = CliRunner()

GAME = ["play", "--edition", "8th", "--opponent", "random", "--seed", "3"]
"""A game whose first menu has three choices (8th edition duel: two psykers, or end the phase)."""


def play(tmp_path: Path, answers: str) -> tuple[str, list[dict]]:
    """Run ``psygym play`` with ``answers`` on standard input; return its output and log lines."""
    runs = tmp_path / "runs"
    res = runner.invoke(app, [*GAME, "--runs-dir", str(runs)], input=answers)
    assert res.exit_code == 0, res.output + repr(res.exception)
    (log,) = (runs / "games").glob("*.jsonl")
    return res.output, [json.loads(x) for x in log.read_text().splitlines()]


def test_non_ascii_digits_and_huge_numbers_are_re_prompted(tmp_path):
    long_number = "1" * 5000  # more digits than int() converts
    answers = f"²\n٣\n{long_number}\n{'0' * 5000}\nq\n"
    out, lines = play(tmp_path, answers)
    assert out.count("Not a valid choice") == 4
    assert "Not a valid choice: '²'" in out and "Not a valid choice: '٣'" in out
    # A long answer is quoted back cut short, its length given.
    assert f"{'1' * 40}'... (5000 characters)" in out and "1" * 41 + "'" not in out
    assert "You quit." in out and "Game log:" in out and "Replay it with" in out
    assert lines[-1]["type"] == "end" and lines[-1]["result"] == "quit"


def test_ascii_numbers_still_choose_even_with_leading_zeros(tmp_path):
    out, lines = play(tmp_path, "²\n0002\nq\n")
    assert out.count("Not a valid choice") == 1
    steps = [x for x in lines if x["type"] == "step"]
    assert steps and steps[0]["player"] == 0 and steps[0]["label"] == "Select Primaris Psyker"


def test_the_echo_of_piped_input_escapes_control_characters(tmp_path):
    out, _ = play(tmp_path, "\x1b[31mRED\n\u202eabc\n q\n")
    assert "\x1b" not in out and "\u202e" not in out  # nothing raw reaches the terminal
    echoes = [line.split(": ", 1)[1] for line in out.splitlines() if line.startswith("Choose 1-3")]
    assert echoes == ["\\x1b[31mRED", "\\u202eabc", "q"]
    assert "Not a valid choice: '\\x1b[31mRED'" in out
