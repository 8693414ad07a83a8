"""How Ctrl-C and SIGTERM end an Optuna study (``psygym tune``) without breaking its storage.

A signal that lands while a trial computes ends that trial at once (Optuna marks it failed).
One that lands between trials, in Optuna's own bookkeeping (asking for a trial, telling its
result), only stops the study after it. One that lands while the trial talks to the storage
(suggesting a parameter, reporting a score, setting an attribute) waits until that call returns:
interrupting a storage query half way (a SQLite commit, say) leaves the trial's row unwritable,
and Optuna then fails with an internal error instead of marking the trial failed.

With several jobs the trials run in Optuna's threads and a signal reaches the main thread only,
which waits for them: it stops waiting, and the trials under way finish and are kept.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


class StudyGuard:
    """Ctrl-C and SIGTERM handling of one ``study.optimize`` call (see the module's docstring).

    Use :meth:`installed` around the call and pass it :meth:`wrap` of the objective.
    """

    def __init__(self, study: Any, jobs: int = 1) -> None:
        """``jobs``: the trials ``study.optimize`` runs at once (more than 1: in its threads)."""
        self.study = study
        self.stopped = False
        self._in_jobs = jobs != 1
        # On the main thread, where the handler runs: a trial under way, and a storage call in it.
        self._running = 0
        self._shielded = 0

    def wrap(self, objective: Callable[[Any], Any]) -> Callable[[Any], Any]:
        """The objective, run with its trial's storage calls shielded from the signal."""

        def guarded(trial: Any) -> Any:
            with self._counted("_running"):
                return objective(ShieldedTrial(trial, self))

        return guarded

    @contextmanager
    def shield(self) -> Iterator[None]:
        """A storage call: a signal within it ends the trial as soon as the call returns."""
        with self._counted("_shielded"):
            yield
        if self.stopped and self._running and not self._shielded:
            raise KeyboardInterrupt

    @contextmanager
    def _counted(self, name: str) -> Iterator[None]:
        """One more of ``name`` while the block runs, when it runs on the main thread."""
        main = _on_main_thread()
        if main:
            setattr(self, name, getattr(self, name) + 1)
        try:
            yield
        finally:
            if main:
                setattr(self, name, getattr(self, name) - 1)

    def on_signal(self, signum: int, frame: Any) -> None:
        """The handler of SIGINT and SIGTERM."""
        self.stopped = True
        # With several jobs this thread only waits for the trials, outside Optuna's loop.
        if (self._running and not self._shielded) or self._in_jobs:
            raise KeyboardInterrupt
        self.study.stop()

    @contextmanager
    def installed(self) -> Iterator[None]:
        """The handler in place for SIGINT and SIGTERM (on the main thread only), then the old."""
        sigs = (signal.SIGTERM, signal.SIGINT) if _on_main_thread() else ()
        old = {s: signal.signal(s, self.on_signal) for s in sigs}
        try:
            yield
        finally:
            for s, handler in old.items():
                signal.signal(s, handler)


def _on_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


class ShieldedTrial:
    """An Optuna trial whose every method call and attribute read is a :meth:`StudyGuard.shield`."""

    __slots__ = ("_guard", "_trial")

    def __init__(self, trial: Any, guard: StudyGuard) -> None:
        self._trial, self._guard = trial, guard

    def __getattr__(self, name: str) -> Any:
        with self._guard.shield():
            value = getattr(self._trial, name)
        if not callable(value):
            return value

        def call(*args: Any, **kwargs: Any) -> Any:
            with self._guard.shield():
                return value(*args, **kwargs)

        return call
