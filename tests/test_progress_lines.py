"""The progress display where stderr is not a terminal: plain lines, not a silent live bar."""

from __future__ import annotations

import pytest
from psygym_experiments.harness import progress
from psygym_experiments.harness.progress import ProgressBar, clock_text


@pytest.fixture
def every_step(monkeypatch):
    """A line is due at once and after every step."""
    monkeypatch.setattr(progress, "FIRST_LINE_SECONDS", 0.0)
    monkeypatch.setattr(progress, "LINE_SECONDS", 0.0)


def test_a_long_job_in_a_log_prints_where_it_is_and_where_it_ended(every_step, capsys):
    with ProgressBar("phase backups", 4) as bar:
        bar.advance()
        bar.update(note="level 3 of 7")
        bar.advance(3)
        assert bar.completed == 4
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("phase backups: 1 of 4 (25%), 0:00:00 elapsed, about 0:00:00 left")
    assert lines[1].endswith("; level 3 of 7") and lines[1].startswith("phase backups: 1 of 4")
    assert lines[2] == "phase backups: 4 of 4 (100%), 0:00:00 elapsed; level 3 of 7"
    assert lines[3] == lines[2]  # the last line: the job ended there
    assert len(lines) == 4


def test_a_job_of_unknown_size_counts_what_it_did(every_step, capsys):
    with ProgressBar("continuations", None) as bar:
        bar.advance(3)
    assert capsys.readouterr().err.splitlines()[0] == "continuations: 3, 0:00:00 elapsed"


def test_a_short_job_prints_nothing(capsys):
    with ProgressBar("evaluating", 10) as bar:
        bar.advance(10)
        assert bar.completed == 10
    with ProgressBar("disabled", 10, enabled=False) as bar:
        bar.advance(10)
        assert bar.completed == 0
    assert capsys.readouterr().err == ""


def test_times_read_as_the_bar_shows_them():
    assert clock_text(0.4) == "0:00:00"
    assert clock_text(3725) == "1:02:05"
