"""The ``psygym`` console script (typer). Each subcommand lives in its own module.

A command module defines ``register(app: typer.Typer) -> None``. Heavy libraries (torch, SB3,
optuna) are imported inside the commands that need them, so ``psygym odds`` starts fast.
"""

from __future__ import annotations

import importlib
import importlib.util

import typer

COMMAND_MODULES = [
    "psygym_experiments.odds",
    "psygym_experiments.simulate",
    "psygym_experiments.bench",
    "psygym_experiments.solve",
    "psygym_experiments.advise",
    "psygym_experiments.evaluate",
    "psygym_experiments.compare",
    "psygym_experiments.train",
    "psygym_experiments.tune",
    "psygym_experiments.play",
    "psygym_experiments.serve",
    "psygym_experiments.export",
    "psygym_experiments.cfr",
]
"""Modules whose ``register(app)`` adds commands, in the order ``--help`` lists them."""

app = typer.Typer(
    name="psygym",
    help="The Warhammer 40,000 psychic phase as a laboratory: odds, bots, solvers, RL, play.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

for _name in COMMAND_MODULES:
    if importlib.util.find_spec(_name) is not None:
        importlib.import_module(_name).register(app)


def main() -> None:
    """Entry point of the ``psygym`` console script."""
    app()


if __name__ == "__main__":
    main()
