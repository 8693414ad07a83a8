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
  (each scenario's game is solved in the background while the previous scenario plays).

All of them meet in a round-robin in both seats with common random numbers
(``psygym_experiments.harness.tournament``). The leaderboard ranks agents by their mean score per
game over all opponents and both seats (with a 95% interval); the report also gives every
head-to-head result, exact expected scores and exploitability where the solver can compute
them, and states how far ``double-wc`` is from the best agent and from the optimum. Output:
``<runs-dir>/compare-<time>/`` with ``report.md``, ``results.csv``, ``results.json``,
``config.json``, ``command.txt`` and PNG plots; the leaderboard is printed as a table.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import typer
from psygym_experiments.common import (
    console,
    edition_tool,
    err_console,
    split_names,
    user_errors,
)
from psygym_experiments.harness.output import write_json
from psygym_experiments.harness.runs import run_folder, write_command
from psygym_experiments.harness.solving import MAX_STATES, SOLVE_SECONDS, Solved, exact_game_value
from psygym_experiments.harness.tournament import EvalSettings, evaluate, worker_pool
from psygym_experiments.report import REFERENCE, dice_rows, leaderboard_table, write_report

DEFAULT_EPISODES = 100
"""Games per pairing and seat with default settings."""
QUICK_EPISODES = 10
"""Games per pairing and seat with ``--quick``."""
DEFAULT_TUNE_TRIALS = 20
"""Optuna trials when no tuned parameters are saved yet."""
QUICK_TUNE_TRIALS = 2
"""Optuna trials with ``--quick``."""
DEFAULT_TRAIN_STEPS = 10_000
"""MaskablePPO steps when no pretrained or earlier model exists (never with ``--quick``)."""
TUNE_EPISODES = 100
"""Simulated games per seat and trial when tuning (the tuner's opponent is its default)."""
QUICK_TUNE_EPISODES = 20
"""The same with ``--quick``."""
TUNE_SECONDS = 60.0
"""No new tuning trial starts after this many seconds."""
EXACT_BUDGET = 2_000_000
"""States the solver may spend per scenario on best responses and random agents' pairings."""
QUICK_EXACT_BUDGET = 0
"""The same with ``--quick``."""
QUICK_SOLVE_SECONDS = SOLVE_SECONDS / 6
"""The same with ``--quick``."""
EXTRA_SCENARIO = "single-phase"
"""Scenario compared besides each edition's default, where shipped and exactly solvable."""
GENERIC_AGENTS = ("optimal", "tuned", "sb3")
"""Registry names that are not heuristics (they are added by their own rules below)."""


@dataclass
class Entry:
    """One agent of a scenario's field.

    Attributes:
        label: the short name shown in tables and plots.
        spec: what ``resolve_policy`` is given (a name or a path).
        kind: ``heuristic``, ``baseline`` (random), ``tuned``, ``ppo`` or ``optimal``.
        source: where it came from, in words (for the report).
    """

    label: str
    spec: str
    kind: str
    source: str = ""


@dataclass
class ScenarioResult:
    """The comparison on one scenario.

    Attributes:
        edition: edition id.
        scenario: scenario name.
        description: the scenario's own description.
        entries: the field.
        evaluation: the round-robin (``psygym_experiments.evaluate.Evaluation``).
        game_value: exact value of the game for seat 0 (both players optimal), if solvable.
        value_note: why there is no exact value, if there is none.
        seconds: wall time of this scenario (agent preparation and games).
        notes: what was skipped or prepared, in plain sentences.
        timing: seconds spent preparing agents (tuning, training), waiting for the solver, and
            playing the games with the exact values.
    """

    edition: str
    scenario: str
    description: str
    entries: list[Entry]
    evaluation: Any
    game_value: float | None = None
    value_note: str = ""
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    timing: dict[str, float] = field(default_factory=dict)


@dataclass
class CompareSettings:
    """The resolved settings of a comparison (saved as ``config.json``).

    Attributes:
        editions: edition ids compared.
        scenarios: (edition, scenario) pairs compared.
        episodes: games per pairing and seat.
        seed: base seed (game ``i`` of every pairing uses ``seed + i``).
        workers: processes.
        quick: the ``--quick`` budget.
        tune_trials: Optuna trials when tuning is needed.
        train_steps: MaskablePPO steps when training is needed (0: never train).
        max_states: the exact solver's state limit.
        solve_seconds: time allowed to solve a scenario's game.
        runs_dir: the runs folder.
        agents: labels to keep in each field (``None``: everyone).
        exact_pairs: exact scores of pairings (off with ``--quick``).
        exact_budget: states the solver may spend on best responses and on exact scores of
            random agents' pairings, per scenario (see :func:`exact_plan`).
    """

    editions: list[str]
    scenarios: list[tuple[str, str]]
    episodes: int
    seed: int
    workers: int
    quick: bool
    tune_trials: int
    train_steps: int
    max_states: int
    solve_seconds: float
    runs_dir: str
    agents: list[str] | None = None
    exact_pairs: bool = True
    exact_budget: int = 2_000_000


# ----------------------------------------------------------------------------- planning
def plan(
    editions: list[str] | None, scenario: str | None
) -> tuple[list[tuple[str, str]], list[str]]:
    """The (edition, scenario) pairs to compare and notes about editions left out.

    Args:
        editions: edition ids or aliases (``None``: every installed edition).
        scenario: one scenario name for every edition (``None``: each edition's default plus
            ``single-phase`` where shipped).

    Raises:
        ValueError: an unknown edition, or a scenario an edition does not ship.
    """
    from psygym.edition import default as default_edition
    from psygym.edition import get
    from psygym.editions import available, edition_id, scenario_names

    notes: list[str] = []
    ids = [edition_id(e) for e in editions] if editions else available()
    if not editions:  # the default edition first
        first = default_edition().id
        ids = [first, *(e for e in ids if e != first)]
    out: list[tuple[str, str]] = []
    for eid in ids:
        try:
            default = get(eid).default_scenario
            shipped = scenario_names(eid)
        except (ImportError, AttributeError) as exc:
            if editions:
                raise ValueError(f"edition {eid} is not ready to compare: {exc}") from None
            notes.append(f"Edition {eid} left out: its rules package is not complete ({exc}).")
            continue
        if scenario is not None:
            if scenario not in shipped and not Path(scenario).is_file():
                raise ValueError(
                    f"edition {eid} has no scenario {scenario!r}; shipped: {', '.join(shipped)}"
                )
            out.append((eid, scenario))
            continue
        out.append((eid, default))
        if EXTRA_SCENARIO in shipped and EXTRA_SCENARIO != default:
            out.append((eid, EXTRA_SCENARIO))
    if not out:
        raise ValueError("nothing to compare: no edition is installed")
    return out, notes


def heuristic_entries(rules: Any) -> list[Entry]:
    """Every heuristic of the rules' edition, and ``random``."""
    from psygym.policies import agent_names

    out = []
    for name in agent_names(rules):
        if name in GENERIC_AGENTS:
            continue
        kind = "baseline" if name == "random" else "heuristic"
        out.append(
            Entry(
                name,
                name,
                kind,
                "built-in rule of thumb" if kind == "heuristic" else "uniform over legal actions",
            )
        )
    return out


def tuned_entry(
    edition: str,
    scenario: str,
    name: str,
    runs_dir: Path,
    trials: int,
    seed: int,
    notes: list[str],
    *,
    quick: bool = False,
) -> Entry | None:
    """The tuned parametric policy: saved parameters, or a small Optuna study saved for later.

    ``scenario`` is the scenario as given (name or path), ``name`` its name. Parameters are
    saved in ``<runs_dir>/tuned/<edition>-<name>/best.json``; a ``--quick`` run tunes with a tiny
    budget into ``<edition>-<name>-quick/`` (its own Optuna study) so it never stands in for a
    real tuning later, but it uses the real parameters when they exist.
    """
    target = runs_dir / "tuned" / f"{edition}-{name}" / "best.json"
    quick_target = runs_dir / "tuned" / f"{edition}-{name}-quick" / "best.json"
    for path in (target, quick_target) if quick else (target,):
        if path.is_file():
            return Entry("tuned", f"tuned:{path}", "tuned", f"saved parameters {path}")
    try:
        from psygym_experiments.harness.tuning import tune_parametric
    except ImportError as exc:
        notes.append(f"tuned agent left out: the tuner is not installed ({exc}).")
        return None
    if quick:
        target = quick_target
    episodes = QUICK_TUNE_EPISODES if quick else TUNE_EPISODES
    err_console.print(f"{edition} {name}: tuning the parametric policy ({trials} trials)",
                      highlight=False)  # fmt: skip
    try:
        found = Path(_call(
            tune_parametric, edition, scenario, trials, seed, runs_dir=str(runs_dir),
            study=f"{edition}-{name}-parametric{'-quick' if quick else ''}",
            method="simulation", episodes=episodes, timeout=TUNE_SECONDS, command="",
        ))  # fmt: skip
    except (ValueError, NotImplementedError, KeyError, FileNotFoundError) as exc:
        notes.append(f"tuned agent left out: tuning failed for {edition} {scenario} ({exc}).")
        return None
    target.parent.mkdir(parents=True, exist_ok=True)
    if found.resolve() != target.resolve():
        shutil.copyfile(found, target)
    notes.append(
        f"tuned agent: no saved parameters, so {trials} Optuna trials ({episodes} simulated "
        f"games per seat each, seed {seed}) were run now and the best saved to {target}."
    )
    return Entry("tuned", f"tuned:{target}", "tuned", f"tuned now ({trials} trials), {target}")


def ppo_entry(
    edition: str,
    scenario: str,
    name: str,
    runs_dir: Path,
    steps: int,
    seed: int,
    notes: list[str],
    rules: Any = None,
) -> Entry | None:
    """The MaskablePPO agent: shipped model, an earlier model of this command, or a short run.

    ``scenario`` is the scenario as given (name or path), ``name`` its name. A model that does
    not load for ``rules`` (e.g. trained on an older version of the scenario) is passed over,
    with a note, for the next source.
    """
    try:
        from psygym_agents.sb3 import pretrained_path
    except ImportError as exc:
        notes.append(f"PPO agent left out: the SB3 adapter is not installed ({exc}).")
        return None
    folder = runs_dir / "trained" / f"{edition}-{name}"
    candidates = []
    found = pretrained_path(edition, name)
    if found is not None:
        candidates.append(Entry("ppo", f"sb3:{found}", "ppo", f"pretrained model {found.name}"))
    earlier = sorted(folder.glob("**/model.zip"), key=lambda p: p.stat().st_mtime)
    if earlier:
        candidates.append(
            Entry("ppo", f"sb3:{earlier[-1]}", "ppo", f"trained earlier: {earlier[-1]}")
        )
    for entry in candidates:
        if rules is None or usable(entry, rules, notes):
            return entry
    if steps <= 0:
        notes.append(
            "PPO agent left out: no usable pretrained model for this scenario and --quick "
            "does not train one."
        )
        return None
    try:
        from psygym_experiments.harness.training import train_agent
    except ImportError as exc:
        notes.append(
            f"PPO agent left out: no pretrained model and the trainer is not installed ({exc})."
        )
        return None
    err_console.print(f"{edition} {name}: training MaskablePPO ({steps} steps)", highlight=False)
    try:
        run = Path(_call(
            train_agent, edition, scenario, algo="maskable-ppo", steps=steps, seed=seed,
            runs_dir=str(folder), eval_every=steps, eval_episodes=50,
        ))  # fmt: skip
    except (ValueError, NotImplementedError, KeyError, FileNotFoundError) as exc:
        notes.append(f"PPO agent left out: training failed ({exc}).")
        return None
    model = run / "model.zip"
    if not model.is_file():
        notes.append(f"PPO agent left out: training wrote no model in {run}.")
        return None
    notes.append(
        f"PPO agent: no usable pretrained model, so MaskablePPO was trained now for {steps} "
        f"steps (seed {seed}) into {run}."
    )
    return Entry("ppo", f"sb3:{model}", "ppo", f"trained now ({steps} steps), {model}")


def _call(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """Call ``fn`` with the keyword arguments it accepts (the others are dropped)."""
    import inspect

    params = inspect.signature(fn).parameters
    if not any(p.kind == p.VAR_KEYWORD for p in params.values()):
        kwargs = {k: v for k, v in kwargs.items() if k in params}
    return fn(*args, **kwargs)


def usable(entry: Entry, rules: Any, notes: list[str]) -> bool:
    """Whether the agent loads for these rules (else a note says why it is left out)."""
    from psygym.policies import resolve_policy

    try:
        resolve_policy(entry.spec, rules)
    except Exception as exc:  # noqa: BLE001 - any failure to load leaves the agent out
        notes.append(f"{entry.label} ({entry.source}) does not load: {type(exc).__name__}: {exc}.")
        return False
    return True


# ----------------------------------------------------------------------------- running
class Prober:
    """Solves each scenario's game in the background, one at a time, in scenario order.

    A thread starts one child process per scenario (:func:`exact_game_value` with the settings'
    time limit), so solving scenario ``k + 1`` overlaps the games of scenario ``k``.
    """

    def __init__(self, scenarios: list[tuple[str, str]], settings: CompareSettings):
        import threading
        from concurrent.futures import Future

        self.futures: dict[tuple[str, str], Future] = {sc: Future() for sc in scenarios}
        self._settings = settings
        self._order = list(scenarios)
        self._thread = threading.Thread(target=self._work, daemon=True)
        self._thread.start()

    def _work(self) -> None:
        from psygym.editions import load

        for edition, scenario in self._order:
            fut = self.futures[(edition, scenario)]
            try:
                rules = load(edition, scenario)
                fut.set_result(exact_game_value(
                    rules, self._settings.max_states, self._settings.solve_seconds))  # fmt: skip
            except Exception as exc:  # noqa: BLE001 - reported with the scenario
                fut.set_result(Solved(None, f"{type(exc).__name__}: {exc}"))

    def result(self, edition: str, scenario: str) -> Solved:
        """The game value of a scenario (waits for it), or why there is none."""
        return self.futures[(edition, scenario)].result()


def exact_plan(
    entries: list[Entry], solved: Solved, settings: CompareSettings, notes: list[str]
) -> tuple[list[str], bool]:
    """Which agents get best responses, and whether random agents' pairings get exact scores.

    Each best response, and each exact score of a pairing with an agent that chooses at random,
    costs about as much as solving the game (``solved.states``); they are kept within
    ``settings.exact_budget`` states: everyone if it fits, else the reference rule, the tuned
    and the PPO agents, else nobody.
    """
    if solved.value is None:
        return [], False
    cost = max(1, solved.states)
    labels = [e.label for e in entries]
    key = [e.label for e in entries if e.kind in ("tuned", "ppo")]
    key = [REFERENCE if REFERENCE in labels else next(
        (e.label for e in entries if e.kind == "heuristic"), ""), *key]  # fmt: skip
    key = [k for k in key if k]
    if 2 * len(labels) * cost <= settings.exact_budget:
        br = labels
    elif 2 * len(key) * cost <= settings.exact_budget:
        br = key
        notes.append(f"Best responses (exploitability) only for {', '.join(key)}: the game has "
                     f"{solved.states} states, the budget {settings.exact_budget}.")  # fmt: skip
    else:
        br = []
        notes.append(f"No best responses: the game has {solved.states} states, too many for the "
                     f"budget of {settings.exact_budget}.")  # fmt: skip
    n_random = sum(e.kind == "baseline" for e in entries)
    stochastic = (
        2 * n_random * (len(entries) - 1) * cost <= settings.exact_budget - 2 * len(br) * cost
    )
    return br, stochastic


def _prepared_entries(
    edition: str, scenario: str, rules: Any, settings: CompareSettings, notes: list[str]
) -> list[Entry]:
    """The heuristics, ``random``, and the tuned and PPO agents (prepared if needed)."""
    name = getattr(rules.scenario, "name", scenario)
    runs_dir = Path(settings.runs_dir)
    wanted = set(settings.agents) if settings.agents else None
    entries = [e for e in heuristic_entries(rules) if wanted is None or e.label in wanted]
    extra = []
    if wanted is None or "tuned" in wanted:
        extra.append(tuned_entry(edition, scenario, name, runs_dir, settings.tune_trials,
                                 settings.seed, notes, quick=settings.quick))  # fmt: skip
    if wanted is None or "ppo" in wanted:
        extra.append(ppo_entry(edition, scenario, name, runs_dir, settings.train_steps,
                               settings.seed, notes, rules))  # fmt: skip
    return entries + [e for e in extra if e is not None and usable(e, rules, notes)]


def _complete_field(
    entries: list[Entry], rules: Any, solved: Solved, settings: CompareSettings, notes: list[str]
) -> list[Entry]:
    """Add the optimal player where the game is solved; note what was asked for but missing."""
    wanted = set(settings.agents) if settings.agents else None
    if solved.value is not None:
        optimal = Entry("optimal", "optimal", "optimal", "exact expectiminimax")
        if (wanted is None or "optimal" in wanted) and usable(optimal, rules, notes):
            entries = [*entries, optimal]
    else:
        notes.append(f"The game is not solved, so no optimal agent, optimum or exploitability: "
                     f"{solved.note}.")  # fmt: skip
    if wanted is not None:
        missing = sorted(wanted - {e.label for e in entries})
        if missing:
            notes.append(f"asked for but not in this scenario's field: {', '.join(missing)}.")
    return entries


def compare_scenario(
    edition: str,
    scenario: str,
    settings: CompareSettings,
    *,
    prober: Prober | None = None,
    pool: Any = None,
    show_progress: bool = True,
) -> ScenarioResult:
    """Build the field of one scenario and play the round-robin (in ``pool`` if given)."""
    from psygym.editions import load

    start = time.perf_counter()
    rules = load(edition, scenario)
    name = getattr(rules.scenario, "name", scenario)
    notes: list[str] = []
    entries = _prepared_entries(edition, scenario, rules, settings, notes)
    timing = {"agents": time.perf_counter() - start}
    if prober is not None:
        solved = prober.result(edition, scenario)
    else:
        solved = exact_game_value(rules, settings.max_states, settings.solve_seconds)
    timing["solver_wait"] = time.perf_counter() - start - timing["agents"]
    entries = _complete_field(entries, rules, solved, settings, notes)
    if not entries:
        raise ValueError(f"no agents to compare on {edition} {name}")
    br_agents, stochastic_exact = exact_plan(entries, solved, settings, notes)
    if show_progress:
        err_console.print(
            f"{edition} {name}: {len(entries)} agents, "
            f"{settings.episodes} games per pairing and seat",
            highlight=False,
        )
    before = time.perf_counter()
    eval_settings = EvalSettings(
        settings.episodes, settings.seed, settings.workers, exact=settings.exact_pairs,
        exploit=br_agents, stochastic_exact=stochastic_exact, max_states=settings.max_states,
        game_value=solved.value, solve=False, show_progress=show_progress,
    )  # fmt: skip
    ev = evaluate(
        rules, [e.spec for e in entries], eval_settings, labels=[e.label for e in entries],
        pool=pool,
    )  # fmt: skip
    notes += ev.notes
    return ScenarioResult(
        edition=edition,
        scenario=name,
        description=str(getattr(rules.scenario, "description", "")),
        entries=entries,
        evaluation=ev,
        game_value=solved.value,
        value_note=solved.note,
        seconds=time.perf_counter() - start,
        timing={**timing, "games_and_exact": time.perf_counter() - before},
        notes=notes,
    )


def dice_table_edition(editions: list[str]) -> str | None:
    """The first compared edition whose agents declare an optimal-dice table tool, if any."""
    for eid in editions:
        try:
            if edition_tool(eid, "dice_table") is not None:
                return eid
        except ImportError:  # the tool is declared but its module is missing
            return eid
    return None


def _start_dice_table(edition: str, quick: bool) -> Any:
    """Start computing ``edition``'s optimal-dice table in a side process (or ``None``)."""
    from concurrent.futures import ProcessPoolExecutor

    try:
        edition_tool(edition, "dice_table")
    except ImportError:
        return None
    pool = ProcessPoolExecutor(max_workers=1)
    return pool, pool.submit(dice_rows, edition, quick)


def _finish_dice_table(side: Any, notes: list[str]) -> list[dict[str, Any]] | None:
    """The table started by :func:`_start_dice_table` (empty, with a note, if it failed)."""
    if side is None:
        notes.append("No optimal-dice heatmap: the dice-table module is not installed.")
        return []
    pool, future = side
    try:
        return future.result()
    except Exception as exc:  # noqa: BLE001 - the report goes on without the table
        notes.append(f"No optimal-dice heatmap: the table failed ({type(exc).__name__}: {exc}).")
        return []
    finally:
        pool.shutdown()


def run_compare(
    editions: list[str] | None = None,
    *,
    scenario: str | None = None,
    quick: bool = False,
    episodes: int | None = None,
    seed: int = 0,
    runs_dir: str | Path = "runs",
    workers: int | None = None,
    tune_trials: int | None = None,
    train_steps: int | None = None,
    max_states: int | None = None,
    solve_seconds: float | None = None,
    agents: list[str] | None = None,
    show_progress: bool = True,
) -> Path:
    """Run the comparison and write its folder; returns ``<runs_dir>/compare-<time>/``.

    Args:
        editions: edition ids (``None``: all installed).
        scenario: one scenario for every edition (``None``: default plus ``single-phase``).
        quick: tiny budget: few games, tiny tuning, no PPO training, little time to solve.
        episodes: games per pairing and seat (default by ``quick``).
        seed: base seed.
        runs_dir: where run folders, tuned parameters and trained models live.
        workers: processes (default: the machine's CPU count).
        tune_trials: Optuna trials when tuning is needed.
        train_steps: PPO steps when training is needed (``0``: never train).
        max_states: the exact solver's state limit.
        solve_seconds: time allowed to solve each scenario's game.
        agents: keep only these agents in each field (labels: heuristic names, ``random``,
            ``tuned``, ``ppo``, ``optimal``; ``None``: everyone).
        show_progress: progress bars and status lines on stderr.
    """
    start = time.perf_counter()
    pairs, plan_notes = plan(editions, scenario)
    settings = CompareSettings(
        editions=list(dict.fromkeys(e for e, _ in pairs)),
        scenarios=pairs,
        episodes=episodes or (QUICK_EPISODES if quick else DEFAULT_EPISODES),
        seed=seed,
        workers=workers or max(1, os.cpu_count() or 1),
        quick=quick,
        tune_trials=tune_trials or (QUICK_TUNE_TRIALS if quick else DEFAULT_TUNE_TRIALS),
        train_steps=(0 if quick else DEFAULT_TRAIN_STEPS) if train_steps is None else train_steps,
        max_states=max_states or MAX_STATES,
        solve_seconds=solve_seconds or (QUICK_SOLVE_SECONDS if quick else SOLVE_SECONDS),
        runs_dir=str(runs_dir),
        agents=agents or None,
        exact_pairs=not quick,
        exact_budget=QUICK_EXACT_BUDGET if quick else EXACT_BUDGET,
    )
    dice_edition = dice_table_edition(settings.editions)
    side = _start_dice_table(dice_edition, quick) if dice_edition is not None else None

    prober = Prober(pairs, settings)
    pool = worker_pool(settings.workers) if settings.workers > 1 else None
    try:
        results = [
            compare_scenario(e, s, settings, prober=prober, pool=pool,
                             show_progress=show_progress)
            for e, s in pairs
        ]  # fmt: skip
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    dice = _finish_dice_table(side, plan_notes)
    run_dir = run_folder(runs_dir, "compare")
    seconds = time.perf_counter() - start
    write_report(run_dir, results, settings, notes=plan_notes, seconds=seconds, dice=dice,
                 dice_edition=dice_edition)  # fmt: skip
    config = {
        **settings.__dict__,
        "seconds": round(seconds, 1),
        "game_seeds": f"{seed}..{seed + settings.episodes - 1}",
    }
    write_json(run_dir / "config.json", config, strict=False)
    return run_dir


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
        int | None, typer.Option(min=1, help="Processes (default: the CPU count).")
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
        typer.Option(min=1, help=f"Exact solver state limit (default {MAX_STATES})."),
    ] = None,
    agents: Annotated[
        str | None,
        typer.Option(
            help="Keep only these agents (comma-separated: heuristic names, random, "
            "tuned, ppo, optimal; default: everyone)."
        ),
    ] = None,
    solve_seconds: Annotated[
        float | None,
        typer.Option(
            min=0.1,
            help=f"Seconds to solve a scenario's game (default "
            f"{SOLVE_SECONDS:.0f}, quick {QUICK_SOLVE_SECONDS:.0f}).",
        ),
    ] = None,
) -> None:
    """The main job: every heuristic, tuned, PPO and optimal agent per edition; a report."""
    with user_errors():
        names = [n for e in edition or [] for n in split_names(e)] or None
        run_dir = run_compare(
            names, scenario=scenario, quick=quick, episodes=episodes, seed=seed,
            runs_dir=runs_dir, workers=workers, tune_trials=tune_trials, train_steps=train_steps,
            max_states=max_states, solve_seconds=solve_seconds,
            agents=split_names(agents) if agents else None,
        )  # fmt: skip
    write_command(run_dir)
    _print_leaderboards(run_dir)


def _print_leaderboards(run_dir: Path) -> None:
    """Print the leaderboards and headline of a compare run folder."""
    doc = json.loads((run_dir / "results.json").read_text())
    for table in leaderboard_table(doc):
        console.print(table)
    for line in doc.get("headline", []):
        console.print(line, highlight=False)
    console.print(f"report: {run_dir / 'report.md'}", highlight=False)


def register(app: typer.Typer) -> None:
    """Add the ``compare`` command."""
    app.command("compare")(compare)


__all__ = [
    "run_compare", "compare_scenario", "plan", "Entry", "ScenarioResult", "CompareSettings",
    "register",
]  # fmt: skip
