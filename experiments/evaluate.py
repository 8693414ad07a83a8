"""``psygym evaluate``: a round-robin tournament between agents with common random numbers.

Every pair of agents (by default ``search``, the edition's reference heuristic and ``random``)
plays ``episodes`` games in both seats; game ``i`` of every pairing uses the
seed ``seed + i`` (the protocol is :mod:`psygym_experiments.harness.games`, the tournament
:mod:`psygym_experiments.harness.tournament`). Where the exact solver can handle the scenario the
table adds each pairing's exact expected score, the game's value and each agent's exploitability.
Output: ``<runs-dir>/evaluate-<time>/`` with ``results.csv``, ``results.json``, ``config.json`` and
``command.txt``. The folder is made first and keeps every finished task (a batch of games, an
exact value) in ``tasks.jsonl``, so a killed run goes on with ``--resume <folder>``: the settings
not given come from the folder's ``config.json``, and one given with another value is refused,
naming it. The record's lines are checked before they are used (their hash chain, their shape,
scores within the scenario's bounds), and a folder holding a symbolic link is refused.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Annotated, Any

import typer
from psygym_experiments.common import (
    check_workers_option,
    console,
    edition_option,
    err_console,
    ray_option,
    split_names,
    user_errors,
)
from psygym_experiments.harness.best_heuristic import (
    BEST_HEURISTIC,
    also_known,
    with_best_heuristic,
)
from psygym_experiments.harness.lifecycle import InterruptReported
from psygym_experiments.harness.output import (
    atomic_write,
    check_choice,
    json_text,
    rate,
    signed,
    write_json,
)
from psygym_experiments.harness.pools import check_ray_workers, ray_pool
from psygym_experiments.harness.runs import (
    ResumeRecord,
    check_run_folder,
    check_score,
    given_options,
    read_config,
    run_folder,
    score_bounds,
    shape_error,
    write_command,
)
from psygym_experiments.harness.seats import policy_seats
from psygym_experiments.harness.solving import MAX_STATES, MOST_STATES, check_max_states
from psygym_experiments.harness.task_record import TaskRecord
from psygym_experiments.harness.tournament import EvalSettings, evaluate
from psygym_experiments.harness.tournament_results import Evaluation, csv_text
from pydantic import BaseModel, ConfigDict, Field, ValidationError

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
    atomic_write(run_dir / "results.csv", csv_text(ev.pairs))
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
    ctx: typer.Context,
    edition: str = edition_option(),
    scenario: str = typer.Option("default", help="Shipped scenario name or TOML path."),
    agents: str = typer.Option(
        DEFAULT_AGENTS,
        help="Comma-separated agents (names or paths); 'default': search, the edition's "
        "reference heuristic and random; 'best-heuristic': the one of the edition's heuristics "
        "that does best on this list in a round robin.",
    ),
    episodes: int = typer.Option(1000, min=1, help="Games per pairing and seat."),
    seed: int = typer.Option(0, min=0, help="Base seed: game i of every pairing uses seed + i."),
    workers: int = typer.Option(
        1, min=1, callback=check_workers_option,
        help="Processes to play in (results do not change; at most 4 per CPU core).",
    ),  # fmt: skip
    runs_dir: str = typer.Option("runs", help="Folder for the run folder evaluate-<time>/."),
    fmt: str = typer.Option("table", "--format", help="Output: table, csv or json."),
    exact: bool = typer.Option(
        True, "--exact/--no-exact", help="Exact scores and exploitability where solvable."
    ),
    max_states: int = typer.Option(
        MAX_STATES, min=1, callback=check_max_states,
        help=f"Solver state limit: bigger games get no exact values (at most {MOST_STATES:,}).",
    ),  # fmt: skip
    self_play: bool = typer.Option(
        False, "--self-play", help="Also pair each agent with itself (then one agent may play)."
    ),
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
        help="Go on with the run in this folder: settings not given are the folder's, one given "
        "must equal it (the games and exact values it recorded are not played or solved again).",
    ),
    ray: str = ray_option(),
) -> None:
    """Round-robin between agents in both seats (common random numbers), with exact values."""
    from psygym.editions import load

    with user_errors(), also_known(BEST_HEURISTIC):
        check_choice(fmt, ("table", "csv", "json"), "--format")
        check_ray_workers(ray, workers)
        if resume:  # the settings not given are the run's own
            saved = _saved_options(ctx, resume, {
                "edition": edition, "episodes": episodes, "seed": seed, "exact": exact,
                "max_states": max_states, "self_play": self_play, "min_episodes": min_episodes,
            })  # fmt: skip
            edition, scenario = saved.get("edition", edition), saved.get("scenario", scenario)
            agents, episodes = saved.get("agents", agents), saved.get("episodes", episodes)
            seed, exact = saved.get("seed", seed), saved.get("exact", exact)
            max_states = saved.get("max_states", max_states)
            self_play = saved.get("self_play", self_play)
            until_clear = saved.get("until_clear", until_clear)
            min_episodes = saved.get("min_episodes", min_episodes)
        rules = load(edition, scenario)
        names = default_agents(rules) if agents.strip() == DEFAULT_AGENTS else split_names(agents)
        if not names:
            raise ValueError("--agents needs at least one agent name")
        check_field(names, until_clear=until_clear, self_play=self_play)
        names = with_best_heuristic(rules, names)
        check_field(names, until_clear=until_clear, self_play=self_play)  # best-heuristic named
        if until_clear:
            with ray_pool(ray) or nullcontext() as pool:
                return _until_clear(
                    rules, names, episodes, min_episodes, seed, workers, runs_dir, fmt, resume,
                    scenario, pool,
                )  # fmt: skip
        from psygym.policies import resolve_policy

        policies = [resolve_policy(name, rules) for name in names]  # bad names fail here
        pool = ray_pool(ray)  # before the run folder: a cluster that is not there leaves none
        config = {
            "edition": rules.edition,
            "scenario": getattr(rules.scenario, "name", ""),
            "scenario_arg": _scenario_arg(rules, scenario),
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
        if pool is not None:
            config.update(workers=pool.workers, ray=pool.address)
        # Read (and checked) before anything is written: a refused record changes no file.
        record = TaskRecord(run_dir / TASKS_FILE, score_bounds(rules))
        write_json(run_dir / "config.json", config)
        # soft_wrap: the hint is pasted as printed, so it is never cut into lines
        err_console.print(f"run folder: {run_dir} (a killed run goes on with --resume {run_dir})",
                          highlight=False, soft_wrap=True)  # fmt: skip
        start = time.perf_counter()
        # A model trained for one seat plays only that seat, as in compare.
        seats = {n: policy_seats(p) for n, p in zip(names, policies, strict=True)}
        settings = EvalSettings(
            episodes, seed, config["workers"], exact=exact, exploit=exact, max_states=max_states,
            self_play=self_play, seats={n: s for n, s in seats.items() if s != (0, 1)},
        )  # fmt: skip
        with pool or nullcontext(), _kept_on_interrupt(run_dir):
            ev = evaluate(rules, names, settings, policies=policies, record=record, pool=pool)
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


@contextmanager
def _kept_on_interrupt(run_dir: Path) -> Iterator[None]:
    """Ctrl-C in the block: one line saying the finished games are kept, and how to go on."""
    try:
        yield
    except KeyboardInterrupt as exc:
        if isinstance(exc, InterruptReported):
            raise
        err_console.print(
            f"interrupted: {run_dir} keeps every finished batch of games. Resume with: "
            f"psygym evaluate --resume {run_dir}",
            highlight=False, markup=False, soft_wrap=True,
        )  # fmt: skip
        raise InterruptReported from exc


def check_field(names: list[str], *, until_clear: bool, self_play: bool) -> None:
    """Refuse an ``--agents`` list that would play no match or the same match twice.

    A round robin needs two agents unless ``--self-play`` pairs one with itself (a repeated name
    is played under ``name#2``, as the tournament labels it). ``--until-clear`` plays the first
    agent against each other one, with the same seeds every match, so an opponent listed twice
    would only play the same match again (and record it twice): each opponent must be listed
    once. The first agent may also be listed as an opponent: that match is against itself.

    Raises:
        ValueError: one agent without ``--self-play``, or with ``--until-clear`` an opponent
            listed twice (named).
    """
    if until_clear:
        rest = names[1:]
        repeats = list(dict.fromkeys(n for k, n in enumerate(rest) if n in rest[:k]))
        if repeats:
            raise ValueError(
                f"--agents: {', '.join(repeats)} {'is' if len(repeats) == 1 else 'are'} listed "
                "more than once after the first agent; --until-clear plays the first agent "
                "against each other one with the same seeds, so list each opponent once"
            )
    elif len(names) < 2 and not self_play:
        raise ValueError(
            f"--agents: a round robin needs at least two agents (got {names[0]}); add another "
            "one, or --self-play to pair it with itself"
        )


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


class _Saved(BaseModel):
    """The settings of a run folder's ``config.json`` that ``--resume`` takes (checked)."""

    model_config = ConfigDict(extra="ignore")
    edition: str
    scenario: str
    scenario_arg: str | None = None
    agents: Annotated[list[str], Field(min_length=1)]
    episodes: Annotated[int, Field(ge=1, strict=True)] | None = None
    max_episodes: Annotated[int, Field(ge=1, strict=True)] | None = None
    min_episodes: Annotated[int, Field(ge=2, strict=True)] | None = None
    seed: Annotated[int, Field(ge=0, strict=True)]
    exact: Annotated[bool, Field(strict=True)] | None = None
    max_states: Annotated[int, Field(ge=1, strict=True)] | None = None
    self_play: Annotated[bool, Field(strict=True)] | None = None
    until_clear: Annotated[bool, Field(strict=True)] = False


RESUMED_OPTIONS = ("edition", "scenario", "agents", "episodes", "seed", "exact", "max_states",
                   "self_play", "until_clear", "min_episodes")  # fmt: skip
"""Options that ``--resume`` takes from the run's folder when they are not given."""


def _saved_options(ctx: typer.Context, resume: str, given: dict[str, Any]) -> dict[str, Any]:
    """The settings of the run in ``resume`` for every option of :data:`RESUMED_OPTIONS` not given.

    Options that are given stay as given; those of ``given`` (plain values) are checked here,
    before anything is loaded, the others (scenario, agents) by :func:`_run_dir`.

    Raises:
        ValueError: not a run folder of evaluate, its ``config.json`` is not one it wrote, or a
            given setting differs from the run's (named).
    """
    from psygym.edition import get

    run_dir = Path(resume)
    config_path = run_dir / "config.json"
    if not config_path.is_file():
        raise ValueError(f"--resume: {run_dir} is not a run folder of evaluate (no config.json)")
    check_run_folder(run_dir)
    try:
        saved = _Saved.model_validate(read_config(config_path))
    except ValidationError as exc:
        why = shape_error(exc, "the settings evaluate writes")
        raise ValueError(f"{config_path}: {why}") from None
    values = saved.model_dump()
    values["scenario"] = saved.scenario_arg or saved.scenario
    values["agents"] = ",".join(saved.agents)
    if saved.until_clear:
        values["episodes"] = saved.max_episodes
    named = given_options(ctx, RESUMED_OPTIONS)
    mine = {**given, "edition": get(given["edition"]).id if "edition" in named else None}
    diff = [k for k in RESUMED_OPTIONS if k in named and k in mine and values[k] is not None
            and mine[k] != values[k]]  # fmt: skip
    if diff:
        raise ValueError(f"{run_dir} holds a run with other settings ({', '.join(diff)}); give "
                         "the same settings to resume it, or leave out --resume")  # fmt: skip
    return {k: values[k] for k in RESUMED_OPTIONS if k not in named and values[k] is not None}


def _scenario_arg(rules: Any, scenario: str) -> str:
    """The scenario as a later ``--resume`` loads it: a shipped name, or the file's full path."""
    path = Path(scenario)
    if path.suffix == ".toml" or path.is_file():
        return str(path.resolve())
    return str(getattr(rules.scenario, "name", scenario))


def _run_dir(
    runs_dir: str, resume: str, config: dict[str, Any], keys: tuple[str, ...], until_clear: bool
) -> Path:  # fmt: skip
    """A new run folder, or the ``--resume`` folder once it is shown to hold the same run.

    The resumed folder must hold no symbolic link (:func:`.runs.check_run_folder`): every file
    of the run is written again, and none may lead outside it.
    """
    from psygym_experiments.harness.runs import check_resumable

    if not resume:
        return run_folder(runs_dir, "evaluate")
    run_dir = Path(resume)
    config_path = run_dir / "config.json"
    if not config_path.is_file():
        raise ValueError(f"--resume: {run_dir} is not a run folder of evaluate (no config.json)")
    check_run_folder(run_dir)
    if bool(read_config(config_path).get("until_clear")) != until_clear:
        kind, fix = ("a round-robin", "leave out --until-clear") if until_clear else (
            "an --until-clear run", "add --until-clear")  # fmt: skip
        raise ValueError(f"--resume: {run_dir} holds {kind} of evaluate; {fix} to go on with it")
    check_resumable(config_path, config, keys, "or leave out --resume")
    return run_dir


GAMES_SHAPE = '{"opponent": agent, "start": first game, "pairs": [[score, score], ...]}'
"""How a line of :data:`GAMES_FILE` looks, for the error that refuses one."""


class _Batch(BaseModel):
    """One line of :data:`GAMES_FILE`: a batch of games of one match."""

    model_config = ConfigDict(extra="forbid")
    opponent: str
    start: Annotated[int, Field(ge=0, strict=True)]
    pairs: list[tuple[Annotated[float, Field(strict=True, allow_inf_nan=False)],
                      Annotated[float, Field(strict=True, allow_inf_nan=False)]]]  # fmt: skip


def _games_record(run_dir: Path, rules: Any) -> ResumeRecord:
    """The record of :data:`GAMES_FILE`, its lines checked (shape, scores within the bounds).

    A pair is the first agent's score in seat 0 and in seat 1, so the second lies within the
    negated bounds of seat 0.
    """
    lo, hi = score_bounds(rules)

    def check(row: dict[str, Any]) -> None:
        try:
            batch = _Batch.model_validate(row)
        except ValidationError as exc:
            raise ValueError(shape_error(exc, GAMES_SHAPE)) from None
        for k, (first, second) in enumerate(batch.pairs):
            game = batch.start + k
            check_score(first, (lo, hi), f"the score of game {game} in seat 0")
            check_score(second, (-hi, -lo), f"the score of game {game} in seat 1")

    return ResumeRecord(run_dir / GAMES_FILE, check)


def _played(record: ResumeRecord, opponents: list[str]) -> dict[str, list[tuple[float, float]]]:
    """Per opponent, the games ``record`` holds, from game 0 on without a gap."""
    records = record.read()
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
    runs_dir: str, fmt: str, resume: str = "", scenario: str = "", pool: Any = None,
) -> None:  # fmt: skip
    """``evaluate --until-clear``: adaptive matches of ``names[0]`` against each other agent.

    The run folder is made first and keeps every finished batch in :data:`GAMES_FILE`, so a
    killed run goes on with ``--resume <folder>`` and the same settings. ``pool``: a Ray pool
    (:mod:`.harness.pools`) to play in, with as many batches at a time as it has workers.
    """
    from psygym_experiments.harness.head_to_head import BATCH, head_to_head
    from psygym_experiments.harness.progress import ProgressBar
    from psygym_experiments.harness.seats import seat_spec

    from psygym.policies import resolve_policy

    if len(names) < 2:
        raise ValueError("--until-clear needs at least two agents: the first meets each other one")
    for name in names:  # a bad name fails here, in one line, before any game
        for seat in (0, 1):
            resolve_policy(seat_spec(name, seat), rules)
    config = {
        "edition": rules.edition, "scenario": getattr(rules.scenario, "name", ""),
        "scenario_arg": _scenario_arg(rules, scenario), "agents": names,
        "max_episodes": episodes, "min_episodes": min_episodes, "seed": seed,
        "workers": workers if pool is None else pool.workers, "until_clear": True,
        **({} if pool is None else {"ray": pool.address}),
    }  # fmt: skip
    run_dir = _run_dir(runs_dir, resume, config, UNTIL_CLEAR_SETTINGS, until_clear=True)
    games = _games_record(run_dir, rules)
    if resume:
        played = _played(games, names[1:])
        games.rewrite([
            {"opponent": o, "start": i, "pairs": played[o][i : i + BATCH]}
            for o in names[1:] for i in range(0, len(played[o]), BATCH)
        ])  # fmt: skip
    else:
        played = {o: [] for o in names[1:]}
    write_json(run_dir / "config.json", config)
    err_console.print(f"run folder: {run_dir} (a killed run goes on with --resume {run_dir})",
                      highlight=False, soft_wrap=True)  # fmt: skip
    start = time.perf_counter()
    results = []
    with _kept_on_interrupt(run_dir):
        for opponent in names[1:]:
            if played[opponent]:
                err_console.print(f"resuming {names[0]} vs {opponent}: {len(played[opponent])} "
                                  "games per seat recorded", highlight=False)  # fmt: skip

            def record(
                r: range, pairs: list[tuple[float, float]], opponent: str = opponent
            ) -> None:
                games.append({"opponent": opponent, "start": r.start, "pairs": pairs})

            with ProgressBar(f"{names[0]} vs {opponent}", episodes) as bar:
                match = head_to_head(
                    rules, names[0], opponent, seed=seed, max_games=episodes,
                    min_games=min(min_episodes, episodes), workers=config["workers"], pool=pool,
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
    atomic_write(run_dir / "results.csv", "\n".join(lines) + "\n")
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
    "check_field",
    "default_agents",
    "evaluate_command",
    "pairs_table",
    "register",
    "write_evaluation",
]
