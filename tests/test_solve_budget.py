"""``psygym solve`` states its budget first, shows its progress, stops at the budget, times all.

The issue this answers: a solve ran minutes without a word, used 4.4 GB (the first search's
memory was kept while the fallback search ran), printed only the last search's time, and said
"under optimal play" beside "exact NO".
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from psygym_agents.solvers import NotSolvable
from psygym_agents.solvers.expectiminimax import Solver
from psygym_experiments.cli import app
from psygym_experiments.harness import solving
from psygym_experiments.harness.solving import SolveBudget, SolveWatch, rough_count
from typer.testing import CliRunner

from psygym.editions import load

runner = CliRunner()


def run(*args: object):
    return runner.invoke(app, [str(a) for a in args])


def test_the_budget_is_the_first_line_and_an_exact_value_is_under_optimal_play():
    result = run("solve", "--edition", "7th", "--scenario", "single-phase", "--max-states", 100_000)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    from psygym.engine import compiled_game

    # A compiled state takes less memory (CORE_BYTES_PER_STATE) than a Python one.
    about = "15 MB" if compiled_game(load("7th", "single-phase")) is not None else "80 MB"
    assert lines[0] == (
        f"budget: 100,000 states, about {about}; at most 3.0 GB of memory for each search "
        "(--max-states, --max-memory)"
    )
    assert "value +1.0497 for Ultramarines (player 0) under optimal play" in lines[1]
    assert "states 56,795   exact yes" in lines[2] and "(the whole command)" in lines[2]


def test_a_fallback_search_is_not_called_optimal_play_and_the_time_is_the_whole(small_rt):
    """Too big for an exact solve within 1,000 states: one Psychic phase is searched instead."""
    out = run("solve", "--edition", "rt", "--scenario", small_rt, "--max-states", 1000)
    assert out.exit_code == 0, out.output
    assert "exact NO" in out.stdout and "under optimal play" not in out.stdout
    assert "an estimate: optimal play searched 1 Psychic phase only" in out.stdout
    assert "the exact solve needed more than 1,000 states" in out.stdout  # the note
    result = run("solve", "--edition", "rt", "--scenario", small_rt, "--max-states", 1000, "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert result.stderr.startswith("budget: 1,000 states")  # stdout stays pure JSON
    assert doc["exact"] is False and doc["max_depth"] == 1 and doc["states"] == 167
    first, second = doc["attempts"]
    assert first["search"] == "exact solve" and first["states"] == 1001
    assert first["outcome"].startswith("needed more than 1,000 states, stopped after")
    assert second["search"] == "search of 1 Psychic phase" and second["states"] == 167
    # The time printed is the whole command's: both searches, and what came before them.
    assert doc["seconds"] >= doc["search_seconds"] >= first["seconds"] + second["seconds"]
    assert doc["budget"] == {"states": 1000, "memory_gb": 3.0}


def test_a_plies_limited_value_says_estimate_not_optimal_play():
    out = run("solve", "--edition", "7th", "--scenario", "duel", "--max-plies", 4)
    assert out.exit_code == 0, out.output
    assert "exact NO" in out.stdout and "under optimal play" not in out.stdout
    assert "optimal play searched 4 plies only" in out.stdout


def test_out_of_reach_says_how_far_each_search_got(monkeypatch):
    # The rough estimate comes from the Python search's stack (the compiled one gives none).
    monkeypatch.setenv("PSYGYM_ENGINE", "python")
    result = run("solve", "--edition", "7th", "--scenario", "single-phase", "--max-states", 30_000)
    assert result.exit_code == 2
    error = [ln for ln in result.stderr.splitlines() if ln.startswith("error:")]
    assert len(error) == 1 and "Traceback" not in result.output
    assert error[0].startswith(
        "error: out of reach: the exact solve needed more than 30,000 states, stopped after"
    )
    assert "roughly" in error[0] and "raise --max-states or --max-memory" in error[0]


def test_the_memory_budget_stops_the_search():
    """A fresh process (a test run's own process may reuse freed memory and grow by nothing):
    single-phase's 56,795 states take far more than 10 MB, so the search stops before them."""
    # On the Python search: the compiled one's 56,795 states fit in 10 MB.
    done = subprocess.run(
        [sys.executable, "-m", "psygym_experiments.cli", "solve", "--edition", "7th",
         "--scenario", "single-phase", "--max-memory", "0.01"],
        capture_output=True, text=True, timeout=300, env={**os.environ, "PSYGYM_ENGINE": "python"},
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "at most 10 MB of memory for each search" in done.stdout
    stopped = re.search(r"passed the memory budget of 10 MB at ([\d,]+) states", done.stderr)
    assert stopped and int(stopped[1].replace(",", "")) < 56_795, done.stderr


def test_the_watch_prints_rate_memory_and_estimate_where_there_is_no_bar(monkeypatch, capsys):
    class HalfDone:
        def searched_share(self) -> float:
            return 0.5

    monkeypatch.setattr(solving, "FIRST_LINE_SECONDS", 0.0)
    watch = SolveWatch("exact solve", SolveBudget(15_000, None), None, lines=True)
    watch.solver = HalfDone()
    watch(10_000)
    line = capsys.readouterr().err
    assert line.startswith("exact solve: 10,000 states; ") and " states/s, " in line
    assert "needs about 20,000 (rough), over budget" in line
    assert watch.estimate == 20_000


def test_the_watch_counts_the_memory_a_search_adds(monkeypatch):
    """The budget is what the search adds: a process already holding 2 GB may still search."""
    held = iter([2_000_000_000, 2_000_900_000, 2_001_100_000])
    monkeypatch.setattr(solving, "resident_bytes", lambda: next(held))
    watch = SolveWatch("exact solve", SolveBudget(None, 1_000_000), None, lines=False)
    watch(10_000)  # 0.9 MB added: within the budget
    with pytest.raises(NotSolvable, match="passed the memory budget of 1 MB at 20,000 states"):
        watch(20_000)


def test_searched_share_grows_to_one():
    """The solver's share of its tree finished: in (0, 1], never falling, 1 once solved."""
    rules = load("7th", "single-phase")
    shares: list[float] = []
    solver = Solver(rules, engine="python",
                    on_progress=lambda _: shares.append(solver.searched_share()))  # fmt: skip
    solver.value()
    assert len(shares) == 5 and all(0 < s <= 1 for s in shares)
    assert shares == sorted(shares)
    assert solver.searched_share() == 1.0


@pytest.mark.parametrize(
    "n,text",
    [(7, "about 7"), (1234, "about 1,200"), (56_795, "about 57,000"),
     (3.8e6, "about 3.8 million"), (2.2e9, "about 10^9"), (5e31, "about 10^32")],
)  # fmt: skip
def test_rough_counts_claim_no_digits_they_lack(n, text):
    assert rough_count(n) == text


def test_solve_through_the_console_script_prints_its_budget_and_progress():
    """A real process: the budget line first, progress lines on a piped error stream (the
    first after 2 s: here the search is too short for one), the whole time at the end."""
    done = subprocess.run(
        [sys.executable, "-m", "psygym_experiments.cli", "solve", "--edition", "8th",
         "--scenario", "single-phase"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    from psygym.editions import load
    from psygym.engine import compiled_game

    # The compiled solver's states are smaller (CORE_BYTES_PER_STATE) than the reference's.
    about = "450 MB" if compiled_game(load("8th", "single-phase")) is not None else "2.4 GB"
    assert lines[0].startswith(f"budget: 3,000,000 states, about {about}; at most 3.0 GB")
    assert "under optimal play" in lines[1] and "exact yes" in lines[2]
    assert "(the whole command)" in lines[2] and "memory " in lines[2]
