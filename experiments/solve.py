"""``psygym solve``: the value of a scenario under optimal play, by exact expectiminimax.

Before it starts, the command prints its budget: ``--max-states`` states per search (and the
memory that many states take, about) and ``--max-memory`` GB that each search may add to the
process. While it
searches it shows the states so far, their rate, the memory in use and a rough estimate of the
states the search needs; a search stops at either limit.

Without ``--max-depth`` the whole game is solved exactly if it fits the budget; if not, for a
game of several Psychic phases, the command says so and falls back to a depth-limited search
of one Psychic phase (the score so far is the value of the positions it stops at), reported as
not exact. ``--max-plies`` limits the search by plies. The time printed is the whole command's,
loading and every search tried included. 2nd edition (secret hands) cannot be solved exactly.
"""

from __future__ import annotations

from typing import Any

import typer
from psygym_experiments.common import (
    console,
    err_console,
    solvable_edition_option,
    user_errors,
)
from psygym_experiments.harness.output import json_text
from psygym_experiments.harness.solving import (
    GB,
    MAX_STATES,
    MOST_MEMORY_GB,
    MOST_STATES,
    SolveBudget,
    check_max_states,
    memory_text,
    solve_scenario,
)

from psygym.editions import load
from psygym.text import plural

DEFAULT_MAX_STATES = 10 * MAX_STATES
"""Default ``--max-states``: a standalone solve may use ten times the harness's budget."""
DEFAULT_MAX_MEMORY_GB = 3.0
"""Default ``--max-memory``: room for the default state budget (about 2.4 GB) and its overhead."""


def solve(
    ctx: typer.Context,
    edition: str = solvable_edition_option(),
    scenario: str = typer.Option(
        "default",
        help="Shipped scenario name, random:N (the army list psygym scenario random --seed N "
        "writes) or TOML path.",
    ),
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
        callback=check_max_states,
        help="Stop a search beyond this many states (an exact solve then falls back to a "
        f"search of 1 phase); at most {MOST_STATES:,}, what the largest --max-memory could hold.",
    ),
    max_memory: float = typer.Option(
        DEFAULT_MAX_MEMORY_GB,
        min=0.01,
        max=MOST_MEMORY_GB,
        help="Stop a search once it has added this many GB to the memory the process holds.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Solve a scenario: its value under optimal play, the number of states, exact or not, time."""
    from psygym_experiments.cli import command_seconds

    budget = SolveBudget(max_states, max_memory * GB)
    with user_errors():
        rules = load(edition, scenario)
        (err_console if as_json else console).print(
            f"{budget.describe(_bytes_per_state(rules, max_depth, max_plies))} (--max-states, "
            "--max-memory)",
            highlight=False,
            soft_wrap=True,
        )
        result = solve_scenario(
            rules,
            max_depth=max_depth,
            max_plies=max_plies,
            max_states=budget.states,
            max_memory=budget.memory,
            show_progress=True,
        )
    result = {
        "edition": rules.edition,
        "scenario": rules.scenario.name,
        **result,
        "search_seconds": result["seconds"],
        "seconds": command_seconds(ctx),
        "budget": {"states": budget.states, "memory_gb": max_memory},
    }
    if as_json:
        typer.echo(json_text(result, strict=False))
        return
    _print_result(rules, result)


def _print_result(rules: Any, result: dict[str, Any]) -> None:
    """The answer in words: "under optimal play" only where the value is exact."""
    side0 = rules.scenario.sides[0].name
    depth = "to the end"
    if result["max_depth"] is not None:
        depth = plural(result["max_depth"], "Psychic phase")
    if result["max_plies"] is not None:
        plies = plural(result["max_plies"], "ply", "plies")
        depth = plies + ("" if depth == "to the end" else f", {depth}")
    head = f"[bold]{rules.edition} {rules.scenario.name}[/bold]: value {result['value']:+.4f} for "
    if result["exact"]:
        head += f"{side0} (player 0) under optimal play"
    else:
        head += f"{side0} (player 0), an estimate: optimal play searched {depth} only"
    console.print(head, highlight=False)
    memory = result["peak_memory"]
    console.print(
        f"  states {result['states']:,}   exact {'yes' if result['exact'] else 'NO'}   "
        f"search {depth}   time {result['seconds']:.2f} s (the whole command)"
        + (f"   memory {memory_text(memory)}" if memory is not None else ""),
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


__all__ = ["DEFAULT_MAX_MEMORY_GB", "DEFAULT_MAX_STATES", "register", "solve", "solve_scenario"]


def _bytes_per_state(rules: Any, max_depth: int | None, max_plies: int | None) -> int:
    """Bytes a memoised state takes in the search that solve runs first.

    The compiled solver's where the exact search of this scenario runs in the core.
    """
    from psygym_experiments.harness.solving import BYTES_PER_STATE, CORE_BYTES_PER_STATE

    from psygym.engine import compiled_game

    exact = max_depth is None and max_plies is None
    return CORE_BYTES_PER_STATE if exact and compiled_game(rules) is not None else BYTES_PER_STATE
