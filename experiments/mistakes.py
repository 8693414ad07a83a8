"""``psygym mistakes``: which of an agent's decisions cost it most against a fixed opponent.

Exact, for a perfect-information game that fits ``--max-states``: the agent's score against the
opponent in each seat, what the best answer to that opponent scores there, and the decisions
the difference is made of, costliest first (:mod:`psygym_experiments.harness.mistakes`). A
model trained for one seat is reviewed only in that seat (:mod:`.harness.seats`).
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


SEARCH = "search"
"""What ``optimal`` plays on a game it cannot solve whole."""


BOTH_SIDES = "both"
"""``--side`` for both sides (the default)."""


def side_seats(rules: Any, side: str | None) -> list[int]:
    """The seats ``--side`` names (a side's name, 0 or 1; ``both`` or ``None``: both).

    Raises:
        ValueError: no side has that name or number.
    """
    names = [s.name for s in rules.scenario.sides]
    if side is None or side.strip().casefold() == BOTH_SIDES:
        return list(range(len(names)))
    for i, name in enumerate(names):
        if side.strip().casefold() in (name.casefold(), str(i)):
            return [i]
    allowed = ", ".join([*names, *map(str, range(len(names))), BOTH_SIDES])
    raise ValueError(f"--side {side!r} is no side of {rules.scenario.name}; allowed: {allowed}")


def load_players(
    rules: Any, agent: str, opponent: str, seats: list[int]
) -> dict[int, tuple[Any, Any]]:
    """Seat -> the agent's and the opponent's policy when the agent plays it.

    ``{seat}`` in a spec becomes the seat that agent plays; each spec is loaded once.
    """
    from psygym_experiments.harness.seats import seat_spec

    from psygym.policies import resolve_policy

    loaded: dict[str, Any] = {}

    def load_spec(spec: str) -> Any:
        if spec not in loaded:
            loaded[spec] = resolve_policy(spec, rules)
        return loaded[spec]

    return {s: (load_spec(seat_spec(agent, s)), load_spec(seat_spec(opponent, 1 - s)))
            for s in seats}  # fmt: skip


def seat_players(
    rules: Any, agent: str, opponent: str, seats: list[int], *, chosen: bool
) -> tuple[list[int], dict[int, tuple[Any, Any]], str]:
    """The seats the agent is reviewed in, its and the opponent's policy in each, and a note.

    ``{seat}`` in a spec becomes the seat that agent plays. A model trained for one seat plays
    only that seat (:mod:`psygym_experiments.harness.seats`): the agent is reviewed only where
    both it and the opponent may play, and the note (empty when no seat was left out) says so.

    Raises:
        ValueError: ``chosen`` (``--side`` named one) and one of them may not play that seat, or
            no seat is left.
    """
    from psygym_experiments.harness.seats import BOTH, check_plays, policy_seats, seats_text

    sides = [s.name for s in rules.scenario.sides]
    players = load_players(rules, agent, opponent, seats)
    if chosen:
        (seat,) = seats
        a, o = players[seat]
        other = f"--side {1 - seat} ({sides[1 - seat]})"
        check_plays(a, seat, f"--agent {agent}", f"leave --side out or give {other}")
        check_plays(o, 1 - seat, f"--opponent {opponent}",
                    f"give {other}, or an opponent that plays seat {1 - seat}")  # fmt: skip
        return seats, players, ""
    mine = [s for s in seats if s in policy_seats(players[s][0])]
    theirs = sorted(1 - s for s in seats if 1 - s in policy_seats(players[s][1]))
    kept = [s for s in mine if 1 - s in theirs]
    if not kept:
        raise ValueError(
            f"--agent {agent} plays {seats_text(mine)} and --opponent {opponent} "
            f"{seats_text(theirs)}, so they never meet (a model plays only the seat it was "
            "trained for): give one of them a model of the other seat"
        )
    if kept == seats:
        return seats, players, ""
    why = [f"{what} plays {seats_text(limit)} only" for what, limit
           in (("--agent", mine), ("--opponent", theirs)) if tuple(limit) != BOTH]  # fmt: skip
    note = (f"reviewed as {', '.join(sides[s] for s in kept)} only: "
            f"{' and '.join(why)} (a model plays only the seat it was trained for)")  # fmt: skip
    return kept, {s: players[s] for s in kept}, note


def review(rules: Any, agent: str, opponent: str, seats: list[int], max_states: int,
           top: int, show_progress: bool, after: str = "best", *,
           players: dict[int, tuple[Any, Any]] | None = None,
           note: str = "") -> dict[str, Any]:  # fmt: skip
    """The command's result as plain data (the JSON it prints).

    ``players``: the agent's and the opponent's policy in each seat (default:
    :func:`load_players`); ``note`` says why seats were left out.
    """
    from psygym_experiments.harness.mistakes import review_seat

    if players is None:
        players = load_players(rules, agent, opponent, seats)
    out = []
    for seat in seats:
        a, o = players[seat]
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
    played = opponent
    if any(_plays_search(o) for _, o in players.values()):
        played = SEARCH
    return {"edition": rules.edition, "scenario": rules.scenario.name, "agent": agent,
            "opponent": opponent, "opponent_played": played, "after": after, "note": note,
            "seats": out}  # fmt: skip


def _plays_search(policy: Any) -> bool:
    """Whether ``policy`` is ``optimal`` that gave up exact play for ``search`` (too large)."""
    return bool(getattr(policy, "auto", False)) and not getattr(policy, "exact", True)


def _opponent_text(result: dict[str, Any]) -> str:
    """The opponent as played: ``search (optimal cannot solve this game whole)`` if it fell back."""
    if result["opponent_played"] != result["opponent"]:
        return (f"{escape(result['opponent_played'])} ({escape(result['opponent'])} cannot "
                "solve this game whole)")  # fmt: skip
    return escape(result["opponent"])


def _print(result: dict[str, Any]) -> None:
    """The result in words: per seat the score, the best answer's and the costliest decisions."""
    console.print(
        f"{result['edition']} {escape(result['scenario'])}: {escape(result['agent'])} against "
        f"{_opponent_text(result)}, exact (expected final scores of the agent's side)",
        highlight=False, soft_wrap=True,
    )  # fmt: skip
    if result["note"]:
        console.print(escape(result["note"]), highlight=False, soft_wrap=True)
    for seat in result["seats"]:
        side = escape(seat["side"])
        if seat["best_response"] is None:  # --after agent
            against = "a decision's cost is what changing it alone would gain"
        else:
            against = (f"the best answer to {escape(result['opponent_played'])} scores "
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
    agent: str = typer.Option(
        ...,
        help="The agent whose decisions are reviewed ('{seat}' in a spec becomes the seat "
        "played, for models trained for one seat).",
    ),
    opponent: str = typer.Option(
        "optimal",
        help="The fixed opponent it plays ('optimal' plays search where the game cannot be "
        "solved whole; '{seat}' as for --agent).",
    ),
    side: str = typer.Option(
        BOTH_SIDES,
        help="The agent's side: a side's name, 0, 1 or both (a model trained for one seat: "
        "only that one).",
    ),
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
    than that best answer. Against ``optimal`` on a game it solves whole that is its loss
    against the optimum; where it cannot, ``optimal`` plays ``search`` and the costs are against
    the best answer to that.
    """
    with user_errors():
        check_choice(fmt, ("text", "json"), "--format")
        check_choice(after, AFTER, "--after")
        rules = load(edition, scenario)
        seats = side_seats(rules, side)
        chosen = side is not None and side.strip().casefold() != BOTH_SIDES
        seats, players, note = seat_players(rules, agent, opponent, seats, chosen=chosen)
        result = review(rules, agent, opponent, seats, max_states, top,
                        show_progress=not no_progress, after=after, players=players,
                        note=note)  # fmt: skip
    if fmt == "json":
        typer.echo(json_text(result))
        return
    _print(result)


def register(app: typer.Typer) -> None:
    """Add the ``mistakes`` command."""
    app.command("mistakes")(mistakes)


__all__ = [
    "BOTH_SIDES", "DEFAULT_MAX_STATES", "load_players", "mistakes", "register", "review",
    "seat_players", "side_seats",
]  # fmt: skip
