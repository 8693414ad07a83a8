"""Running ``psygym compare``: each scenario's round-robin, exact values and ``search`` match.

:func:`run_compare` plays every scenario of a :class:`.compare_field.CompareSettings` (the
field from :mod:`.compare_field`), keeps the workers busy across scenarios, fills in the exact
values of the state graph as they arrive, and writes the report. The command is
:mod:`psygym_experiments.compare`.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from psygym_experiments.common import (
    err_console,
)
from psygym_experiments.harness.compare_exact import ExactSide
from psygym_experiments.harness.compare_field import (
    DEFAULT_EPISODES,
    DEFAULT_SOLVE_SECONDS,
    DEFAULT_TRAIN_STEPS,
    DEFAULT_TUNE_TRIALS,
    EXACT_BUDGET,
    OPTIMAL_TEXT,
    QUICK_EPISODES,
    QUICK_EXACT_BUDGET,
    QUICK_SOLVE_SECONDS,
    QUICK_TUNE_TRIALS,
    SEARCH,
    SEARCH_GAMES,
    CompareSettings,
    Entry,
    ScenarioResult,
    heuristic_entries,
    loaded_policy,
    plan,
    ppo_entry,
    tuned_entry,
    usable,
)
from psygym_experiments.harness.compare_search import (
    hidden,
    match_wanted,
    search_differs,
    search_entry,
    search_match,
)
from psygym_experiments.harness.lifecycle import (
    InterruptReported,
    kill_workers,
    pool_initializer,
    sigterm_interrupts,
)
from psygym_experiments.harness.output import write_json
from psygym_experiments.harness.pools import ray_pool
from psygym_experiments.harness.runs import run_folder
from psygym_experiments.harness.solving import (
    MAX_STATES,
    SOLVE_SECONDS,
    Solved,
    exact_game_value,
    exploitability,
)
from psygym_experiments.harness.standings import REFERENCE
from psygym_experiments.harness.tournament import EvalSettings, evaluate, pairings, worker_pool
from psygym_experiments.report import write_report


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


def unsolved_note(rules: Any, solved: Solved) -> Solved:
    """``solved`` with a note that recommends no agent outside the field.

    The solver's message for a hidden-information edition points to the ``optimal`` agent's
    information-set search, but a comparison adds ``optimal`` only where the game is solved
    exactly, so such a field never has it: the note says only why there is no exact value
    (the report adds that there is no optimal agent).
    """
    if solved.value is not None or not hidden(rules):
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
        exact=settings.exact_pairs and not graph_path and not hidden(rules),
        exploit=br_agents, stochastic_exact=stochastic_exact, max_states=settings.max_states,
        game_value=solved.value, solve=False, show_progress=show_progress,
        seats={e.label: e.seats for e in entries if tuple(e.seats) != (0, 1)},
        exact_players=[e.label for e in entries if e.kind == "optimal"],
    )  # fmt: skip
    built = [loaded_policy(spec, rules) for spec in specs]
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

    if not match_wanted(settings):
        return list(pairs)

    def has_match(sc: tuple[str, str]) -> bool:
        try:
            return search_differs(load(*sc))
        except Exception:  # noqa: BLE001 - compare_scenario reports it, in its place
            return True

    return sorted(pairs, key=lambda sc: not has_match(sc))


@contextmanager
def _run_folder_kept(folder: Path) -> Iterator[None]:
    """If the block fails, remove ``folder`` when nothing was written into it; say if interrupted.

    An interruption (Ctrl-C, or SIGTERM under :func:`sigterm_interrupts`) prints one
    ``interrupted: ...`` line on stderr, then goes on as :class:`.lifecycle.InterruptReported` (a
    ``KeyboardInterrupt``: exit status 130, and the command line adds no line of its own).
    """
    try:
        yield
    except BaseException as exc:
        try:
            folder.rmdir()
            what = "no report written"
        except OSError:  # not empty (a partial report is kept), or already gone
            what = f"the report in {folder} is unfinished" if folder.is_dir() else "no report"
        if isinstance(exc, KeyboardInterrupt) and not isinstance(exc, InterruptReported):
            err_console.print(
                f"interrupted: {what}; temporary files removed",
                highlight=False, markup=False, soft_wrap=True,
            )  # fmt: skip
            raise InterruptReported from exc
        raise


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
    # The run folder first: a --runs-dir that cannot hold it ends the command before any game.
    run_dir = run_folder(runs_dir, "compare")
    pool = matches = exact_side = None
    with sigterm_interrupts(), _run_folder_kept(run_dir):  # kill -TERM cleans up as Ctrl-C does
        cluster = ray_pool(ray)
        settings = CompareSettings(
            editions=list(dict.fromkeys(e for e, _ in pairs)),
            scenarios=pairs,
            episodes=episodes or (QUICK_EPISODES if quick else DEFAULT_EPISODES),
            seed=seed,
            workers=cluster.workers if cluster else workers or max(1, os.cpu_count() or 1),
            quick=quick,
            tune_trials=tune_trials or (QUICK_TUNE_TRIALS if quick else DEFAULT_TUNE_TRIALS),
            train_steps=(0 if quick else DEFAULT_TRAIN_STEPS)
            if train_steps is None
            else train_steps,
            max_states=max_states or MAX_STATES,
            solve_seconds=solve_seconds
            or (QUICK_SOLVE_SECONDS if quick else DEFAULT_SOLVE_SECONDS),
            runs_dir=str(runs_dir),
            agents=agents or None,
            exact_pairs=not quick,
            exact_budget=QUICK_EXACT_BUDGET if quick else EXACT_BUDGET,
            search=search,
            search_games=SEARCH_GAMES if search_games is None else search_games,
        )
        memo_dir = tempfile.mkdtemp(prefix="psygym-compare-")  # solver memos, this run's own
        tables_side = finished = None
        try:
            tables_side = _start_tables(settings.editions, quick)
            order = _play_order(pairs, settings)
            builds, others = _exact_routes(order, quick, plan_notes)  # solved in the order played
            # A graph build is cheaper than a solve and one-phase games need a few seconds:
            # --quick's tight solver budget would stop some of them (games of several phases are
            # not built).
            cap = max(settings.solve_seconds, SOLVE_SECONDS / 2)
            exact_side = ExactSide(builds, settings.max_states, cap) if builds else None
            prober = Prober(others, settings, memo_dir)
            pool = cluster or (worker_pool(settings.workers) if settings.workers > 1 else None)
            matches = ThreadPoolExecutor(max_workers=len(pairs)) if pool is not None else None
            done: dict[tuple[str, str], ScenarioResult] = {}
            for k, (e, s) in enumerate(order):
                if show_progress:
                    _eta_line(k, len(pairs), start)
                done[(e, s)] = compare_scenario(
                    e, s, settings, prober=prober, pool=pool, show_progress=show_progress,
                    side=exact_side, matches=matches,
                )  # fmt: skip
            results = [collect(done[sc]) for sc in pairs]
            tables = _finish_tables(tables_side, plan_notes)
            seconds = time.perf_counter() - start
            # The workers draw the plots while this process writes the rest.
            write_report(run_dir, results, settings, notes=plan_notes, seconds=seconds,
                         tables=tables, pool=None if cluster else pool)  # fmt: skip
            finished = True
        finally:
            shutil.rmtree(memo_dir, ignore_errors=True)  # first: the one thing outside run_dir
            if not finished:  # failed or interrupted: the exit must not wait for their work
                kill_workers(None if cluster else pool, getattr(exact_side, "_pool", None),
                              tables_side[0] if tables_side else None)  # fmt: skip
            if pool is not None:
                pool.shutdown(cancel_futures=True)
            if matches is not None:
                matches.shutdown(cancel_futures=True)
            if exact_side is not None:
                exact_side.close()
    config = {
        **settings.__dict__,
        "seconds": round(seconds, 1),
        "game_seeds": f"{seed}..{seed + settings.episodes - 1}",
    }
    write_json(run_dir / "config.json", config, strict=False)
    return run_dir


__all__ = [
    "Prober", "collect", "compare_scenario", "exact_plan", "optimal_spec", "run_compare",
    "unsolved_note",
]  # fmt: skip
