"""``psygym mistakes``: which of an agent's decisions cost it most against a fixed opponent.

Exact, for a perfect-information game that fits ``--max-states``: the agent's score against the
opponent in each seat, what the best answer to that opponent scores there, and the decisions
the difference is made of, costliest first (:mod:`psygym_experiments.harness.mistakes`).
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import typer
from psygym_experiments.common import (
    check_choice,
    console,
    solvable_edition_option,
    user_errors,
)
from psygym_experiments.harness.mistakes import AFTER
from psygym_experiments.harness.output import json_text
from psygym_experiments.harness.progress import ProgressBar
from psygym_experiments.harness.solving import MOST_STATES, check_max_states
from rich.markup import escape

from psygym.editions import load

DEFAULT_MAX_STATES = 3_000_000
"""Default ``--max-states`` of the pairing's tree and of the best response (about 1-2 GB)."""


def side_seats(rules: Any, side: str | None) -> list[int]:
    """The seats ``--side`` names (a side's name, 0 or 1; ``None``: both).

    Raises:
        ValueError: no side has that name or number.
    """
    names = [s.name for s in rules.scenario.sides]
    if side is None:
        return list(range(len(names)))
    for i, name in enumerate(names):
        if side.strip().casefold() in (name.casefold(), str(i)):
            return [i]
    allowed = ", ".join([*names, *map(str, range(len(names)))])
    raise ValueError(f"--side {side!r} is no side of {rules.scenario.name}; allowed: {allowed}")


def review(rules: Any, agent: str, opponent: str, seats: list[int], max_states: int,
           top: int, show_progress: bool, after: str = "best") -> dict[str, Any]:  # fmt: skip
    """The command's result as plain data (the JSON it prints)."""
    from psygym_experiments.harness.mistakes import review_seat

    from psygym.policies import resolve_policy

    a, o = resolve_policy(agent, rules), resolve_policy(opponent, rules)
    out = []
    for seat in seats:
        side = rules.scenario.sides[seat].name
        doing = f"{agent} as {side}"
        with ProgressBar(f"{doing}: states of the pairing", enabled=show_progress) as bar:

            def solving(n: int, bar: ProgressBar = bar, doing: str = doing) -> None:
                bar.update(completed=n, description=f"{doing}: states of the search for values")

            r = review_seat(rules, a, o, seat, max_states=max_states, after=after,
                            on_state=lambda: bar.advance(1), on_solve=solving)  # fmt: skip
        out.append({
            "side": side, "seat": seat, "score": r.score, "best_response": r.best_response,
            "cost": r.cost, "states": r.states, "decisions_with_cost": len(r.decisions),
            "decisions": [
                {"cost": d.cost, "reach": d.reach, "gives_up": d.gives_up, "board": d.board,
                 "chosen": [asdict(c) for c in d.chosen], "best": asdict(d.best)}
                for d in r.decisions[:top]
            ],
        })  # fmt: skip
    return {"edition": rules.edition, "scenario": rules.scenario.name, "agent": agent,
            "opponent": opponent, "after": after, "seats": out}  # fmt: skip


def _print(result: dict[str, Any]) -> None:
    """The result in words: per seat the score, the best answer's and the costliest decisions."""
    console.print(
        f"{result['edition']} {escape(result['scenario'])}: {escape(result['agent'])} against "
        f"{escape(result['opponent'])}, exact (expected final scores of the agent's side)",
        highlight=False, soft_wrap=True,
    )  # fmt: skip
    for seat in result["seats"]:
        side = escape(seat["side"])
        if seat["best_response"] is None:  # --after agent
            against = "a decision's cost is what changing it alone would gain"
        else:
            against = (f"the best answer to {escape(result['opponent'])} scores "
                       f"{seat['best_response']:+.4f}; its decisions cost {seat['cost']:.4f} a "
                       "game")  # fmt: skip
        console.print(
            f"\nas {side}: scores {seat['score']:+.4f}; {against} (decisions that give something "
            f"up: {seat['decisions_with_cost']:,}; states: {seat['states']:,})",
            highlight=False, soft_wrap=True,
        )  # fmt: skip
        for k, d in enumerate(seat["decisions"], 1):
            console.print(
                f"\n{k}. costs {d['cost']:.4f} a game: reached in {d['reach']:.1%} of games, "
                f"gives up {d['gives_up']:.4f} there",
                highlight=False, soft_wrap=True,
            )  # fmt: skip
            console.print("   " + escape(d["board"]).replace("\n", "\n   "), highlight=False)
            for c in d["chosen"]:
                console.print(f"   chose {escape(c['label'])} ({c['probability']:.0%}): "
                              f"{c['value']:+.4f}", highlight=False, soft_wrap=True)  # fmt: skip
            b = d["best"]
            console.print(f"   best  {escape(b['label'])}: {b['value']:+.4f}", highlight=False,
                          soft_wrap=True)  # fmt: skip


def mistakes(
    edition: str = solvable_edition_option(),
    scenario: str = typer.Option("default", help="Shipped scenario name, random:N or TOML path."),
    agent: str = typer.Option(..., help="The agent whose decisions are reviewed."),
    opponent: str = typer.Option("optimal", help="The fixed opponent it plays."),
    side: str = typer.Option(None, help="The agent's side (name, 0 or 1; default: both)."),
    top: int = typer.Option(5, min=0, help="Decisions listed per side, costliest first."),
    max_states: int = typer.Option(
        DEFAULT_MAX_STATES,
        min=1,
        callback=check_max_states,
        help="Give up beyond this many states of the pairing's tree "
        f"or of the best answer's search (at most {MOST_STATES:,}).",
    ),
    after: str = typer.Option(
        "best",
        help="Who plays the agent's side after each decision in the values a choice is "
        "measured by: best (the best answer to the opponent; the costs add up to what the agent "
        "scores less than it) or agent (the agent itself: what changing that decision alone "
        "gains; far fewer states).",
    ),
    fmt: str = typer.Option("text", "--format", help="Output: text or json."),
    no_progress: bool = typer.Option(False, "--no-progress", help="Hide the progress display."),
) -> None:
    """Which decisions of an agent cost it most against a fixed opponent, exactly, per side.

    A decision's cost is the chance of reaching it times what the agent's choice gives up
    against the best answer to the opponent; the costs add up to what the agent scores less
    than that best answer. Against ``optimal`` that is its loss against the optimum.
    """
    with user_errors():
        check_choice(fmt, ("text", "json"), "--format")
        check_choice(after, AFTER, "--after")
        rules = load(edition, scenario)
        seats = side_seats(rules, side)
        result = review(rules, agent, opponent, seats, max_states, top,
                        show_progress=not no_progress, after=after)  # fmt: skip
    if fmt == "json":
        typer.echo(json_text(result))
        return
    _print(result)


def register(app: typer.Typer) -> None:
    """Add the ``mistakes`` command."""
    app.command("mistakes")(mistakes)


__all__ = ["DEFAULT_MAX_STATES", "mistakes", "register", "review", "side_seats"]
