"""Round robin over pairings and seats, with confidence intervals and exact values.

Every pair of agents plays ``episodes`` games in both seats with the common random numbers of
:mod:`.games` (an agent restricted to one seat, ``EvalSettings.seats``, plays only that
seat). Each game depends only on its seed and the two agents, so the numbers do not
depend on how the games are split over worker processes (``workers=2`` gives exactly what
``workers=1`` gives).

For every pairing and seat the tournament reports the mean score of the agent in seat 0 per game
with a 95% confidence interval, wins/draws/losses, Perils of the Warp per power attempted, dice
spent per manifested power, and the share of deny attempts that succeed, for both seats. Where
the exact solver can handle the scenario it adds the exact expected score of the pairing and each
agent's exploitability (what a best response gains against it), see :mod:`.solving`.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from psygym_experiments.harness.games import GameStats, play_games
from psygym_experiments.harness.progress import ProgressBar
from psygym_experiments.harness.runs import score_bounds
from psygym_experiments.harness.solving import (
    MAX_STATES,
    PILOT_STATES,
    adopt_memo,
    best_response,
    exploitability,
    pairing_value,
    solve_value,
)
from psygym_experiments.harness.task_record import TaskRecord
from psygym_experiments.harness.tournament_results import Evaluation, PairResult


@dataclass(frozen=True)
class EvalSettings:
    """How a tournament is played and which exact values it computes.

    Exact values are computed after the games, in the same worker pool:

    - the game is solved first (unless ``game_value`` is given; ``max_states`` caps the search,
      hidden-information editions are never solvable);
    - when it is solved, every pairing gets its exact score and every agent its best responses
      and exploitability;
    - when it is not, only pairings of agents that never chose at random in the games get exact
      scores, provided a first such pairing needs at most ``pilot_states`` states.

    Attributes:
        episodes: games per pairing and seat.
        seed: game ``i`` of every pairing uses seed ``seed + i``.
        workers: processes to play in (``1``: this process). Results do not depend on it.
        exact: compute each pairing's exact expected score where the solver can.
        exploit: best responses and exploitability for every agent (``True``), none
            (``False``) or the agents with these labels.
        stochastic_exact: also compute exact scores of pairings with an agent that chose at
            random, each choice weighted by its probability: when the game is solved, within
            ``max_states``; otherwise within ``pilot_states``, tried on one such pairing first
            (an agent that mixes everywhere makes the tree as big as the game's, and fails that
            fast; ``search`` mixing only at a secret bid's equilibrium keeps it small).
        max_states: the solver's state limit (beyond it the game counts as unsolvable).
        pilot_states: the state limit of pairings' exact scores when the game is not solved.
        game_value: the game's exact value if already known (skips solving the game).
        solve: try to solve the whole game (``False``: it is known to be too big).
        self_play: also pair each agent with itself.
        show_progress: draw a progress bar on stderr.
        seats: agent label -> the only seats it plays (a model trained for seat 0 never sits
            in seat 1); agents not named play both seats. A pairing is played only in the seat
            orders both of its agents allow (:func:`pairings`).
        exact_players: labels of agents whose mixed choices are exact equilibrium strategies
            (``optimal`` at simultaneous moves): they are not counted among the agents that
            choose at random, and their pairings keep their exact scores.
    """

    episodes: int
    seed: int = 0
    workers: int = 1
    exact: bool = True
    exploit: bool | Collection[str] = True
    stochastic_exact: bool = True
    max_states: int | None = MAX_STATES
    pilot_states: int | None = PILOT_STATES
    game_value: float | None = None
    solve: bool = True
    self_play: bool = False
    show_progress: bool = True
    seats: Mapping[str, Collection[int]] = field(default_factory=dict)
    exact_players: Collection[str] = ()


# ----------------------------------------------------------------------------- workers
class _Context:
    """What a worker needs: the rules and the agent specs, policies built once by name.

    ``memos``: spec -> a solver memo file of this game (:func:`.solving.adopt_memo`), so an
    ``optimal`` player does not solve the game again in every process.
    """

    def __init__(self, rules: Any, specs: Sequence[str], policies: Sequence[Any] = (),
                 memos: Mapping[str, str] | None = None):  # fmt: skip
        self.rules = rules
        self.specs = list(specs)
        self.memos = dict(memos or {})
        self._policies: dict[int, Any] = {
            i: adopt_memo(pol, rules, self.memos.get(self.specs[i], ""))
            for i, pol in enumerate(policies)
        }  # fmt: skip
        if self._policies and "torch" in sys.modules:  # as policy() does for its own builds
            sys.modules["torch"].set_num_threads(1)

    def policy(self, index: int) -> Any:
        """The policy of agent ``index`` (built on first use; solver caches are kept)."""
        if index not in self._policies:
            from psygym.policies import resolve_policy

            spec = self.specs[index]
            self._policies[index] = adopt_memo(resolve_policy(spec, self.rules), self.rules,
                                               self.memos.get(spec, ""))  # fmt: skip
            if "torch" in sys.modules:  # one thread per worker process: no oversubscription
                sys.modules["torch"].set_num_threads(1)
        return self._policies[index]


_CTX: _Context | None = None
_CTX_TOKEN = ""


def _init_worker() -> None:
    """Process-pool initialiser: one thread per worker for the numeric libraries."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")


def worker_pool(workers: int, tasks: int | None = None) -> Any:
    """A process pool for :func:`evaluate` (``pool=``), reusable across several evaluations.

    Reusing one pool spares each evaluation the start-up of its processes (and their imports,
    e.g. torch for PPO agents). Close it with ``shutdown()`` (or use it in a ``with`` block).
    With ``tasks`` given, it has no more processes than tasks (a forking pool starts every
    process at its first task, whether there is work for it or not).

    Raises:
        ValueError: more workers than this machine allows (:func:`.lifecycle.check_workers`).
    """
    from concurrent.futures import ProcessPoolExecutor

    from psygym_experiments.harness.lifecycle import check_workers, pool_initializer

    workers = check_workers(workers)
    if tasks is not None:
        workers = max(1, min(workers, tasks))
    # Workers die with this process (SIGTERM, SIGKILL, crash): no orphan blocked on a pipe.
    pool = ProcessPoolExecutor(
        max_workers=workers, initializer=pool_initializer, initargs=(os.getpid(), _init_worker)
    )
    pool.workers = workers  # the interface of .pools.Pool
    return pool


def _run_remote(
    token: str, rules: Any, specs: Sequence[str], task: tuple,
    memos: Mapping[str, str] | None = None,
) -> tuple[tuple, Any]:  # fmt: skip
    """Run a task in a pool worker; the worker keeps the context of the latest evaluation."""
    global _CTX, _CTX_TOKEN
    if _CTX is None or token != _CTX_TOKEN:
        _CTX, _CTX_TOKEN = _Context(rules, specs, memos=memos), token
    return _run_task(task, _CTX)


def _run_task(task: tuple, ctx: _Context | None = None) -> tuple[tuple, Any]:
    """Run one task and return it with its result.

    Tasks: ``("games", i, j, start, stop, seed)`` plays games ``start..stop-1`` of agent ``i``
    (seat 0) against agent ``j`` (result: the statistics and which seats chose at random);
    ``("value", max_states)`` solves the game;
    ``("exact", i, j, max_states)`` is the exact score of a pairing; ``("br", i, seat,
    max_states)`` is the value of a best response to agent ``i`` playing ``seat``. Exact tasks
    return ``(status, value or reason)`` with status ``ok``, ``unsolvable`` or ``absent``.
    """
    ctx = ctx or _CTX
    assert ctx is not None
    kind = task[0]
    if kind == "games":
        _, i, j, start, stop, seed = task
        return task, play_games(ctx.rules, [ctx.policy(i), ctx.policy(j)], seed, range(start, stop))
    try:
        from psygym_agents.solvers import NotSolvable
    except ImportError as exc:
        return task, ("absent", f"the exact solver is not installed ({exc})")
    rules, max_states = ctx.rules, task[-1]
    try:
        if kind == "value":
            solved = solve_value(rules, max_states)
            if solved.value is None:
                return task, ("unsolvable", solved.note)
            return task, ("ok", solved.value)
        if kind == "exact":
            _, i, j, _ = task
            return task, ("ok", pairing_value(rules, [ctx.policy(i), ctx.policy(j)], max_states))
        _, i, seat, _ = task
        return task, ("ok", best_response(rules, ctx.policy(i), seat, max_states))
    except NotSolvable as exc:
        return task, ("unsolvable", str(exc))


def _chunks(episodes: int, workers: int, pairings: int) -> list[tuple[int, int]]:
    """Split ``range(episodes)`` into chunks: at least four tasks per worker, at most 250 games."""
    per_pairing = max(1, math.ceil(4 * workers / max(1, pairings)))
    size = max(1, min(250, math.ceil(episodes / per_pairing)))
    return [(a, min(episodes, a + size)) for a in range(0, episodes, size)]


def unique_labels(specs: Sequence[str], labels: Sequence[str] | None = None) -> list[str]:
    """Labels for the agents: ``labels`` or the specs, with ``#2``, ``#3``... on repeats."""
    base = list(labels) if labels is not None else list(specs)
    if len(base) != len(specs):
        raise ValueError(f"{len(base)} labels for {len(specs)} agents")
    seen: dict[str, int] = {}
    out = []
    for name in base:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name}#{seen[name]}")
    return out


def pairings(
    n: int, *, self_play: bool = False, seats: Mapping[int, Collection[int]] | None = None
) -> list[tuple[int, int]]:
    """Seat orders of a round-robin over ``n`` agents: both seats of every pair, in a fixed order.

    With ``self_play`` each agent also meets itself (once: both seats are the same game).
    ``seats`` maps an agent index to the only seats it plays: a seat order ``(i, j)`` is kept
    only when ``i`` may sit in seat 0 and ``j`` in seat 1.
    """
    allowed = seats or {}

    def ok(i: int, j: int) -> bool:
        return 0 in allowed.get(i, (0, 1)) and 1 in allowed.get(j, (0, 1))

    out = []
    for i in range(n):
        if self_play and ok(i, i):
            out.append((i, i))
        for j in range(i + 1, n):
            out += [o for o in ((i, j), (j, i)) if ok(*o)]
    return out


def seat_indices(names: Sequence[str], seats: Mapping[str, Collection[int]]) -> dict[int, tuple]:
    """Agent index -> allowed seats, from ``EvalSettings.seats`` (keyed by label).

    Raises:
        ValueError: a label that is no agent, or seats other than 0 and 1 (or none).
    """
    index = {name: i for i, name in enumerate(names)}
    out: dict[int, tuple] = {}
    for label, allowed in seats.items():
        if label not in index:
            raise ValueError(f"seats given for {label!r}, which is not an agent")
        chosen = tuple(sorted(set(allowed)))
        if not chosen or any(x not in (0, 1) for x in chosen):
            raise ValueError(f"seats of {label!r} must be 0, 1 or both, not {list(allowed)}")
        if chosen != (0, 1):
            out[index[label]] = chosen
    return out


class _Runner:
    """Runs batches of tasks in this process (``workers=1``) or in a process pool.

    The pool is ``pool`` when given (left open), else one made here for ``workers`` processes.
    Every task carries the rules and agent specs, so workers rebuild the agents by name.
    """

    def __init__(
        self, rules: Any, specs: Sequence[str], workers: int, bar: ProgressBar, pool: Any = None,
        policies: Sequence[Any] = (), record: TaskRecord | None = None,
        memos: Mapping[str, str] | None = None,
    ):  # fmt: skip
        import uuid

        self.rules, self.specs, self.workers, self.bar = rules, list(specs), workers, bar
        self.memos = dict(memos or {})
        self.pool, self._own = pool, False
        self.ctx: _Context | None = None
        self.token = uuid.uuid4().hex
        self._policies = list(policies)
        self.record = record

    def __enter__(self) -> _Runner:
        if self.pool is None and self.workers > 1:
            self.pool, self._own = worker_pool(self.workers), True
        elif self.pool is None:  # in this process: the policies evaluate() already built
            self.ctx = _Context(self.rules, self.specs, self._policies, self.memos)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._own:
            self.pool.shutdown(cancel_futures=True)

    def run(self, tasks: Sequence[tuple], weight: dict[tuple, int] | None = None) -> dict:
        """Run every task not in the record yet; returns task -> result."""
        weight = weight or {}
        out: dict[tuple, Any] = {}
        record = self.record
        todo = []
        for t in tasks:
            if record is not None and t in record.done:
                out[t] = record.done[t]
                self.bar.advance(weight.get(t, 1))
            else:
                todo.append(t)

        def finish(t: tuple, res: Any) -> None:
            out[t] = res
            if record is not None:
                record.add(t, res)
            self.bar.advance(weight.get(t, 1))

        if self.pool is None:
            for t in todo:
                finish(t, _run_task(t, self.ctx)[1])
            return out
        from concurrent.futures import as_completed

        futures = [
            self.pool.submit(_run_remote, self.token, self.rules, self.specs, t, self.memos)
            for t in todo
        ]
        for fut in as_completed(futures):
            finish(*fut.result())
        return out


# ----------------------------------------------------------------------------- the tournament
@dataclass
class _Plan:
    """The tasks of one tournament, and the bookkeeping shared by its steps."""

    settings: EvalSettings
    names: list[str]
    order: list[tuple[int, int]]
    chunks: list[tuple[int, int]]
    br_agents: list[int]
    need_value: bool
    results: dict[tuple, Any] = field(default_factory=dict)
    notes: set[str] = field(default_factory=set)
    stochastic: list[bool] = field(default_factory=list)

    @property
    def games(self) -> list[tuple]:
        """The game tasks, pairing by pairing."""
        s = self.settings
        return [("games", i, j, a, b, s.seed) for i, j in self.order for a, b in self.chunks]

    @property
    def value_task(self) -> tuple:
        """The task that solves the game."""
        return ("value", self.settings.max_states)

    def total(self) -> int:
        """Units of work for the progress bar: one per game, one per exact task."""
        n_exact = (len(self.order) if self.settings.exact else 0) + 2 * len(self.br_agents)
        return self.settings.episodes * len(self.order) + int(self.need_value) + n_exact


def _make_plan(names: list[str], settings: EvalSettings) -> _Plan:
    n = len(names)
    order = pairings(n, self_play=settings.self_play or n == 1,
                     seats=seat_indices(names, settings.seats))  # fmt: skip
    if not order:
        raise ValueError("no pairing is possible with these seat restrictions")
    exploit = settings.exploit
    if exploit is True:
        br_agents = list(range(n))
    elif exploit:
        br_agents = [i for i, name in enumerate(names) if name in set(exploit)]
    else:
        br_agents = []
    need_value = (
        (settings.exact or bool(br_agents)) and settings.game_value is None and settings.solve
    )
    return _Plan(settings, names, order, _chunks(settings.episodes, settings.workers, len(order)),
                 br_agents, need_value, stochastic=[False] * n)  # fmt: skip


def _play(plan: _Plan, runner: _Runner) -> tuple[str, Any]:
    """Play the games (and solve the game alongside); returns the game value's status."""
    games = plan.games
    weight = {t: t[4] - t[3] for t in games}
    plan.results.update(runner.run(games + ([plan.value_task] if plan.need_value else []), weight))
    if plan.settings.game_value is not None:
        plan.results[plan.value_task] = ("ok", float(plan.settings.game_value))
    value = plan.results.get(plan.value_task, ("skipped", "not attempted"))
    if (plan.settings.exact or plan.br_agents) and value[0] not in ("ok", "skipped"):
        plan.notes.add(f"the game is not solved: {value[1]}")
    exact_players = set(plan.settings.exact_players)
    for t in games:
        _, flags = plan.results[t]
        for seat, k in ((0, t[1]), (1, t[2])):
            # An equilibrium mix (optimal at a secret bid) is exact play, not a random choice.
            if plan.names[k] not in exact_players:
                plan.stochastic[k] |= flags[seat]
    return value


def _piloted(plan: _Plan, runner: _Runner, pairs: list[tuple[int, int]]) -> tuple[list, str]:
    """Exact tasks of ``pairs`` within the pilot limit, the first pair run alone first.

    Returns the tasks of the other pairs and ``""`` when the first fits; else no tasks and why
    it did not (its result is dropped: the caller's note says it).
    """
    pilot = ("exact", *pairs[0], plan.settings.pilot_states)
    plan.results.update(runner.run([pilot]))
    if plan.results[pilot][0] != "ok":
        return [], str(plan.results.pop(pilot)[1])
    return [("exact", i, j, plan.settings.pilot_states) for i, j in pairs[1:]], ""


def _exact_tasks(plan: _Plan, runner: _Runner, solved: bool) -> list[tuple]:
    """The exact tasks to run after the games (running a pilot first when not solved)."""
    s, order, stochastic = plan.settings, plan.order, plan.stochastic
    later: list[tuple] = []
    plain = [(i, j) for i, j in order if not stochastic[i] and not stochastic[j]]
    random_names = ", ".join(n for n, st in zip(plan.names, stochastic) if st)
    if s.exact and solved:
        todo = order if s.stochastic_exact else plain
        later += [("exact", i, j, s.max_states) for i, j in todo]
        if len(todo) < len(order):
            plan.notes.add(f"no exact scores for pairings with agents that choose at random "
                           f"({random_names}): left out to keep the solving time down")  # fmt: skip
    elif s.exact:
        if plain:
            tasks, failed = _piloted(plan, runner, plain)
            later += tasks
            if failed:
                plan.notes.add(f"no exact scores: {failed}")
        mixed = [pair for pair in order if pair not in plain]
        why = ""
        if mixed and s.stochastic_exact:
            # An agent that mixes only now and then (search at a secret bid's equilibrium) keeps
            # the pairing's tree small; one that mixes everywhere fails this pilot fast.
            tasks, failed = _piloted(plan, runner, mixed)
            later += tasks
            mixed, why = (mixed, f" ({failed})") if failed else ([], "")
        if mixed:
            plan.notes.add(f"no exact scores for pairings with agents that choose at random "
                           f"({random_names}) when the whole game is not solved{why}")  # fmt: skip
    if solved:
        later += [("br", i, seat, s.max_states) for i in plan.br_agents for seat in (0, 1)]
    return later


def _pair_results(plan: _Plan) -> list[PairResult]:
    """One :class:`PairResult` per pairing and seat, from the finished tasks."""
    s, out = plan.settings, []
    for i, j in plan.order:
        stats = GameStats()
        for a, b in plan.chunks:
            stats.merge(plan.results[("games", i, j, a, b, s.seed)][0])
        exact_value = None
        res = plan.results.get(("exact", i, j, s.max_states)) or plan.results.get(
            ("exact", i, j, s.pilot_states)
        )
        if res is not None:
            if res[0] == "ok":
                exact_value = res[1]
            elif not any(n.startswith("no exact scores: ") for n in plan.notes):
                plan.notes.add(f"some exact scores not computed: {res[1]}")
        out.append(
            PairResult.from_games(
                plan.names[i], plan.names[j], np.asarray(stats.scores, dtype=float), stats,
                index0=i, index1=j, exact=exact_value,
            )
        )  # fmt: skip
    return out


def _best_responses(plan: _Plan) -> tuple[dict[str, float | None], dict[str, list]]:
    """Exploitability and best-response values per agent label."""
    expl: dict[str, float | None] = {}
    best: dict[str, list[float | None]] = {}
    if not plan.br_agents:
        return expl, best
    for i, name in enumerate(plan.names):
        b = [plan.results.get(("br", i, seat, plan.settings.max_states)) for seat in (0, 1)]
        best[name] = [r[1] if r is not None and r[0] == "ok" else None for r in b]
        expl[name] = exploitability(*best[name])
        for r in b:
            if r is not None and r[0] != "ok":
                plan.notes.add(f"some best responses not computed: {r[1]}")
    return expl, best


def evaluate(
    rules: Any,
    agent_names: Sequence[str],
    settings: EvalSettings,
    *,
    labels: Sequence[str] | None = None,
    pool: Any = None,
    policies: Sequence[Any] | None = None,
    record: str | os.PathLike[str] | TaskRecord | None = None,
    memos: Mapping[str, str] | None = None,
) -> Evaluation:
    """Round-robin over every pair of agents in both seats, with common random numbers.

    Args:
        rules: the rules of the scenario (``psygym.editions.load(...)``).
        agent_names: agent specs (names, ``tuned:...json``, ``...zip``, ``caster+denier``).
        settings: games, seeds and exact values to compute (see :class:`EvalSettings`).
        labels: names to show instead of the specs (repeats get ``#2``...).
        pool: a pool to run in, from :func:`worker_pool` or :func:`.pools.ray_pool` (a Ray
            cluster's; then ``settings.workers`` only sizes the work chunks); ``None``: a pool of
            ``workers`` processes made for this call.
        policies: policies already built from ``agent_names`` for ``rules`` (``None`` entries
            are built here), so that a model is loaded once in this process; workers build
            their own.
        record: a JSON-lines file that keeps every finished task (:class:`TaskRecord`, or one
            already read); the tasks it holds already are not run again, so a killed
            tournament goes on.
        memos: agent spec -> a solver memo file a solve of this game wrote
            (:func:`.solving.adopt_memo`): its ``optimal`` player starts from it.

    Returns:
        The :class:`Evaluation`: one :class:`PairResult` per pairing and seat, in
        :func:`pairings` order, with the game value, exploitability and notes.

    Raises:
        ValueError: no agents, fewer than one episode, or an unknown agent name.
    """
    from psygym.policies import resolve_policy

    specs = list(agent_names)
    if not specs:
        raise ValueError("evaluate needs at least one agent")
    if settings.episodes < 1:
        raise ValueError(f"episodes must be at least 1, got {settings.episodes}")
    names = unique_labels(specs, labels)
    # Fail early with the clear error, before any process starts.
    given = list(policies or [])
    given += [None] * (len(specs) - len(given))
    policies = [pol if pol is not None else resolve_policy(spec, rules)
                for spec, pol in zip(specs, given)]  # fmt: skip
    exact_players = {*settings.exact_players}
    exact_players |= {n for n, pol in zip(names, policies) if getattr(pol, "name", "") == "optimal"}
    settings = replace(settings, exact_players=tuple(sorted(exact_players)))
    plan = _make_plan(names, settings)
    done = record if record is None or isinstance(record, TaskRecord) else TaskRecord(
        record, score_bounds(rules))  # fmt: skip
    # Never more worker processes than tasks (the exact ones at most one per pairing and seat).
    n_exact = (len(plan.order) if settings.exact else 0) + 2 * len(plan.br_agents)
    tasks = len(plan.games) + int(plan.need_value) + n_exact
    with (
        ProgressBar("evaluating", plan.total(), enabled=settings.show_progress) as bar,
        _Runner(
            rules, specs, min(settings.workers, tasks), bar, pool, policies, done, memos
        ) as runner,
    ):
        value = _play(plan, runner)
        solved = value[0] == "ok"
        later = _exact_tasks(plan, runner, solved)
        plan.results.update(runner.run(later))
        bar.update(completed=plan.total())
    pairs = _pair_results(plan)
    expl, best = _best_responses(plan)
    return Evaluation(
        edition=rules.edition,
        scenario=getattr(rules.scenario, "name", "?"),
        agents=names,
        specs=specs,
        episodes=settings.episodes,
        seed=settings.seed,
        pairs=pairs,
        game_value=value[1] if solved else None,
        value_note="" if solved else str(value[1]),
        exploitability=expl,
        best_response=best,
        notes=sorted(plan.notes),
        stochastic=[n for n, st in zip(names, plan.stochastic) if st],
    )
