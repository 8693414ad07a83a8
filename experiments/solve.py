"""``psygym solve``: the value of a scenario under optimal play, by exact expectiminimax.

Without ``--max-depth`` the whole game is solved exactly unless it has more than
``--max-states`` states; then, for a game of several Psychic phases, the command says so and
falls back to a depth-limited search of one Psychic phase (the score so far is the value of the
positions it stops at), reported as not exact. ``--max-plies`` limits the search by plies.
2nd edition (secret hands) cannot be solved exactly.
"""

from __future__ import annotations

import json
import time
from typing import Any

import typer
from psygym_experiments.common import console, err_console, user_errors

from psygym.editions import load

DEFAULT_MAX_STATES = 3_000_000


def solve_scenario(
    rules: Any,
    *,
    max_depth: int | None = None,
    max_plies: int | None = None,
    max_states: int | None = DEFAULT_MAX_STATES,
    fallback: bool = True,
    show_progress: bool = False,
) -> dict[str, Any]:
    """Solve ``rules`` from its initial state.

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
        with _Progress(show_progress, depth) as progress:
            solver = Solver(
                rules,
                max_depth=depth,
                max_plies=plies,
                max_states=max_states,
                on_progress=progress.update,
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
    """Whether random playouts start a second Psychic phase (a ``"phase"`` event).

    Without one, a search limited to one Psychic phase is the exact search again.
    """
    import numpy as np
    from psygym_agents.base import RandomPolicy

    from psygym.core import play_game

    seen = False

    def on_step(_s: Any, _a: int, events: Any) -> None:
        nonlocal seen
        seen = seen or any(e.kind == "phase" for e in events)

    rng = np.random.default_rng(0)
    policy = RandomPolicy()
    for _ in range(games):
        play_game(rules, [policy, policy], rng, on_step=on_step)
        if seen:
            return True
    return False


class _Progress:
    """A rich spinner with the number of states solved so far (stderr)."""

    def __init__(self, enabled: bool, depth: int | None):
        self.enabled = enabled
        self.depth = depth
        self._progress = None
        self._task = None

    def __enter__(self) -> _Progress:
        if self.enabled:
            from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

            self._progress = Progress(
                SpinnerColumn(),
                TextColumn("{task.description}"),
                TimeElapsedColumn(),
                console=err_console,
                transient=True,
            )
            self._progress.start()
            what = "exact" if self.depth is None else f"depth {self.depth}"
            self._task = self._progress.add_task(f"solving ({what}): 0 states")
        return self

    def update(self, states: int) -> None:
        """Show the number of states solved."""
        if self._progress is not None:
            what = "exact" if self.depth is None else f"depth {self.depth}"
            self._progress.update(self._task, description=f"solving ({what}): {states:,} states")

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()


def solve(
    edition: str = typer.Option("7th", help="Edition: 7th, 8th or rt (2nd has secret hands)."),
    scenario: str = typer.Option("default", help="Shipped scenario name or TOML path."),
    max_depth: int = typer.Option(
        None,
        min=1,
        help="Search only this many Psychic phases (counting the first); positions beyond are "
        "valued at the score so far, and the result is not exact.",
    ),
    max_plies: int = typer.Option(
        None,
        min=1,
        help="Search only this many plies (decisions and chance outcomes); positions beyond are "
        "valued at the score so far, and the result is not exact.",
    ),
    max_states: int = typer.Option(
        DEFAULT_MAX_STATES,
        min=1,
        help="Give up an exact solve beyond this many states (then search 1 phase deep).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Solve a scenario: its value under optimal play, the number of states, exact or not, time."""
    with user_errors():
        rules = load(edition, scenario)
        result = solve_scenario(
            rules,
            max_depth=max_depth,
            max_plies=max_plies,
            max_states=max_states,
            show_progress=not as_json,
        )
    result = {"edition": rules.edition, "scenario": rules.scenario.name, **result}
    if as_json:
        typer.echo(json.dumps(result, indent=2))
        return
    side0 = rules.scenario.sides[0].name
    depth = "to the end"
    if result["max_depth"] is not None:
        depth = f"{result['max_depth']} phase(s)"
    if result["max_plies"] is not None:
        depth = f"{result['max_plies']} plies" + ("" if depth == "to the end" else f", {depth}")
    console.print(
        f"[bold]{rules.edition} {rules.scenario.name}[/bold]: value {result['value']:+.4f} "
        f"for {side0} (player 0) under optimal play",
        highlight=False,
    )
    console.print(
        f"  states {result['states']:,}   exact {'yes' if result['exact'] else 'NO'}   "
        f"search {depth}   time {result['seconds']:.2f} s",
        highlight=False,
    )
    if result["note"]:
        console.print(f"  [yellow]note:[/yellow] {result['note']}", highlight=False)
    if not result["exact"]:
        console.print(
            "  [yellow]not exact:[/yellow] positions beyond the depth limit are valued "
            "at the score so far",
            highlight=False,
        )


def register(app: typer.Typer) -> None:
    """Add the ``solve`` command."""
    app.command("solve")(solve)


__all__ = ["DEFAULT_MAX_STATES", "register", "solve", "solve_scenario"]
