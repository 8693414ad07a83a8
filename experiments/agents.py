"""``psygym agents``: every agent an edition can play, with one sentence on how it plays.

Descriptions come from the edition's ``Bots`` manifest (heuristics) and the generic agents'
factories (``random``, ``optimal``, ``tuned``, ``sb3``), the same sentences the reports use;
then the names only commands take, which stand for one of those agents (:data:`CHOSEN`).
"""

from __future__ import annotations

import json
import textwrap

import typer
from psygym_experiments.common import user_errors
from psygym_experiments.harness.best_heuristic import BEST_HEURISTIC, ROUND_ROBIN_EPISODES
from psygym_experiments.play import AUTO

from psygym.edition import editions, get
from psygym.editions import load
from psygym.policies import agent_names, bots_for, describe_agent

CHOSEN = {
    BEST_HEURISTIC: "in simulate, evaluate and play: the edition's heuristic that does best on "
    "the scenario, named after a round robin of its heuristics over both seats "
    f"({ROUND_ROBIN_EPISODES} games a pairing and seat) before the games",
    AUTO: "play's default opponent: search where it loads, else the model shipped for the "
    "scenario and seat, else the edition's reference heuristic",
}
"""Names the commands resolve to another agent before playing, with how they choose it."""


def agent_rows(edition_id: str) -> list[dict[str, str]]:
    """``{"edition", "agent", "kind", "description"}`` for each agent of an edition."""
    rules = load(edition_id)
    bots = bots_for(edition_id)
    heuristics = list(bots.heuristics) if bots is not None else []
    generic = [n for n in agent_names(rules) if n not in heuristics]
    rows = []
    for name in [*heuristics, *generic]:
        kind = "heuristic" if name in heuristics else "generic"
        if bots is not None and name == bots.reference:
            kind = "heuristic, reference"
        rows.append({"edition": edition_id, "agent": name, "kind": kind,
                     "description": describe_agent(name, rules)})  # fmt: skip
    for name, description in CHOSEN.items():
        rows.append({"edition": edition_id, "agent": name, "kind": "chosen by the command",
                     "description": description})  # fmt: skip
    return rows


def agents(
    edition: str | None = typer.Option(None, help="One edition (default: every edition)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of text."),
) -> None:
    """List every agent with a one-sentence description of how it plays."""
    with user_errors():
        ids = [get(edition).id] if edition else [e.id for e in editions()]
        rows = [row for eid in ids for row in agent_rows(eid)]
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    for eid in ids:
        typer.echo(f"{get(eid).title} ({eid})")
        for row in (r for r in rows if r["edition"] == eid):
            mark = " (reference)" if "reference" in row["kind"] else ""
            typer.echo(f"  {row['agent']}{mark}")
            typer.echo(textwrap.fill(row["description"], 80, initial_indent=" " * 6,
                                     subsequent_indent=" " * 6))  # fmt: skip
        typer.echo("")


def register(app: typer.Typer) -> None:
    """Add the ``agents`` command."""
    app.command("agents")(agents)
