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
import os
import shutil
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import typer
from psygym_experiments.common import (
    check_workers_option,
    console,
    err_console,
    ray_option,
    split_names,
    user_errors,
)
from psygym_experiments.harness.compare_exact import ExactSide
from psygym_experiments.harness.lifecycle import pool_initializer
from psygym_experiments.harness.output import write_bytes, write_json
from psygym_experiments.harness.pools import check_ray_workers, ray_pool
from psygym_experiments.harness.runs import inside, run_folder, write_command
from psygym_experiments.harness.solving import (
    MAX_STATES,
    SOLVE_SECONDS,
    Solved,
    exact_game_value,
    exploitability,
)
from psygym_experiments.harness.tournament import EvalSettings, evaluate, pairings, worker_pool
from psygym_experiments.report import REFERENCE, leaderboard_table, write_report

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
TUNE_SECONDS = 40.0
"""No new tuning trial starts after this many seconds (a fresh clone tunes every scenario).

A cap, not a budget: on 2 idle cores the 7th duel's 20 trials take about 20 s (the other
scenarios' far less), and with this margin they all finish while the workers play the previous
duel's search match beside them, so the tuned parameters are those of the trials and seed
alone, not of the machine's load."""
EXACT_BUDGET = 2_000_000
"""States the solver may spend per scenario on best responses and random agents' pairings."""
QUICK_EXACT_BUDGET = 0
"""The same with ``--quick``."""
DEFAULT_SOLVE_SECONDS = 2 * SOLVE_SECONDS
"""CPU seconds each scenario's solve may take (the solver's own default is half as much): the
Rogue Trader duel needs 28-31 CPU s on this project's 2-core machine, more while the other core
is busy, so at the solver's default its field would lose ``optimal`` by the machine's load."""
QUICK_SOLVE_SECONDS = SOLVE_SECONDS / 6
"""The same with ``--quick``."""
SEARCH_GAMES = 10
"""Games per seat of ``search``'s match against the leader of a duel's round-robin (a default
chosen so the match costs about a minute a duel on 2 cores; ``--search-games`` changes it)."""
EXTRA_SCENARIO = "single-phase"
"""Scenario compared besides each edition's default, where shipped and exactly solvable."""
GENERIC_AGENTS = ("optimal", "search", "tuned", "sb3")
"""Registry names that are not heuristics (they are added by their own rules below)."""
SEARCH = "search"
"""The search agent's name (and spec)."""


@dataclass
class Entry:
    """One agent of a scenario's field.

    Attributes:
        label: the short name shown in tables and plots.
        spec: what ``resolve_policy`` is given (a name or a path).
        kind: ``heuristic``, ``baseline`` (random), ``tuned``, ``ppo``, ``search`` or
            ``optimal``.
        source: where it came from, in words (for the report).
        description: one sentence on how it plays.
        seats: the seats it is scored on (a PPO model: the seats it was trained for).
    """

    label: str
    spec: str
    kind: str
    source: str = ""
    description: str = ""
    seats: tuple[int, ...] = (0, 1)


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
        search_match: ``search`` against the round-robin's leader, head to head
            (:meth:`~psygym_experiments.harness.head_to_head.HeadToHead.as_dict` plus the
            leader's ``kind`` and the match's ``seconds``), where it was played.
        pending: what :func:`compare_scenario` left in the background (the exact values of
            the state graph and the search match) while it is being done (a future; see
            :func:`collect`).
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
    search_match: dict[str, Any] | None = None
    pending: Any = field(default=None, repr=False)


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
        search: put ``search`` in the round-robin of every duel (``--search``; also when
            ``agents`` names it).
        search_games: games per seat of ``search``'s match against the leader of a duel it is
            not in the round-robin of (``0``: no match).
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
    search: bool = False
    search_games: int = SEARCH_GAMES


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
    from psygym.policies import agent_names, describe_agent

    out = []
    for name in agent_names(rules):
        if name in GENERIC_AGENTS:
            continue
        kind = "baseline" if name == "random" else "heuristic"
        text = describe_agent(name, rules) or "a built-in rule of thumb"
        out.append(Entry(name, name, kind, "built in", text))
    return out


TUNED_TEXT = (
    "the edition's parametric rule of thumb, with its parameters tuned by Optuna against the "
    "reference heuristic"
)
"""How the tuned agent plays (one sentence)."""
OPTIMAL_TEXT = (
    "plays the exact optimum: expectiminimax over every dice roll, best reply to every move"
)
"""How the optimal agent plays (one sentence)."""


def model_seats(spec: str) -> tuple[int, ...]:
    """The seats a PPO model was trained for, from its JSON metadata (``seat`` or ``seats``).

    A model without metadata counts as trained for both seats.
    """
    try:
        from psygym_agents.sb3 import read_metadata
    except ImportError:
        return (0, 1)
    meta = read_metadata(spec.removeprefix("sb3:"))
    seats = meta.get("seats")
    if seats is None and meta.get("seat") is not None:
        seat = meta["seat"]
        seats = [0, 1] if str(seat) == "both" else [int(seat)]
    return tuple(sorted({int(x) for x in seats})) if seats else (0, 1)


def ppo_text(spec: str) -> str:
    """How a PPO agent plays (one sentence from its metadata)."""
    try:
        from psygym_agents.sb3 import read_metadata

        meta = read_metadata(spec.removeprefix("sb3:"))
    except ImportError:
        meta = {}
    seats = model_seats(spec)
    where = "both seats" if seats == (0, 1) else "seat " + ", ".join(map(str, seats)) + " only"
    opp = meta.get("opponent")
    steps = meta.get("steps")
    return (
        "a MaskablePPO neural network trained"
        + (f" for {steps:,} steps" if isinstance(steps, int) else "")
        + (f" against {opp}" if opp else "")
        + f", for {where}"
    )


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
    """The tuned parametric policy: saved parameters, shipped ones, or a small Optuna study.

    ``scenario`` is the scenario as given (name or path), ``name`` its name. Parameters are
    saved in ``<runs_dir>/tuned/<edition>-<name>/best.json``; a ``--quick`` run tunes with a tiny
    budget into ``<edition>-<name>-quick/`` (its own Optuna study) so it never stands in for a
    real tuning later, but it uses the real parameters when they exist. Where neither is saved,
    a shipped scenario uses the parameters shipped for it (``shipped_tuned``: this command's own
    default tuning, done once), and only a scenario without them is tuned now.
    """
    target = inside(runs_dir, "tuned", f"{edition}-{name}") / "best.json"
    quick_target = inside(runs_dir, "tuned", f"{edition}-{name}-quick") / "best.json"
    for path in (target, quick_target) if quick else (target,):
        if path.is_file():
            return Entry("tuned", f"tuned:{path}", "tuned", f"saved parameters {path}", TUNED_TEXT)
    from psygym_agents.parametric import shipped_tuned

    shipped = shipped_tuned(edition, scenario)
    if shipped is not None:
        notes.append(
            f"tuned agent: the parameters shipped in {shipped.name} (this command's default "
            "tuning of the scenario, done once); `psygym tune` tunes anew, and parameters saved "
            f"in {target} take their place."
        )
        return Entry("tuned", f"tuned:{shipped}", "tuned", f"shipped parameters {shipped.name}",
                     TUNED_TEXT)  # fmt: skip
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
        write_bytes(target, found.read_bytes(), root=runs_dir)  # never through a link
    notes.append(
        f"tuned agent: no saved parameters, so {trials} Optuna trials ({episodes} simulated "
        f"games per seat each, seed {seed}) were run now and the best saved to {target}."
    )
    return Entry(
        "tuned", f"tuned:{target}", "tuned", f"tuned now ({trials} trials), {target}", TUNED_TEXT
    )


def ppo_entry(
    edition: str,
    scenario: str,
    name: str,
    runs_dir: Path,
    steps: int,
    seed: int,
    notes: list[str],
    rules: Any = None,
) -> Entry | list[Entry] | None:
    """The MaskablePPO agent: shipped model(s), an earlier model of this command, or a short run.

    ``scenario`` is the scenario as given (name or path), ``name`` its name. Shipped models may
    be one per seat (then a list, labelled ``ppo-seat0`` and ``ppo-seat1``). A model that does
    not load for ``rules`` (e.g. trained on an older version of the scenario) is passed over,
    with a one-line note, for the next source.
    """
    try:
        from psygym_agents.sb3 import pretrained_path
    except ImportError as exc:
        notes.append(f"PPO agent left out: the SB3 adapter is not installed ({exc}).")
        return None
    # train_agent files runs under <runs_dir>/<edition>/<scenario>/: give it trained/ only.
    folder = runs_dir / "trained"
    shipped = [e for e in _shipped_models(pretrained_path, edition, name)
               if rules is None or usable(e, rules, notes)]  # fmt: skip
    if shipped:
        return shipped[0] if len(shipped) == 1 else shipped  # type: ignore[return-value]
    earlier = sorted(
        (p for suffix in _MODEL_FILES for p in inside(folder, edition, name).glob(f"**/{suffix}")),
        key=lambda p: p.stat().st_mtime,
    )
    candidates = []
    if earlier:
        candidates.append(
            Entry("ppo", f"sb3:{earlier[-1]}", "ppo", f"trained earlier: {earlier[-1]}")
        )
    for entry in candidates:
        if rules is None or usable(entry, rules, notes):
            return _with_seats(entry)
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
    model = next((run / f for f in _MODEL_FILES if (run / f).is_file()), run / _MODEL_FILES[0])
    if not model.is_file():
        notes.append(f"PPO agent left out: training wrote no model in {run}.")
        return None
    notes.append(
        f"PPO agent: no usable pretrained model, so MaskablePPO was trained now for {steps} "
        f"steps (seed {seed}) into {run}."
    )
    return _with_seats(Entry("ppo", f"sb3:{model}", "ppo", f"trained now ({steps} steps), {model}"))


_MODEL_FILES = ("model.safetensors",)
"""Model files compare picks up from a training run: the safe format only (a ``.zip`` could
hold pickles; compare never loads one it finds)."""


def _shipped_models(pretrained_path: Any, edition: str, name: str) -> list[Entry]:
    """The shipped models of a scenario: one per seat where models are seat-specific.

    Each is labelled ``ppo`` when there is one, else ``ppo-seat0``, ``ppo-seat1``.
    """
    found = []
    for seat in (0, 1):
        path = pretrained_path(edition, name, seat=seat)
        if path is not None:
            found.append((seat, path))
    label = "ppo" if len(found) == 1 else None
    return [
        _with_seats(Entry(label or f"ppo-seat{seat}", f"sb3:{path}", "ppo",
                          f"pretrained model {path.name}"))
        for seat, path in found
    ]  # fmt: skip


def _with_seats(entry: Entry) -> Entry:
    """The PPO entry with its trained seats and description from the model's metadata."""
    entry.seats = model_seats(entry.spec)
    entry.description = ppo_text(entry.spec)
    return entry


def _call(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """Call ``fn`` with the keyword arguments it accepts (the others are dropped)."""
    import inspect

    params = inspect.signature(fn).parameters
    if not any(p.kind == p.VAR_KEYWORD for p in params.values()):
        kwargs = {k: v for k, v in kwargs.items() if k in params}
    return fn(*args, **kwargs)


_LOADED: dict[tuple[str, int], tuple[Any, str, Any]] = {}
"""(spec, id of the rules) -> (the rules, kept alive so the id stays theirs; failure or ""; the
policy built, handed to the tournament so that each model is loaded once in this process)."""


def usable(entry: Entry, rules: Any, notes: list[str]) -> bool:
    """Whether the agent loads for these rules (else a note says why it is left out).

    Each spec is loaded once per rules object (a PPO model is checked once, not once per
    step of preparing the field).
    """
    from psygym.policies import resolve_policy

    key = (entry.spec, id(rules))
    if key not in _LOADED:
        failure, policy = "", None
        try:
            policy = resolve_policy(entry.spec, rules)
        except Exception as exc:  # noqa: BLE001 - any failure to load leaves the agent out
            why = " ".join(str(exc).split())
            why = why if len(why) <= 160 else why[:157] + "..."
            failure = f"{type(exc).__name__}: {why}"
        if len(_LOADED) > 256:
            _LOADED.clear()
        _LOADED[key] = (rules, failure, policy)
    failure = _LOADED[key][1]
    if failure:
        notes.append(f"{entry.label} ({entry.source}) left out: it does not load ({failure}).")
        return False
    return True


# ----------------------------------------------------------------------------- running
class Prober:
    """Solves each scenario's game in the background, one at a time, in scenario order.

    A thread starts one child process per scenario (:func:`exact_game_value` with the settings'
    time limit), so solving scenario ``k + 1`` overlaps the games of scenario ``k``. Where the
    search ran in Python its memo is written into ``memo_dir`` (``Solved.memo``), so the
    ``optimal`` player of the games starts from it instead of solving the game again.
    """

    def __init__(self, scenarios: list[tuple[str, str]], settings: CompareSettings,
                 memo_dir: str = ""):  # fmt: skip
        import threading
        from concurrent.futures import Future

        self.futures: dict[tuple[str, str], Future] = {sc: Future() for sc in scenarios}
        self._settings = settings
        self._order = list(scenarios)
        self._memo_dir = memo_dir
        self._thread = threading.Thread(target=self._work, daemon=True)
        self._thread.start()

    def _work(self) -> None:
        from psygym.editions import load

        for k, (edition, scenario) in enumerate(self._order):
            fut = self.futures[(edition, scenario)]
            memo = os.path.join(self._memo_dir, f"memo-{k}.pickle") if self._memo_dir else ""
            try:
                rules = load(edition, scenario)
                limits = (self._settings.max_states, self._settings.solve_seconds)
                fut.set_result(exact_game_value(rules, *limits, memo=memo))
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
        found = ppo_entry(edition, scenario, name, runs_dir, settings.train_steps,
                          settings.seed, notes, rules)  # fmt: skip
        extra += found if isinstance(found, list) else [found]
    found = search_entry(rules, settings, notes)
    if found is not None and (wanted is None or SEARCH in wanted):
        extra.append(found)
    return entries + [e for e in extra if e is not None and usable(e, rules, notes)]


def search_entry(rules: Any, settings: CompareSettings, notes: list[str]) -> Entry | None:
    """The ``search`` agent where the game cannot be solved whole (``None`` elsewhere).

    With ``--quick`` it is left out (a note says so): it spends up to a few seconds a game, far
    more than a quick run has. Where the scenario is solvable whole it is the exact solver,
    which the field has as ``optimal``.
    """
    try:
        if not _search_differs(rules):
            return None
    except ImportError as exc:
        notes.append(f"search agent left out: it is not installed ({exc}).")
        return None
    if settings.quick:
        notes.append("search agent left out with --quick: it takes up to a few seconds a game; "
                     "compare --search has it.")  # fmt: skip
        return None
    if not settings.search and SEARCH not in (settings.agents or ()):
        match = (
            f"it plays the leader head to head instead ({settings.search_games} games per "
            "seat, below); "
            if settings.search_games and settings.agents is None
            else ""
        )
        notes.append("search agent left out of the round-robin: it takes seconds a game, which "
                     f"would make this comparison take hours; {match}compare --search puts it "
                     "in the round-robin, and psygym evaluate --until-clear plays a match until "
                     "its margin is clear.")  # fmt: skip
        return None
    return Entry(SEARCH, SEARCH, "search", "built in", search_text(rules))


def _search_differs(rules: Any) -> bool:
    """Whether ``search`` is not simply the exact solver here (which the field has as optimal)."""
    from psygym_agents.solvers.search import solvable_whole

    return not solvable_whole(rules) or _hidden(rules)


def search_text(rules: Any) -> str:
    """How the search agent plays here (one sentence, its own note where it has one)."""
    if _hidden(rules):
        return ("an information-set search over the hands it cannot see, with the reference "
                "heuristic as its rollout (not exact)")  # fmt: skip
    from psygym.policies import resolve_policy

    note = getattr(resolve_policy(SEARCH, rules), "note", "")
    return f"searches every line of play within each cast or turn: {note}" if note else SEARCH


def _hidden(rules: Any) -> bool:
    """Whether the players of ``rules`` do not see the whole state (no exact solving)."""
    try:
        from psygym_agents.solvers import has_hidden_information
    except ImportError:
        return False
    return bool(has_hidden_information(rules))


def unsolved_note(rules: Any, solved: Solved) -> Solved:
    """``solved`` with a note that recommends no agent outside the field.

    The solver's message for a hidden-information edition points to the ``optimal`` agent's
    information-set search, but a comparison adds ``optimal`` only where the game is solved
    exactly, so such a field never has it: the note says only why there is no exact value
    (the report adds that there is no optimal agent).
    """
    if solved.value is not None or not _hidden(rules):
        return solved
    note = (f"edition {rules.edition} has hidden information (secret hands): exact solving "
            "does not apply")  # fmt: skip
    return Solved(None, note, solved.states)


def _complete_field(
    entries: list[Entry], rules: Any, solved: Solved, settings: CompareSettings, notes: list[str]
) -> list[Entry]:
    """Add the optimal player where the game is solved; note what was asked for but missing."""
    wanted = set(settings.agents) if settings.agents else None
    if solved.value is not None:
        spec = optimal_spec(rules, settings)
        optimal = Entry("optimal", spec, "optimal", "exact expectiminimax", OPTIMAL_TEXT)
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


def optimal_spec(rules: Any, settings: CompareSettings) -> str:
    """The spec of the field's exact player once the comparison has solved the game.

    Plain ``optimal`` where the edition declares the scenario solvable whole; elsewhere (a
    scenario solved here within ``settings.max_states`` states that the ``optimal`` agent would
    otherwise hand to ``search``) the solver with that state limit, so the agent the report calls
    exact plays exactly.
    """
    from psygym_agents.solvers.search import solvable_whole

    if solvable_whole(rules):
        return "optimal"
    return f"optimal:states={settings.max_states}"


def compare_scenario(
    edition: str,
    scenario: str,
    settings: CompareSettings,
    *,
    prober: Prober | None = None,
    pool: Any = None,
    show_progress: bool = True,
    side: ExactSide | None = None,
    matches: Any = None,
) -> ScenarioResult:
    """Build the field of one scenario and play the round-robin (in ``pool`` if given).

    Where the scenario's state graph is built by ``side`` (perfect information, no simultaneous
    moves, within the limits), every pairing's exact score and every agent's best responses are
    computed over that graph while the games are played; otherwise the solver of
    :mod:`psygym_experiments.harness.solving` is used as before.

    What follows the games (waiting for the graph's exact values, then ``search``'s match
    against the leader, :func:`search_match`) is done before returning, or, given ``matches``
    (a thread pool) and ``pool``, in the background: the match's games go to ``pool`` ahead of
    the next scenario's and the exact values are computed by ``side``, so the workers stay busy
    while this process prepares that scenario; ``pending`` is set until it is done
    (:func:`collect`). The numbers are the same either way.
    """
    from psygym.editions import load

    start = time.perf_counter()
    rules = load(edition, scenario)
    name = getattr(rules.scenario, "name", scenario)
    notes: list[str] = []
    entries = _prepared_entries(edition, scenario, rules, settings, notes)
    timing = {"agents": time.perf_counter() - start}
    graph_path = side is not None and (edition, scenario) in side.builds
    if graph_path:
        built = _graph_value(side, edition, scenario, rules)
        solved = Solved(built.value, built.note if built.value is None else "", built.states)
    elif prober is not None and (edition, scenario) not in prober.futures:
        solved = Solved(None, "not tried with --quick (a game of several Psychic phases)")
    elif prober is not None:
        solved = prober.result(edition, scenario)
    else:
        solved = exact_game_value(rules, settings.max_states, settings.solve_seconds)
    timing["solver_wait"] = time.perf_counter() - start - timing["agents"]
    solved = unsolved_note(rules, solved)
    entries = _complete_field(entries, rules, solved, settings, notes)
    if not entries:
        raise ValueError(f"no agents to compare on {edition} {name}")
    if graph_path:
        br_agents, stochastic_exact = [], False
    else:
        br_agents, stochastic_exact = exact_plan(entries, solved, settings, notes)
    if show_progress:
        err_console.print(
            f"{edition} {name}: {len(entries)} agents, "
            f"{settings.episodes} games per pairing and seat",
            highlight=False,
        )
    before = time.perf_counter()
    specs = [e.spec for e in entries]
    exact_future = None
    if graph_path and solved.value is not None:
        exact_future = side.submit_field(
            edition, scenario, specs, _field_pairings(entries), range(len(specs)),
            optimal=optimal_spec(rules, settings), seats=_seat_limits(entries),
        )  # fmt: skip
    eval_settings = EvalSettings(
        settings.episodes, settings.seed, settings.workers,
        # Hidden information rules out every exact score: no pilot solve to wait for.
        exact=settings.exact_pairs and not graph_path and not _hidden(rules),
        exploit=br_agents, stochastic_exact=stochastic_exact, max_states=settings.max_states,
        game_value=solved.value, solve=False, show_progress=show_progress,
        seats={e.label: e.seats for e in entries if tuple(e.seats) != (0, 1)},
        exact_players=[e.label for e in entries if e.kind == "optimal"],
    )  # fmt: skip
    built = [_LOADED.get((spec, id(rules)), (None, "", None))[2] for spec in specs]
    memos = {e.spec: solved.memo for e in entries if e.kind == "optimal" and solved.memo}
    ev = evaluate(rules, specs, eval_settings, labels=[e.label for e in entries], pool=pool,
                  policies=built, memos=memos)  # fmt: skip
    notes += ev.notes
    if graph_path:
        exact_future = _late_field(side, edition, scenario, entries, solved, exact_future, notes)
    res = ScenarioResult(
        edition=edition,
        scenario=name,
        description=str(getattr(rules.scenario, "description", "")),
        entries=entries,
        evaluation=ev,
        game_value=solved.value,
        value_note=solved.note,
        timing=timing,
        notes=notes,
    )  # fmt: skip

    def finish(background: bool) -> ScenarioResult:
        """What follows the games: the graph's exact values (waited for), then the match."""
        if graph_path:
            _fill_exact(ev, exact_future, solved, notes)
            res.game_value, res.value_note = ev.game_value, ev.value_note
        res.timing["games_and_exact"] = time.perf_counter() - before
        res.seconds = time.perf_counter() - start
        res.search_match = search_match(
            rules, entries, ev, settings, pool=pool, show_progress=show_progress,
            background=background, memos=memos,
        )  # fmt: skip
        if res.search_match:
            res.timing["search_match"] = res.search_match["seconds"]
            res.seconds += res.search_match["seconds"]
        return res

    if matches is not None and pool is not None:
        res.pending = matches.submit(finish, True)
        return res
    return finish(False)


def collect(res: ScenarioResult) -> ScenarioResult:
    """``res`` once what :func:`compare_scenario` left in the background is done."""
    if res.pending is not None:
        res.pending.result()
        res.pending = None
    return res


def search_match(
    rules: Any, entries: list[Entry], ev: Any, settings: CompareSettings, *, pool: Any = None,
    show_progress: bool = True, background: bool = False, memos: dict[str, str] | None = None,
) -> dict[str, Any] | None:  # fmt: skip
    """``search`` against the leader of the round-robin, head to head over both seats.

    Played where ``search`` would be in the field but is left out of the round-robin for its
    cost (a duel without ``--search``, not ``--quick``, every agent kept), with
    ``settings.search_games`` games per seat and the round-robin's seeds
    (:func:`psygym_experiments.harness.head_to_head.head_to_head`, no early stop). The leader is
    the best-ranked agent that plays both seats. Its games are split into one batch per worker,
    whatever else the workers do, so the numbers are those of a match played alone.

    ``background``: played in a thread beside other work (:func:`compare_scenario`), so instead
    of a progress bar (the display has one at a time) it prints a line when it starts and ends.
    ``memos``: spec -> the solver memo its ``optimal`` player starts from (see :class:`Prober`).

    Returns:
        The match's summary with the leader's ``kind`` and the match's ``seconds`` (wall time
        from its start to its end), or ``None`` where no match is played.
    """
    if (not _match_wanted(settings) or any(e.kind == SEARCH for e in entries)
            or not _search_differs(rules)):  # fmt: skip
        return None
    from psygym_experiments.harness.head_to_head import head_to_head
    from psygym_experiments.harness.progress import ProgressBar
    from psygym_experiments.report import leaderboard

    both = {e.label: e for e in entries if tuple(e.seats) == (0, 1)}
    board = leaderboard(ev, {e.label: e.kind for e in entries},
                        {e.label: tuple(e.seats) for e in entries})  # fmt: skip
    leader = next((both[r.label] for r in board if r.label in both), None)
    if leader is None:
        return None
    start = time.perf_counter()
    games = settings.search_games
    workers = settings.workers if pool is not None else 1
    name = getattr(rules.scenario, "name", "")
    what = f"{rules.edition} {name}: search vs {leader.label}"
    if show_progress and background:
        err_console.print(f"{what}: {games} games per seat, in the background",
                          highlight=False, soft_wrap=True)  # fmt: skip
    with ProgressBar(what, games, enabled=show_progress and not background) as bar:
        result = head_to_head(
            rules, SEARCH, leader.spec, seed=settings.seed, max_games=games, min_games=games,
            batch=max(1, -(-games // max(1, workers))), adaptive=False, workers=workers,
            pool=pool, memos=memos,
            on_batch=lambda r: bar.update(completed=r.games_per_seat,
                                          note=f"{r.margin:+.2f} ± {r.ci95:.2f}"),
        )  # fmt: skip
    out = result.as_dict()
    out["opponent"] = leader.label
    out["opponent_kind"] = leader.kind
    out["seconds"] = round(time.perf_counter() - start, 1)
    if show_progress and background:
        err_console.print(f"{what}: {result.margin:+.2f} ± {result.ci95:.2f} per game "
                          f"({out['seconds']:.0f} s)", highlight=False, soft_wrap=True)  # fmt: skip
    return out


_NOT_YET = "the state graph was not finished when the games began"


def _graph_value(side: ExactSide, edition: str, scenario: str, rules: Any) -> Any:
    """The scenario's graph build: waited for in a one-phase game, else only if finished.

    A game that goes on to later Psychic phases is far larger than one phase, so the games do
    not wait for its graph (it is used after the games if it is finished by then).
    """
    from psygym_experiments.harness.compare_exact import Built
    from psygym_experiments.harness.solving import _has_later_phases

    done = side.ready(edition, scenario)
    if done is not None:
        return done
    if not _has_later_phases(rules):
        return side.built(edition, scenario)
    return Built(None, _NOT_YET)


def _seat_limits(entries: list[Entry]) -> dict[int, tuple[int, ...]]:
    """Entry index -> seats, for the agents scored on some seats only."""
    return {k: e.seats for k, e in enumerate(entries) if tuple(e.seats) != (0, 1)}


def _field_pairings(entries: list[Entry]) -> list[tuple[int, int]]:
    """The seat orders the field plays: an agent limited to some seats plays only those."""
    return pairings(len(entries), seats=_seat_limits(entries))


def _late_field(
    side: ExactSide, edition: str, scenario: str, entries: list[Entry], solved: Solved,
    future: Any, notes: list[str],
) -> Any:  # fmt: skip
    """The exact-values future, started now if the graph was finished only during the games."""
    if future is not None or solved.note != _NOT_YET:
        return future
    specs = [e.spec for e in entries]
    built = side.ready(edition, scenario)
    if built is None or built.value is None:
        notes.append(
            "No exact values: "
            + (built.note if built is not None else "the state graph was still being built "
               "when the games ended (a game of several Psychic phases)")
            + "."
        )  # fmt: skip
        return None
    notes.append("The state graph was finished during the games: exact values without the "
                 "optimal agent in the field.")  # fmt: skip
    solved.value, solved.note = built.value, ""
    return side.submit_field(edition, scenario, specs, _field_pairings(entries),
                             range(len(specs)), seats=_seat_limits(entries))  # fmt: skip


def _fill_exact(ev: Any, future: Any, solved: Solved, notes: list[str]) -> None:
    """Put the graph's exact pairing scores, best responses and game value into ``ev``."""
    ev.game_value, ev.value_note = solved.value, solved.note
    if future is None:
        return
    try:
        done = future.result()
    except Exception as exc:  # noqa: BLE001 - the report goes on without exact values
        notes.append(f"No exact values: {type(exc).__name__}: {exc}.")
        return
    if done.note:
        notes.append(f"No exact values: {done.note}.")
        return
    for p in ev.pairs:
        p.exact_score = done.pairs.get((p.index0, p.index1))
    for i, label in enumerate(ev.agents):
        b = done.best_response.get(i)
        if b is not None:
            ev.best_response[label] = list(b)
            ev.exploitability[label] = exploitability(*b)  # None unless both seats are known


def _start_tables(editions: list[str], quick: bool) -> Any:
    """Start computing the answer tables of every edition that has them, in a side process."""
    from concurrent.futures import ProcessPoolExecutor

    from psygym_experiments.report_answers import compute_tables, editions_with_tables

    wanted = editions_with_tables(editions)
    if not wanted:
        return None
    pool = ProcessPoolExecutor(max_workers=1, initializer=pool_initializer, initargs=(os.getpid(),))
    size = "quick" if quick else "full"
    return pool, {eid: pool.submit(compute_tables, eid, size) for eid in wanted}


def _finish_tables(side: Any, notes: list[str]) -> dict[str, list[dict[str, Any]]]:
    """The tables started by :func:`_start_tables` (``[]``, with a note, where one failed)."""
    if side is None:
        return {}
    pool, futures = side
    out: dict[str, list[dict[str, Any]]] = {}
    try:
        for eid, fut in futures.items():
            try:
                out[eid] = fut.result()
            except Exception as exc:  # noqa: BLE001 - the report goes on without the tables
                notes.append(f"No exact answer tables for {eid}: {type(exc).__name__}: {exc}.")
                out[eid] = []
    finally:
        pool.shutdown()
    return out


def _exact_routes(
    pairs: list[tuple[str, str]], quick: bool, notes: list[str]
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """Scenarios whose exact values come from a state graph (one-phase games first) and others.

    The state graph needs perfect information and no simultaneous moves; the others are
    solved by :class:`Prober`. With ``--quick`` a game of several Psychic phases is not built
    (it is far beyond the limits of a quick run).
    """
    from psygym_experiments.harness.compare_graph import graph_supported
    from psygym_experiments.harness.solving import _has_later_phases

    from psygym.editions import load

    first, later, others = [], [], []
    for sc in pairs:
        try:
            rules = load(*sc)
        except Exception:  # noqa: BLE001 - compare_scenario reports it
            others.append(sc)
            continue
        if not graph_supported(rules):
            others.append(sc)
        elif not _has_later_phases(rules):
            first.append(sc)
        elif not quick:
            later.append(sc)
    skipped = [f"{e} {s}" for e, s in pairs if (e, s) not in first + later + others]
    if skipped:
        notes.append(f"--quick does not solve games of several Psychic phases: "
                     f"{', '.join(skipped)}.")  # fmt: skip
    return first + later, others


def _play_order(pairs: list[tuple[str, str]], settings: CompareSettings) -> list[tuple[str, str]]:
    """The order the scenarios are played in: those with a search match first.

    A match is played in the background while the scenarios after it are prepared and played
    (:func:`compare_scenario`), so the scenarios without one (a single Psychic phase, solved
    exactly) are kept for the end, where they fill the workers beside the last match instead of
    leaving them idle. The report keeps the order of :func:`plan`; no number depends on the order.
    """
    from psygym.editions import load

    if not _match_wanted(settings):
        return list(pairs)

    def has_match(sc: tuple[str, str]) -> bool:
        try:
            return _search_differs(load(*sc))
        except Exception:  # noqa: BLE001 - compare_scenario reports it, in its place
            return True

    return sorted(pairs, key=lambda sc: not has_match(sc))


def _match_wanted(settings: CompareSettings) -> bool:
    """Whether the settings ask for ``search``'s match against each duel's leader."""
    return not (settings.quick or settings.search or settings.agents is not None
                or settings.search_games < 1)  # fmt: skip


def _eta_line(k: int, total: int, start: float) -> None:
    """``scenario k+1 of n, elapsed, about ... left`` on stderr."""
    elapsed = time.perf_counter() - start
    eta = f", about {elapsed / k * (total - k):.0f} s left" if k else ""
    err_console.print(f"[scenario {k + 1}/{total}, {elapsed:.0f} s{eta}]", highlight=False)


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
    search: bool = False,
    search_games: int | None = None,
    ray: str = "",
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
        search: include the ``search`` agent on every duel (slow: seconds a game).
        search_games: games per seat of ``search``'s match against each duel's leader (default
            :data:`SEARCH_GAMES`; ``0``: none).
        ray: play on this Ray cluster (``auto`` or its address, :mod:`.harness.pools`; its CPUs
            are the workers) instead of local processes; the report's plots are drawn here.
    """
    start = time.perf_counter()
    pairs, plan_notes = plan(editions, scenario)
    cluster = ray_pool(ray)
    settings = CompareSettings(
        editions=list(dict.fromkeys(e for e, _ in pairs)),
        scenarios=pairs,
        episodes=episodes or (QUICK_EPISODES if quick else DEFAULT_EPISODES),
        seed=seed,
        workers=cluster.workers if cluster else workers or max(1, os.cpu_count() or 1),
        quick=quick,
        tune_trials=tune_trials or (QUICK_TUNE_TRIALS if quick else DEFAULT_TUNE_TRIALS),
        train_steps=(0 if quick else DEFAULT_TRAIN_STEPS) if train_steps is None else train_steps,
        max_states=max_states or MAX_STATES,
        solve_seconds=solve_seconds or (QUICK_SOLVE_SECONDS if quick else DEFAULT_SOLVE_SECONDS),
        runs_dir=str(runs_dir),
        agents=agents or None,
        exact_pairs=not quick,
        exact_budget=QUICK_EXACT_BUDGET if quick else EXACT_BUDGET,
        search=search,
        search_games=SEARCH_GAMES if search_games is None else search_games,
    )
    tables_side = _start_tables(settings.editions, quick)

    order = _play_order(pairs, settings)
    builds, others = _exact_routes(order, quick, plan_notes)  # solved in the order played
    # A graph build is cheaper than a solve and one-phase games need a few seconds: --quick's
    # tight solver budget would stop some of them (games of several phases are not built).
    cap = max(settings.solve_seconds, SOLVE_SECONDS / 2)
    exact_side = ExactSide(builds, settings.max_states, cap) if builds else None
    memo_dir = tempfile.mkdtemp(prefix="psygym-compare-")  # solver memos, this run's own
    prober = Prober(others, settings, memo_dir)
    pool = cluster or (worker_pool(settings.workers) if settings.workers > 1 else None)
    matches = ThreadPoolExecutor(max_workers=len(pairs)) if pool is not None else None
    done: dict[tuple[str, str], ScenarioResult] = {}
    try:
        for k, (e, s) in enumerate(order):
            if show_progress:
                _eta_line(k, len(pairs), start)
            done[(e, s)] = compare_scenario(
                e, s, settings, prober=prober, pool=pool, show_progress=show_progress,
                side=exact_side, matches=matches,
            )  # fmt: skip
        results = [collect(done[sc]) for sc in pairs]
        tables = _finish_tables(tables_side, plan_notes)
        run_dir = run_folder(runs_dir, "compare")
        seconds = time.perf_counter() - start
        # The workers draw the plots while this process writes the rest.
        write_report(run_dir, results, settings, notes=plan_notes, seconds=seconds,
                     tables=tables, pool=None if cluster else pool)  # fmt: skip
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
        if matches is not None:
            matches.shutdown(cancel_futures=True)
        if exact_side is not None:
            exact_side.close()
        shutil.rmtree(memo_dir, ignore_errors=True)
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
        typer.Option(min=1, help=f"Exact solver state limit (default {MAX_STATES})."),
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


__all__ = [
    "run_compare", "compare_scenario", "plan", "Entry", "ScenarioResult", "CompareSettings",
    "register",
]  # fmt: skip
