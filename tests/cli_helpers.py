"""Running ``psygym`` commands in-process in tests: output, and the one-line error contract."""

from __future__ import annotations

from psygym_experiments.cli import app
from typer.testing import CliRunner

runner = CliRunner()


def run(*args: object):
    """``psygym ARGS`` through typer's test runner (each argument as text)."""
    return runner.invoke(app, [str(a) for a in args])


def ok(*args: object) -> str:
    """The standard output of ``psygym ARGS``, which must exit 0."""
    result = run(*args)
    assert result.exit_code == 0, (result.stdout, result.stderr, result.exception)
    return result.stdout


def clean_error(result, *words: str) -> str:
    """Exit code 2 and one line on stderr starting with ``error:`` holding each of ``words``."""
    assert result.exit_code == 2, (result.stdout, result.stderr, result.exception)
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    for w in words:
        assert w in lines[0], (w, lines[0])
    return lines[0]
