"""``psygym evaluate``: a round-robin tournament between agents with common random numbers.

Every pair of agents plays ``episodes`` games in both seats. Game ``i`` of every pairing uses the
seed ``seed + i``, and its randomness is split into independent streams so that the same dice come
up wherever the games allow it (common random numbers, which make differences between agents far
less noisy than independent games would):

- chance (dice, cards) is drawn from a generator seeded by ``(seed + i, 0, k)`` in the ``k``-th
  Psychic phase of the game (a new stream at every ``"phase"`` event, so every pairing sees the
  same warp-charge roll in phase ``k`` whatever was rolled before);
- the actions of a stochastic agent in seat ``p`` are drawn from a generator seeded by
  ``(seed + i, 1 + p)``, so an agent's choices never shift the dice.

Each game depends only on its seed and the two agents, so the numbers do not depend on how the
games are split over worker processes (``workers=2`` gives exactly what ``workers=1`` gives).

For every pairing and seat the harness reports the mean score of the agent in seat 0 per game with
a 95% confidence interval, wins/draws/losses, Perils of the Warp per power attempted, dice spent per
manifested power, and the share of deny attempts that succeed, for both seats. Where the exact
solver can handle the scenario it adds the exact expected score of the pairing
(``psygym_agents.solvers.evaluate.policy_value``) and each agent's exploitability (what a best response
gains against it, ``psygym_agents.solvers.evaluate.exploitability``).
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import sys
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import typer
from psygym_experiments.common import (
    check_choice,
    console,
    err_console,
    json_default,
    split_names,
    timestamp,
    user_errors,
    write_command,
)
from psygym_experiments.simulate import GameStats, mean_ci

from psygym.core import CHANCE, TERMINAL

CSV_COLUMNS = (
    "agent0", "agent1", "episodes", "mean_score", "ci95", "wins", "draws", "losses",
    "perils_rate0", "perils_rate1", "dice_per_manifest0", "dice_per_manifest1",
    "deny_rate0", "deny_rate1", "exact_score",
)  # fmt: skip
"""Columns of ``results.csv``: one row per pairing and seat (agent0 sits in seat 0)."""

EXACT_MAX_STATES = 300_000
"""Default state limit of the exact solver: bigger games count as unsolvable."""
PILOT_MAX_STATES = 50_000
"""State limit of pairings' exact scores when the whole game is not solved."""

DRAW_TOL = 1e-9
"""Scores within this of 0 count as a draw."""


# ----------------------------------------------------------------------------- results
@dataclass
class PairResult:
    """The outcome of one pairing in one seat order: ``agent0`` in seat 0, ``agent1`` in seat 1.

    Scores are from seat 0's point of view (the game is zero-sum). Rates ending in ``0`` and ``1``
    belong to the agent in that seat; a rate with nothing to count (no power attempted, no deny)
    is ``nan``.

    Attributes:
        agent0: label of the agent in seat 0.
        agent1: label of the agent in seat 1.
        episodes: games played.
        mean_score: mean final score of seat 0 per game.
        ci95: half-width of the 95% confidence interval of ``mean_score``.
        wins: games seat 0 won (score > 0).
        draws: games with score 0.
        losses: games seat 0 lost.
        perils_rate0: Perils of the Warp per power attempted by seat 0.
        perils_rate1: the same for seat 1.
        dice_per_manifest0: dice seat 0 spent casting per power it manifested.
        dice_per_manifest1: the same for seat 1.
        deny_rate0: share of seat 0's deny attempts that succeeded.
        deny_rate1: the same for seat 1.
        exact_score: exact expected score of seat 0 (``None`` when the solver cannot compute it).
        index0: position of ``agent0`` in the agent list.
        index1: position of ``agent1`` in the agent list.
        scores: every game's score (seat 0's view), in game order.
        stats: the event counts behind the rates.
    """

    agent0: str
    agent1: str
    episodes: int
    mean_score: float
    ci95: float
    wins: int
    draws: int
    losses: int
    perils_rate0: float
    perils_rate1: float
    dice_per_manifest0: float
    dice_per_manifest1: float
    deny_rate0: float
    deny_rate1: float
    exact_score: float | None = None
    index0: int = 0
    index1: int = 0
    scores: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)
    stats: GameStats = field(default_factory=GameStats, repr=False)

    def row(self) -> dict[str, Any]:
        """The ``results.csv`` / ``results.json`` fields of this pairing."""
        return {c: getattr(self, c) for c in CSV_COLUMNS}

    @classmethod
    def from_games(
        cls,
        agent0: str,
        agent1: str,
        scores: np.ndarray,
        stats: GameStats,
        index0: int = 0,
        index1: int = 1,
        exact: float | None = None,
    ) -> PairResult:
        """Summarise the games of one pairing."""
        s0, s1 = stats.summary(0), stats.summary(1)
        for p, sp in ((0, s0), (1, s1)):
            if stats.dice[p] == 0:  # the edition commits no dice (8th: a 2D6 test): no rate
                sp["dice_per_manifest"] = float("nan")
        m, half = mean_ci(scores)
        return cls(
            agent0=agent0,
            agent1=agent1,
            episodes=len(scores),
            mean_score=m,
            ci95=half,
            wins=int(np.sum(scores > DRAW_TOL)),
            draws=int(np.sum(np.abs(scores) <= DRAW_TOL)),
            losses=int(np.sum(scores < -DRAW_TOL)),
            perils_rate0=s0["perils_rate"],
            perils_rate1=s1["perils_rate"],
            dice_per_manifest0=s0["dice_per_manifest"],
            dice_per_manifest1=s1["dice_per_manifest"],
            deny_rate0=s0["deny_rate"],
            deny_rate1=s1["deny_rate"],
            exact_score=exact,
            index0=index0,
            index1=index1,
            scores=scores,
            stats=stats,
        )


@dataclass
class Evaluation:
    """Everything one tournament produced (what ``results.json`` holds).

    Attributes:
        edition: edition id.
        scenario: scenario name.
        agents: agent labels in list order.
        specs: the agent specs the labels stand for (names or paths).
        episodes: games per pairing and seat.
        seed: the base seed (game ``i`` uses ``seed + i``).
        pairs: one result per pairing and seat.
        game_value: exact value of the game for seat 0 with both players optimal, if solvable.
        value_note: why there is no exact value, if there is none.
        exploitability: agent label -> exploitability (``None``: not computable).
        best_response: agent label -> [seat-0 score of a best response to the agent in seat 0,
            the same with the agent in seat 1] (``None`` where not computable).
        notes: plain sentences about what could not be computed and why.
    """

    edition: str
    scenario: str
    agents: list[str]
    specs: list[str]
    episodes: int
    seed: int
    pairs: list[PairResult]
    game_value: float | None = None
    value_note: str = ""
    exploitability: dict[str, float | None] = field(default_factory=dict)
    best_response: dict[str, list[float | None]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dictionary (``NaN`` becomes ``null``)."""
        return {
            "edition": self.edition,
            "scenario": self.scenario,
            "psygym_agents": self.agents,
            "specs": self.specs,
            "episodes": self.episodes,
            "seed": self.seed,
            "pairs": [clean_json(p.row()) for p in self.pairs],
            "game_value": clean_json(self.game_value),
            "value_note": self.value_note,
            "exploitability": clean_json(self.exploitability),
            "best_response": clean_json(self.best_response),
            "notes": self.notes,
        }


def clean_json(obj: Any) -> Any:
    """Replace non-finite floats by ``None`` (JSON has no NaN) and numpy scalars by Python ones."""
    if isinstance(obj, dict):
        return {k: clean_json(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [clean_json(v) for v in obj]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def _cell(value: Any) -> str:
    """One CSV cell: floats with 6 decimals, missing or NaN values empty."""
    if value is None:
        return ""
    if isinstance(value, float | np.floating):
        return "" if not math.isfinite(value) else f"{float(value):.6f}"
    return str(value)


def csv_text(pairs: Sequence[PairResult], prefix: dict[str, str] | None = None) -> str:
    """``results.csv`` content; ``prefix`` adds leading constant columns (edition, scenario)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    extra = dict(prefix or {})
    writer.writerow([*extra, *CSV_COLUMNS])
    for p in pairs:
        row = p.row()
        writer.writerow([*extra.values(), *(_cell(row[c]) for c in CSV_COLUMNS)])
    return out.getvalue()


# ----------------------------------------------------------------------------- playing
def game_seed(seed: int, game: int) -> int:
    """Seed of game ``game`` of a tournament seeded ``seed`` (the same in every pairing)."""
    return seed + game


def play_crn(
    rules: Any,
    policies: Sequence[Any],
    seed: int,
    *,
    on_step: Callable[[Any, int, tuple], None] | None = None,
    stochastic: list[bool] | None = None,
) -> Any:
    """Play one game from the common random numbers of ``seed``; returns the terminal state.

    Chance draws use a fresh generator seeded ``(seed, 0, k)`` in the ``k``-th Psychic phase
    (counted from the standard ``"phase"`` events); a stochastic agent in seat ``p`` draws its
    actions from a generator seeded ``(seed, 1 + p)``. So the dice of phase ``k`` are the same in
    every pairing as far as the games consume them alike, and no agent's choices move the dice.
    ``stochastic[p]`` is set when seat ``p``'s agent gave more than one action a probability.
    """
    phase = 0
    chance_rng = np.random.default_rng((seed, 0, phase))
    action_rngs = [np.random.default_rng((seed, 1 + p)) for p in range(len(policies))]
    s = rules.initial_state()
    while True:
        player = rules.current_player(s)
        if player == TERMINAL:
            return s
        if player == CHANCE:
            a = rules.sample_chance(s, chance_rng)
        else:
            probs = policies[player].action_probabilities(rules, s, player)
            if len(probs) == 1:
                a = int(next(iter(probs)))
            else:
                if stochastic is not None:
                    stochastic[player] = True
                a = _draw(probs, action_rngs[player])
        s2, events = rules.apply_with_events(s, a, check=False)
        if on_step is not None:
            on_step(s, a, events)
        if any(e.kind == "phase" for e in events):
            phase += 1
            chance_rng = np.random.default_rng((seed, 0, phase))
        s = s2


def _draw(probs: dict[int, float], rng: np.random.Generator) -> int:
    """One action from a distribution (the same draw as ``psygym.core.sample_action``)."""
    actions = list(probs)
    weights = np.fromiter((probs[a] for a in actions), dtype=float, count=len(actions))
    idx = int(np.searchsorted(np.cumsum(weights), rng.random() * weights.sum(), side="right"))
    return int(actions[min(idx, len(actions) - 1)])


class _Context:
    """What a worker needs: the rules and the agent specs, policies built once by name."""

    def __init__(self, rules: Any, specs: Sequence[str]):
        self.rules = rules
        self.specs = list(specs)
        self._policies: dict[int, Any] = {}

    def policy(self, index: int) -> Any:
        """The policy of agent ``index`` (built on first use; solver caches are kept)."""
        if index not in self._policies:
            from psygym.policies import resolve_policy

            self._policies[index] = resolve_policy(self.specs[index], self.rules)
            if "torch" in sys.modules:  # one thread per worker process: no oversubscription
                sys.modules["torch"].set_num_threads(1)
        return self._policies[index]


_CTX: _Context | None = None
_CTX_TOKEN = ""


def _init_worker() -> None:
    """Process-pool initialiser: one thread per worker for the numeric libraries."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")


def worker_pool(workers: int) -> Any:
    """A process pool for :func:`evaluate` (``pool=``), reusable across several evaluations.

    Reusing one pool spares each evaluation the start-up of its processes (and their imports,
    e.g. torch for PPO agents). Close it with ``shutdown()`` (or use it in a ``with`` block).
    """
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(max_workers=workers, initializer=_init_worker)


def _run_remote(token: str, rules: Any, specs: Sequence[str], task: tuple) -> tuple[tuple, Any]:
    """Run a task in a pool worker; the worker keeps the context of the latest evaluation."""
    global _CTX, _CTX_TOKEN
    if _CTX is None or token != _CTX_TOKEN:
        _CTX, _CTX_TOKEN = _Context(rules, specs), token
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
        policies = [ctx.policy(i), ctx.policy(j)]
        stats = GameStats()

        def on_step(_s: Any, _a: int, events: tuple) -> None:
            for e in events:
                stats.add_event(e)

        scores = []
        stochastic = [False, False]
        for g in range(start, stop):
            end = play_crn(ctx.rules, policies, game_seed(seed, g), on_step=on_step,
                           stochastic=stochastic)  # fmt: skip
            scores.append(float(ctx.rules.returns(end)[0]))
            stats.games += 1
        stats.scores = scores
        return task, (stats, stochastic)
    try:
        from psygym_agents.solvers import NotSolvable
        from psygym_agents.solvers.evaluate import best_response_value, policy_value
        from psygym_agents.solvers.expectiminimax import Solver
    except ImportError as exc:
        return task, ("absent", f"the exact solver is not installed ({exc})")
    rules, max_states = ctx.rules, task[-1]
    try:
        if kind == "value":
            solver = Solver(rules, max_states=max_states)
            value = float(solver.value(rules.initial_state()))
            if not getattr(solver, "exact", True):
                return task, ("unsolvable", "the solver could only search part of the game")
            return task, ("ok", value)
        if kind == "exact":
            _, i, j, _ = task
            pols = [ctx.policy(i), ctx.policy(j)]
            return task, ("ok", float(policy_value(rules, pols, max_states=max_states)))
        _, i, seat, _ = task
        value = best_response_value(rules, ctx.policy(i), seat, max_states=max_states)
        return task, ("ok", float(value))
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


def pairings(n: int, *, self_play: bool = False) -> list[tuple[int, int]]:
    """Seat orders of a round-robin over ``n`` agents: both seats of every pair, in a fixed order.

    With ``self_play`` each agent also meets itself (once: both seats are the same game).
    """
    out = []
    for i in range(n):
        if self_play:
            out.append((i, i))
        for j in range(i + 1, n):
            out += [(i, j), (j, i)]
    return out


class _Runner:
    """Runs batches of tasks in this process (``workers=1``) or in a process pool.

    The pool is ``pool`` when given (left open), else one made here for ``workers`` processes.
    Every task carries the rules and agent specs, so workers rebuild the agents by name.
    """

    def __init__(
        self, rules: Any, specs: Sequence[str], workers: int, advance: Any, pool: Any = None
    ):
        import uuid

        self.rules, self.specs, self.workers, self.advance = rules, list(specs), workers, advance
        self.pool, self._own = pool, False
        self.ctx: _Context | None = None
        self.token = uuid.uuid4().hex

    def __enter__(self) -> _Runner:
        if self.pool is None and self.workers > 1:
            self.pool, self._own = worker_pool(self.workers), True
        elif self.pool is None:
            self.ctx = _Context(self.rules, self.specs)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._own:
            self.pool.shutdown(cancel_futures=True)

    def run(self, tasks: Sequence[tuple], weight: dict[tuple, int]) -> dict[tuple, Any]:
        """Run every task; returns task -> result."""
        out: dict[tuple, Any] = {}
        if self.pool is None:
            for t in tasks:
                out[t] = _run_task(t, self.ctx)[1]
                self.advance(weight.get(t, 1))
            return out
        from concurrent.futures import as_completed

        futures = [
            self.pool.submit(_run_remote, self.token, self.rules, self.specs, t) for t in tasks
        ]
        for fut in as_completed(futures):
            t, res = fut.result()
            out[t] = res
            self.advance(weight.get(t, 1))
        return out


def evaluate(
    rules: Any,
    agent_names: Sequence[str],
    episodes: int,
    seed: int,
    workers: int = 1,
    *,
    labels: Sequence[str] | None = None,
    exact: bool = True,
    exploit: bool | Collection[str] = True,
    stochastic_exact: bool = True,
    max_states: int | None = EXACT_MAX_STATES,
    pilot_states: int | None = PILOT_MAX_STATES,
    game_value: float | None = None,
    solve: bool = True,
    self_play: bool = False,
    show_progress: bool = True,
    info: dict[str, Any] | None = None,
    pool: Any = None,
) -> list[PairResult]:
    """Round-robin over every pair of agents in both seats, with common random numbers.

    Exact values are computed after the games, in the same worker pool:

    - the game is solved first (unless ``game_value`` is given; ``max_states`` caps the search,
      hidden-information editions are never solvable);
    - when it is solved, every pairing gets its exact score (``policy_value``) and every agent its
      best responses and exploitability;
    - when it is not, only pairings of agents that never chose at random in the games get exact
      scores, provided a first such pairing needs at most ``pilot_states`` states (a game too big
      to solve is usually too big for any pair of policies too, and this finds out fast).

    Args:
        rules: the rules of the scenario (``psygym.editions.load(...)``).
        agent_names: agent specs (names, ``tuned:...json``, ``...zip``, ``caster+denier``).
        episodes: games per pairing and seat.
        seed: game ``i`` of every pairing uses seed ``seed + i``.
        workers: processes to play in (``1``: this process). Results do not depend on it.
        labels: names to show instead of the specs (repeats get ``#2``...).
        exact: compute each pairing's exact expected score where the solver can.
        exploit: compute best responses and exploitability where the solver can, for every
            agent (``True``), none (``False``) or the agents with these labels.
        stochastic_exact: when the game is solved, also compute exact scores of pairings with an
            agent that chose at random (its choices make the tree as big as the game's).
        max_states: the solver's state limit (beyond it the game counts as unsolvable).
        pilot_states: the state limit of pairings' exact scores when the game is not solved.
        game_value: the game's exact value if already known (skips solving the game).
        solve: try to solve the whole game (``False``: it is known to be too big; only
            deterministic pairings may get exact scores).
        self_play: also pair each agent with itself.
        show_progress: draw a progress bar on stderr.
        info: a dict to fill with ``game_value``, ``value_note``, ``exploitability`` (label ->
            value or ``None``), ``best_response`` (label -> [seat-0 score when a best response
            meets the agent in seat 0, the same with the agent in seat 1]), ``stochastic``
            (labels of agents that chose at random) and ``notes`` (plain sentences about what
            could not be computed).
        pool: a process pool from :func:`worker_pool` to run in (then ``workers`` only sizes
            the work chunks); ``None``: a pool of ``workers`` processes made for this call.

    Returns:
        One :class:`PairResult` per pairing and seat, in :func:`pairings` order.

    Raises:
        ValueError: no agents, fewer than one episode, or an unknown agent name.
    """
    from psygym.policies import resolve_policy

    specs = list(agent_names)
    if not specs:
        raise ValueError("evaluate needs at least one agent")
    if episodes < 1:
        raise ValueError(f"episodes must be at least 1, got {episodes}")
    names = unique_labels(specs, labels)
    for spec in specs:  # fail early with the clear error, before any process starts
        resolve_policy(spec, rules)
    order = pairings(len(specs), self_play=self_play or len(specs) == 1)
    chunks = _chunks(episodes, workers, len(order))
    games = [("games", i, j, a, b, seed) for i, j in order for a, b in chunks]
    weight = {t: t[4] - t[3] for t in games}
    value_task = ("value", max_states)
    if exploit is True:
        br_agents = list(range(len(specs)))
    elif exploit:
        br_agents = [i for i, n in enumerate(names) if n in set(exploit)]
    else:
        br_agents = []
    need_value = (exact or bool(br_agents)) and game_value is None and solve
    n_exact = (len(order) if exact else 0) + 2 * len(br_agents)
    total = episodes * len(order) + int(need_value) + n_exact

    notes: set[str] = set()
    results: dict[tuple, Any] = {}
    with (
        _Progress(total, "evaluating", show_progress) as advance,
        _Runner(rules, specs, workers, advance, pool) as runner,
    ):
        results.update(runner.run(games + ([value_task] if need_value else []), weight))
        done = episodes * len(order) + int(need_value)
        if game_value is not None:
            results[value_task] = ("ok", float(game_value))
        value = results.get(value_task, ("skipped", "not attempted"))
        solved = value[0] == "ok"
        if (exact or br_agents) and value[0] not in ("ok", "skipped"):
            notes.add(f"the game is not solved: {value[1]}")
        stochastic = [False] * len(specs)
        for t in games:
            _, flags = results[t]
            stochastic[t[1]] |= flags[0]
            stochastic[t[2]] |= flags[1]
        later: list[tuple] = []
        plain = [(i, j) for i, j in order if not stochastic[i] and not stochastic[j]]
        random_names = ", ".join(n for n, st in zip(names, stochastic) if st)
        if exact and solved:
            todo = order if stochastic_exact else plain
            later += [("exact", i, j, max_states) for i, j in todo]
            if len(todo) < len(order):
                notes.add(f"no exact scores for pairings with agents that choose at random "
                          f"({random_names}): left out to keep the solving time down")  # fmt: skip
        elif exact:
            if plain:
                pilot = ("exact", *plain[0], pilot_states)
                results.update(runner.run([pilot], {}))
                done += 1
                if results[pilot][0] == "ok":
                    later += [("exact", i, j, pilot_states) for i, j in plain[1:]]
                else:
                    notes.add(f"no exact scores: {results[pilot][1]}")
            if len(plain) < len(order):
                notes.add(f"no exact scores for pairings with agents that choose at random "
                          f"({random_names}) when the whole game is not solved")  # fmt: skip
        if solved:
            later += [("br", i, seat, max_states) for i in br_agents for seat in (0, 1)]
        results.update(runner.run(later, {}))
        advance(total - done - len(later))

    out = []
    for i, j in order:
        stats = GameStats()
        scores: list[float] = []
        for a, b in chunks:
            part: GameStats = results[("games", i, j, a, b, seed)][0]
            scores += part.scores
            stats.games += part.games
            for attr in ("attempts", "perils", "manifests", "dice", "deny_attempts", "denied"):
                for p in (0, 1):
                    getattr(stats, attr)[p] += getattr(part, attr)[p]
        stats.scores = scores
        exact_value = None
        res = results.get(("exact", i, j, max_states)) or results.get(("exact", i, j, pilot_states))
        if res is not None:
            if res[0] == "ok":
                exact_value = res[1]
            elif not any(n.startswith("no exact scores: ") for n in notes):
                notes.add(f"some exact scores not computed: {res[1]}")
        out.append(
            PairResult.from_games(
                names[i], names[j], np.asarray(scores, dtype=float), stats,
                index0=i, index1=j, exact=exact_value,
            )
        )  # fmt: skip
    expl: dict[str, float | None] = {}
    best: dict[str, list[float | None]] = {}
    if br_agents:
        for i, name in enumerate(names):
            b = [results.get(("br", i, seat, max_states)) for seat in (0, 1)]
            best[name] = [r[1] if r is not None and r[0] == "ok" else None for r in b]
            b0, b1 = best[name]
            # ((v - b0) + (b1 - v)) / 2, as psygym_agents.solvers.evaluate.exploitability defines it.
            expl[name] = None if b0 is None or b1 is None else (b1 - b0) / 2
            for r in b:
                if r is not None and r[0] != "ok":
                    notes.add(f"some best responses not computed: {r[1]}")
    if info is not None:
        info["game_value"] = value[1] if solved else None
        info["value_note"] = "" if solved else str(value[1])
        info["exploitability"] = expl
        info["best_response"] = best
        info["stochastic"] = [n for n, st in zip(names, stochastic) if st]
        info["notes"] = sorted(notes)
    return out


class _Progress:
    """A rich progress bar on stderr with a total, advanced by task weight."""

    def __init__(self, total: int, description: str, enabled: bool):
        self.total, self.description, self.enabled = total, description, enabled
        self._bar: Any = None

    def __enter__(self) -> Callable[[int], None]:
        if not self.enabled:
            return lambda _n: None
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=err_console,
            transient=True,
        )
        self._bar.__enter__()
        task = self._bar.add_task(self.description, total=self.total)
        return lambda n: self._bar.advance(task, n)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc)


def run_evaluation(
    rules: Any,
    agent_names: Sequence[str],
    episodes: int,
    seed: int,
    workers: int = 1,
    **kwargs: Any,
) -> Evaluation:
    """:func:`evaluate` with its extra information gathered in an :class:`Evaluation`."""
    info: dict[str, Any] = {}
    labels = kwargs.pop("labels", None)
    pairs = evaluate(
        rules, agent_names, episodes, seed, workers, labels=labels, info=info, **kwargs
    )
    return Evaluation(
        edition=rules.edition,
        scenario=getattr(rules.scenario, "name", "?"),
        agents=unique_labels(agent_names, labels),
        specs=list(agent_names),
        episodes=episodes,
        seed=seed,
        pairs=pairs,
        game_value=info.get("game_value"),
        value_note=info.get("value_note", ""),
        exploitability=info.get("exploitability", {}),
        best_response=info.get("best_response", {}),
        notes=info.get("notes", []),
    )


# ----------------------------------------------------------------------------- output
def run_folder(runs_dir: str | Path, prefix: str) -> Path:
    """Create ``runs_dir/<prefix>-<timestamp>`` (``-2``, ``-3``... if it exists already)."""
    base = Path(runs_dir)
    base.mkdir(parents=True, exist_ok=True)
    stem = f"{prefix}-{timestamp()}"
    path, n = base / stem, 1
    while path.exists():
        n += 1
        path = base / f"{stem}-{n}"
    path.mkdir()
    return path


def write_evaluation(ev: Evaluation, run_dir: Path, config: dict[str, Any]) -> None:
    """Write ``results.csv``, ``results.json``, ``config.json`` and ``command.txt``."""
    (run_dir / "results.csv").write_text(csv_text(ev.pairs))
    (run_dir / "results.json").write_text(
        json.dumps(ev.to_json(), indent=2, default=json_default) + "\n"
    )
    (run_dir / "config.json").write_text(
        json.dumps(clean_json(config), indent=2, default=json_default) + "\n"
    )
    write_command(run_dir)


def fmt_rate(x: float) -> str:
    """A rate as a percentage, ``-`` when there was nothing to count."""
    return "-" if x is None or not math.isfinite(x) else f"{x:.1%}"


def fmt_num(x: float | None, digits: int = 2) -> str:
    """A number with a sign, ``-`` when missing."""
    return "-" if x is None or not math.isfinite(x) else f"{x:+.{digits}f}"


def pairs_table(ev: Evaluation) -> Any:
    """A rich table of the pairings."""
    from rich.table import Table

    t = Table(
        title=f"{ev.edition} {ev.scenario}: {ev.episodes} games per pairing and seat, "
        f"seed {ev.seed} (score of seat 0, 95% CI)"
    )
    for c in (
        "seat 0",
        "seat 1",
        "score",
        "± 95%",
        "exact",
        "W/D/L",
        "perils 0",
        "perils 1",
        "dice/manifest 0",
        "dice/manifest 1",
        "deny 0",
        "deny 1",
    ):
        t.add_column(c, justify="left" if c.startswith("seat") else "right")
    for p in ev.pairs:
        dpm0 = "-" if not math.isfinite(p.dice_per_manifest0) else f"{p.dice_per_manifest0:.2f}"
        dpm1 = "-" if not math.isfinite(p.dice_per_manifest1) else f"{p.dice_per_manifest1:.2f}"
        t.add_row(
            p.agent0,
            p.agent1,
            fmt_num(p.mean_score, 3),
            f"{p.ci95:.3f}",
            fmt_num(p.exact_score, 3),
            f"{p.wins}/{p.draws}/{p.losses}",
            fmt_rate(p.perils_rate0),
            fmt_rate(p.perils_rate1),
            dpm0,
            dpm1,
            fmt_rate(p.deny_rate0),
            fmt_rate(p.deny_rate1),
        )
    return t


def evaluate_command(
    edition: str = typer.Option("7th", help="Edition: 7th, 8th, 2nd or rt."),
    scenario: str = typer.Option("default", help="Shipped scenario name or TOML path."),
    agents: str = typer.Option(
        "double-wc,all-in,minimum,random", help="Comma-separated agents (names or paths)."
    ),
    episodes: int = typer.Option(1000, min=1, help="Games per pairing and seat."),
    seed: int = typer.Option(0, help="Base seed: game i of every pairing uses seed + i."),
    workers: int = typer.Option(1, min=1, help="Processes to play in (results do not change)."),
    runs_dir: str = typer.Option("runs", help="Folder for the run folder evaluate-<time>/."),
    fmt: str = typer.Option("table", "--format", help="Output: table, csv or json."),
    exact: bool = typer.Option(
        True, "--exact/--no-exact", help="Exact scores and exploitability where solvable."
    ),
    max_states: int = typer.Option(
        EXACT_MAX_STATES, min=1, help="Solver state limit: bigger games get no exact values."
    ),
    self_play: bool = typer.Option(False, "--self-play", help="Also pair each agent with itself."),
) -> None:
    """Round-robin between agents in both seats (common random numbers), with exact values."""
    from psygym.editions import load

    with user_errors():
        check_choice(fmt, ("table", "csv", "json"), "--format")
        rules = load(edition, scenario)
        names = split_names(agents)
        if not names:
            raise ValueError("--agents needs at least one agent name")
        start = time.perf_counter()
        ev = run_evaluation(
            rules, names, episodes, seed, workers, exact=exact, exploit=exact,
            max_states=max_states, self_play=self_play,
        )  # fmt: skip
    run_dir = run_folder(runs_dir, "evaluate")
    config = {
        "edition": rules.edition,
        "scenario": ev.scenario,
        "psygym_agents": names,
        "episodes": episodes,
        "seed": seed,
        "workers": workers,
        "exact": exact,
        "max_states": max_states,
        "self_play": self_play,
        "game_seeds": f"{seed}..{seed + episodes - 1}",
        "seconds": round(time.perf_counter() - start, 2),
    }
    write_evaluation(ev, run_dir, config)
    if fmt == "csv":
        typer.echo(csv_text(ev.pairs), nl=False)
    elif fmt == "json":
        typer.echo(json.dumps(ev.to_json(), indent=2, default=json_default))
    else:
        console.print(pairs_table(ev))
        if ev.game_value is not None:
            console.print(
                f"  exact value of the game for seat 0 (both optimal): {ev.game_value:+.3f}",
                highlight=False,
            )
        if ev.exploitability:
            for name, value in ev.exploitability.items():
                console.print(f"  exploitability of {name}: {fmt_num(value, 3)}", highlight=False)
        for note in ev.notes:
            console.print(f"  note: {note}", highlight=False)
    err_console.print(f"results written to {run_dir}", highlight=False)


def register(app: typer.Typer) -> None:
    """Add the ``evaluate`` command."""
    app.command("evaluate")(evaluate_command)


__all__ = [
    "CSV_COLUMNS", "PairResult", "Evaluation", "evaluate", "run_evaluation", "play_crn",
    "game_seed", "pairings", "csv_text", "write_evaluation", "run_folder", "register",
]  # fmt: skip
