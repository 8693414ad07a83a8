"""``psygym scenario random`` (a generated army list as TOML) and ``psygym scenario list``.

``random`` writes the scenario an edition's generator (:mod:`psygym.generator`) draws for a seed
and options, checked by the edition's own loader before it is written; the same scenario is
named ``random:SEED[,psykers=K][,mastery=LO-HI][,rounds=R]`` wherever a command takes
``--scenario``. ``list`` shows each edition's shipped scenarios.
"""

from __future__ import annotations

import sys
from pathlib import Path

import typer
from psygym_experiments.common import console, edition_option, printable, user_errors
from psygym_experiments.harness.output import atomic_write
from rich.markup import escape

from psygym.edition import editions, get
from psygym.generator import (
    DEFAULT_PSYKERS,
    DEFAULT_ROUNDS,
    MAX_SEED,
    PSYKERS,
    RandomOptions,
    generate,
    parse_mastery,
    scenario_name,
)
from psygym.scenario import read_toml, toml_text

DESCRIPTION_WIDTH = 72
"""Characters of a scenario's description ``list`` shows."""

scenario_app = typer.Typer(
    name="scenario",
    help="Scenarios: generate a random army list (random), list the shipped ones (list).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@scenario_app.command("random")
def random_scenario(
    edition: str = edition_option(),
    seed: int = typer.Option(
        ...,
        min=0,
        max=MAX_SEED,
        help="Seed of the draw: the same seed and options give the same file.",
    ),
    psykers: int | None = typer.Option(
        None,
        help=f"Psykers on each side ({PSYKERS[0]}-{PSYKERS[1]}; default: {DEFAULT_PSYKERS[0]} to "
        f"{DEFAULT_PSYKERS[1]} a side, drawn).",
    ),
    mastery: str | None = typer.Option(
        None,
        help="Mastery levels to draw from, LO-HI or one level (default: all of the edition's; "
        "a range outside them is refused, naming them).",
    ),
    rounds: int | None = typer.Option(
        None,
        help=f"Battle rounds (default: {DEFAULT_ROUNDS[0]} to {DEFAULT_ROUNDS[1]}, drawn; where "
        "players take single turns, two turns a round).",
    ),
    out: str | None = typer.Option(None, help="Write the TOML to this file (default: print it)."),
) -> None:
    """Write a random army list of an edition as TOML, drawn from its own data and playable."""
    with user_errors():
        ed = get(edition)
        options = RandomOptions(
            psykers=psykers,
            mastery=None if mastery is None else parse_mastery(mastery),
            rounds=rounds,
        )
        data = generate(ed, seed, options)
        name = scenario_name(seed, options)
        ed.build_rules(data, name)  # the edition's own loader checks it before it is written
        text = toml_text(data)
        if out is None:
            if sys.stdout is None:  # started with standard output closed (>&-)
                raise ValueError("standard output is closed: give --out FILE to write the TOML")
            sys.stdout.write(text)
            return
        if Path(out).is_dir():
            example = f"{data['name']}.toml"
            raise ValueError(f"--out {out} is a folder (allowed: a file name, such as {example})")
        atomic_write(out, text)
    console.print(
        f"wrote {printable(str(out))}: {ed.title} scenario {name} (--scenario {name} plays the "
        "same one without the file)",
        highlight=False,
        soft_wrap=True,
        markup=False,
        emoji=False,
    )


@scenario_app.command("list")
def list_scenarios(
    edition: str | None = typer.Option(
        None, help="Only this edition (default: every installed edition)."
    ),
) -> None:
    """List the shipped scenarios of each edition, and how to name a generated one."""
    with user_errors():
        chosen = [get(edition)] if edition else editions()
        for ed in chosen:
            console.print(f"[bold]{escape(ed.title)}[/bold] (--edition {escape(ed.id)})")
            for name in ed.scenario_names():
                data = read_toml(Path(ed.scenario_dir) / f"{name}.toml")
                text = " ".join(str(data.get("description", "")).split())
                if len(text) > DESCRIPTION_WIDTH:
                    text = text[: DESCRIPTION_WIDTH - 3].rstrip() + "..."
                mark = " (default)" if name == ed.default_scenario else ""
                console.print(f"  {escape(name)}{mark}: {escape(text)}", highlight=False)
            if ed.generator is not None:
                console.print(
                    "  random:SEED[,psykers=K][,mastery=LO-HI][,rounds=R]: a generated army "
                    "list (psygym scenario random)",
                    highlight=False,
                    markup=False,
                )


def register(app: typer.Typer) -> None:
    """Add the ``scenario`` commands (``random``, ``list``)."""
    app.add_typer(scenario_app, name="scenario")
