"""``psygym cfr`` counts its tree before building it, ``compare`` stops cleanly, ``bench`` rounds.

* cfr: a tree over ``--max-states`` histories is refused in one line before OpenSpiel builds
  anything; the count is OpenSpiel's own, a Python loop that reports progress (and so stops on
  Ctrl-C); the CFR iterations show progress.
* compare: a ``--runs-dir`` that cannot hold the run folder is refused before any game; SIGTERM
  removes the temporary folder and says ``interrupted``.
* bench: ``--rounds`` above ``--steps`` is refused before any timing.
"""

from __future__ import annotations

import inspect
import os
import signal
import subprocess
import sys
import time

import pytest
from psygym_experiments.cli import app
from typer.testing import CliRunner

runner = CliRunner()

SMALL_2ND = ("2nd", "smite-skirmish")
"""The smallest shipped CFR case."""
SMALL_2ND_HISTORIES = 11_338
"""Its tree's histories (decisions, chance nodes and ends), as OpenSpiel's get_all_states counts."""
TINY_RT = ("rt", "random:2,psykers=1,rounds=1,mastery=1-1")
"""A generated scenario of a few thousand histories: CFR on it takes about a second."""


def _one_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, text
    return lines[0]


@pytest.fixture
def no_cfr_solver(monkeypatch):
    """OpenSpiel's CFR solvers fail the test if anything builds one."""
    cfr = pytest.importorskip("open_spiel.python.algorithms.cfr")

    def built(*_args, **_kwargs):
        raise AssertionError("a CFR solver was built")

    monkeypatch.setattr(cfr, "CFRSolver", built)
    monkeypatch.setattr(cfr, "CFRPlusSolver", built)


# ----------------------------------------------------------------------------- cfr
def test_cfr_refuses_a_tree_over_max_states_before_building_it(tmp_path, no_cfr_solver):
    edition, scenario = SMALL_2ND
    result = runner.invoke(app, ["cfr", "--edition", edition, "--scenario", scenario,
                                 "--iterations", "1", "--max-states", "5000",
                                 "--out", str(tmp_path / "cfr")])  # fmt: skip
    assert result.exit_code == 2, result.output
    assert result.stdout.startswith("budget: 5,000 histories, about 5 MB (--max-states)")
    line = _one_line(result.stderr)
    assert line.startswith("error: the game tree of 2nd smite-skirmish has at least ")
    assert f"{SMALL_2ND_HISTORIES:,} histories" in line  # its root finished: the whole count
    assert "more than --max-states 5,000" in line
    assert "--scenario random:" in line and "a larger --max-states" in line
    assert "Traceback" not in result.output
    assert list((tmp_path / "cfr").iterdir()) == []  # nothing solved or written


def test_cfr_default_budget_refuses_the_7th_duel_before_building_it(tmp_path, no_cfr_solver):
    """The duel used to grow memory without bound for minutes; now it is counted and refused."""
    result = runner.invoke(app, ["cfr", "--edition", "7th", "--scenario", "duel",
                                 "--iterations", "2", "--out", str(tmp_path / "cfr")])  # fmt: skip
    assert result.exit_code == 2, result.output
    assert result.stdout.startswith("budget: 2,000,000 histories, about 2.0 GB (--max-states)")
    line = _one_line(result.stderr)
    assert line.startswith("error: the game tree of 7th duel has at least ")
    assert int(line.split("at least ")[1].split(" histories")[0].replace(",", "")) > 2_000_000


def test_count_histories_is_openspiel_s_count_and_stops_past_its_limit():
    pytest.importorskip("pyspiel")
    from open_spiel.python.algorithms import get_all_states

    from psygym.editions import load
    from psygym.interop.openspiel import count_histories, game_from_rules

    game = game_from_rules(load(*SMALL_2ND))
    every = get_all_states.get_all_states(game, include_terminals=True, include_chance_states=True)
    assert len(every) == SMALL_2ND_HISTORIES
    whole = count_histories(game, SMALL_2ND_HISTORIES)
    assert (whole.histories, whole.complete) == (SMALL_2ND_HISTORIES, True)
    assert whole.positions < 1000  # memoised over positions: far fewer than the histories
    over = count_histories(game, SMALL_2ND_HISTORIES - 1)
    assert not over.complete and over.histories >= SMALL_2ND_HISTORIES
    few = count_histories(game, 50)  # stops once it holds more positions than the limit
    assert not few.complete and few.positions == 51 and few.histories > 50


def test_count_histories_reports_progress_and_stops_on_ctrl_c():
    """A Python loop that calls back: Ctrl-C (KeyboardInterrupt) ends it at the next position."""
    pytest.importorskip("pyspiel")
    from psygym.editions import load
    from psygym.interop.openspiel import count_histories, game_from_rules

    game = game_from_rules(load("7th", "duel"))
    seen = []

    def on_progress(positions: int, largest: int) -> None:
        seen.append(positions)
        if len(seen) == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        count_histories(game, 10**9, on_progress=on_progress, every=500)
    assert seen == [500, 1000, 1500]


def test_cfr_shows_the_count_and_the_iterations_as_they_go(tmp_path, monkeypatch):
    pytest.importorskip("pyspiel")
    from psygym_experiments.harness import progress

    monkeypatch.setattr(progress, "FIRST_LINE_SECONDS", 0.0)  # a plain line at every step
    monkeypatch.setattr(progress, "LINE_SECONDS", 0.0)
    edition, scenario = TINY_RT
    result = runner.invoke(app, ["cfr", "--edition", edition, "--scenario", scenario,
                                 "--iterations", "2", "--every", "1",
                                 "--out", str(tmp_path / "cfr")])  # fmt: skip
    assert result.exit_code == 0, result.output
    err = result.stderr.splitlines()
    assert any(line.startswith("counting the game tree: ") for line in err)
    for label in ("CFR", "CFR+"):
        assert any(line.startswith(f"{label}: 1 of 2 (50%)") for line in err), err
        assert any(line.startswith(f"{label}: 2 of 2 (100%)") and "NashConv" in line
                   for line in err), err  # fmt: skip
    assert "CFR+: NashConv" in result.stdout


# ----------------------------------------------------------------------------- compare
def test_compare_refuses_a_file_as_runs_dir_before_any_game(tmp_path, monkeypatch):
    import tempfile

    from psygym_experiments.harness import compare_run

    def played(*_args, **_kwargs):
        raise AssertionError("a game was played")

    monkeypatch.setattr(compare_run, "compare_scenario", played)
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    afile = tmp_path / "afile"
    afile.write_text("x\n")
    result = runner.invoke(app, ["compare", "--quick", "--edition", "7th", "--workers", "1",
                                 "--runs-dir", str(afile)])  # fmt: skip
    assert result.exit_code == 2, result.output
    line = _one_line(result.stderr)
    assert line.startswith("error: cannot make the folder ") and "is a file, not a folder" in line
    assert afile.read_text() == "x\n"
    assert list(temp.iterdir()) == []


def test_sigterm_handler_raises_keyboard_interrupt_then_the_old_one_is_back():
    from psygym_experiments.harness.lifecycle import sigterm_interrupts

    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(KeyboardInterrupt), sigterm_interrupts():
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the handler runs at once; never reached
    assert signal.getsignal(signal.SIGTERM) is before


def test_sigterm_during_compare_removes_its_temporary_folder_and_says_interrupted(tmp_path):
    temp, runs = tmp_path / "tmp", tmp_path / "runs"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "psygym_experiments.cli", "compare", "--quick", "--edition",
         "7th", "--workers", "1", "--runs-dir", str(runs)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while not list(temp.glob("psygym-compare-*")) and proc.poll() is None:
            assert time.monotonic() < deadline, "compare made no temporary folder"
            time.sleep(0.05)
        time.sleep(0.5)  # into the games
        assert proc.poll() is None, proc.communicate()
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=30)  # and no wait for the side processes' work
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    assert err.rstrip().splitlines()[-1].startswith("interrupted: "), err
    assert "Traceback" not in err
    assert list(temp.iterdir()) == []
    assert not runs.exists() or all(any(p.iterdir()) for p in runs.iterdir())  # no empty run


# ----------------------------------------------------------------------------- bench
def test_bench_refuses_more_rounds_than_steps_before_timing_anything(monkeypatch):
    from psygym_experiments import bench

    def timed(*_args, **_kwargs):
        raise AssertionError("the bench started")

    monkeypatch.setattr(bench, "_env_subjects", timed)
    monkeypatch.setattr(bench, "interleaved", timed)
    result = runner.invoke(app, ["bench", "--steps", "100", "--rounds", "1000"])
    assert result.exit_code == 2, result.output
    line = _one_line(result.stderr)
    assert line.startswith("error: --rounds 1000 is more than --steps 100")
    assert "--rounds at most 100" in line
    help_text = inspect.signature(bench.bench).parameters["rounds"].default.help
    assert "at most --steps" in help_text
