"""Exact solving with one budget: game values, exact pairing values, best responses.

The budget is one state limit (:data:`MAX_STATES`: a game whose tree memoises more states counts
as unsolvable) and one CPU-time limit (:data:`SOLVE_SECONDS`), enforced by solving in a child
process that the kernel stops (:func:`exact_game_value`). Every function returns or raises the
solver's own ``NotSolvable`` (a ``ValueError``) when the budget does not suffice; hidden-information
editions are never solvable here.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from psygym_experiments.harness.progress import ProgressBar

MAX_STATES = 300_000
"""The solver's state limit: games that memoise more states count as unsolvable."""
PILOT_STATES = MAX_STATES // 6
"""State limit of one trial pairing's exact score when the whole game is not solved (a game
too big to solve is usually too big for any pair of policies, and a sixth finds out fast)."""
SOLVE_SECONDS = 30.0
"""CPU seconds allowed to solve a game before it counts as unsolvable."""


@dataclass
class Solved:
    """What solving a game gave.

    Attributes:
        value: the game's value for seat 0 with both players optimal (``None``: not solved).
        note: why it is not solved.
        states: states the solver memoised (its cost).
    """

    value: float | None
    note: str = ""
    states: int = 0


def solve_value(rules: Any, max_states: int | None = MAX_STATES) -> Solved:
    """Solve the game in this process: its value for seat 0, or why there is none."""
    try:
        from psygym_agents.solvers import NotSolvable
        from psygym_agents.solvers.expectiminimax import Solver
    except ImportError as exc:
        return Solved(None, f"the exact solver is not installed ({exc})")
    try:
        solver = Solver(rules, max_states=max_states)
        value = float(solver.value(rules.initial_state()))
    except NotSolvable as exc:
        return Solved(None, str(exc))
    if not getattr(solver, "exact", True):
        return Solved(None, "the solver could only search part of the game")
    return Solved(value, "", int(getattr(solver, "states", 0)))


def _solve_child(conn: Any, rules: Any, max_states: int | None, cpu_seconds: float,
                 parent: int | None = None) -> None:  # fmt: skip
    from psygym_experiments.harness.lifecycle import die_with_parent

    die_with_parent(parent)  # a killed parent takes its solver child with it
    try:  # the kernel stops this process after cpu_seconds of CPU time (POSIX only)
        import math
        import resource

        limit = max(1, math.ceil(cpu_seconds))
        resource.setrlimit(resource.RLIMIT_CPU, (limit, limit + 5))
    except (ImportError, ValueError, OSError):
        pass
    conn.send(solve_value(rules, max_states))
    conn.close()


def exact_game_value(
    rules: Any, max_states: int | None = MAX_STATES, timeout: float | None = None
) -> Solved:
    """Solve the game: its value for seat 0 with both players optimal, or why there is none.

    Args:
        rules: the scenario's rules.
        max_states: the solver's state limit.
        timeout: CPU seconds allowed: the search runs in a child process that the kernel stops
            after that much CPU time, so a busy machine does not change the outcome (a wall-clock
            limit of ten times as much guards against starvation, and replaces the CPU limit
            where the platform has none); ``None``: no limit, in this process.
    """
    if timeout is None:
        return solve_value(rules, max_states)
    import multiprocessing

    parent, child = multiprocessing.Pipe(duplex=False)
    proc = multiprocessing.Process(
        target=_solve_child, args=(child, rules, max_states, timeout, os.getpid()), daemon=True
    )
    proc.start()
    child.close()
    late = Solved(None, f"the solver did not finish within {timeout:.0f} s of CPU time "
                        f"(limit {max_states} states)")  # fmt: skip
    try:
        if parent.poll(10 * timeout):
            return parent.recv()
        return late
    except EOFError:  # stopped by the CPU limit (or crashed)
        return late
    finally:
        if proc.is_alive():
            proc.terminate()
        proc.join()
        parent.close()


def pairing_value(
    rules: Any, policies: Sequence[Any], max_states: int | None = MAX_STATES
) -> float:
    """Exact expected score of seat 0 when ``policies[0]`` meets ``policies[1]``.

    Raises:
        ImportError: the solvers are not installed.
        psygym_agents.solvers.NotSolvable: too many states, or hidden information.
    """
    from psygym_agents.solvers.evaluate import policy_value

    return float(policy_value(rules, list(policies), max_states=max_states))


def best_response(rules: Any, policy: Any, seat: int, max_states: int | None = MAX_STATES) -> float:
    """Seat-0 score when a best response meets ``policy`` playing ``seat`` (exact).

    Raises:
        ImportError: the solvers are not installed.
        psygym_agents.solvers.NotSolvable: too many states, or hidden information.
    """
    from psygym_agents.solvers.evaluate import best_response_value

    return float(best_response_value(rules, policy, seat, max_states=max_states))


def exploitability(br_seat0: float | None, br_seat1: float | None) -> float | None:
    """Exploitability from the two best-response values of :func:`best_response`.

    ``((v - b0) + (b1 - v)) / 2`` as ``psygym_agents.solvers.evaluate.exploitability`` defines it.
    """
    return None if br_seat0 is None or br_seat1 is None else (br_seat1 - br_seat0) / 2


def seat_averaged_value(
    rules: Any, policy: Any, opponent: Any, seats: Sequence[int],
    max_states: int | None = MAX_STATES,
) -> float:  # fmt: skip
    """Exact expected score of ``policy`` against ``opponent``, averaged over ``seats``.

    Raises:
        ImportError: the solvers are not installed.
        psygym_agents.solvers.NotSolvable: the game is too large or has hidden information.
    """
    values = []
    for seat in seats:
        players = [policy, opponent] if seat == 0 else [opponent, policy]
        v = pairing_value(rules, players, max_states)
        values.append(v if seat == 0 else -v)
    return float(sum(values) / len(values))


def solve_scenario(
    rules: Any,
    *,
    max_depth: int | None = None,
    max_plies: int | None = None,
    max_states: int | None = MAX_STATES,
    fallback: bool = True,
    show_progress: bool = False,
) -> dict[str, Any]:
    """Solve ``rules`` from its initial state, falling back to a one-phase search if too big.

    Returns:
        ``{"value", "states", "exact", "seconds", "max_depth", "max_plies", "note"}``.

    Raises:
        NotSolvable: hidden information, or too many states even for the fallback search.
    """
    from psygym_agents.solvers import NotSolvable, require_perfect_information
    from psygym_agents.solvers.expectiminimax import Solver

    require_perfect_information(rules)
    note = ""

    def run(depth: int | None, plies: int | None = max_plies) -> dict[str, Any]:
        start = time.perf_counter()
        what = "exact" if depth is None else f"depth {depth}"
        with ProgressBar(f"solving ({what})", enabled=show_progress) as bar:
            solver = Solver(
                rules,
                max_depth=depth,
                max_plies=plies,
                max_states=max_states,
                on_progress=lambda states: bar.update(completed=states),
            )
            value = solver.value()
        return {
            "value": value,
            "states": solver.states,
            "exact": solver.exact,
            "seconds": time.perf_counter() - start,
            "max_depth": depth,
            "max_plies": plies,
        }

    try:
        result = run(max_depth)
    except NotSolvable:
        if max_depth is not None or max_plies is not None or not fallback:
            raise
        if not _has_later_phases(rules):
            raise NotSolvable(
                f"more than {max_states:,} states: out of reach for an exact solve (raise "
                "--max-states, or give --max-plies for a depth-limited value)"
            ) from None
        note = (
            f"more than {max_states:,} states for an exact solve; fell back to a "
            "depth-limited search of 1 Psychic phase"
        )
        try:
            result = run(1)
        except NotSolvable:
            raise NotSolvable(
                f"more than {max_states:,} states even for a search of 1 Psychic phase: out of "
                "reach (raise --max-states or solve a smaller scenario)"
            ) from None
    result["note"] = note
    return result


def _has_later_phases(rules: Any, games: int = 3) -> bool:
    """Whether random playouts start a second Psychic phase (an :attr:`EventKind.PHASE` event).

    Without one, a search limited to one Psychic phase is the exact search again.
    """
    import numpy as np
    from psygym_agents.base import RandomPolicy

    from psygym.core import EventKind, play_game

    seen = False

    def on_step(_s: Any, _a: int, events: Any) -> None:
        nonlocal seen
        seen = seen or any(e.kind == EventKind.PHASE for e in events)

    rng = np.random.default_rng(0)
    policy = RandomPolicy()
    for _ in range(games):
        play_game(rules, [policy, policy], rng, on_step=on_step)
        if seen:
            return True
    return False
