"""``psygym bench``: speed of every psygym env (and of the exact solver) as ratios to references.

Env mode: every env takes uniformly random legal actions (from ``info["action_mask"]``) in the
same process as Gymnasium's ``Blackjack-v1``, which takes uniformly random actions. Each round
times the reference and then every env for the same number of steps, in CPU time
(``time.process_time``), so a burst of load from other processes hits all of them alike; the
ratio reported is the median over rounds of ``env steps/s / Blackjack steps/s`` in that round,
with the lowest and highest round. Every edition with a compiled twin also gets a line for its
batched env (:mod:`psygym.engine.vector`, ``BATCH`` games stepped per call into the core, each
call counted as ``BATCH`` steps, the uniformly random legal actions drawn by the env's own
``sample_legal()``, the batch's ``action_space.sample(mask=...)``) on its default scenario,
and an env the compiled core steps (:mod:`psygym.engine.episode`) also a line
``<env> reference``: the same env on the pure-Python reference (``engine="python"``), the speed
before the core. One untimed warm-up round of every subject comes first (the steady state a
long run sees, as benchmark tools do), and each timing
starts after a garbage collection that is not timed.

Solver mode (``--solver``): states per CPU-second of the exact expectiminimax solver on the
default edition's first solvable scenario, against a fixed pure-Python reference measured in the
same run: a dict-memoised expectimax over a small synthetic dice game (:func:`reference_solve`),
which does comparable work per state (list the children, look each up in the memo, recurse,
combine). No edition is named here: the scenario comes from the edition declarations. The
solver is timed on the Python reference engine and, where the edition has a compiled twin, on
the compiled engine (:mod:`psygym.engine`), each over the same states.

Agents mode (``--agents``): CPU seconds per decision of the ``search`` agent on the default
scenario (the duel) of every edition whose players see the whole board, and of ``optimal`` on
every scenario an edition declares solvable whole. Each plays ``--games`` seeded games against
the edition's reference heuristic, half in each seat (common random numbers,
:func:`psygym_experiments.harness.games.play_crn`); every decision of the agent is timed with
``time.process_time``. The table gives the median, 90th percentile and maximum, the largest
number of states one decision searched, and whether any decision hit a state limit (``optimal``
giving up exact play) - it must not. The median is also given as a ratio to the reference
expectimax of ``--solver`` solving :data:`AGENT_REFERENCE_STATES` states, timed in the same run
(the median of one timing before each subject).

``--all`` runs the env, solver and agents benches one after the other in one run.
"""

from __future__ import annotations

import csv
import io
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import typer
from psygym_experiments.common import check_choice, console, err_console, user_errors

REFERENCE_ENV = "Blackjack-v1"
AGENT_GAMES = 4
"""Games per subject of ``--agents`` (half in each seat)."""
AGENT_REFERENCE_STATES = 20_000
"""States the reference expectimax solves for ``--agents``' ratio (a few hundredths of a second)."""


@dataclass
class Rates:
    """Steps (or states) per CPU-second of one subject, and its ratio to the reference, by round."""

    name: str
    rates: list[float] = field(default_factory=list)
    ratios: list[float] = field(default_factory=list)

    @property
    def rate(self) -> float:
        """Median rate over rounds."""
        return statistics.median(self.rates)

    @property
    def ratio(self) -> float:
        """Median ratio to the reference over rounds."""
        return statistics.median(self.ratios)


class _Stepper:
    """Random-action steps of one env, continuing across rounds (resetting as episodes end)."""

    def __init__(self, env, seed: int, masked: bool):
        self.env = env
        self.masked = masked
        self.rng = np.random.default_rng(seed)
        self.n = int(env.action_space.n)
        _, info = env.reset(seed=seed)
        self.mask = info.get("action_mask") if masked else None

    def run(self, steps: int) -> float:
        """CPU seconds taken by ``steps`` steps."""
        env, rng, n = self.env, self.rng, self.n
        mask = self.mask
        start = time.process_time()
        for _ in range(steps):
            if self.masked:
                legal = np.flatnonzero(mask)
                action = int(legal[rng.integers(len(legal))])
            else:
                action = int(rng.integers(n))
            _, _, terminated, truncated, info = env.step(action)
            if terminated or truncated:
                _, info = env.reset()
            if self.masked:
                mask = info["action_mask"]
        self.mask = mask
        return max(time.process_time() - start, 1e-9)


def interleaved(
    subjects: list[tuple[str, Callable[[], float]]], work: int, rounds: int, warmup: int = 1
) -> list[Rates]:
    """Time each subject once per round, reference (the first) first; ratios per round.

    Each callable does ``work`` units (steps or states) and returns the CPU seconds it took.
    ``warmup`` untimed rounds come first (imports, first-time caches: the steady state is what
    a long training run sees). Every timing starts after a full garbage collection (not timed),
    so no subject pays for the garbage another one left; the collector stays on while it runs,
    as in real use.
    """
    import gc

    def timed(run: Callable[[], float]) -> float:
        gc.collect()
        return run()

    for _ in range(warmup):
        for _, run in subjects:
            run()
    out = [Rates(name) for name, _ in subjects]
    for _ in range(rounds):
        rates = [work / timed(run) for _, run in subjects]
        for r, rate in zip(out, rates):
            r.rates.append(rate)
            r.ratios.append(rate / rates[0])
    return out


# ----------------------------------------------------------------------------- solver reference
class _Budget(Exception):
    """The reference search memoised its budget of states."""


def reference_solve(budget: int, turns: int = 40, max_rolls: int = 4) -> int:
    """A dict-memoised expectimax over a synthetic dice race; returns the states memoised.

    Two players take ``turns`` turns in all; on a turn the mover rolls a D6 up to ``max_rolls``
    times or banks; a 1 loses the turn's points. Decision states take the best (player 0) or
    worst (player 1) child, chance states the mean of six. The search stops once ``budget``
    states are memoised (the game is far larger than any budget used here), so the reference
    does a fixed amount of work.
    """
    memo: dict[tuple[int, int, int, int, bool], float] = {}
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * turns * (2 * max_rolls + 2) + 1000))

    def value(state: tuple[int, int, int, int, bool]) -> float:
        got = memo.get(state)
        if got is not None:
            return got
        turn, diff, pot, rolls, rolling = state
        if turn >= turns:
            return float(diff)
        sign = 1 if turn % 2 == 0 else -1
        if rolling:
            children = [(turn + 1, diff, 0, 0, False)]
            children += [(turn, diff, pot + face, rolls, False) for face in range(2, 7)]
            v = sum(value(c) for c in children) / 6.0
        else:
            children = [(turn + 1, diff + sign * pot, 0, 0, False)]
            if rolls < max_rolls:
                children.append((turn, diff, pot, rolls + 1, True))
            vals = [value(c) for c in children]
            v = max(vals) if sign > 0 else min(vals)
        memo[state] = v
        if len(memo) >= budget:
            raise _Budget
        return v

    try:
        value((0, 0, 0, 0, False))
    except _Budget:
        pass
    finally:
        sys.setrecursionlimit(limit)
    return len(memo)


def _solver_subjects(
    max_states: int | None,
) -> tuple[str, list[tuple[str, Callable[[], float]]], int]:
    """The scenario solved, the (reference, solver) timers and the states per run."""
    from psygym_agents.solvers import NotSolvable
    from psygym_agents.solvers.expectiminimax import Solver

    from psygym.edition import default
    from psygym.editions import load

    edition = default()
    if not edition.solvable_scenarios:
        raise ValueError(f"the default edition {edition.id} declares no solvable scenario")
    scenario = edition.solvable_scenarios[0]
    rules = load(edition.id, scenario)

    def solve(engine: str | None) -> tuple[int, float]:
        solver = Solver(rules, max_states=max_states, engine=engine)
        start = time.process_time()
        try:
            solver.value()
        except NotSolvable:
            pass
        return solver.states, max(time.process_time() - start, 1e-9)

    states, _ = solve("python")  # also warms up the rules' caches, as the reference's first is
    reference_solve(states)

    def run_reference() -> float:
        start = time.process_time()
        reference_solve(states)
        return max(time.process_time() - start, 1e-9)

    name = f"expectiminimax ({edition.title}, {scenario})"
    subjects = [
        ("reference expectimax", run_reference),
        (f"{name}, python", lambda: solve("python")[1]),
    ]
    if Solver(rules, max_states=max_states).engine == "core":
        if solve(None)[0] != states:
            raise RuntimeError("the compiled solver searched another number of states")
        subjects.append((f"{name}, core", lambda: solve(None)[1]))
    return name, subjects, states


# ----------------------------------------------------------------------------- agents
@dataclass
class DecisionTimes:
    """CPU seconds of every decision of one agent on one scenario.

    Attributes:
        agent: the agent's name (``search``, ``optimal``).
        edition: the edition's id.
        scenario: the scenario's name.
        seconds: CPU seconds of each decision, in play order.
        states: the most states one decision added to the agent's search.
        limit_hit: whether any decision hit a state limit (exact play given up, or a search
            stopped by its state budget).
        games: games played.
        note: what the agent's values are (its ``note``), if it says.
    """

    agent: str
    edition: str
    scenario: str
    seconds: list[float] = field(default_factory=list)
    states: int = 0
    limit_hit: bool = False
    games: int = 0
    note: str = ""

    def quantile(self, q: float) -> float:
        """The ``q`` quantile of :attr:`seconds` (0 without decisions)."""
        return float(np.quantile(self.seconds, q)) if self.seconds else 0.0


class _Timed:
    """A policy wrapper timing every decision (CPU seconds) and the states its search added."""

    def __init__(self, policy: Any, times: DecisionTimes):
        self.policy = policy
        self.times = times
        self.name = getattr(policy, "name", "agent")

    def _searched(self, rules: Any, state: Any) -> Any:
        """The solver the decision at ``state`` uses, when the agent exposes it."""
        solver = getattr(self.policy, "solver", None)
        if callable(solver):
            return solver(rules, state)
        return solver

    def action_probabilities(self, rules: Any, state: Any, player: int) -> dict[int, float]:
        """The wrapped policy's answer, timed."""
        from psygym_agents.solvers import NotSolvable

        start = time.process_time()
        solver = self._searched(rules, state)
        before = getattr(solver, "states", 0)
        try:
            probs = self.policy.action_probabilities(rules, state, player)
        except NotSolvable:
            self.times.limit_hit = True
            raise
        self.times.seconds.append(time.process_time() - start)
        after = getattr(self._searched(rules, state), "states", 0)
        if after is not None and solver is not None:
            self.times.states = max(self.times.states, after - (before or 0))
        if getattr(self.policy, "exact", True) is False and self.times.agent == "optimal":
            self.times.limit_hit = True  # optimal gave up exact play (its state budget)
        return probs

    def restart(self) -> None:
        """A new game starts: restart the wrapped policy, as the game loop would unwrapped."""
        from psygym.core import restart_policies

        restart_policies([self.policy])


def agent_subjects() -> list[tuple[str, Any, Any]]:
    """(agent name, edition, scenario) triples for ``bench --agents``.

    ``search`` on the default scenario of every edition without hidden hands, ``optimal`` on
    every scenario an edition declares solvable whole; found through the edition registry, so
    no edition is named here.
    """
    from psygym.edition import editions

    out: list[tuple[str, Any, Any]] = []
    for ed in editions():
        if ed.hidden_information:
            continue
        out.append(("search", ed, ed.default_scenario))
        out += [("optimal", ed, name) for name in ed.solvable_scenarios]
    return out


def time_agent(agent: str, edition: Any, scenario: str, games: int, seed: int) -> DecisionTimes:
    """Time every decision of ``agent`` over ``games`` seeded games against the reference.

    Half the games are in each seat (games ``2k`` and ``2k + 1`` share their dice). A fresh
    rules object is built, so nothing solved earlier in the process is reused.
    """
    from psygym_experiments.harness.games import game_seed, play_crn

    from psygym.editions import load
    from psygym.policies import reference_policy, resolve_policy

    rules = load(edition.id, scenario)
    times = DecisionTimes(agent, edition.id, str(getattr(rules.scenario, "name", scenario)))
    policy = resolve_policy(agent, rules)
    times.note = str(getattr(policy, "note", ""))
    timed = _Timed(policy, times)
    reference = reference_policy(rules) or resolve_policy("random", rules)
    for g in range(games):
        seat = g % 2
        policies = [timed, reference] if seat == 0 else [reference, timed]
        play_crn(rules, policies, game_seed(seed, g // 2))
        times.games += 1
    return times


def _agent_rows(times: DecisionTimes, reference: float) -> list[str]:
    return [
        times.agent, times.edition, times.scenario, str(times.games), str(len(times.seconds)),
        f"{times.quantile(0.5):.4f}", f"{times.quantile(0.9):.4f}",
        f"{max(times.seconds, default=0.0):.4f}", str(times.states),
        "yes" if times.limit_hit else "no", f"{times.quantile(0.5) / reference:.3f}",
    ]  # fmt: skip


AGENT_COLUMNS = ("agent", "edition", "scenario", "games", "decisions", "median_s", "p90_s",
                 "max_s", "max_states", "state_limit_hit", "median_ratio_to_reference")  # fmt: skip
"""Columns of ``bench --agents`` (CSV header; the table shows the same)."""


def bench_agents(games: int, seed: int, fmt: str) -> list[DecisionTimes]:
    """Time the agents of :func:`agent_subjects` and print the table (or CSV)."""
    subjects = agent_subjects()
    if not subjects:
        raise ValueError("no installed edition has a scenario the search agent can play")

    def run_reference() -> float:
        start = time.process_time()
        reference_solve(AGENT_REFERENCE_STATES)
        return max(time.process_time() - start, 1e-9)

    reference_times = [run_reference()]
    results = []
    for k, (agent, edition, scenario) in enumerate(subjects, 1):
        err_console.print(
            f"bench --agents [{k}/{len(subjects)}]: {agent} on {edition.id} {scenario}, "
            f"{games} games against the reference heuristic",
            highlight=False,
        )
        reference_times.append(run_reference())
        results.append(time_agent(agent, edition, scenario, games, seed))
    reference = statistics.median(reference_times)
    rows = [_agent_rows(r, reference) for r in results]
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(AGENT_COLUMNS)
        writer.writerows(rows)
        typer.echo(out.getvalue(), nl=False)
        return results
    from rich.table import Table

    table = Table(
        title="CPU seconds per decision, against the reference heuristic in both seats",
        box=None, padding=(0, 1), pad_edge=False, header_style="bold underline",
    )  # fmt: skip
    heads = ("agent", "edition", "scenario", "games", "decisions", "median", "90%", "max",
             "states", "limit hit", "median/ref")  # fmt: skip
    for h in heads:
        table.add_column(h, justify="left" if h in ("agent", "edition", "scenario") else "right")
    for row in rows:
        table.add_row(*row)
    console.print(table)
    console.print(
        f"reference: the expectimax of --solver solving {AGENT_REFERENCE_STATES:,} states, "
        f"{reference:.4f} CPU s (median of {len(reference_times)} timings in this run); "
        "states: the most one decision searched; limit hit: a decision hit a state limit.",
        highlight=False,
    )
    for r in results:
        if r.note:
            console.print(f"{r.agent} on {r.edition} {r.scenario}: {r.note}.", highlight=False)
    return results


def bench(
    steps: int = typer.Option(
        20000,
        min=100,
        help="Steps per env, split evenly over the rounds (the remainder is not run); a batched "
        "env steps at least 128 calls of 256 games a round.",
    ),
    rounds: int = typer.Option(
        5, min=1, help="Interleaved rounds (env bench: at most --steps); the median ratio is shown."
    ),
    seed: int = typer.Option(0, min=0, help="Random seed."),
    fmt: str = typer.Option("table", "--format", help="table or csv."),
    solver: bool = typer.Option(
        False, "--solver", help="Time the exact solver (states/s) instead of the envs."
    ),
    max_states: int | None = typer.Option(
        None, min=100, help="--solver: stop the solve after this many states (default: solve)."
    ),
    agents: bool = typer.Option(
        False,
        "--agents",
        help="Time search (every duel) and optimal (solvable scenarios): CPU s per decision.",
    ),
    games: int = typer.Option(
        AGENT_GAMES, min=1, help="--agents: games per agent and scenario (half in each seat)."
    ),
    everything: bool = typer.Option(
        False, "--all", help="The env, --solver and --agents benches in one run (tables)."
    ),
) -> None:
    """Env steps/s as ratios to Blackjack-v1 (median over rounds, CPU time), --solver, --agents."""
    with user_errors():
        check_choice(fmt, ("table", "csv"), "--format")
        if everything and (solver or agents):
            raise ValueError("--all runs every bench; give it without --solver or --agents")
        if everything and fmt == "csv":
            raise ValueError("--all prints tables; --format csv takes one bench at a time")
        if solver and agents:
            raise ValueError("--solver and --agents are separate benches; give one of them")
        if agents:
            bench_agents(games, seed, fmt)
            return
        if solver or everything:
            title, subjects, work = _solver_subjects(max_states)
            solver_run = (title, "states/s", subjects, work)
        if not solver:
            check_rounds(steps, rounds)
            per_round = steps // rounds
            env_run = ("env", "steps/s", _env_subjects(steps, rounds, seed), per_round)
    if everything:
        _print_rates(*env_run, rounds, fmt)
        console.print()
        _print_rates(*solver_run, rounds, fmt)
        console.print()
        with user_errors():
            bench_agents(games, seed, fmt)
        return
    _print_rates(*(solver_run if solver else env_run), rounds, fmt)


def check_rounds(steps: int, rounds: int) -> None:
    """Refuse more env rounds than steps: each round steps every env at least once.

    Raises:
        ValueError: ``rounds > steps`` (one line naming both and the largest ``--rounds``).
    """
    if rounds > steps:
        raise ValueError(
            f"--rounds {rounds} is more than --steps {steps}: the steps are split over the "
            f"rounds and each round needs at least one; give --rounds at most {steps} or more "
            "--steps"
        )


def _print_rates(
    title: str,
    unit: str,
    subjects: list[tuple[str, Callable[[], float]]],
    work: int,
    rounds: int,
    fmt: str,
) -> None:
    """Time ``subjects`` (:func:`interleaved`) and print their table or CSV."""
    results = interleaved(subjects, work, rounds)
    ref_name = results[0].name
    if fmt == "csv":
        head = "env" if title == "env" else "solver"
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(
            [head, unit.replace("/", "_per_"), f"ratio_to_{_slug(ref_name)}", "ratio_min",
             "ratio_max"]
        )  # fmt: skip
        for r in results:
            writer.writerow(
                [r.name, f"{r.rate:.0f}", f"{r.ratio:.4f}", f"{min(r.ratios):.4f}",
                 f"{max(r.ratios):.4f}"]
            )  # fmt: skip
        typer.echo(out.getvalue(), nl=False)
        return
    width = max(26, *(len(r.name) + 2 for r in results))
    console.print(
        f"{title:<{width}}{unit:>12}{'ratio to ' + ref_name:>32}{'range':>18}", highlight=False
    )
    for r in results:
        span = f"{min(r.ratios):.3f}-{max(r.ratios):.3f}"
        console.print(
            f"{r.name:<{width}}{r.rate:>12.0f}{r.ratio:>32.4f}{span:>18}", highlight=False
        )
    console.print(
        f"median of {rounds} interleaved rounds of {work} {unit.split('/')[0]} each after an "
        "untimed warm-up round, CPU time",
        highlight=False,
    )


def _slug(name: str) -> str:
    return "blackjack" if name == REFERENCE_ENV else name.split()[0]


def _env_subjects(steps: int, rounds: int, seed: int) -> list[tuple[str, Callable[[], float]]]:
    """(reference, every registered psygym env) timers for :func:`interleaved`."""
    import gymnasium as gym

    import psygym

    check_rounds(steps, rounds)
    per_round = steps // rounds
    subjects: list[tuple[str, Callable[[], float]]] = []
    ref = _Stepper(gym.make(REFERENCE_ENV), seed, masked=False)
    subjects.append((REFERENCE_ENV, lambda: ref.run(per_round)))
    for env_id in psygym.env_ids().values():
        if env_id in gym.registry:
            env = gym.make(env_id, opponent="random")
            stepper = _Stepper(env, seed, masked=True)
            subjects.append((env_id, lambda s=stepper: s.run(per_round)))
            if env.unwrapped.engine == "core":  # the same env on the reference, for the ratio
                ref_env = gym.make(env_id, opponent="random", engine="python")
                stepper = _Stepper(ref_env, seed, masked=True)
                subjects.append((f"{env_id} reference", lambda s=stepper: s.run(per_round)))
    for name, batch in _batched_envs(seed):
        subjects.append((name, lambda b=batch: b.run(per_round)))
    return subjects


BATCH = 256
"""Games of the batched env's bench line (one call into the core steps them all)."""
BATCH_CALLS = 128
"""Calls a round of the batched env makes at least: a call is ``BATCH`` steps, so the single
envs' 4,000 steps a round would be 16 calls, too few to time a steady state. The first calls
of a round refill the caches the interleaved single envs emptied; on the 7th edition a round of
32 calls measured about a tenth below one of 128, which is a steady state as a training loop,
thousands of calls in a row, sees it."""


class _BatchStepper:
    """Random legal steps of a batched env, ``BATCH`` steps per call.

    The actions are drawn uniformly from the legal ones of every game at once by the env's
    ``sample_legal()`` (in the core, from the env's own seeded generator): the batch's
    counterpart of :class:`_Stepper`'s draw from the mask.

    Args:
        env: a :class:`~psygym.engine.vector.CompiledVectorEnv`.
        seed: seeds the env (its games and its sampler).
    """

    def __init__(self, env, seed: int):
        self.env = env
        env.reset(seed=seed)

    def run(self, steps: int) -> float:
        """CPU seconds of ``steps`` steps, timed over at least ``BATCH_CALLS`` whole calls."""
        env = self.env
        calls = max(-(-steps // env.num_envs), BATCH_CALLS)
        start = time.process_time()
        for _ in range(calls):
            env.step(env.sample_legal())
        elapsed = max(time.process_time() - start, 1e-9)
        return elapsed * steps / (calls * env.num_envs)


def _batched_envs(seed: int) -> list[tuple[str, _BatchStepper]]:
    """The batched env of every edition with a compiled twin, on its default scenario."""
    from psygym.edition import editions
    from psygym.editions import load
    from psygym.engine import compiled_game
    from psygym.engine.vector import CompiledVectorEnv

    out = []
    for edition in editions():
        if edition.engine is None:
            continue
        rules = load(edition.id, "default")
        compiled = compiled_game(rules)
        if compiled is None or not compiled.game.observation_size:
            continue  # no twin here (PSYGYM_ENGINE=python, no core) or no observation yet
        env = CompiledVectorEnv(BATCH, rules=rules)
        out.append((f"{edition.env_id} batched N={BATCH}", _BatchStepper(env, seed)))
    return out


def register(app: typer.Typer) -> None:
    """Add the ``bench`` command."""
    app.command("bench")(bench)
