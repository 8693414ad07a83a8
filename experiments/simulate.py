"""``psygym simulate``: play N games between two agents and report score and event rates.

A model trained for one seat plays only that seat (:mod:`.harness.seats`): one listed in the
other seat is refused.
"""

from __future__ import annotations

import json

import typer
from psygym_experiments.common import console, edition_option, split_names, user_errors
from psygym_experiments.harness.best_heuristic import (
    BEST_HEURISTIC,
    also_known,
    with_best_heuristic,
)
from psygym_experiments.harness.games import GameStats, mean_ci, run_games
from psygym_experiments.harness.output import rate, strict_json
from psygym_experiments.harness.seats import SEAT_FIELD, check_plays, seat_spec

from psygym.editions import load
from psygym.policies import resolve_policy


def simulate(
    edition: str = edition_option(),
    scenario: str = typer.Option("default", help="Shipped scenario name or TOML path."),
    agents: str = typer.Option(
        "double-wc,deny-always",
        help="Two agents: player 0, player 1 ('best-heuristic': the list's best, as in evaluate; "
        "'{seat}' in a spec becomes the seat played). A model trained for one seat plays only it.",
    ),
    episodes: int = typer.Option(1000, min=1, help="Number of games."),
    seed: int = typer.Option(0, min=0, help="Random seed."),
    as_json: bool = typer.Option(False, "--json", help="Print the results as JSON."),
) -> None:
    """Play N games between two agents; print mean score (95% CI) and perils/manifest/deny rates."""
    with user_errors(), also_known(BEST_HEURISTIC):
        rules = load(edition, scenario)
        names = split_names(agents)
        if len(names) != 2:
            raise ValueError(f"--agents needs two names separated by a comma, got {agents!r}")
        names = [seat_spec(n, p) for p, n in enumerate(with_best_heuristic(rules, names))]
        policies = [resolve_policy(n, rules) for n in names]
        for p, (name, policy) in enumerate(zip(names, policies, strict=True)):
            instead = (f"list it as player {1 - p}, or give a model trained for seat {p} "
                       f"('{SEAT_FIELD}' in a path becomes the seat played)")  # fmt: skip
            check_plays(policy, p, f"--agents: {name}", instead)
    stats = run_games(rules, policies, episodes, seed)
    summaries = [stats.summary(p) for p in (0, 1)]
    if as_json:
        doc = {
            "edition": rules.edition,
            "scenario": rules.scenario.name,
            "seed": seed,
            "episodes": episodes,
            "results": [{"player": p, "agent": names[p], **summaries[p]} for p in (0, 1)],
        }
        typer.echo(json.dumps(strict_json(doc), indent=2, allow_nan=False))
        return
    from psygym_experiments.evaluate import TABLE_STYLE, TABLE_WIDTH
    from rich.table import Table as RichTable

    table = RichTable(
        title=f"{rules.edition} {rules.scenario.name}: {episodes} games, seed {seed}",
        **TABLE_STYLE,
    )
    for col in (  # short, wrapped headers: the table fits 80 columns with long agent names
        "seat",
        "agent",
        "score (95% CI)",
        "perils",
        "mani-\nfest",
        "deny\nsucc.",
        "casts/\ngame",
        "dice/\nmanif.",
    ):
        # The agent's name is never cut; the other headers wrap if the terminal is narrow.
        table.add_column(col, justify="left" if col == "agent" else "right",
                         no_wrap=col in ("agent", "score (95% CI)"))  # fmt: skip
    for p, name in enumerate(names):
        r = summaries[p]
        table.add_row(
            str(p),
            name,
            f"{r['mean_score']:+.3f} ± {r['ci95']:.3f}",
            rate(r["perils_rate"]),
            rate(r["manifest_rate"]),
            rate(r["deny_rate"]),
            f"{r['attempts_per_game']:.2f}",
            f"{r['dice_per_manifest']:.2f}",
        )
    console.print(table, width=min(TABLE_WIDTH, console.width))


def register(app: typer.Typer) -> None:
    """Add the ``simulate`` command."""
    app.command("simulate")(simulate)


__all__ = ["GameStats", "mean_ci", "register", "run_games", "simulate"]
