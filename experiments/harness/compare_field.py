"""The field of ``psygym compare``: the settings, and which agents play each scenario.

:func:`plan` picks the scenarios, :func:`heuristic_entries`, :func:`tuned_entry` and
:func:`ppo_entry` build each scenario's field of agents (tuning or training one where nothing is
saved; ``search`` joins in :mod:`.compare_search`), and :func:`usable` leaves out what cannot
play. The games are :mod:`.compare_run`; the command is :mod:`psygym_experiments.compare`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from psygym_experiments.common import (
    err_console,
)
from psygym_experiments.harness.output import write_bytes
from psygym_experiments.harness.runs import inside
from psygym_experiments.harness.seats import model_seats
from psygym_experiments.harness.solving import (
    SOLVE_SECONDS,
)

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


def loaded_policy(spec: str, rules: Any) -> Any:
    """The policy :func:`usable` built for ``spec`` on ``rules``, or ``None``."""
    return _LOADED.get((spec, id(rules)), (None, "", None))[2]


__all__ = [
    "DEFAULT_EPISODES", "DEFAULT_SOLVE_SECONDS", "DEFAULT_TRAIN_STEPS", "DEFAULT_TUNE_TRIALS",
    "EXACT_BUDGET", "EXTRA_SCENARIO", "GENERIC_AGENTS", "OPTIMAL_TEXT", "QUICK_EPISODES",
    "QUICK_EXACT_BUDGET", "QUICK_SOLVE_SECONDS", "QUICK_TUNE_EPISODES", "QUICK_TUNE_TRIALS",
    "SEARCH", "SEARCH_GAMES", "TUNED_TEXT", "TUNE_EPISODES", "TUNE_SECONDS", "CompareSettings",
    "Entry", "ScenarioResult", "heuristic_entries", "loaded_policy", "plan",
    "ppo_entry", "ppo_text", "tuned_entry", "usable",
]  # fmt: skip
