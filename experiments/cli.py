"""The ``psygym`` console script (typer). Each subcommand lives in its own module.

A command module defines ``register(app: typer.Typer) -> None``. Heavy libraries (torch, SB3,
optuna) are imported inside the commands that need them, so ``psygym odds`` starts fast.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import time
import traceback

import typer
from typer.core import TyperGroup

_LOADED_AT = time.perf_counter()
"""When this module began loading its commands: the console script's command starts here."""
_console_command: list[float] = []
"""Set by :func:`main`: the start of the command the console script runs."""

COMMAND_MODULES = [
    "psygym_experiments.odds",
    "psygym_experiments.agents",
    "psygym_experiments.scenario",
    "psygym_experiments.simulate",
    "psygym_experiments.bench",
    "psygym_experiments.solve",
    "psygym_experiments.advise",
    "psygym_experiments.evaluate",
    "psygym_experiments.mistakes",
    "psygym_experiments.compare",
    "psygym_experiments.cheatsheet",
    "psygym_experiments.train",
    "psygym_experiments.value_check",
    "psygym_experiments.tune",
    "psygym_experiments.play",
    "psygym_experiments.serve",
    "psygym_experiments.export",
    "psygym_experiments.cfr",
]
"""Modules whose ``register(app)`` adds commands, in the order ``--help`` lists them."""


class _Commands(TyperGroup):
    """The ``psygym`` group: a command stopped by Ctrl-C says so in one line and exits 130.

    Typer turns a ``KeyboardInterrupt`` into a silent exit 130 before :func:`run` could see it,
    so the interruption is caught here, around the command. A command that printed its own
    ``interrupted: ...`` line raises :class:`.harness.lifecycle.InterruptReported`: no second one.
    """

    def invoke(self, ctx: typer.Context) -> object:
        """Run the command ``ctx`` names; an interruption ends in one ``interrupted`` line."""
        from psygym_experiments.harness.lifecycle import InterruptReported

        try:
            return super().invoke(ctx)
        except KeyboardInterrupt as exc:
            if not isinstance(exc, InterruptReported):
                sys.stderr.write(_interrupted(ctx.invoked_subcommand))
            raise typer.Exit(130) from None


def _interrupted(command: str | None) -> str:
    """The line of a command stopped by Ctrl-C (as the commands that explain theirs word it)."""
    name = f"psygym {command}" if command else "psygym"
    return f"interrupted: {name} stopped\n"


app = typer.Typer(
    cls=_Commands,
    name="psygym",
    help="The Warhammer 40,000 psychic phase as a laboratory: odds, bots, solvers, RL, play.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _engine_line() -> str:
    """Which engine runs the editions (``psygym.engine``), for ``--version``."""
    from psygym.engine import ENGINE_VARIABLE, core_module, requested_engine

    try:
        wanted = requested_engine()
    except ValueError as exc:
        return str(exc)
    if core_module() is not None:
        games = ", ".join(core_module().registered_games()) or "no edition"
        return f"engine: compiled core ({games}; {ENGINE_VARIABLE}=python for the reference)"
    if wanted == "python":
        return f"engine: Python reference ({ENGINE_VARIABLE}=python)"
    return "engine: Python reference (the compiled core is not built: needs a C++17 compiler)"


def _show_version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            typer.echo(f"psygym {version('psygym')} ({_engine_line()})")
        except PackageNotFoundError:
            typer.echo("psygym (version unknown: the package is not installed)")
        raise typer.Exit()


@app.callback()
def _global_options(
    ctx: typer.Context,
    version: bool = typer.Option(
        False,
        "--version",
        callback=_show_version,
        is_eager=True,
        help="Print the installed psygym version and exit.",
    ),
    trust_pickle: bool = typer.Option(
        False,
        "--trust-pickle",
        help="Allow stable-baselines3 .zip models (pickles: they can run code) everywhere; sets "
        "PSYGYM_TRUST_PICKLE=1. Only for files you trust.",
    ),
    debug: bool = typer.Option(
        False, "--debug", help="Show the full traceback of an error (else one line)."
    ),
) -> None:
    """The Warhammer 40,000 psychic phase as a laboratory: odds, bots, solvers, RL, play."""
    # A command's wall time (ctx.obj["started"], read with command_seconds) counts from here, or
    # for the console script from the loading of the commands, which it waits for too.
    started = _console_command.pop() if _console_command else time.perf_counter()
    ctx.obj = {"started": started}
    if trust_pickle:
        os.environ["PSYGYM_TRUST_PICKLE"] = "1"
    if debug:
        os.environ["PSYGYM_DEBUG"] = "1"


for _name in COMMAND_MODULES:
    if importlib.util.find_spec(_name) is not None:
        importlib.import_module(_name).register(app)


def _one_line(text: object) -> str:
    from psygym_experiments.common import printable

    return printable(str(text)) or "no details"


def run(argv: list[str] | None = None) -> int:
    """Run the ``psygym`` command line ``argv`` (default ``sys.argv[1:]``); return its exit code.

    Every error ends in one line on stderr: usage errors (a bad option value: the message names
    the option and its allowed range) and expected errors exit 2, anything unexpected exits 1
    naming the exception; ``--debug`` (or ``PSYGYM_DEBUG=1``) shows the full traceback instead.
    """
    from typer._click.exceptions import ClickException  # typer vendors click

    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args or os.environ.get("PSYGYM_DEBUG") == "1"
    try:
        code = app(args, prog_name="psygym", standalone_mode=False)
        return code if isinstance(code, int) else 0
    except typer.Exit as exc:
        return int(exc.exit_code)
    except ClickException as exc:
        where = getattr(getattr(exc, "ctx", None), "command_path", "psygym")
        hint = f" (psygym {where.split(' ', 1)[1]} --help" if " " in where else " (psygym --help"
        sys.stderr.write(f"error: {_one_line(exc.format_message())}{hint} lists what is allowed)\n")
        return int(exc.exit_code)
    except (typer.Abort, KeyboardInterrupt):  # end of input at a prompt, Ctrl-C outside a command
        sys.stderr.write(_interrupted(None))
        return 130
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except Exception as exc:  # noqa: BLE001 - the one place every unexpected error ends
        if debug:
            traceback.print_exc()
        from psygym_experiments.common import error_line

        expected = isinstance(exc, (ValueError, OSError, LookupError))
        kind = "error" if expected else f"internal error ({type(exc).__name__})"
        hint = "" if debug else " (--debug shows the traceback)"
        sys.stderr.write(f"{kind}: {error_line(exc)}{hint}\n")
        return 2 if expected else 1


def command_seconds(ctx: typer.Context) -> float:
    """Wall seconds since the running command started (its whole time, setup included)."""
    obj = ctx.find_root().obj
    started = obj.get("started") if isinstance(obj, dict) else None
    return time.perf_counter() - (started if started is not None else _LOADED_AT)


def main() -> None:
    """Entry point of the ``psygym`` console script."""
    _console_command.append(_LOADED_AT)
    sys.exit(run())


if __name__ == "__main__":
    main()
