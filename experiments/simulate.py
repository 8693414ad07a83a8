"""``psygym simulate``: play N games between two agents and report score and event rates."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

import numpy as np
import typer
from psygym_experiments.common import (
    console,
    progress,
    rate,
    split_names,
    strict_json,
    user_errors,
)

from psygym.core import Event, play_game
from psygym.editions import load
from psygym.policies import resolve_policy


@dataclass
class GameStats:
    """Counts of standard events over games (see the event kinds in ``psygym.core``)."""

    games: int = 0
    scores: list[float] = field(default_factory=list)
    attempts: list[int] = field(default_factory=lambda: [0, 0])
    perils: list[int] = field(default_factory=lambda: [0, 0])
    manifests: list[int] = field(default_factory=lambda: [0, 0])
    dice: list[int] = field(default_factory=lambda: [0, 0])
    deny_attempts: list[int] = field(default_factory=lambda: [0, 0])
    denied: list[int] = field(default_factory=lambda: [0, 0])

    def add_event(self, e: Event) -> None:
        """Count one event."""
        if e.player is None:
            return
        p = e.player
        if e.kind == "attempt":
            self.attempts[p] += 1
            self.dice[p] += int(e.get("dice", 0) or 0)
        elif e.kind == "perils":
            self.perils[p] += 1
        elif e.kind == "manifest":
            self.manifests[p] += 1
        elif e.kind == "deny_attempt":
            self.deny_attempts[p] += 1
        elif e.kind == "denied":
            self.denied[p] += 1

    def summary(self, player: int = 0) -> dict[str, float]:
        """Mean score of ``player`` with a 95% interval, and its rates."""
        sign = 1 if player == 0 else -1
        x = np.array(self.scores) * sign
        m, half = mean_ci(x)

        def ratio(a: int, b: int) -> float:
            return a / b if b else float("nan")

        return {
            "games": self.games,
            "mean_score": m,
            "ci95": half,
            "perils_rate": ratio(self.perils[player], self.attempts[player]),
            "manifest_rate": ratio(self.manifests[player], self.attempts[player]),
            "dice_per_manifest": ratio(self.dice[player], self.manifests[player]),
            "deny_rate": ratio(self.denied[player], self.deny_attempts[player]),
            "attempts_per_game": ratio(self.attempts[player], self.games),
        }


def mean_ci(x: np.ndarray, z: float = 1.959964) -> tuple[float, float]:
    """Mean and half-width of its normal-approximation confidence interval (95% by default)."""
    if len(x) == 0:
        return float("nan"), float("nan")
    if len(x) == 1:
        return float(x[0]), float("inf")
    return float(x.mean()), float(z * x.std(ddof=1) / math.sqrt(len(x)))


def run_games(
    rules, policies, episodes: int, seed: int, *, show_progress: bool = True
) -> GameStats:
    """Play ``episodes`` games with a generator seeded by ``seed``; collect statistics."""
    stats = GameStats()
    rng = np.random.default_rng(seed)

    def on_step(_s, _a, events) -> None:
        for e in events:
            stats.add_event(e)

    for _ in progress(range(episodes), "playing", disable=not show_progress):
        end = play_game(rules, policies, rng, on_step=on_step)
        stats.scores.append(rules.returns(end)[0])
        stats.games += 1
    return stats


def simulate(
    edition: str = typer.Option("7th", help="Edition: 7th, 8th, 2nd or rt."),
    scenario: str = typer.Option("default", help="Shipped scenario name or TOML path."),
    agents: str = typer.Option("double-wc,deny-always", help="Two agents: player 0, player 1."),
    episodes: int = typer.Option(1000, min=1, help="Number of games."),
    seed: int = typer.Option(0, help="Random seed."),
    as_json: bool = typer.Option(False, "--json", help="Print the results as JSON."),
) -> None:
    """Play N games between two agents; print mean score (95% CI) and perils/manifest/deny rates."""
    with user_errors():
        rules = load(edition, scenario)
        names = split_names(agents)
        if len(names) != 2:
            raise ValueError(f"--agents needs two names separated by a comma, got {agents!r}")
        policies = [resolve_policy(n, rules) for n in names]
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
    from rich.table import Table as RichTable

    table = RichTable(title=f"{rules.edition} {rules.scenario.name}: {episodes} games, seed {seed}")
    for col in (
        "player",
        "agent",
        "score (95% CI)",
        "perils",
        "manifest",
        "deny success",
        "casts/game",
        "dice/manifest",
    ):
        table.add_column(col, justify="right")
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
    console.print(table)


def register(app: typer.Typer) -> None:
    """Add the ``simulate`` command."""
    app.command("simulate")(simulate)
