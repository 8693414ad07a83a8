"""``psygym evaluate``: a round-robin tournament between agents with common random numbers.

Every pair of agents (by default ``search``, the edition's reference heuristic and ``random``)
plays ``episodes`` games in both seats; game ``i`` of every pairing uses the
seed ``seed + i`` (the protocol is :mod:`psygym_experiments.harness.games`, the tournament
:mod:`psygym_experiments.harness.tournament`). Where the exact solver can handle the scenario the
table adds each pairing's exact expected score, the game's value and each agent's exploitability.
Output: ``<runs-dir>/evaluate-<time>/`` with ``results.csv``, ``results.json``, ``config.json`` and
``command.txt``. The folder is made first and keeps every finished task (a batch of games, an
exact value) in ``tasks.jsonl``, so a killed run goes on with ``--resume <folder>``.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any

import typer
from psygym_experiments.common import console, edition_option, err_console, split_names, user_errors
from psygym_experiments.harness.output import check_choice, json_text, rate, signed, write_json
from psygym_experiments.harness.runs import run_folder, write_command
from psygym_experiments.harness.solving import MAX_STATES
from psygym_experiments.harness.tournament import EvalSettings, Evaluation, csv_text, evaluate

DEFAULT_AGENTS = "default"
"""The ``--agents`` value meaning :func:`default_agents`."""


def default_agents(rules: Any) -> list[str]:
    """The default field: ``search``, the edition's reference heuristic and ``random``.

    ``search`` is on every scenario (exact within each cast or turn, a learned board value
    beyond; the information-set search where hands are secret), so every duel has it.
    """
    from psygym.policies import bots_for

    bots = bots_for(rules.edition)
    names = ["search", bots.reference if bots is not None else "", "random"]
    return list(dict.fromkeys(n for n in names if n))


def write_evaluation(ev: Evaluation, run_dir: Path, config: dict[str, Any]) -> None:
    """Write ``results.csv``, ``results.json``, ``config.json`` and ``command.txt``."""
    (run_dir / "results.csv").write_text(csv_text(ev.pairs))
    write_json(run_dir / "results.json", ev.to_json())
    write_json(run_dir / "config.json", config)
    write_command(run_dir)


TABLE_WIDTH = 80
"""Terminal tables fit this many columns."""
TABLE_STYLE: dict[str, Any] = {"box": None, "padding": (0, 1), "pad_edge": False,
                               "header_style": "bold underline"}  # fmt: skip
"""No borders, two spaces between columns: the most room for agent names in 80 columns."""
RESULT_COLUMNS = ("score", "± 95%", "exact", "W/D/L")
"""Columns of the first terminal table (after the two agents)."""
RATE_COLUMNS = ("perils 0", "perils 1", "dice/manifest 0", "dice/manifest 1", "deny 0",
                "deny 1")  # fmt: skip
"""Columns of the second terminal table: each seat's rates (perils per power attempted, dice per
manifested power, share of denies that succeed; the CSV's ``perils_rate0``...)."""


def pairs_table(ev: Evaluation) -> Any:
    """Rich tables of the pairings, printable within 80 columns.

    The first table numbers the pairings and gives both agents' names in full (their columns
    never wrap) with the scores; the second gives each seat's rates by pairing number, so
    neither needs more than 80 columns for agent names up to about 20 characters.
    """
    from rich.console import Group
    from rich.table import Table

    scores = Table(
        title=f"{ev.edition} {ev.scenario}: {ev.episodes} games per pairing and seat, "
        f"seed {ev.seed} (score of seat 0, 95% CI)",
        **TABLE_STYLE,
    )
    rates = Table(title="event rates of the agent in each seat, by pairing", **TABLE_STYLE)
    for t, columns in ((scores, ("seat 0", "seat 1", *RESULT_COLUMNS)), (rates, RATE_COLUMNS)):
        t.add_column("#", justify="right", no_wrap=True)
        for c in columns:
            name = c.startswith("seat")
            t.add_column(c, justify="left" if name else "right", no_wrap=name)
    for k, p in enumerate(ev.pairs, 1):
        dpm0 = "-" if not math.isfinite(p.dice_per_manifest0) else f"{p.dice_per_manifest0:.2f}"
        dpm1 = "-" if not math.isfinite(p.dice_per_manifest1) else f"{p.dice_per_manifest1:.2f}"
        scores.add_row(str(k), p.agent0, p.agent1, signed(p.mean_score, 3), f"{p.ci95:.3f}",
                       signed(p.exact_score, 3), f"{p.wins}/{p.draws}/{p.losses}")  # fmt: skip
        rates.add_row(str(k), rate(p.perils_rate0), rate(p.perils_rate1), dpm0, dpm1,
                      rate(p.deny_rate0), rate(p.deny_rate1))  # fmt: skip
    return Group(scores, rates)


def evaluate_command(
    edition: str = edition_option(),
    scenario: str = typer.Option("default", help="Shipped scenario name or TOML path."),
    agents: str = typer.Option(
        DEFAULT_AGENTS,
        help="Comma-separated agents (names or paths); 'default': search, the edition's "
        "reference heuristic and random.",
    ),
    episodes: int = typer.Option(1000, min=1, help="Games per pairing and seat."),
    seed: int = typer.Option(0, min=0, help="Base seed: game i of every pairing uses seed + i."),
    workers: int = typer.Option(1, min=1, help="Processes to play in (results do not change)."),
    runs_dir: str = typer.Option("runs", help="Folder for the run folder evaluate-<time>/."),
    fmt: str = typer.Option("table", "--format", help="Output: table, csv or json."),
    exact: bool = typer.Option(
        True, "--exact/--no-exact", help="Exact scores and exploitability where solvable."
    ),
    max_states: int = typer.Option(
        MAX_STATES, min=1, help="Solver state limit: bigger games get no exact values."
    ),
    self_play: bool = typer.Option(False, "--self-play", help="Also pair each agent with itself."),
    until_clear: bool = typer.Option(
        False,
        "--until-clear",
        help="Head to head instead: the first agent against each other one over both seats, "
        "each match stopped once its 95% interval excludes 0 (at most --episodes games per "
        "seat). '{seat}' in a spec becomes the seat played (one-seat models).",
    ),
    min_episodes: int = typer.Option(
        20, min=2, help="--until-clear: fewest games per seat before a match may stop."
    ),
    resume: str = typer.Option(
        "",
        help="Go on with the run in this folder (the same settings; the games and exact values "
        "it recorded are not played or solved again).",
    ),
) -> None:
    """Round-robin between agents in both seats (common random numbers), with exact values."""
    from psygym.editions import load

    with user_errors():
        check_choice(fmt, ("table", "csv", "json"), "--format")
        rules = load(edition, scenario)
        names = default_agents(rules) if agents.strip() == DEFAULT_AGENTS else split_names(agents)
        if not names:
            raise ValueError("--agents needs at least one agent name")
        if until_clear:
            return _until_clear(
                rules, names, episodes, min_episodes, seed, workers, runs_dir, fmt, resume
            )
        from psygym.policies import resolve_policy

        policies = [resolve_policy(name, rules) for name in names]  # bad names fail here
        config = {
            "edition": rules.edition,
            "scenario": getattr(rules.scenario, "name", ""),
            "agents": names,
            "episodes": episodes,
            "seed": seed,
            "workers": workers,
            "exact": exact,
            "max_states": max_states,
            "self_play": self_play,
            "game_seeds": f"{seed}..{seed + episodes - 1}",
        }
        run_dir = _run_dir(runs_dir, resume, config, ROUND_ROBIN_SETTINGS, until_clear=False)
        write_json(run_dir / "config.json", config)
        err_console.print(f"run folder: {run_dir} (a killed run goes on with --resume {run_dir})",
                          highlight=False)  # fmt: skip
        start = time.perf_counter()
        settings = EvalSettings(
            episodes, seed, workers, exact=exact, exploit=exact, max_states=max_states,
            self_play=self_play,
        )  # fmt: skip
        ev = evaluate(rules, names, settings, policies=policies, record=run_dir / TASKS_FILE)
    config["seconds"] = round(time.perf_counter() - start, 2)
    write_evaluation(ev, run_dir, config)
    if fmt == "csv":
        typer.echo(csv_text(ev.pairs), nl=False)
    elif fmt == "json":
        typer.echo(json_text(ev.to_json()))
    else:
        console.print(pairs_table(ev), width=min(TABLE_WIDTH, console.width))
        if ev.game_value is not None:
            console.print(
                f"  exact value of the game for seat 0 (both optimal): {ev.game_value:+.3f}",
                highlight=False,
            )
        if ev.exploitability:
            for name, value in ev.exploitability.items():
                console.print(f"  exploitability of {name}: {signed(value, 3)}", highlight=False)
        for note in ev.notes:
            console.print(f"  note: {note}", highlight=False)
    err_console.print(f"results written to {run_dir}", highlight=False)


UNTIL_CLEAR_SETTINGS = ("edition", "scenario", "agents", "max_episodes", "min_episodes", "seed")
"""The settings a resumed ``--until-clear`` run must share with the first one."""
GAMES_FILE = "games.jsonl"
"""The resume record of ``--until-clear``: one JSON line per finished batch of a match."""
ROUND_ROBIN_SETTINGS = (
    "edition", "scenario", "agents", "episodes", "seed", "exact", "max_states", "self_play",
)  # fmt: skip
"""The settings a resumed round-robin must share with the first one (not ``workers``)."""
TASKS_FILE = "tasks.jsonl"
"""The resume record of a round-robin: one JSON line per finished task (game batch, exact value)."""


def _run_dir(
    runs_dir: str, resume: str, config: dict[str, Any], keys: tuple[str, ...], until_clear: bool
) -> Path:  # fmt: skip
    """A new run folder, or the ``--resume`` folder once it is shown to hold the same run."""
    from psygym_experiments.harness.runs import check_resumable

    if not resume:
        return run_folder(runs_dir, "evaluate")
    run_dir = Path(resume)
    config_path = run_dir / "config.json"
    if not config_path.is_file():
        raise ValueError(f"--resume: {run_dir} is not a run folder of evaluate")
    if bool(json.loads(config_path.read_text()).get("until_clear")) != until_clear:
        kind, fix = ("a round-robin", "leave out --until-clear") if until_clear else (
            "an --until-clear run", "add --until-clear")  # fmt: skip
        raise ValueError(f"--resume: {run_dir} holds {kind} of evaluate; {fix} to go on with it")
    check_resumable(config_path, config, keys, "or leave out --resume")
    return run_dir


def _played(run_dir: Path, opponents: list[str]) -> dict[str, list[tuple[float, float]]]:
    """Per opponent, the games recorded in ``run_dir``, from game 0 on without a gap."""
    from psygym_experiments.harness.runs import read_records

    records = read_records(run_dir / GAMES_FILE)
    out: dict[str, list[tuple[float, float]]] = {}
    for o in opponents:
        batches = {r["start"]: r["pairs"] for r in records if r.get("opponent") == o}
        games: list[tuple[float, float]] = []
        while len(games) in batches:
            games += [(float(a), float(b)) for a, b in batches[len(games)]]
        out[o] = games
    return out


def _until_clear(
    rules: Any, names: list[str], episodes: int, min_episodes: int, seed: int, workers: int,
    runs_dir: str, fmt: str, resume: str = "",
) -> None:  # fmt: skip
    """``evaluate --until-clear``: adaptive matches of ``names[0]`` against each other agent.

    The run folder is made first and keeps every finished batch in :data:`GAMES_FILE`, so a
    killed run goes on with ``--resume <folder>`` and the same settings.
    """
    from psygym_experiments.harness.head_to_head import BATCH, head_to_head, seat_spec
    from psygym_experiments.harness.progress import ProgressBar
    from psygym_experiments.harness.runs import append_record, rewrite_records

    from psygym.policies import resolve_policy

    if len(names) < 2:
        raise ValueError("--until-clear needs at least two agents: the first meets each other one")
    for name in names:  # a bad name fails here, in one line, before any game
        for seat in (0, 1):
            resolve_policy(seat_spec(name, seat), rules)
    config = {
        "edition": rules.edition, "scenario": getattr(rules.scenario, "name", ""),
        "agents": names, "max_episodes": episodes, "min_episodes": min_episodes, "seed": seed,
        "workers": workers, "until_clear": True,
    }  # fmt: skip
    run_dir = _run_dir(runs_dir, resume, config, UNTIL_CLEAR_SETTINGS, until_clear=True)
    if resume:
        played = _played(run_dir, names[1:])
        rewrite_records(run_dir / GAMES_FILE, [
            {"opponent": o, "start": i, "pairs": played[o][i : i + BATCH]}
            for o in names[1:] for i in range(0, len(played[o]), BATCH)
        ])  # fmt: skip
    else:
        played = {o: [] for o in names[1:]}
    write_json(run_dir / "config.json", config)
    err_console.print(f"run folder: {run_dir} (a killed run goes on with --resume {run_dir})",
                      highlight=False)  # fmt: skip
    start = time.perf_counter()
    results = []
    for opponent in names[1:]:
        if played[opponent]:
            err_console.print(f"resuming {names[0]} vs {opponent}: {len(played[opponent])} "
                              "games per seat recorded", highlight=False)  # fmt: skip

        def record(r: range, pairs: list[tuple[float, float]], opponent: str = opponent) -> None:
            append_record(run_dir / GAMES_FILE,
                          {"opponent": opponent, "start": r.start, "pairs": pairs})  # fmt: skip

        with ProgressBar(f"{names[0]} vs {opponent}", episodes) as bar:
            match = head_to_head(
                rules, names[0], opponent, seed=seed, max_games=episodes,
                min_games=min(min_episodes, episodes), workers=workers,
                on_batch=lambda r: bar.update(
                    completed=r.games_per_seat, note=f"{r.margin:+.2f} ± {r.ci95:.2f}"
                ),
                played=played[opponent], on_pairs=record,
            )  # fmt: skip
        results.append(match)
        if fmt == "table":
            console.print(f"  {match.verdict()}", highlight=False)
    rows = [m.as_dict() for m in results]
    write_json(run_dir / "results.json", {"edition": rules.edition, "matches": rows})
    header = "agent,opponent,games_per_seat,margin,ci95,decided,seat0_mean,seat1_mean"
    lines = [header] + [",".join(str(r[k]) for k in header.split(",")) for r in rows]
    (run_dir / "results.csv").write_text("\n".join(lines) + "\n")
    seconds = round(time.perf_counter() - start, 2)
    write_json(run_dir / "config.json", {**config, "seconds": seconds})
    write_command(run_dir)
    if fmt == "csv":
        typer.echo("\n".join(lines))
    elif fmt == "json":
        typer.echo(json_text({"matches": rows}))
    err_console.print(f"results written to {run_dir}", highlight=False)


def register(app: typer.Typer) -> None:
    """Add the ``evaluate`` command."""
    app.command("evaluate")(evaluate_command)


__all__ = [
    "DEFAULT_AGENTS",
    "default_agents",
    "evaluate_command",
    "pairs_table",
    "register",
    "write_evaluation",
]
