"""``psygym compare``: the main job. Every kind of agent, every edition, one report.

For each edition (all installed ones by default, 7th edition first) the comparison plays its
default scenario, and also its ``single-phase`` scenario where the edition ships one (a single
Psychic phase, meant to be small enough for the exact solver: where the solver finishes within
the time and state limits, the optimum is known). On each scenario the field is:

- every heuristic of the edition and ``random`` (for 7th edition this includes ``double-wc``,
  "commit twice the warp charge");
- ``tuned``: the parametric policy tuned by Optuna, read from
  ``<runs-dir>/tuned/<edition>-<scenario>/best.json`` or, when there is none, tuned now with a
  small budget (``psygym_experiments.harness.tuning.tune_parametric``) and saved there for the
  next run;
- ``ppo``: a MaskablePPO agent, the pretrained model shipped with the package
  (``psygym_agents.sb3.pretrained_path``), else one trained earlier by this command under
  ``<runs-dir>/trained/<edition>-<scenario>/``, else a short
  ``psygym_experiments.harness.training.train_agent`` run (not with ``--quick``: then the agent
  is left out and the report says so);
- ``optimal``: the exact expectiminimax player, where the game is solved within the limits
  (each scenario's game is solved in the background while the previous scenario plays);
- ``search``: on every scenario that cannot be solved whole (every duel), the agent that solves
  each cast (or turn) exactly and values the board beyond it with a learned value (an
  information-set search where hands are secret). On a scenario solvable whole it is the exact
  solver, so ``optimal`` stands for it. It takes up to a few seconds a game, too slow for the
  round-robin of every agent, so after the round-robin it plays the leader head to head over both
  seats (``--search-games`` games per seat, common random numbers); ``--search`` puts it in the
  round-robin instead and ``--quick`` leaves it out (the report says which).

The worker processes are kept busy throughout: a duel's match is played in the background,
its games queued in the pool ahead of the next scenario's while this process prepares that
scenario (tuning, training); the duels are played first, so that the small one-phase
scenarios fill the workers beside the last match; the workers draw the report's plots. No number
depends on this order.

All of them meet in a round-robin in both seats with common random numbers
(``psygym_experiments.harness.tournament``). The leaderboard ranks agents by their mean score per
game over all opponents and both seats (with a 95% interval); a PPO model is scored only on the
seats its metadata says it was trained for (``seat`` or ``seats`` in its JSON), and then not
ranked. The report opens with plain answers per edition (which agent is best and whether that
is beyond noise, how good ``double-wc`` is, the exact dice-to-commit and deny tables of the
edition's ``answer_tables`` tool), then gives every head-to-head result, exact expected scores
and exploitability where they can be computed.

Exact values: where the game has perfect information and no simultaneous moves, one side
process enumerates each scenario's state graph once (one-phase scenarios first,
:mod:`psygym_experiments.harness.compare_graph`) while the games are played, and every pairing's
exact score and every agent's best responses are one backward pass over it. A one-phase game
waits for its graph; a game of several phases never does (it is far larger; with ``--quick`` it
is not even tried). Other games keep the solver of :mod:`psygym_experiments.harness.solving`.

Output: ``<runs-dir>/compare-<time>/`` with ``report.md``, ``report.html`` (self-contained, plots
embedded), ``results.csv``, ``results.json``, ``config.json``, ``command.txt`` and PNG plots; the
leaderboard is printed as a table that fits 80 columns.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from psygym_experiments.common import (
    check_workers_option,
    console,
    ray_option,
    split_names,
    user_errors,
)
from psygym_experiments.harness.compare_field import (
    DEFAULT_EPISODES,
    DEFAULT_SOLVE_SECONDS,
    DEFAULT_TRAIN_STEPS,
    DEFAULT_TUNE_TRIALS,
    QUICK_EPISODES,
    QUICK_SOLVE_SECONDS,
    QUICK_TUNE_TRIALS,
    SEARCH_GAMES,
)
from psygym_experiments.harness.compare_run import run_compare
from psygym_experiments.harness.pools import check_ray_workers
from psygym_experiments.harness.runs import write_command
from psygym_experiments.harness.solving import (
    MAX_STATES,
    MOST_STATES,
    check_max_states,
)
from psygym_experiments.report import leaderboard_table


def compare(
    edition: Annotated[
        list[str] | None,
        typer.Option(help="Edition(s) to compare (repeat or comma-separate; default: all)."),
    ] = None,
    scenario: Annotated[
        str | None,
        typer.Option(
            help="One scenario for every edition (default: its default and single-phase)."
        ),
    ] = None,
    quick: Annotated[
        bool, typer.Option("--quick", help="Tiny budget: a smoke run in well under a minute.")
    ] = False,
    episodes: Annotated[
        int | None,
        typer.Option(
            min=1,
            help=f"Games per pairing and seat (default {DEFAULT_EPISODES}, "
            f"quick {QUICK_EPISODES}).",
        ),
    ] = None,
    seed: Annotated[
        int, typer.Option(help="Base seed: game i of every pairing uses seed + i.")
    ] = 0,
    runs_dir: Annotated[
        str, typer.Option(help="Folder for compare-<time>/, tuned/ and trained/.")
    ] = "runs",
    workers: Annotated[
        int | None,
        typer.Option(
            min=1,
            callback=check_workers_option,
            help="Processes (default: the CPU count; at most 4 per CPU core).",
        ),  # fmt: skip
    ] = None,
    tune_trials: Annotated[
        int | None,
        typer.Option(
            min=1,
            help=f"Optuna trials if no saved parameters (default "
            f"{DEFAULT_TUNE_TRIALS}, quick {QUICK_TUNE_TRIALS}).",
        ),
    ] = None,
    train_steps: Annotated[
        int | None,
        typer.Option(
            min=0,
            help=f"PPO steps if no pretrained model (default "
            f"{DEFAULT_TRAIN_STEPS}; quick: no training).",
        ),
    ] = None,
    max_states: Annotated[
        int | None,
        typer.Option(
            min=1,
            callback=check_max_states,
            help=f"Exact solver state limit (default {MAX_STATES}; at most {MOST_STATES:,}).",
        ),
    ] = None,
    agents: Annotated[
        str | None,
        typer.Option(
            help="Keep only these agents (comma-separated: heuristic names, random, "
            "tuned, ppo, search, optimal; default: everyone)."
        ),
    ] = None,
    solve_seconds: Annotated[
        float | None,
        typer.Option(
            min=0.1,
            help=f"CPU seconds to solve a scenario's game (default "
            f"{DEFAULT_SOLVE_SECONDS:.0f}, quick {QUICK_SOLVE_SECONDS:.0f}).",
        ),
    ] = None,
    search: Annotated[
        bool,
        typer.Option(
            "--search",
            help="Put the search agent in every duel's round-robin (seconds a game: hours).",
        ),
    ] = False,
    search_games: Annotated[
        int,
        typer.Option(
            min=0,
            help="Games per seat of search against each duel's leader, head to head after the "
            "round-robin (0: none; not with --quick or --search).",
        ),
    ] = SEARCH_GAMES,
    ray: str = ray_option(),
) -> None:
    """The main job: every agent of every edition, search against each duel's leader; a report."""
    with user_errors():
        check_ray_workers(ray, workers)
        names = [n for e in edition or [] for n in split_names(e)] or None
        run_dir = run_compare(
            names, scenario=scenario, quick=quick, episodes=episodes, seed=seed,
            runs_dir=runs_dir, workers=workers, tune_trials=tune_trials, train_steps=train_steps,
            max_states=max_states, solve_seconds=solve_seconds,
            agents=split_names(agents) if agents else None, search=search,
            search_games=search_games, ray=ray,
        )  # fmt: skip
    write_command(run_dir)
    _print_leaderboards(run_dir)


def _print_leaderboards(run_dir: Path) -> None:
    """Print the leaderboards and headline of a compare run folder."""
    doc = json.loads((run_dir / "results.json").read_text())
    for table in leaderboard_table(doc, width=min(80, console.width)):
        console.print(table)
    for line in doc.get("headline", []):
        console.print(line, highlight=False)
    console.print(f"report: {run_dir / 'report.md'}", highlight=False)


def register(app: typer.Typer) -> None:
    """Add the ``compare`` command."""
    app.command("compare")(compare)


__all__ = ["compare", "register"]
