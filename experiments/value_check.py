"""``psygym value-check``: a board value against the mean of sampled continuations.

A thin layer over :mod:`psygym_experiments.harness.value_check`: for up to ``--boards``
distinct boards per battle round it plays ``--continuations`` games from each board with
``--agent`` in both seats and prints, per round, the RMSE of ``V`` against the continuations'
mean beside that mean's standard error. The run folder (``--out``) resumes: start the same
command again to go on (the settings not given are then the folder's; one given with another
value is refused, naming it). A folder holding files but no value check is refused, never
written over.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from psygym_experiments.common import (
    check_workers_option,
    console,
    default_edition,
    err_console,
    ray_option,
    user_errors,
)

RESUMED_OPTIONS = ("edition", "scenario", "boards", "continuations", "agent", "value", "seed")
"""Options a value check started again takes from its folder's ``config.json`` when not given."""


def value_check_command(
    ctx: typer.Context,
    edition: Annotated[
        str | None, typer.Option(help="Edition id or alias (default: the default edition).")
    ] = None,
    scenario: Annotated[
        str,
        typer.Option(
            help="Shipped scenario name, random:N (the army list psygym scenario random --seed N "
            "writes) or TOML path."
        ),
    ] = "default",
    boards: Annotated[
        int, typer.Option(min=1, help="Distinct boards per battle round (at most).")
    ] = 10,
    continuations: Annotated[int, typer.Option(min=2, help="Games played from each board.")] = 200,
    agent: Annotated[str, typer.Option(help="Agent in both seats of the continuations.")] = (
        "search"
    ),
    value: Annotated[
        str | None,
        typer.Option(help="Board value (.safetensors) to check (default: the shipped one)."),
    ] = None,
    seed: Annotated[int, typer.Option(min=0, help="Seed of the boards and the dice.")] = 0,
    workers: Annotated[
        int,
        typer.Option(
            min=1, callback=check_workers_option, help="Processes (at most 4 per CPU core)."
        ),
    ] = 1,
    out: Annotated[
        str | None,
        typer.Option(
            help="Run folder: new, empty, or a value-check run to resume (default "
            "runs/value-check/<edition>-<scenario>)."
        ),
    ] = None,
    ray: str = ray_option(),
) -> None:
    """Check a board value against the mean gain of games played on from sampled boards."""
    from contextlib import nullcontext

    from psygym_experiments.harness.pools import check_ray_workers, ray_pool
    from psygym_experiments.harness.progress import ProgressBar
    from psygym_experiments.harness.runs import safe_component, write_command
    from psygym_experiments.harness.value_check import run_value_check, summarize

    from psygym.editions import load

    with user_errors():
        check_ray_workers(ray, workers)
        given = {
            "edition": edition,
            "scenario": scenario,
            "boards": boards,
            "continuations": continuations,
            "agent": agent,
            "value": value,
            "seed": seed,
        }
        if out:
            given.update(_saved(ctx, Path(out)))
        rules = load(given["edition"] or default_edition(), given["scenario"])
        name = getattr(rules.scenario, "name", given["scenario"])
        folder = Path(out or Path("runs", "value-check",
                                  safe_component(f"{rules.edition}-{name}")))  # fmt: skip
        if not out:
            given.update(_saved(ctx, folder))
        cfg = {**given, "edition": rules.edition}
        with (
            ray_pool(ray) or nullcontext() as pool,
            ProgressBar(f"{rules.edition} {name}: continuations", None) as bar,
        ):

            def played(done: int, total: int) -> None:
                bar.update(completed=done, total=total)

            def shown(done: int, total: int, row: dict) -> None:
                bar.update(note=f"board {done}/{total}, round {row['round']}: V {row['V']:+.2f}, "
                           f"continuations {row['mean']:+.2f} ± {row['se']:.2f}")  # fmt: skip
                err_console.print(
                    f"board {done}/{total} (round {row['round']}): V {row['V']:+.3f}, "
                    f"continuations {row['mean']:+.3f} (se {row['se']:.3f})",
                    highlight=False,
                )

            rows = run_value_check(cfg, folder, workers=workers, on_board=shown, on_chunk=played,
                                   pool=pool)  # fmt: skip
    write_command(folder)
    for r in summarize(rows):
        plural = "" if r["boards"] == 1 else "s"
        console.print(
            f"round {r['round']}: {r['boards']} board{plural}, RMSE of V {r['rmse']:.3f} "
            f"(bias {r['bias']:+.3f}), mean se of the continuations {r['mean_se']:.3f}",
            highlight=False,
        )
    console.print(f"wrote {folder}", highlight=False)


def _saved(ctx: typer.Context, folder: Path) -> dict[str, Any]:
    """The settings of the value check in ``folder`` for the options not given (none if new)."""
    from psygym_experiments.harness.runs import given_options, read_config

    path = folder / "config.json"
    if not path.is_file():
        return {}
    saved = read_config(path)
    left = set(RESUMED_OPTIONS) - given_options(ctx, RESUMED_OPTIONS)
    out = {k: saved[k] for k in RESUMED_OPTIONS if k in left and k in saved}
    least = {"boards": 1, "continuations": 2, "seed": 0}
    for k, v in out.items():
        if k in least:
            ok = isinstance(v, int) and not isinstance(v, bool) and v >= least[k]
        else:
            ok = isinstance(v, str) or (k == "value" and v is None)
        if not ok:
            raise ValueError(f"{path}: {k} is {v!r}, not a setting value-check writes; start a "
                             "new run with another --out")  # fmt: skip
    return out


def register(app: typer.Typer) -> None:
    """Add the ``value-check`` command."""
    app.command("value-check")(value_check_command)
