"""``psygym bench``: speed of every psygym env (and of the exact solver) as ratios to references.

Env mode: every env takes uniformly random legal actions (from ``info["action_mask"]``) in the
same process as Gymnasium's ``Blackjack-v1``, which takes uniformly random actions. Each round
times the reference and then every env for the same number of steps, in CPU time
(``time.process_time``), so a burst of load from other processes hits all of them alike; the
ratio reported is the median over rounds of ``env steps/s / Blackjack steps/s`` in that round,
with the lowest and highest round.

Solver mode (``--solver``): states per CPU-second of the exact expectiminimax solver on the
default edition's first solvable scenario, against a fixed pure-Python reference measured in the
same run: a dict-memoised expectimax over a small synthetic dice game (:func:`reference_solve`),
which does comparable work per state (list the children, look each up in the memo, recurse,
combine). No edition is named here: the scenario comes from the edition declarations.
"""

from __future__ import annotations

import csv
import io
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import typer
from psygym_experiments.common import check_choice, console, user_errors

REFERENCE_ENV = "Blackjack-v1"


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
    subjects: list[tuple[str, Callable[[], float]]], work: int, rounds: int
) -> list[Rates]:
    """Time each subject once per round, reference (the first) first; ratios per round.

    Each callable does ``work`` units (steps or states) and returns the CPU seconds it took.
    """
    out = [Rates(name) for name, _ in subjects]
    for _ in range(rounds):
        rates = [work / run() for _, run in subjects]
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

    def solve() -> tuple[int, float]:
        solver = Solver(rules, max_states=max_states)
        start = time.process_time()
        try:
            solver.value()
        except NotSolvable:
            pass
        return solver.states, max(time.process_time() - start, 1e-9)

    states, _ = solve()  # also warms up the rules' caches, as the reference's first run is
    reference_solve(states)

    def run_solver() -> float:
        return solve()[1]

    def run_reference() -> float:
        start = time.process_time()
        reference_solve(states)
        return max(time.process_time() - start, 1e-9)

    name = f"expectiminimax ({edition.title}, {scenario})"
    return name, [("reference expectimax", run_reference), (name, run_solver)], states


def bench(
    steps: int = typer.Option(20000, min=100, help="Steps per env (split over the rounds)."),
    rounds: int = typer.Option(5, min=1, help="Interleaved rounds; the median ratio is shown."),
    seed: int = typer.Option(0, min=0, help="Random seed."),
    fmt: str = typer.Option("table", "--format", help="table or csv."),
    solver: bool = typer.Option(
        False, "--solver", help="Time the exact solver (states/s) instead of the envs."
    ),
    max_states: int | None = typer.Option(
        None, min=100, help="--solver: stop the solve after this many states (default: solve)."
    ),
) -> None:
    """Env steps/s as ratios to Blackjack-v1 (median over rounds, CPU time), or --solver."""
    with user_errors():
        check_choice(fmt, ("table", "csv"), "--format")
        if solver:
            title, subjects, work = _solver_subjects(max_states)
        else:
            title, subjects, work = (
                "env",
                _env_subjects(steps, rounds, seed),
                max(1, steps // rounds),
            )
    results = interleaved(subjects, work, rounds)
    unit = "states/s" if solver else "steps/s"
    ref_name = results[0].name
    if fmt == "csv":
        head = "solver" if solver else "env"
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
        f"{title if solver else 'env':<{width}}{unit:>12}{'ratio to ' + ref_name:>32}{'range':>18}",
        highlight=False,
    )
    for r in results:
        span = f"{min(r.ratios):.3f}-{max(r.ratios):.3f}"
        console.print(
            f"{r.name:<{width}}{r.rate:>12.0f}{r.ratio:>32.4f}{span:>18}", highlight=False
        )
    console.print(
        f"median of {rounds} interleaved rounds of {work} {unit.split('/')[0]} each, CPU time",
        highlight=False,
    )


def _slug(name: str) -> str:
    return "blackjack" if name == REFERENCE_ENV else name.split()[0]


def _env_subjects(steps: int, rounds: int, seed: int) -> list[tuple[str, Callable[[], float]]]:
    """(reference, every registered psygym env) timers for :func:`interleaved`."""
    import gymnasium as gym

    import psygym

    per_round = max(1, steps // rounds)
    subjects: list[tuple[str, Callable[[], float]]] = []
    ref = _Stepper(gym.make(REFERENCE_ENV), seed, masked=False)
    subjects.append((REFERENCE_ENV, lambda: ref.run(per_round)))
    for env_id in psygym.env_ids().values():
        if env_id in gym.registry:
            stepper = _Stepper(gym.make(env_id, opponent="random"), seed, masked=True)
            subjects.append((env_id, lambda s=stepper: s.run(per_round)))
    return subjects


def register(app: typer.Typer) -> None:
    """Add the ``bench`` command."""
    app.command("bench")(bench)
