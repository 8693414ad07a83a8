"""Exact solving with one budget: game values, exact pairing values, best responses.

The budget is one state limit (:data:`MAX_STATES`: a game whose tree memoises more states counts
as unsolvable) and one CPU-time limit (:data:`SOLVE_SECONDS`), enforced by solving in a child
process that the kernel stops (:func:`exact_game_value`). Every function returns or raises the
solver's own ``NotSolvable`` (a ``ValueError``) when the budget does not suffice; hidden-information
editions are never solvable here.

``psygym solve`` (:func:`solve_scenario`) states its own budget before it starts
(:class:`SolveBudget`: states, and the memory of the whole process), and :class:`SolveWatch`
shows the search as it goes: states, their rate, the memory in use and an early estimate of the
states the search needs.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from psygym_experiments.harness.progress import LineClock, ProgressBar

from psygym.text import plural

GB = 1e9
"""Bytes in a gigabyte (memory is stated in decimal GB)."""


def memory_text(n: float) -> str:
    """Bytes as text: ``"2.4 GB"``, ``"46 MB"``, ``"40 kB"``."""
    if n < 0.95e6:
        return f"{n / 1e3:.0f} kB"
    return f"{n / GB:.1f} GB" if n >= 0.95 * GB else f"{n / 1e6:.0f} MB"

MAX_STATES = 300_000
"""The solver's state limit: games that memoise more states count as unsolvable."""
PILOT_STATES = MAX_STATES // 6
"""State limit of one trial pairing's exact score when the whole game is not solved (a game
too big to solve is usually too big for any pair of policies, and a sixth finds out fast)."""
SOLVE_SECONDS = 30.0
"""CPU seconds allowed to solve a game before it counts as unsolvable."""
CORE_BYTES_PER_STATE = 150
"""The same in the compiled solver (:mod:`psygym.engine`): the state's bytes (24 to about 100),
its value and the table's slots, with the arena's spare capacity."""
MOST_MEMORY_GB = 1024.0
"""The largest ``--max-memory`` of ``psygym solve``."""
MOST_STATES = int(MOST_MEMORY_GB * GB) // CORE_BYTES_PER_STATE
"""The largest ``--max-states`` of any command: the states ``psygym solve``'s largest
``--max-memory`` could hold, at the fewest bytes a state takes (the compiled solver's). A larger
budget could never be reached, and the compiled solver takes the limit as a 64-bit integer."""


def check_max_states(value: int | None) -> int | None:
    """Callback of every ``--max-states`` option: at most :data:`MOST_STATES`.

    Raises:
        typer.BadParameter: more (the command line then ends in one line naming the range).
    """
    import typer

    if value is not None and value > MOST_STATES:
        raise typer.BadParameter(
            f"{value} is out of range: allowed 1 to {MOST_STATES:,} (the states {MOST_MEMORY_GB:g} "
            f"GB, psygym solve's largest --max-memory, holds at {CORE_BYTES_PER_STATE} bytes a "
            "state)"
        )
    return value


BYTES_PER_STATE = 800
"""Memory one memoised state takes, about: 400 to 750 bytes measured on the shipped scenarios of
every perfect-information edition (a state object and its value in the memo), up to 1,100 at
the start of a search. Only the budget line's estimate uses it; the memory budget is checked
against the memory really in use."""
FIRST_LINE_SECONDS = 2.0
"""Seconds before the first progress line where the error stream is not a terminal (no bar)."""
LINE_SECONDS = 10.0
"""Seconds between two such progress lines."""


@dataclass
class Solved:
    """What solving a game gave.

    Attributes:
        value: the game's value for seat 0 with both players optimal (``None``: not solved).
        note: why it is not solved.
        states: states the solver memoised (its cost).
        memo: the file the solve's memo was written to (:func:`adopt_memo`), or ``""``.
    """

    value: float | None
    note: str = ""
    states: int = 0
    memo: str = ""


def solve_value(rules: Any, max_states: int | None = MAX_STATES, memo: str = "") -> Solved:
    """Solve the game in this process: its value for seat 0, or why there is none.

    ``memo``: a file to write the solved memo to where the search ran in Python (see
    :func:`adopt_memo`); the compiled solver's memo stays in the core, and is not written.
    """
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
    written = ""
    if memo and getattr(solver, "engine", "") == "python" and solver.cache.values:
        import pickle

        with open(memo, "wb") as f:
            pickle.dump((_memo_key(rules, max_states), solver.cache), f, protocol=5)
        written = memo
    return Solved(value, "", int(getattr(solver, "states", 0)), written)


def _memo_key(rules: Any, max_states: int | None) -> tuple[Any, ...]:
    """What a memo file was solved for: the scenario and the solver's settings."""
    return (rules.edition, str(getattr(rules.scenario, "name", "")), None, None, max_states)


_ADOPTED: dict[str, Any] = {}
"""Memo file -> its memo, read once per process (every policy that adopts it shares it)."""


def adopt_memo(policy: Any, rules: Any, path: str) -> Any:
    """``policy`` with the memo a solve of the same game wrote to ``path`` (:func:`solve_value`).

    An ``optimal`` player of the same settings (no depth or ply limit, the same state limit)
    then plays from the solved values instead of solving the game again in every process
    that plays it: the values are the same, computed once. Any other policy, or a player
    that has searched already, is returned as it is, and so is any policy where the file is not
    there (a worker on another machine). The file is one this run's solve wrote (a pickle in
    its private temporary folder); it is read once per process.
    """
    from psygym_agents.solvers.expectiminimax import Solver
    from psygym_agents.solvers.policy import OptimalPolicy

    if not isinstance(policy, OptimalPolicy) or policy.solver.cache.values:
        return policy
    if not path or not os.path.isfile(path):  # none, or a worker on another machine
        return policy
    settings = policy.settings
    if path not in _ADOPTED:
        import pickle

        with open(path, "rb") as f:
            _ADOPTED[path] = pickle.load(f)
    key, cache = _ADOPTED[path]
    if key != _memo_key(rules, settings["max_states"]) or settings["max_depth"] is not None \
            or settings["max_plies"] is not None or policy.solver.rules is not rules:
        return policy
    policy.solver = Solver(rules, max_states=settings["max_states"], cache=cache)
    return policy


def _solve_child(conn: Any, rules: Any, max_states: int | None, cpu_seconds: float,
                 parent: int | None = None, memo: str = "") -> None:  # fmt: skip
    from psygym_experiments.harness.lifecycle import die_with_parent

    die_with_parent(parent)  # a killed parent takes its solver child with it
    try:  # the kernel stops this process after cpu_seconds of CPU time (POSIX only)
        import math
        import resource

        limit = max(1, math.ceil(cpu_seconds))
        resource.setrlimit(resource.RLIMIT_CPU, (limit, limit + 5))
    except (ImportError, ValueError, OSError):
        pass
    conn.send(solve_value(rules, max_states, memo))
    conn.close()


def exact_game_value(
    rules: Any, max_states: int | None = MAX_STATES, timeout: float | None = None,
    memo: str = "",
) -> Solved:  # fmt: skip
    """Solve the game: its value for seat 0 with both players optimal, or why there is none.

    Args:
        rules: the scenario's rules.
        max_states: the solver's state limit.
        timeout: CPU seconds allowed: the search runs in a child process that the kernel stops
            after that much CPU time, so a busy machine does not change the outcome (a wall-clock
            limit of ten times as much guards against starvation, and replaces the CPU limit
            where the platform has none); ``None``: no limit, in this process.
        memo: a file for the solved memo (see :func:`solve_value`).
    """
    if timeout is None:
        return solve_value(rules, max_states, memo)
    import multiprocessing

    parent, child = multiprocessing.Pipe(duplex=False)
    proc = multiprocessing.Process(
        target=_solve_child, args=(child, rules, max_states, timeout, os.getpid(), memo),
        daemon=True,
    )  # fmt: skip
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


def resident_bytes() -> int | None:
    """Memory this process holds now (its resident set), or ``None`` where it cannot be read.

    Linux: ``/proc/self/statm``. Elsewhere the peak so far (``ru_maxrss``, which a search only
    raises); on a platform with neither, ``None`` (then only the state budget applies).
    """
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, AttributeError):
        pass
    try:
        import resource
        import sys

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    except (ImportError, OSError):
        return None
    return int(peak) if sys.platform == "darwin" else int(peak) * 1024  # bytes on macOS, else KiB


@dataclass(frozen=True)
class SolveBudget:
    """What one ``psygym solve`` may spend: states and memory per search.

    Attributes:
        states: memoised states one search may hold (``--max-states``); ``None``: no limit.
        memory: bytes one search may add to what the process held when it started
            (``--max-memory``), so the figure means the same in a fresh command and in a
            long-lived process that already holds memory (a test run, a notebook); ``None``:
            no limit.
    """

    states: int | None = MAX_STATES
    memory: float | None = None

    def describe(self, per_state: int = BYTES_PER_STATE) -> str:
        """The budget line printed before a solve starts (``per_state``: bytes a state takes)."""
        parts = []
        if self.states is not None:
            parts.append(f"{self.states:,} states, about {memory_text(self.states * per_state)}")
        if self.memory is not None:
            parts.append(f"at most {memory_text(self.memory)} of memory for each search")
        return "budget: " + ("; ".join(parts) or "none (no state or memory limit)")


def rough_count(n: float) -> str:
    """An estimate that claims no digits it lacks: ``"about 57,000"``, ``"about 10^31"``.

    Below a million to two significant figures, below a billion in millions, beyond that as a
    power of ten.
    """
    if n >= 1e9:
        return f"about 10^{round(math.log10(n))}"
    if n >= 1e6:
        return f"about {n / 1e6:.1f} million"
    return f"about {round(n, min(0, 2 - len(str(int(n))))):,.0f}"


class SolveWatch:
    """The ``on_progress`` of one search: its display, the rate, the estimate, the memory budget.

    Called every 10,000 new states, it updates the progress bar (states of the state budget, and
    a note with the rate, the memory in use and the estimate of the states the search needs,
    from :meth:`Solver.searched_share`); where the error stream is not a terminal it prints a
    line after :data:`FIRST_LINE_SECONDS`, then every :data:`LINE_SECONDS`, instead. It raises
    ``NotSolvable`` once the search has added more memory than the budget allows.

    Args:
        what: the search, in words (``"exact solve"``).
        budget: the budget of the command.
        bar: the progress bar (``None``: no display).
        lines: print plain progress lines (the error stream is not a terminal).
    """

    def __init__(self, what: str, budget: SolveBudget, bar: ProgressBar | None, lines: bool):
        self.what, self.budget, self.bar, self.lines = what, budget, bar, lines
        self.solver: Any = None
        self._clock = LineClock(FIRST_LINE_SECONDS, LINE_SECONDS)
        self.started = self._clock.started
        self.states = 0
        self.estimate: float | None = None
        self.peak = resident_bytes()
        self.base = self.peak or 0
        self.over_memory = False

    def __call__(self, states: int) -> None:
        """Show the search at ``states`` memoised states; raise ``NotSolvable`` over the budget."""
        from psygym_agents.solvers import NotSolvable

        self.states = states
        now = time.perf_counter()
        memory = resident_bytes()
        if memory is not None:
            self.peak = max(self.peak or 0, memory)
        share = self.solver.searched_share() if self.solver is not None else 0.0
        if share > 0:
            self.estimate = states / share
        if (
            memory is not None
            and self.budget.memory is not None
            and memory - self.base > self.budget.memory
        ):
            self.over_memory = True
            raise NotSolvable(
                f"passed the memory budget of {memory_text(self.budget.memory)} at "
                f"{states:,} states"
            )
        note = self.note(now, memory)
        if self.bar is not None:
            self.bar.update(completed=states, note=note)
        if self.lines and self._clock.due():
            from psygym_experiments.common import err_console

            err_console.print(
                f"{self.what}: {states:,} states; {note}", highlight=False, soft_wrap=True
            )

    def note(self, now: float, memory: int | None) -> str:
        """Rate, memory in use and estimate, as the progress display shows them."""
        rate = self.states / max(now - self.started, 1e-9)
        bits = [f"{rate:,.0f} states/s"]
        if memory is not None:
            bits.append(memory_text(memory))
        if self.estimate is not None:
            over = self.budget.states is not None and self.estimate > self.budget.states
            bits.append(
                f"needs {rough_count(self.estimate)} (rough){', over budget' if over else ''}"
            )
        return ", ".join(bits)


def solve_scenario(
    rules: Any,
    *,
    max_depth: int | None = None,
    max_plies: int | None = None,
    max_states: int | None = MAX_STATES,
    max_memory: float | None = None,
    fallback: bool = True,
    show_progress: bool = False,
) -> dict[str, Any]:
    """Solve ``rules`` from its initial state, falling back to a one-phase search if too big.

    Each search stops at ``max_states`` states or once the process holds ``max_memory`` bytes;
    a search that stops so has its memory freed before the next one starts.

    Returns:
        ``{"value", "states", "exact", "seconds", "max_depth", "max_plies", "note",
        "attempts", "peak_memory"}``: ``seconds`` is the time of every search together,
        ``attempts`` one ``{"search", "states", "seconds", "outcome"}`` per search tried, and
        ``peak_memory`` the most memory the process held (bytes; ``None``: unknown).

    Raises:
        NotSolvable: hidden information, or over the budget even for the fallback search (the
            message says how far each search got).
    """
    from psygym_agents.solvers import NotSolvable, require_perfect_information

    require_perfect_information(rules)
    budget = SolveBudget(max_states, max_memory)
    start = time.perf_counter()
    attempts: list[dict[str, Any]] = []
    peak: list[int] = []
    limited = max_depth is not None or max_plies is not None
    outcome = _search(rules, max_depth, max_plies, budget, show_progress, attempts, peak)
    note = ""
    if outcome is None and not limited and fallback and _has_later_phases(rules):
        stopped = f"the exact solve {attempts[-1]['outcome']}"
        note = f"{stopped}; fell back to a search of 1 Psychic phase"
        if show_progress:
            from psygym_experiments.common import err_console

            err_console.print(
                f"{stopped}; falling back to a search of 1 Psychic phase",
                highlight=False,
                soft_wrap=True,
            )
        outcome = _search(rules, 1, None, budget, show_progress, attempts, peak)
    if outcome is None:
        raise NotSolvable(_out_of_reach(attempts, limited))
    return {
        **outcome,
        "seconds": time.perf_counter() - start,
        "note": note,
        "attempts": attempts,
        "peak_memory": max(peak) if peak else None,
    }


def _search(
    rules: Any, depth: int | None, plies: int | None, budget: SolveBudget, show: bool,
    attempts: list[dict[str, Any]], peak: list[int],
) -> dict[str, Any] | None:  # fmt: skip
    """One search within ``budget``: its result, or ``None`` when it stopped at the budget.

    The solver is dropped before returning, so a stopped search's memory is free again (its
    exception and traceback, which hold it, end here).
    """
    from psygym_agents.solvers import NotSolvable
    from psygym_agents.solvers.expectiminimax import Solver
    from psygym_experiments.common import err_console

    limits = [plural(depth, "Psychic phase")] if depth else []
    limits += [plural(plies, "ply", "plies")] if plies else []
    what = f"search of {' and '.join(limits)}" if limits else "exact solve"
    lines = show and not err_console.is_terminal
    with ProgressBar(what, budget.states, enabled=show and not lines) as bar:
        watch = SolveWatch(what, budget, bar if show else None, lines)
        try:
            solver = Solver(
                rules, max_depth=depth, max_plies=plies, max_states=budget.states,
                on_progress=watch,
            )  # fmt: skip
            watch.solver = solver
            value = solver.value()
            result = {
                "value": value, "states": solver.states, "exact": solver.exact,
                "max_depth": depth, "max_plies": plies,
            }  # fmt: skip
            stopped = ""
        except NotSolvable as exc:
            result, stopped = None, str(exc)  # the exception (and the solver it holds) ends here
        memory = resident_bytes()  # before the solver's memory is let go
        if memory is not None:
            watch.peak = max(watch.peak or 0, memory)
        solver = watch.solver = None
    seconds = time.perf_counter() - watch.started
    if watch.peak is not None:
        peak.append(watch.peak)
    if result is None:
        if watch.over_memory:
            reason = f"{stopped}, after {seconds:.0f} s"
        else:
            reason = f"needed more than {budget.states:,} states, stopped after {seconds:.0f} s"
        guess = f" (it needs {rough_count(watch.estimate)}, roughly)" if watch.estimate else ""
        outcome = reason + guess
    else:
        outcome = f"finished: {result['states']:,} states in {seconds:.1f} s"
    attempts.append(
        {"search": what, "states": result["states"] if result else _held(watch, budget),
         "seconds": seconds, "outcome": outcome}
    )  # fmt: skip
    return result


def _held(watch: SolveWatch, budget: SolveBudget) -> int:
    """States a stopped search held: past the state budget, or as last counted (memory)."""
    if watch.over_memory or budget.states is None:
        return watch.states
    return budget.states + 1


def _out_of_reach(attempts: list[dict[str, Any]], limited: bool) -> str:
    """The one line saying why no search fitted the budget, and what to change."""
    tried = "; then ".join(f"the {a['search']} {a['outcome']}" for a in attempts)
    fix = "raise --max-states or --max-memory, or solve a smaller scenario"
    if not limited:
        fix = "raise --max-states or --max-memory, or give --max-plies for a depth-limited value"
    return f"out of reach: {tried}; {fix}"


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
