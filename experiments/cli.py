"""The ``psygym`` console script (typer). Each subcommand lives in its own module.

A command module defines ``register(app: typer.Typer) -> None``. Heavy libraries (torch, SB3,
optuna) are imported inside the commands that need them, so ``psygym odds`` starts fast.

Importing this module is cheap: typer and the command modules, most of the startup time, load
in :func:`run` (the app is built on first use, also as the attribute ``app``), where a Ctrl-C
ends in one ``interrupted`` line and exit status 130 as it does during a command.
"""

import functools
import os
import signal
import sys
import time

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (a few ms)
if TYPE_CHECKING:
    import typer

    app: typer.Typer
    """The ``psygym`` typer app, every command registered (built on first use: :func:`_app`)."""

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


def __getattr__(name: str) -> object:
    """The module attribute ``app``, built on first use (:func:`_app`)."""
    if name == "app":
        return _app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _interrupted(command: str | None) -> str:
    """The line of a command stopped by Ctrl-C (as the commands that explain theirs word it)."""
    name = f"psygym {command}" if command else "psygym"
    return f"interrupted: {name} stopped\n"


@functools.cache
def _app() -> "typer.Typer":
    """The ``psygym`` typer app with every command registered: imports typer and the commands."""
    import importlib
    import importlib.util

    import typer
    from typer.core import TyperGroup

    class _Commands(TyperGroup):
        """The ``psygym`` group: a command stopped by Ctrl-C says so in one line and exits 130.

        Typer turns a ``KeyboardInterrupt`` into a silent exit 130 before :func:`run` could see
        it, so the interruption is caught here, around the command. A command that printed its
        own ``interrupted: ...`` line raises :class:`.harness.lifecycle.InterruptReported`: no
        second one.
        """

        def make_context(
            self, info_name: str | None, args: list[str], parent: object = None, **extra: object
        ) -> typer.Context:
            """Parse the options (``--help`` prints here); a Ctrl-C meanwhile is one line too."""
            try:
                return super().make_context(info_name, args, parent=parent, **extra)
            except KeyboardInterrupt:
                sys.stderr.write(_interrupted(None))
                raise typer.Exit(130) from None

        def invoke(self, ctx: typer.Context) -> object:
            """Run the command ``ctx`` names; an interruption ends in one ``interrupted`` line."""
            from psygym_experiments.harness.lifecycle import InterruptReported

            try:
                return super().invoke(ctx)
            except KeyboardInterrupt as exc:
                if not isinstance(exc, InterruptReported):
                    sys.stderr.write(_interrupted(ctx.invoked_subcommand))
                raise typer.Exit(130) from None

    app = typer.Typer(
        cls=_Commands,
        name="psygym",
        help="The Warhammer 40,000 psychic phase as a laboratory: odds, bots, solvers, RL, play.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
    )

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
            help="Allow stable-baselines3 .zip models (pickles: they can run code) everywhere; "
            "sets PSYGYM_TRUST_PICKLE=1. Only for files you trust.",
        ),
        debug: bool = typer.Option(
            False, "--debug", help="Show the full traceback of an error (else one line)."
        ),
    ) -> None:
        """The Warhammer 40,000 psychic phase as a laboratory: odds, bots, solvers, RL, play."""
        # A command's wall time (ctx.obj["started"], read with command_seconds) counts from here,
        # or for the console script from the loading of the commands, which it waits for too.
        started = _console_command.pop() if _console_command else time.perf_counter()
        ctx.obj = {"started": started}
        if trust_pickle:
            os.environ["PSYGYM_TRUST_PICKLE"] = "1"
        if debug:
            os.environ["PSYGYM_DEBUG"] = "1"

    for name in COMMAND_MODULES:
        if importlib.util.find_spec(name) is not None:
            importlib.import_module(name).register(app)
    return app


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

        import typer

        try:
            typer.echo(f"psygym {version('psygym')} ({_engine_line()})")
        except PackageNotFoundError:
            typer.echo("psygym (version unknown: the package is not installed)")
        raise typer.Exit()


def _one_line(text: object) -> str:
    from psygym_experiments.common import printable

    return printable(str(text)) or "no details"


def run(argv: list[str] | None = None) -> int:
    """Run the ``psygym`` command line ``argv`` (default ``sys.argv[1:]``); return its exit code.

    Every error ends in one line on stderr: usage errors (a bad option value: the message names
    the option and its allowed range) and expected errors exit 2, anything unexpected exits 1
    naming the exception; ``--debug`` (or ``PSYGYM_DEBUG=1``) shows the full traceback instead.
    """
    import typer
    from typer._click.exceptions import ClickException  # typer vendors click

    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args or os.environ.get("PSYGYM_DEBUG") == "1"
    try:
        try:
            app = _app()
        finally:
            _loaded()
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
            import traceback

            traceback.print_exc()
        from psygym_experiments.common import error_line

        expected = isinstance(exc, (ValueError, OSError, LookupError))
        kind = "error" if expected else f"internal error ({type(exc).__name__})"
        hint = "" if debug else " (--debug shows the traceback)"
        sys.stderr.write(f"{kind}: {error_line(exc)}{hint}\n")
        return 2 if expected else 1


def command_seconds(ctx: "typer.Context") -> float:
    """Wall seconds since the running command started (its whole time, setup included)."""
    obj = ctx.find_root().obj
    started = obj.get("started") if isinstance(obj, dict) else None
    return time.perf_counter() - (started if started is not None else _LOADED_AT)


def _stop_loading(signum: int, _frame: object) -> None:
    """SIGINT while the commands load: one line and exit 130 at once, nothing to clean up.

    A ``KeyboardInterrupt`` raised inside the import machinery is not always one: CPython may
    print it as "Exception ignored in" a module lock's callback and carry on, and an extension
    module it cut off half-imported (numpy's) can fail again with an ``ImportError``.
    """
    try:
        os.write(2, _interrupted(None).encode())  # unbuffered: sys.stderr may be mid-write
    finally:
        os._exit(128 + signum)


def _loaded() -> None:
    """The commands are loaded: Ctrl-C raises ``KeyboardInterrupt`` again (if main changed it)."""
    if signal.getsignal(signal.SIGINT) is _stop_loading:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def main() -> None:
    """Entry point of the ``psygym`` console script: Ctrl-C at any point exits 130 in one line.

    While typer and the commands load (in :func:`run`) Ctrl-C exits at once
    (:func:`_stop_loading`); after that, :func:`run` and the commands report it. Only Python's
    own startup, before this module runs, is beyond reach.
    """
    _console_command.append(_LOADED_AT)
    # a SIGINT ignored from the start (``nohup``, a background job) stays ignored
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _stop_loading)
    sys.exit(run())


if __name__ == "__main__":
    main()
