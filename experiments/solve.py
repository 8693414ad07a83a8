"""``psygym solve``: the value of a scenario under optimal play, by exact expectiminimax.

Without ``--max-depth`` the whole game is solved exactly unless it has more than
``--max-states`` states; then, for a game of several Psychic phases, the command says so and
falls back to a depth-limited search of one Psychic phase (the score so far is the value of the
positions it stops at), reported as not exact. ``--max-plies`` limits the search by plies.
2nd edition (secret hands) cannot be solved exactly.
"""

from __future__ import annotations

import typer
from psygym_experiments.common import console, edition_help, edition_option, user_errors
from psygym_experiments.harness.output import json_text
from psygym_experiments.harness.solving import MAX_STATES, solve_scenario

from psygym.editions import load

DEFAULT_MAX_STATES = 10 * MAX_STATES
"""Default ``--max-states``: a standalone solve may use ten times the harness's budget."""


def solve(
    edition: str = edition_option(
        help=edition_help(" (perfect-information editions; hidden hands cannot be solved)")
    ),
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
        typer.echo(json_text(result, strict=False))
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
