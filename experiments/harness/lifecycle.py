"""Worker processes that never outlive their parent, and SIGTERM (or SIGHUP) taken like Ctrl-C.

For ``evaluate --workers``, ``compare`` and solving; with the limits of a command's processes
(``--workers``) and training envs (``--n-envs``). :class:`InterruptReported` marks an
interruption a command has already explained in its own ``interrupted: ...`` line, so the
``psygym`` command line adds no second one.

:func:`die_with_parent` runs first in every child process the harness starts: on Linux it asks
the kernel (``prctl(PR_SET_PDEATHSIG, SIGKILL)``) to kill the child when its parent dies, for
any reason (SIGTERM, SIGKILL, a crash); elsewhere a daemon thread polls the parent's pid. A
parent that died before the call is noticed at once (``os.getppid()`` changed).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_PR_SET_PDEATHSIG = 1

WORKERS_PER_CORE = 4
"""Most worker processes per CPU core a command may start (``--workers``)."""


def max_workers() -> int:
    """Most worker processes a command may start here: :data:`WORKERS_PER_CORE` x the cores."""
    return WORKERS_PER_CORE * (os.cpu_count() or 1)


def check_workers(workers: int) -> int:
    """Return ``workers`` if this machine allows that many processes.

    Raises:
        ValueError: more than :func:`max_workers` (one line, naming the maximum and why).
    """
    if workers > max_workers():
        raise ValueError(
            f"--workers {workers} is too many: at most {max_workers()} ({WORKERS_PER_CORE} per "
            f"CPU core, {os.cpu_count() or 1} cores here)"
        )
    return workers


ENVS_PER_CORE = 64
"""Most training envs per CPU core (``--n-envs``, ``n_envs``): a rollout holds ``n_steps`` steps
of every env, so its memory and the fewest steps a run takes grow with the envs (100,000 envs:
gigabytes before the first update). With ``--subproc`` each env is a process, capped like
``--workers``."""


def max_envs(subproc: bool = False) -> int:
    """Most training envs a run may have here.

    :data:`ENVS_PER_CORE` per CPU core, or with ``subproc`` (a process each) :func:`max_workers`.
    """
    return max_workers() if subproc else ENVS_PER_CORE * (os.cpu_count() or 1)


def check_n_envs(n_envs: int, subproc: bool = False, what: str = "--n-envs") -> int:
    """Return ``n_envs`` if a run here may have that many training envs (:func:`max_envs`).

    ``what`` names the setting in the error (``--n-envs``, or ``n_envs`` of a config).

    Raises:
        ValueError: more (one line naming the maximum and why), before anything is built.
    """
    most = max_envs(subproc)
    if n_envs > most:
        cores = os.cpu_count() or 1
        per = f"{WORKERS_PER_CORE} processes" if subproc else f"{ENVS_PER_CORE} envs"
        why = "with --subproc each env is a process" if subproc else (
            "a rollout holds n_steps steps of every env")  # fmt: skip
        raise ValueError(f"{what} {n_envs} is too many: at most {most} ({per} per CPU core, "
                         f"{cores} cores here; {why})")  # fmt: skip
    return n_envs


def _prctl_pdeathsig() -> bool:
    """Ask the Linux kernel for SIGKILL on parent death; False where unavailable."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
    except (OSError, AttributeError):  # pragma: no cover - no libc/prctl
        return False


def _watch(parent: int, every: float) -> None:  # pragma: no cover - non-Linux fallback
    while os.getppid() == parent:
        time.sleep(every)
    os._exit(1)


def die_with_parent(parent: int | None = None, *, poll_seconds: float = 1.0) -> None:
    """Make this (child) process exit when its parent ``parent`` (default: current one) dies.

    Args:
        parent: the parent's pid as the parent saw it (pass ``os.getpid()`` from the parent, so a
            parent that died before the child got here is detected).
        poll_seconds: polling interval of the fallback watchdog thread (non-Linux).
    """
    expected = os.getppid() if parent is None else parent
    if not _prctl_pdeathsig():
        threading.Thread(target=_watch, args=(expected, poll_seconds), daemon=True).start()
    if os.getppid() != expected:  # the parent died before the kernel could be told
        os._exit(1)


def pool_initializer(parent: int, then: object = None) -> None:
    """A ``ProcessPoolExecutor`` initializer: :func:`die_with_parent`, then ``then()`` if given."""
    die_with_parent(parent)
    if callable(then):
        then()


class InterruptReported(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM taken like it) after the command printed its ``interrupted: ...`` line.

    Raise it ``from`` the original interruption once the line is on stderr: it is still a
    ``KeyboardInterrupt`` (exit status 130), and the ``psygym`` command line prints nothing more.
    """


def kill_workers(*pools: Any) -> None:
    """Cancel the queued work of process pools and kill their worker processes.

    After a failure, an interruption or a match decided early: a pool's shutdown, and the
    interpreter's exit, would otherwise wait for the task each worker is running (a graph build,
    an answer table, a batch of games), minutes after the command said it stopped or decided.
    ``concurrent.futures`` has no public way to stop a running task before Python 3.14
    (``kill_workers``), so the worker processes are read from the pool; a pool that is not a
    ``ProcessPoolExecutor`` (``None``, a Ray cluster) is left alone. The workers' own children
    die with them (:func:`die_with_parent`).
    """
    from concurrent.futures import ProcessPoolExecutor

    for pool in pools:
        if not isinstance(pool, ProcessPoolExecutor):
            continue
        processes = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for proc in processes:
            if proc.is_alive():
                proc.kill()


@contextmanager
def sigterm_interrupts() -> Iterator[None]:
    """While the block runs, SIGTERM raises ``KeyboardInterrupt`` as Ctrl-C does; then the old one.

    So ``kill -TERM`` takes the block's cleanup path (its ``finally`` clauses run) instead of
    ending the process at once. A child process forked while the block runs inherits the
    handler but ends on SIGTERM as before (a pool's ``terminate()``). Only on the main thread
    (where signal handlers run); elsewhere the block runs with the handlers as they are.
    """
    with signals_interrupt(signal.SIGTERM):
        yield


@contextmanager
def hangup_interrupts() -> Iterator[None]:
    """:func:`sigterm_interrupts` for SIGHUP too (the terminal closed), where there is one.

    For an interactive command (``play``) that must end as on Ctrl-C whichever way it is
    stopped.
    """
    hangup = getattr(signal, "SIGHUP", None)  # not on Windows
    if hangup is not None and signal.getsignal(hangup) is signal.SIG_IGN:
        hangup = None  # started under nohup: hangups stay ignored
    with signals_interrupt(signal.SIGTERM, *([hangup] if hangup is not None else [])):
        yield


@contextmanager
def signals_interrupt(*signums: int) -> Iterator[None]:
    """While the block runs, each of ``signums`` raises ``KeyboardInterrupt`` as Ctrl-C does.

    The handlers before the block are put back after it. See :func:`sigterm_interrupts`: a child
    forked while the block runs ends on these signals as it would without the block, and off the
    main thread the block runs with the handlers as they are.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    pid = os.getpid()

    def on_signal(signum: int, _frame: Any) -> None:
        if os.getpid() != pid:  # a child forked while the block ran: end as the signal would
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        raise KeyboardInterrupt

    old = {signum: signal.signal(signum, on_signal) for signum in signums}
    try:
        yield
    finally:
        for signum, handler in old.items():
            signal.signal(signum, handler)


__all__ = [
    "ENVS_PER_CORE",
    "InterruptReported",
    "check_n_envs",
    "check_workers",
    "die_with_parent",
    "hangup_interrupts",
    "kill_workers",
    "max_envs",
    "max_workers",
    "pool_initializer",
    "sigterm_interrupts",
    "signals_interrupt",
]
