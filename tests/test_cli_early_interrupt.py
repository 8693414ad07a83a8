"""Ctrl-C while ``psygym`` starts: one ``interrupted`` line and exit status 130, no traceback.

Most of the start is the loading of typer and the command modules (numpy among them). The
command starts as a real process; the tests find it inside those imports by watching for
numpy's extension module in ``/proc/PID/maps`` (Linux), or send SIGINT at fixed delays after
Python itself has started. Python's own startup, before ``psygym_experiments.cli`` runs, is
beyond the reach of the command's code and not tested.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(os.name != "posix", reason="SIGINT as on a POSIX terminal")

SCRIPT = Path(sys.executable).with_name("psygym")
"""The console script of this environment (the editable install's ``psygym``)."""
LAUNCHERS = {
    "script": [str(SCRIPT)],
    "module": [sys.executable, "-m", "psygym_experiments.cli"],
}
MAPS = Path("/proc/self/maps")
NUMPY_LOADED = "_multiarray_umath"
"""A file mapped once numpy's import is under way: the process is among the command imports."""
INTERRUPTED = re.compile(r"interrupted: psygym( [\w-]+)? stopped")

READY_CHILD = (
    "import sys\n"
    "print('ready', flush=True)\n"  # Python has started: what follows is the console script
    "from psygym_experiments.cli import main\n"
    "sys.argv[0] = 'psygym'\n"
    "main()\n"
)


def _start(argv: list[str], sigint=signal.SIG_DFL) -> subprocess.Popen:
    return subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # a child of a non-interactive shell may inherit SIGINT ignored: Ctrl-C as in a terminal
        preexec_fn=lambda: signal.signal(signal.SIGINT, sigint),
    )


def _wait_for_numpy(proc: subprocess.Popen) -> None:
    """Return once ``proc`` has mapped numpy's extension module (it is importing the commands)."""
    maps = Path(f"/proc/{proc.pid}/maps")
    deadline = time.monotonic() + 60
    while proc.poll() is None and time.monotonic() < deadline:
        try:
            if NUMPY_LOADED in maps.read_text():
                return
        except OSError:  # the process is exiting
            break
        time.sleep(0.001)
    _out, err = proc.communicate()
    pytest.fail(f"the command never loaded numpy (exit {proc.returncode}): {err}")


def _finish(proc: subprocess.Popen) -> tuple[int, str]:
    try:
        _out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return proc.returncode, err


def _assert_one_line_or_done(code: int, err: str, *, interrupted: bool) -> None:
    """Interrupted: exit 130 and one ``interrupted`` line; else it had finished (exit 0)."""
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    if code == -signal.SIGINT and not interrupted:
        # done, and in Python's own exit, whose default SIGINT ends it silently (a shell says 130)
        assert lines == [], err
    elif interrupted or code != 0:
        assert code == 130, (code, err)
        assert len(lines) == 1 and INTERRUPTED.fullmatch(lines[0]), err
    else:
        assert lines == [], err


@pytest.mark.skipif(not MAPS.exists(), reason="needs /proc/PID/maps (Linux)")
@pytest.mark.parametrize("launcher", sorted(LAUNCHERS))
@pytest.mark.parametrize("command", ["--help", "agents"])
@pytest.mark.parametrize("delay", [0.0, 0.05, 0.1])
def test_sigint_while_the_commands_load_is_one_line(launcher, command, delay):
    if launcher == "script" and not SCRIPT.exists():
        pytest.skip(f"no console script {SCRIPT}")
    proc = _start([*LAUNCHERS[launcher], command])
    _wait_for_numpy(proc)
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    code, err = _finish(proc)
    # numpy's import alone takes longer than the first delay: that one surely interrupts
    _assert_one_line_or_done(code, err, interrupted=delay == 0.0)


@pytest.mark.parametrize("command", ["--help", "agents"])
@pytest.mark.parametrize("delay", [0.04, 0.1, 0.2, 0.3])
def test_sigint_at_fixed_delays_after_python_started(command, delay):
    proc = _start([sys.executable, "-c", READY_CHILD, command])
    try:
        assert proc.stdout.readline().strip() == "ready", proc.communicate()
    except BaseException:
        proc.kill()
        raise
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    code, err = _finish(proc)
    _assert_one_line_or_done(code, err, interrupted=False)


@pytest.mark.skipif(not MAPS.exists(), reason="needs /proc/PID/maps (Linux)")
def test_sigterm_while_the_commands_load_ends_silently():
    proc = _start([*LAUNCHERS["module"], "agents"])
    _wait_for_numpy(proc)
    proc.send_signal(signal.SIGTERM)
    code, err = _finish(proc)
    assert code == -signal.SIGTERM, (code, err)  # Python's default: killed, nothing printed
    assert err == ""


@pytest.mark.skipif(not MAPS.exists(), reason="needs /proc/PID/maps (Linux)")
def test_an_ignored_sigint_stays_ignored_while_the_commands_load():
    proc = _start([*LAUNCHERS["module"], "agents"], sigint=signal.SIG_IGN)  # as under nohup
    _wait_for_numpy(proc)
    proc.send_signal(signal.SIGINT)
    code, err = _finish(proc)
    assert code == 0, err
    assert err == ""
